#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace epochrt::test {

/// wire_echo_peer (or any program that prints "listening on HOST:PORT")
/// run as a child process. Its stdin is a pipe whose write end only this
/// object holds, so the child sees EOF when the object closes it or when
/// this process dies, however it dies. Its stderr is ours.
class peer_process {
public:
  /// Starts `program` with `args` and waits at most `timeout` for its
  /// "listening on" line. Throws std::runtime_error, with the child killed,
  /// when the line does not come in time.
  peer_process(const std::string& program, const std::vector<std::string>& args,
               std::chrono::milliseconds timeout);

  /// Closes the child's stdin, gives it 5 s to exit, then kills it
  /// (SIGKILL) and reaps it.
  ~peer_process();

  peer_process(const peer_process&) = delete;
  peer_process& operator=(const peer_process&) = delete;

  /// The port of the "listening on" line.
  uint16_t port() const noexcept {
    return port_;
  }

  /// True while the child has not exited.
  bool running();

  /// Closes the write end of the child's stdin.
  void close_stdin();

  /// Sends `sig` to a running child.
  void signal(int sig);

  /// Waits at most `timeout` for the child to exit; its exit code (128 + the
  /// signal number when a signal ended it), or -1 when it still runs.
  int wait(std::chrono::milliseconds timeout);

private:
  int pid_ = -1;
  int exit_code_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  uint16_t port_ = 0;
};

} // namespace epochrt::test
