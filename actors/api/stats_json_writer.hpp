#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/task_output.hpp>

namespace epochrt {

class job;

/// Why `metrics` cannot be metrics of `the_job`'s lines: "no epoch task
/// outputs \"x\" (their outputs: \"a\", \"b\")" (names quoted as JSON
/// strings); empty when each is an output of a task of its epoch group.
/// What the CLI's --metric and Python's `metrics=` check before a run.
std::string metrics_problem(const job& the_job,
                            const std::vector<std::string>& metrics);

/// `epochrt run --stats-json FILE` (and Python's JobRunner.train(...,
/// stats_json=FILE, on_epoch=fn)): what every epoch cost, appended to FILE
/// as the job runs, one JSON object per line (JSON Lines), each written
/// whole and flushed, so that FILE is valid line by line even while the job
/// runs or after it was killed; or each line handed to a sink instead.
///
/// Lines (`"type"`):
/// - `epoch`: `epoch`, `time_s` (when the line was complete, from the
///   start of the run), `epoch_us` (the epoch's group, stop conditions and
///   snapshots; for epoch 0 the init group), `snapshot_us` (what the loop
///   waited for the snapshots), `commit_us` (the metadata's durable write),
///   `committed` (false: the save failed, `error` says why), `nodes` (per
///   node: `save_us`, `snapshot_us`, `write_us`, `sync_us`, `bytes`,
///   `bytes_written`, `blobs`, `blobs_written`, `blobs_skipped`), and the
///   running counts `failures` and `recoveries`. Without checkpoints only
///   the epoch's own figures. With metrics named (`set_metrics`),
///   `metrics`: {blob: {task: number}}, the epoch tasks' outputs of those
///   names that hold one number (a loss), NaN and infinities as null.
/// - `load`: a node's load of checkpoint `epoch` on a resume: `node`,
///   `load_us`, `bytes`, `blobs`.
/// - `node_lost` (`error`, `failures`) and `recovered` (`recovery_us`,
///   `recoveries`).
///
/// Thread-safe (job_events' contract): one mutex around each append.
class stats_json_writer : public job_events {
public:
  /// Opens (creates or truncates) `path`; null with `problem` set when it
  /// cannot be written.
  static std::shared_ptr<stats_json_writer>
  open(const std::string& path, bool checkpoints, std::string& problem);

  /// What `open` writes lines with: `path` created or truncated, each line
  /// appended with its newline and flushed. Empty when `path` cannot be
  /// written.
  static std::function<void(const std::string&)>
  file_sink(const std::string& path);

  /// Hands each line, without its newline, to `sink`, under the writer's
  /// mutex, on the thread of the event that completed it.
  static std::shared_ptr<stats_json_writer>
  to_sink(std::function<void(const std::string&)> sink, bool checkpoints);

  ~stats_json_writer() override;

  void on_event(const job_event& event) override;

  /// Names the task outputs that are metrics (see the `epoch` line). Call
  /// before the job runs; names the epoch group's tasks do not output are
  /// never in a line.
  void set_metrics(std::vector<std::string> blobs);

  /// The epoch group's outputs of `epoch`, as an `epoch_observer` gets
  /// them before the epoch's `epoch` event: the metrics among them go into
  /// that epoch's line. Thread-safe.
  void on_epoch_outputs(int64_t epoch, const std::vector<task_output>& outputs);

  /// Writes the epochs still waiting for a figure (a job that stopped or
  /// failed before their commit) as they are.
  void close();

private:
  struct node_figures {
    checkpoint_stats stats;
  };

  struct epoch_record {
    std::optional<int64_t> epoch_us;
    std::optional<int64_t> snapshot_us;
    std::optional<int64_t> commit_us;
    std::optional<bool> committed;
    std::string error;
    std::vector<checkpoint_stats> nodes;
    /// blob -> task -> value; null for a value that is not finite.
    std::map<std::string, std::map<std::string, std::optional<double>>> metrics;
  };

  stats_json_writer(std::function<void(const std::string&)> sink,
                    bool checkpoints);

  // Writes the record of `epoch` once every figure it waits for is there.
  void maybe_write(int64_t epoch, bool force) EPOCHRT_REQUIRES(mtx_);

  void write_line(const std::string& line) EPOCHRT_REQUIRES(mtx_);

  double seconds_now() const;

  annotated_mutex mtx_;
  std::function<void(const std::string&)> sink_ EPOCHRT_GUARDED_BY(mtx_);
  bool checkpoints_;
  job_event::clock::time_point origin_;
  std::map<int64_t, epoch_record> pending_ EPOCHRT_GUARDED_BY(mtx_);
  std::vector<std::string> metrics_ EPOCHRT_GUARDED_BY(mtx_);
  int64_t failures_ EPOCHRT_GUARDED_BY(mtx_) = 0;
  int64_t recoveries_ EPOCHRT_GUARDED_BY(mtx_) = 0;
};

} // namespace epochrt
