#pragma once

#include <chrono>
#include <string>
#include <vector>

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

/// A child process left running in the background, its stdout and stderr
/// going to files, so a test can watch its progress and kill it. The
/// destructor kills and reaps a child still running.
class background_process {
public:
  /// Starts `program` with `args`; stdout and stderr are appended to
  /// `out_file` and `err_file`. Throws std::runtime_error on failure.
  background_process(const std::string& program,
                     const std::vector<std::string>& args,
                     const std::string& out_file, const std::string& err_file);

  ~background_process();

  background_process(const background_process&) = delete;
  background_process& operator=(const background_process&) = delete;

  /// True while the child has not exited.
  bool running();

  /// Sends `signal` to a running child.
  void signal(int signal);

  /// The child's process id.
  int pid() const noexcept {
    return pid_;
  }

  /// Waits at most `timeout` for the child to exit; its exit code (128 + the
  /// signal number when a signal ended it), or -1 when it still runs.
  int wait(std::chrono::milliseconds timeout);

private:
  int pid_ = -1;
  int exit_code_ = -1;
};

} // namespace epochrt::test
