#pragma once

// A child process of collectives_bench whose output the benchmark reads: a
// Gloo worker, `mpirun`, a CAF client. Unlike node_daemon it has no
// "listening on" handshake: the benchmark reads its stdout to the end.

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace epochrt::bench {

/// One running child, owned: destroying it stops the process (SIGTERM, then
/// SIGKILL) and reaps it, so that no error path leaves a child behind. The
/// child also gets SIGTERM from the kernel if the benchmark dies without
/// unwinding.
class child_process {
public:
  child_process() = default;
  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process();

  /// Starts `args` (the program first, looked up in PATH when it has no
  /// slash) with stderr appended to `log_path`, and stdout to a pipe that
  /// `read_output` reads when `capture_stdout`, else to the log as well.
  /// Throws std::runtime_error when it cannot be started.
  static child_process start(std::vector<std::string> args,
                             const std::string& log_path, bool capture_stdout);

  /// Everything the child writes to stdout until it closes it (it exits),
  /// or until `timeout` has passed; `timed_out` says which.
  std::string read_output(std::chrono::milliseconds timeout, bool& timed_out);

  /// Waits at most `grace` for the child to exit, then kills it (SIGTERM,
  /// then SIGKILL) and reaps it. Returns the exit status as the shell
  /// reports it (128 + signal), or -1 when there is no process. Idempotent.
  int finish(std::chrono::milliseconds grace);

  pid_t pid() const noexcept {
    return pid_;
  }

private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
};

} // namespace epochrt::bench
