#include <epochrt/actors/core/pooled_task.hpp>

#include <exception>
#include <utility>

#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/messages/fault_injector.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/task_runner.hpp>
#include <epochrt/runtime/worker_pool.hpp>

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

caf::expected<std::vector<task_output>> run_pooled(pooled_task& t) {
  try {
    auto* plan = t.faults.get();
    before_op_hook before_op;
    if (plan != nullptr)
      before_op = [&](const op_def& op) {
        return task_point(plan, fault_point::node_op, t.reply_to,
                          fault_site{t.node, t.epoch, op.type}, t.cancel.get());
      };
    fault_site site{t.node, t.epoch, t.task.name};
    if (auto failed = task_point(plan, fault_point::task_start, t.reply_to,
                                 site, t.cancel.get()))
      return failed;
    auto outputs = run_task(t.task, *t.ws, *t.ops, t.cancel.get(), before_op);
    if (outputs)
      if (auto failed = task_point(plan, fault_point::task_end, t.reply_to,
                                   site, t.cancel.get()))
        return failed;
    return outputs;
  } catch (const std::exception& ex) {
    // run_task catches what ops and checks throw; this is for what it
    // throws itself (std::bad_alloc): the node must hear of the task.
    return make_error(runtime_errc::op_failed,
                      "task '" + t.task.name + "': " + ex.what());
  } catch (...) {
    return make_error(runtime_errc::op_failed,
                      "task '" + t.task.name + "': unknown exception");
  }
}

// Owns a task from its submission to its end and sends the node actor the
// one message that ends it: the outputs or the error once it ran, or an
// error when it is destroyed unrun (the pool dropped it when it stopped).
class task_holder {
public:
  explicit task_holder(pooled_task t) : task_(std::move(t)) {
    // nop
  }

  task_holder(const task_holder&) = delete;
  task_holder& operator=(const task_holder&) = delete;

  ~task_holder() {
    if (!reported_)
      report(make_error(runtime_errc::op_failed,
                        "task '" + task_.task.name
                          + "' was dropped unrun: the worker pool stopped"));
  }

  void run() {
    auto outputs = run_pooled(task_);
    if (!outputs)
      report(std::move(outputs.error()));
    else
      report_done(std::move(*outputs));
  }

  // The task was never queued: nothing is to be sent for it.
  void disarm() {
    reported_ = true;
  }

private:
  void report(caf::error err) {
    reported_ = true;
    caf::anon_send(task_.reply_to, task_ended_atom::value, task_.id,
                   make_error(actors_errc::task_failed,
                              "node " + task_.node + ": " + error_text(err)));
  }

  void report_done(std::vector<task_output> outputs) {
    reported_ = true;
    caf::anon_send(task_.reply_to, task_ended_atom::value, task_.id,
                   tasks_done{task_.node, std::move(outputs)});
  }

  pooled_task task_;
  bool reported_ = false;
};

} // namespace

caf::error submit_task(worker_pool& pool, pooled_task task) {
  auto node = task.node;
  auto name = task.task.name;
  auto holder = std::make_shared<task_holder>(std::move(task));
  if (!pool.submit([holder] {
        holder->run();
      })) {
    // Nothing may be sent for a task that was refused.
    holder->disarm();
    return make_error(actors_errc::task_failed,
                      "node " + node + ": task '" + name
                        + "' refused: the worker pool is stopped");
  }
  return {};
}

} // namespace epochrt
