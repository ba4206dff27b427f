#include <epochrt/actors/core/task_actor.hpp>

#include <exception>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/detail/counted_thread.hpp>
#include <epochrt/messages/fault_injector.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/task_runner.hpp>

namespace epochrt {

namespace {

// The fault plan at one of a task's points, on the task's thread: a delay
// sleeps, an injected error fails the task, and a node that is killed or
// frozen hears of it from here first.
caf::error task_point(fault_injector* faults, fault_point point,
                      const caf::actor& node_actor, const fault_site& site,
                      const std::atomic<bool>* cancel) {
  fault_action action;
  // A delay ends early, like the Sleep op, when the task is cancelled.
  auto err = strike_blocking(faults, point, site, action, cancel);
  if (err || !action)
    return err;
  if (action.kind == fault_kind::kill_node
      || action.kind == fault_kind::freeze_node)
    caf::anon_send(node_actor, node_fault_atom::value,
                   static_cast<uint8_t>(action.kind));
  return injected_error(point, site, action);
}

} // namespace

caf::error start_task(caf::actor_system& sys, caf::actor reply_to, uint64_t id,
                      std::string node, std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::shared_ptr<std::atomic<bool>> cancel, task_def task,
                      std::shared_ptr<fault_injector> faults, int64_t epoch) {
  auto what = "task '" + task.name + "'";
  auto err = detail::start_counted_thread(
    sys, what,
    [reply_to = std::move(reply_to), id, node, ws = std::move(ws),
     ops = std::move(ops), cancel = std::move(cancel), task = std::move(task),
     faults = std::move(faults), epoch] {
      caf::expected<std::vector<task_output>> outputs{caf::error{}};
      try {
        auto* plan = faults.get();
        before_op_hook before_op;
        if (plan != nullptr)
          before_op = [&](const op_def& op) {
            return task_point(plan, fault_point::node_op, reply_to,
                              fault_site{node, epoch, op.type}, cancel.get());
          };
        fault_site site{node, epoch, task.name};
        if (auto failed = task_point(plan, fault_point::task_start, reply_to,
                                     site, cancel.get()))
          outputs = std::move(failed);
        else
          outputs = run_task(task, *ws, *ops, cancel.get(), before_op);
        if (outputs)
          if (auto failed = task_point(plan, fault_point::task_end, reply_to,
                                       site, cancel.get()))
            outputs = std::move(failed);
      } catch (const std::exception& ex) {
        // run_task catches what ops and checks throw; this is for what it
        // throws itself (std::bad_alloc): the node must hear of the task.
        outputs = make_error(runtime_errc::op_failed,
                             "task '" + task.name + "': " + ex.what());
      } catch (...) {
        outputs = make_error(runtime_errc::op_failed,
                             "task '" + task.name + "': unknown exception");
      }
      if (!outputs)
        caf::anon_send(
          reply_to, task_ended_atom::value, id,
          make_error(actors_errc::task_failed,
                     "node " + node + ": " + error_text(outputs.error())));
      else
        caf::anon_send(reply_to, task_ended_atom::value, id,
                       tasks_done{node, std::move(*outputs)});
    });
  if (err)
    return make_error(actors_errc::task_failed,
                      "node " + node + ": " + error_text(err));
  return {};
}

} // namespace epochrt
