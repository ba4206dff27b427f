#pragma once

// How the tests run programs, on the launcher of tools/process: to their
// end with their output collected (process_runner), or in the background
// (run_in_background). Failures to start throw, as a test wants.

#include <chrono>
#include <string>
#include <vector>

#include "tools/process/child_process.hpp"

namespace epochrt::test {

/// What a finished child process left behind.
struct process_result {
  /// The exit code; 128 + the signal number when a signal ended it.
  int exit_code = -1;
  /// True when the child ran past its time limit and was killed.
  bool timed_out = false;
  std::string out;
  std::string err;
};

/// Runs a program as a child process and collects its exit code, stdout and
/// stderr. The child gets no stdin (/dev/null) and the parent's environment.
class process_runner {
public:
  explicit process_runner(std::string program,
                          std::chrono::milliseconds timeout
                          = std::chrono::seconds(60));

  /// Runs the program with `args` (without argv[0]) and waits for it. A
  /// child still running after the timeout is killed (SIGKILL), so this
  /// always returns within about the timeout. Throws std::runtime_error
  /// when the child cannot be started.
  process_result run(const std::vector<std::string>& args) const;

private:
  std::string program_;
  std::chrono::milliseconds timeout_;
};

/// Starts `program` with `args` in the background, stdin /dev/null, stdout
/// and stderr appended to `out_file` and `err_file`, so that a test can
/// watch its progress, signal it and wait for it. Destroying the result
/// kills a child still running. Throws std::runtime_error on failure.
process::child_process run_in_background(const std::string& program,
                                         const std::vector<std::string>& args,
                                         const std::string& out_file,
                                         const std::string& err_file);

} // namespace epochrt::test
