#include "actors/task_actor.hpp"

#include <exception>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include "actors/actors_errc.hpp"
#include "actors/configure.hpp"
#include "actors/detail/counted_thread.hpp"
#include "messages/protocol.hpp"
#include "runtime/runtime_errc.hpp"
#include "runtime/task_runner.hpp"

namespace epochrt {

caf::error start_task(caf::actor_system& sys, caf::actor reply_to, uint64_t id,
                      std::string node, std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::shared_ptr<std::atomic<bool>> cancel,
                      task_def task) {
  auto what = "task '" + task.name + "'";
  auto err = detail::start_counted_thread(
    sys, what,
    [reply_to = std::move(reply_to), id, node, ws = std::move(ws),
     ops = std::move(ops), cancel = std::move(cancel), task = std::move(task)] {
      caf::expected<std::vector<task_output>> outputs{caf::error{}};
      try {
        outputs = run_task(task, *ws, *ops, cancel.get());
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
