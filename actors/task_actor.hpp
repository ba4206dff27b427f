#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

namespace epochrt {

class op_registry;
class workspace;

/// Spawns an actor, on a thread of its own, that runs the one `task_def` it
/// is sent on `ws` of node `node`, replies `tasks_done` with the task's
/// outputs (or the task's error), and quits. The task stops at its next op
/// once `cancel` is set.
caf::actor spawn_task(caf::actor_system& sys, std::string node,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::shared_ptr<std::atomic<bool>> cancel);

} // namespace epochrt
