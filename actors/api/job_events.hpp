#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {

/// One thing that happened while a job ran, as its job runner or its
/// checkpoint manager saw it: what a progress view, a statistics file or a
/// timeline is made of.
struct job_event {
  enum class kind : uint8_t {
    /// A task group ran on its nodes (`detail`: init, epoch, upload,
    /// download, exit), from `start` to `end`; `ok` false when it failed.
    group,
    /// Epoch `epoch` ran: its group, its stop conditions and the snapshots
    /// of its checkpoint, from `start` to `end` (what the loop waited for).
    epoch,
    /// Every node took the snapshot of its checkpoint of `epoch`: the loop
    /// waited from `start` to `end`. `ok` false when the save failed.
    snapshot,
    /// Node `node` finished writing its checkpoint of `epoch`; `stats`
    /// says what it cost, measured by the node. `end` is when the manager
    /// heard of it, `start` that less the node's `duration_us`.
    write,
    /// Epoch `epoch` was committed (`ok`), or its save failed (`detail`
    /// says why). From `start` to `end`: the metadata's durable write.
    commit,
    /// Node `node` loaded its checkpoint of `epoch` (a resume); `stats`.
    load,
    /// A node was lost (`detail`: the error); the job recovers or fails.
    node_lost,
    /// The lost nodes are back, from `start` (the loss) to `end`; the job
    /// goes on from the last committed epoch. `detail` counts the failure.
    recovered,
    /// Epoch `epoch` starts (`start` == `end`): what a progress view shows
    /// while an epoch of hours runs.
    epoch_started,
    /// A task (`detail`: its name) of a group that succeeded ran on node
    /// `node` from `start` to `end`, as the node measured it: placed from
    /// the group's start, so a remote node's clock does not matter.
    task,
    /// An op of such a task ran for `slow_op_threshold_us` or longer;
    /// `detail` is "TASK: OP_TYPE".
    op,
    /// Lost node `node` did not come back at its address and runs now on
    /// a spare daemon at `detail` ("host:port"), where a rerun must place
    /// it (`start` == `end`). Comes before the `recovered` of its loss.
    node_moved,
  };

  using clock = std::chrono::steady_clock;

  kind what = kind::group;
  int64_t epoch = -1;
  /// The node of a write or a load; empty for the job as a whole.
  std::string node;
  std::string detail;
  clock::time_point start;
  clock::time_point end;
  bool ok = true;
  /// Of a write or a load: the node's stats (zeros otherwise).
  checkpoint_stats stats;
};

/// Receives a job's events (job_runner_options::events, and
/// checkpoint_options::events for the commits and writes).
///
/// Thread contract: `on_event` is called on actor threads — the job
/// runner's and the checkpoint manager's, which run concurrently — and on
/// the thread that called `train`. An implementation must be thread-safe,
/// must not block for long (a disk append is fine, waiting on the job is
/// not) and must not call back into epochrt. An exception it throws is
/// logged and otherwise ignored: an observer never fails a job (the policy
/// of every observer, `epoch_observer` included).
class job_events {
public:
  virtual ~job_events();

  virtual void on_event(const job_event& event) = 0;
};

} // namespace epochrt
