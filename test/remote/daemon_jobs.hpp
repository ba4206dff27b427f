#pragma once

// What the suites that run jobs across `epochrt node` daemons share: the
// job files, the three daemons of pipeline3.json, and the check of its
// result. Every process real, every socket on 127.0.0.1, every wait
// bounded.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "test/support/process_runner.hpp"
#include "test/support/run_events.hpp"
#include "test/support/temp_dir.hpp"
#include "tools/process/child_process.hpp"
#include "tools/process/node_daemon.hpp"

namespace epochrt::test {

/// examples/jobs/pipeline3.json: three nodes, trainer_0..2, four epochs.
extern const std::string pipeline3;

/// Every node of pipeline3.json ends with this total after epoch 4.
extern const std::string final_total;

/// The `epochrt` command of this build with `args`, bounded to 60 s.
process_result cli(const std::vector<std::string>& args);

/// pipeline3.json with a pause of `pause_ms` before every task, so that a
/// daemon can be killed or frozen in the middle of an epoch; written into
/// `dir`.
std::string write_paced_job(const temp_dir& dir, int pause_ms = 150);

/// pipeline3.json (totals 145 after epoch 4) with a download group that
/// adds 1000 to every total and an exit group that adds 1: 1146 on every
/// node. Neither group is idempotent, so running one twice on a state that
/// was not reloaded shows. Without `victim_downloads`, trainer_1 has no
/// download task; with `kill_in_download`, trainer_2's download task starts
/// with KillDaemon (an op the test registers).
std::string with_download_and_exit(bool victim_downloads = true,
                                   bool kill_in_download = false);

/// Three daemons, d0..d2, each with its own root in one temporary
/// directory, for the nodes trainer_0..2.
struct three_daemons {
  temp_dir dir;
  std::vector<std::unique_ptr<process::node_daemon>> daemons;

  explicit three_daemons(const std::vector<std::string>& extra = {});

  /// "--node trainer_i=ADDRESS" for each daemon.
  std::vector<std::string> node_args() const;

  /// `run JOB --checkpoint-dir DIR/ckpt --stats-json DIR/run.stats`, the
  /// nodes, a --fetch of every node's total, then `extra`.
  std::vector<std::string> run_args(const std::string& job,
                                    std::vector<std::string> extra = {}) const;

  /// A job run in the background (stdout DIR/run.out, stderr DIR/run.err),
  /// for the cases that hurt a daemon while it runs.
  std::unique_ptr<process::child_process>
  start_run(const std::vector<std::string>& args);

  /// Whether the run's stats (run.stats) hold `event` within `timeout`.
  bool reached(const run_event& event, std::chrono::milliseconds timeout);
};

/// Checks that every node ends with `final_total` after epoch 4.
void check_totals(const std::string& out);

} // namespace epochrt::test
