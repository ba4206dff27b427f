#pragma once

// What a test of an `epochrt run` in the background waits for: a line of
// the run's --stats-json file (tools/README.md), written as it happens,
// never the wording of a log line.

#include <chrono>
#include <cstdint>
#include <string>

namespace epochrt::test {

/// A --stats-json line to wait for.
struct run_event {
  /// Its "type": "epoch", "node_lost", "recovered", ...
  std::string type;
  /// "epoch" lines: this epoch's (-1: any).
  int64_t epoch = -1;
  /// "epoch" lines: only one saying the epoch's checkpoint was committed.
  bool committed = false;
  /// "node_lost" lines: this count of failures (-1: any).
  int64_t failures = -1;

  /// "epoch 2 committed", for a failed wait's message.
  std::string describe() const;
};

/// The checkpoint of `epoch` was committed. While an epoch's checkpoint is
/// written the next epoch runs: a test that sees epoch E committed acts
/// in epoch E + 1 or later.
run_event epoch_committed(int64_t epoch);

/// The `failures`-th lost node (with --max-failures: the recovery begins).
run_event node_lost_event(int64_t failures);

/// Whether the file at `stats_path` holds a line matching `event` within
/// `timeout` (a line still being written is not read).
bool stats_reached(const std::string& stats_path, const run_event& event,
                   std::chrono::milliseconds timeout);

} // namespace epochrt::test
