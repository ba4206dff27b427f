#include "actors/node_actor.hpp"

#include <algorithm>
#include <atomic>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

#include "actors/actors_errc.hpp"
#include "actors/configure.hpp"
#include "actors/task_actor.hpp"
#include "messages/manager_protocol.hpp"
#include "messages/protocol.hpp"
#include "runtime/runtime_errc.hpp"
#include "runtime/workspace.hpp"

namespace epochrt {

namespace {

// What one run_tasks request is waiting for. Shared by the handlers of the
// task replies; only the node actor's thread touches it.
struct pending_group {
  caf::response_promise promise;
  std::vector<std::vector<task_output>> outputs; // per task, in task order
  size_t remaining = 0;
  bool finished = false;
  std::shared_ptr<std::atomic<bool>> cancel;
};

// What the node actor tracks across requests.
struct node_tasks {
  // The cancel flags of groups still running. Task threads outlive a node
  // actor that stops (its session was destroyed, the job failed on another
  // node): they are asked to stop at their next op, instead of changing the
  // workspace behind everyone's back.
  std::vector<std::weak_ptr<std::atomic<bool>>> cancel_flags;
  // Task actors that have not replied yet, and the cancel_tasks requests
  // waiting for that count to reach zero.
  size_t running = 0;
  std::vector<caf::response_promise> stop_waiters;

  void task_ended() {
    if (running > 0 && --running == 0) {
      for (auto& waiter : stop_waiters)
        waiter.deliver(caf::unit);
      stop_waiters.clear();
    }
  }
};

caf::behavior node_behavior(caf::event_based_actor* self, std::string name,
                            std::shared_ptr<workspace> ws,
                            std::shared_ptr<const op_registry> ops,
                            std::chrono::milliseconds task_timeout) {
  auto tasks = std::make_shared<node_tasks>();
  auto cancel_all = [tasks] {
    for (auto& flag : tasks->cancel_flags)
      if (auto cancel = flag.lock())
        cancel->store(true);
  };
  self->attach_functor([cancel_all](const caf::error&) {
    cancel_all();
  });
  return {
    [=](run_tasks& msg) -> caf::result<tasks_done> {
      if (msg.tasks.empty())
        return tasks_done{name, {}};
      auto group = std::make_shared<pending_group>();
      group->promise = self->make_response_promise();
      group->outputs.resize(msg.tasks.size());
      group->remaining = msg.tasks.size();
      group->cancel = std::make_shared<std::atomic<bool>>(false);
      auto& flags = tasks->cancel_flags;
      flags.erase(std::remove_if(flags.begin(), flags.end(),
                                 [](auto& flag) {
                                   return flag.expired();
                                 }),
                  flags.end());
      flags.push_back(group->cancel);
      for (size_t i = 0; i < msg.tasks.size(); ++i) {
        auto worker = spawn_task(self->system(), name, ws, ops, group->cancel);
        ++tasks->running;
        self->request(worker, task_timeout, std::move(msg.tasks[i]))
          .then(
            [group, i, name, tasks](tasks_done& done) {
              tasks->task_ended();
              if (group->finished)
                return;
              group->outputs[i] = std::move(done.outputs);
              if (--group->remaining == 0) {
                group->finished = true;
                tasks_done result{name, {}};
                for (auto& outs : group->outputs)
                  for (auto& out : outs)
                    result.outputs.emplace_back(std::move(out));
                group->promise.deliver(std::move(result));
              }
            },
            [group, name, tasks](caf::error& err) {
              // A task that timed out may still run; it is cancelled, and
              // counted as ended so that nothing waits for it for ever.
              tasks->task_ended();
              if (group->finished)
                return;
              group->finished = true;
              group->cancel->store(true);
              if (err.category() == actors_category)
                group->promise.deliver(std::move(err));
              else
                group->promise.deliver(
                  make_error(actors_errc::task_failed,
                             "node " + name + ": " + error_text(err)));
            });
      }
      return group->promise;
    },
    [=](fetch_blobs& msg) -> caf::result<blob_values> {
      blob_values result;
      for (auto& blob : msg.names) {
        auto value = ws->get(blob);
        if (!value)
          return make_error(runtime_errc::missing_blob,
                            "node " + name + " has no blob '" + blob + "'");
        result.blobs.push_back(blob_value{blob, *value});
      }
      return result;
    },
    [=](cancel_tasks&) -> caf::result<caf::unit_t> {
      cancel_all();
      if (tasks->running == 0)
        return caf::unit;
      tasks->stop_waiters.push_back(self->make_response_promise());
      return tasks->stop_waiters.back();
    },
    [=](reset_workspace&) {
      ws->replace_all({});
      return caf::unit;
    },
    [=](put_blobs& msg) {
      for (auto& blob : msg.blobs)
        ws->set(std::move(blob.name), std::move(blob.value));
      return caf::unit;
    },
  };
}

} // namespace

caf::actor spawn_node(caf::actor_system& sys, std::string name,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::chrono::milliseconds task_timeout) {
  return sys.spawn(node_behavior, std::move(name), std::move(ws),
                   std::move(ops), task_timeout);
}

} // namespace epochrt
