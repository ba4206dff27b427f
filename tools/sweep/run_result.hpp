#pragma once

#include <string>
#include <vector>

#include "tools/process/child_process.hpp"

namespace epochrt::cli::sweep {

/// How a run of a program ended: by itself, or killed because it outlived
/// its time limit.
struct run_status : process::exit_status {
  bool timed_out = false;
};

/// What one run of the job left: how it ended, its stdout and stderr, and
/// the nodes it moved to a spare daemon (its --stats-json's `node_moved`).
struct run_result {
  run_status status;
  std::string out;
  std::string err;
  std::vector<std::string> moved_nodes;
};

/// "exit 0", "exit 1", "killed by signal 9", "timed out".
std::string describe(const run_status& status);

/// Exited 0, in time.
bool succeeded(const run_status& status);

/// The last line starting with "epochrt: error:" in `err`, or empty.
std::string error_line(const std::string& err);

} // namespace epochrt::cli::sweep
