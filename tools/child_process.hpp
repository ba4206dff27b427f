#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace epochrt::cli {

/// How a child process ended.
struct child_status {
  /// Killed because it outlived its time limit.
  bool timed_out = false;
  /// The signal that ended it, or 0.
  int signal = 0;
  /// Its exit code when it exited (signal == 0).
  int exit_code = 0;
};

/// A program started by `epochrt sweep`: argv[0] is a path, no shell is
/// involved. stdout and stderr go to files. The child gets its own process
/// group, so a kill reaches what it started. Owns the process: destroying a
/// running child kills it (SIGKILL) and reaps it.
class child_process {
public:
  struct options {
    std::vector<std::string> argv;
    /// Working directory; empty: the caller's.
    std::string cwd;
    /// "NAME=VALUE" entries added to (or replacing in) the environment.
    std::vector<std::string> env;
    /// Where stdout and stderr go ("/dev/null" when empty).
    std::string stdout_path;
    std::string stderr_path;
  };

  /// Starts the child; an error text when fork or exec fails.
  static std::optional<child_process> start(const options& opts,
                                            std::string& error);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  ~child_process();

  /// Waits up to `limit` for the child to end; kills it (SIGKILL to its
  /// group) when it does not, and reports timed_out.
  child_status wait(std::chrono::milliseconds limit);

  /// Whether it ended, without waiting; fills `status` when it did.
  bool poll(child_status& status);

  /// SIGKILL to the child's process group, then reaps it.
  void kill();

  pid_t pid() const noexcept {
    return pid_;
  }

private:
  explicit child_process(pid_t pid) : pid_(pid) {}

  pid_t pid_ = -1;
};

/// "exit 0", "exit 1", "killed by signal 9", "timed out".
std::string describe(const child_status& status);

} // namespace epochrt::cli
