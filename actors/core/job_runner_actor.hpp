#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

/// What the job runner actor needs to drive a job.
struct job_runner_config {
  job_def job;
  /// Node actors by name; every node the job's groups use.
  std::map<std::string, node_actor> nodes;
  /// The checkpoint manager actor, or an invalid handle for no checkpoints.
  checkpoint_manager_actor checkpoint_manager;
  /// The nodes to checkpoint, bound to their persistence actors.
  std::vector<node_ref> checkpoint_nodes;
  std::chrono::milliseconds group_timeout{std::chrono::hours(24)};
  std::chrono::milliseconds checkpoint_timeout{std::chrono::hours(1)};
  epoch_observer on_epoch;
  /// Consulted at the job.* injection points. Null: no faults.
  std::shared_ptr<fault_injector> faults;
  /// Set (from any thread) to stop at the next epoch boundary. Null: the
  /// job is never asked to stop.
  std::shared_ptr<const std::atomic<bool>> stop;
  /// Told of groups, epochs, snapshots and loads. Null: nobody.
  std::shared_ptr<job_events> events;
  /// Where the job's nodes exchange, for groups with channels or
  /// collectives.
  detail::exchange_setup exchange;
};

/// Spawns the actor that drives a job through its epochs (Caffe2's
/// JobRunner.train up to the end of the epoch loop). Sent `run_job`, it runs
/// the init group and saves checkpoint 0 (from scratch) or loads the
/// checkpoint to resume from, then runs the epoch group until a stop
/// condition holds, saving after every epoch, and replies `ckpt_epoch` with
/// the last epoch, once the last epoch's commit has ended. A failed save is
/// logged as a warning and the job goes on; a failed group fails the job, and
/// so does a save or a last commit that a lost node cut short (`node_lost`,
/// naming what the job was doing and its epoch), for the caller to recover.
///
/// Once `cfg.stop` is set, the runner starts no further epoch: before the
/// next one would start (after init and its checkpoint, after a resume's
/// load, after an epoch and its snapshots) it waits until every checkpoint
/// write has ended, as at the end of the job, and fails with `stopped`,
/// naming the last epoch that ran. The epoch running when the flag is set
/// runs to its end and is saved.
job_runner_actor spawn_job_runner(caf::actor_system& sys,
                                  job_runner_config cfg);

} // namespace epochrt
