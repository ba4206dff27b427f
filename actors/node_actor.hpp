#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

namespace epochrt {

class op_registry;
class workspace;

/// Spawns the actor of node `name`, which owns `ws` for the job.
///
/// It answers `run_tasks` by spawning one task actor per task (on threads of
/// their own, so long ops never hold CAF's scheduler) that run concurrently
/// on `ws`; the reply `tasks_done` lists their outputs in task order, or the
/// first task's error. A task still running after `task_timeout` fails the
/// group and is asked to stop at its next op. It also answers `fetch_blobs`
/// and `put_blobs`.
caf::actor spawn_node(caf::actor_system& sys, std::string name,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::chrono::milliseconds task_timeout);

} // namespace epochrt
