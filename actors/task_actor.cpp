#include "actors/task_actor.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/actors_errc.hpp"
#include "actors/configure.hpp"
#include "messages/protocol.hpp"
#include "runtime/runtime_errc.hpp"
#include "runtime/task_runner.hpp"

namespace epochrt {

namespace {

caf::behavior task_behavior(caf::event_based_actor* self, std::string node,
                            std::shared_ptr<workspace> ws,
                            std::shared_ptr<const op_registry> ops,
                            std::shared_ptr<std::atomic<bool>> cancel) {
  return {
    [=](task_def& task) -> caf::result<tasks_done> {
      self->quit();
      auto outputs = run_task(task, *ws, *ops, cancel.get());
      if (!outputs)
        return make_error(actors_errc::task_failed,
                          "node " + node + ": " + error_text(outputs.error()));
      return tasks_done{node, std::move(*outputs)};
    },
  };
}

} // namespace

caf::actor spawn_task(caf::actor_system& sys, std::string node,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::shared_ptr<std::atomic<bool>> cancel) {
  return sys.spawn<caf::detached>(task_behavior, std::move(node), std::move(ws),
                                  std::move(ops), std::move(cancel));
}

} // namespace epochrt
