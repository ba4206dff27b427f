#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include <epochrt/actors/core/fwd.hpp>
#include <epochrt/messages/node_protocols.hpp>

namespace epochrt {

/// Spawns the actor of node `name`, which owns `ws` for the job.
///
/// It answers `run_tasks` by queueing each task on `pool` (`submit_task`:
/// long ops never hold CAF's scheduler), to run concurrently on `ws` as
/// the pool's threads allow;
/// the reply `tasks_done` lists their outputs in task order, or the first
/// task's error (a pool that takes no more work is one). Tasks still
/// running after `task_timeout` fail the group and are asked to stop at
/// their next op, as are the other tasks of a group that failed. It also
/// answers `fetch_blobs`, `put_blobs` and `reset_workspace`, each on the
/// pool because they wait for the workspace lock that a task
/// holds for a whole op that names a blob: requests of one caller are
/// served in order only when the caller waits for each reply (as every
/// epochrt caller does).
///
/// Frozen by a fault plan, it answers nothing any more: every request waits
/// in its mailbox, and only an exit (not a normal one) ends it.
///
/// Told to exit, it first answers every request it still holds with
/// `actors_errc::node_lost`, so that no requester waits for ever; a request
/// still in its mailbox (a frozen node's) is answered by CAF with
/// `caf::sec::request_receiver_down`, which every epochrt caller reads as
/// a lost node.
///
/// A group with channels or collectives (a `run_tasks` with a plan) runs
/// through `hub`, its process's exchange: the node begins the run there
/// before its tasks start, and `exchange_end` ends it (replying the state
/// of the channels the node hosted). Without a hub, such a group fails.
/// The node's cancellations end its tasks' waits there; its end (however
/// it ends) is a lost node there; a freeze is one once it has lasted the
/// hub's silence limit.
node_actor spawn_node(caf::actor_system& sys, std::string name,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::chrono::milliseconds task_timeout,
                      std::shared_ptr<worker_pool> pool,
                      std::shared_ptr<fault_injector> faults = nullptr,
                      std::shared_ptr<exchange_hub> hub = nullptr);

} // namespace epochrt
