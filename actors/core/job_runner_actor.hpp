#pragma once

#include <chrono>
#include <functional>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/core/job_attempt_actor.hpp>
#include <epochrt/messages/actor_protocols.hpp>

namespace epochrt {

/// Replaces the nodes whose connection was lost and says where the job's
/// nodes are now (host code: session::recover_lost_nodes, then the
/// session's nodes). Run on a thread of its own, never on an actor's: it
/// blocks until the nodes answer or the session gives up.
using recover_nodes_fn = std::function<caf::expected<job_nodes>()>;

/// What the job runner actor needs to drive a job.
struct job_runner_config {
  /// What every attempt gets; `attempt.where` is replaced after every
  /// recovery.
  job_attempt_config attempt;
  /// How many lost nodes the job survives (job_runner_options).
  int max_node_failures = 0;
  /// Longest a node may take to cancel its tasks before a recovery.
  std::chrono::milliseconds request_timeout{std::chrono::minutes(1)};
  /// Null: a lost node fails the job.
  recover_nodes_fn recover_nodes;
};

/// Spawns the actor that owns a job's control flow (Caffe2's
/// JobRunner.train). Sent `run_job`, it runs the job as one attempt
/// (job_attempt_actor.hpp: resume selection, init, epochs, fall-back, the
/// last save, upload, download and exit) and replies `job_result` with the
/// last epoch.
///
/// When an attempt fails with `node_lost` and fewer than
/// `max_node_failures` losses came before, it recovers: every node cancels
/// the tasks it still runs, every checkpoint write begun ends (a save begun
/// before the loss may still commit), `recover_nodes` brings the lost nodes
/// back, and a new attempt runs from the last committed epoch with every
/// workspace reset, whatever epoch `run_job` asked for. The result is that
/// of an uninterrupted run. Any other failure, a loss too many, a failed
/// recovery or a loss while a stop was requested ends the job with an
/// error (`node_lost` for a loss, `stopped` for a stop). Each loss and each
/// recovery is a job_event (`node_lost`, `recovered`).
job_runner_actor spawn_job_runner(caf::actor_system& sys,
                                  job_runner_config cfg);

} // namespace epochrt
