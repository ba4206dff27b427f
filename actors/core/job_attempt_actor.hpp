#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/api/epoch_observer.hpp>
#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/actors/detail/exchange_setup.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/actor_protocols.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt {

/// Where a job's nodes are: what the session gave when the job started,
/// and what it gives again after every recovery.
struct job_nodes {
  /// Node actors by name; every node the job's groups and channels use.
  std::map<std::string, node_actor> nodes;
  /// The nodes to checkpoint, bound to their persistence actors.
  std::vector<node_ref> checkpoint_nodes;
  /// Where the nodes exchange, for groups with channels or collectives.
  detail::exchange_setup exchange;
};

/// Builds the task group that uploads the checkpoints of an epoch (host
/// code: an upload_task_group_builder). Run on a thread of its own, never
/// on an actor's: it may block.
using upload_group_fn
  = std::function<caf::expected<task_group_def>(int64_t epoch)>;

/// What one attempt at a job needs.
struct job_attempt_config {
  job_def job;
  job_nodes where;
  /// The checkpoint manager actor, or an invalid handle for no checkpoints.
  checkpoint_manager_actor checkpoint_manager;
  std::chrono::milliseconds group_timeout{std::chrono::hours(24)};
  /// How long the manager may take for one request (its own timeout).
  std::chrono::milliseconds checkpoint_timeout{std::chrono::hours(1)};
  epoch_observer on_epoch;
  /// Consulted at the job.* injection points. Null: no faults.
  std::shared_ptr<fault_injector> faults;
  /// Set (from any thread) to stop at the next epoch boundary. Null: the
  /// job is never asked to stop.
  std::shared_ptr<const std::atomic<bool>> stop;

  /// True once `stop` is set.
  bool stop_requested() const noexcept {
    return stop && stop->load(std::memory_order_relaxed);
  }
  /// Set (from any thread) to cancel the running group and stop at once;
  /// polled every `stop_poll` while a group runs. Null: never.
  std::shared_ptr<const std::atomic<bool>> stop_now;
  std::chrono::milliseconds stop_poll{100};
  /// How long a group may still run once `stop` is set before it is
  /// cancelled as by `stop_now` (job_runner_options::stop_grace).
  std::chrono::milliseconds stop_grace{std::chrono::minutes(1)};
  /// True once `stop_now` is set.
  bool stop_now_requested() const noexcept {
    return stop_now && stop_now->load(std::memory_order_relaxed);
  }
  /// Told of groups, epochs, snapshots and loads. Null: nobody.
  std::shared_ptr<job_events> events;
  /// The upload group of the last epoch, run when that epoch is committed.
  /// Null: no upload.
  upload_group_fn upload_group;
};

/// Spawns one attempt at a job (Caffe2's JobRunner.train, once): the job
/// runner actor spawns one for the first run and one after every recovery.
///
/// Sent `run_attempt`, it first asks every node whether the process that
/// hosts it has the ops its tasks call (`check_ops`; a lack fails the
/// attempt with `runtime_errc::unknown_op` before anything runs), then finds
/// where to start — with a checkpoint manager,
/// `resume_from_epoch` when given (an error when not committed), else the
/// newest committed epoch, falling back to older committed epochs whose
/// checkpoints do load, down to a start from scratch — then runs the init
/// group and saves checkpoint 0 (from scratch) or loads the checkpoint,
/// runs the epoch group until a stop condition holds, saving after every
/// epoch, waits until the last epoch's commit has ended, runs the upload
/// group (when that epoch is committed), the download group and the exit
/// group, and replies `job_result` with the last epoch. A failed save is
/// logged as a warning and the job goes on; a failed group fails the
/// attempt, and so does a save or a last commit that a lost node cut short
/// (`node_lost`, naming what the job was doing and its epoch), for the job
/// runner to recover.
///
/// Once `cfg.stop` is set, the attempt starts no further epoch and no group
/// after the epoch loop: it waits until every checkpoint write has ended,
/// as at the end of the job, and fails with `stopped`, naming the last
/// epoch that ran. The epoch running when the flag is set runs to its end
/// and is saved.
job_attempt_actor spawn_job_attempt(caf::actor_system& sys,
                                    job_attempt_config cfg);

} // namespace epochrt
