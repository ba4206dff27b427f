#pragma once

// A child `epochrt node` process for epoch_bench. Knows nothing of CAF: it
// forks, reads the daemon's "listening on HOST:PORT" line, and stops it.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace epochrt::bench {

/// One running node daemon, owned: destroying it stops the process (SIGTERM,
/// then SIGKILL if it does not exit in time) and reaps it, so that no error
/// path of the benchmark leaves a daemon behind. The child also gets SIGTERM
/// from the kernel if the benchmark dies without unwinding (a crash, a
/// SIGKILL, an unhandled Ctrl-C).
class node_daemon {
public:
  node_daemon() = default;
  node_daemon(node_daemon&& other) noexcept;
  node_daemon& operator=(node_daemon&& other) noexcept;
  node_daemon(const node_daemon&) = delete;
  node_daemon& operator=(const node_daemon&) = delete;
  ~node_daemon();

  /// Starts `binary node --listen 127.0.0.1:0 --checkpoint-root root`, with
  /// its stderr (its log) appended to `log_path`, and waits at most
  /// `ready_timeout` for its port. Throws std::runtime_error, with the log's
  /// last lines, when it does not come up; the child is gone by then.
  static node_daemon start(const std::string& binary, const std::string& root,
                           const std::string& log_path,
                           std::chrono::milliseconds ready_timeout);

  /// Starts `args` (the program first) the same way: any program that
  /// prints "listening on HOST:PORT" as its first stdout line and exits on
  /// SIGTERM.
  static node_daemon start_program(std::vector<std::string> args,
                                   const std::string& log_path,
                                   std::chrono::milliseconds ready_timeout);

  uint16_t port() const noexcept {
    return port_;
  }

  pid_t pid() const noexcept {
    return pid_;
  }

  /// Sends SIGTERM and reaps the process, escalating to SIGKILL after
  /// `grace`. Returns the exit status as the shell reports it (128 + signal
  /// for a signalled process), or -1 when there is no process. Idempotent.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1; // kept open: the daemon may still write to it
  uint16_t port_ = 0;
  std::string log_path_;
};

/// The `epochrt` program beside this one (the directory of
/// /proc/self/exe, else of `argv0`), as CMake puts both in <build>/bin.
std::string sibling_program(const char* argv0, const std::string& name);

/// The last `lines` lines of the file at `path`; empty when unreadable.
std::string tail_of(const std::string& path, int lines);

} // namespace epochrt::bench
