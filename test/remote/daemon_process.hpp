#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test/support/process_runner.hpp"

namespace epochrt::test {

/// An `epochrt node` daemon run as a child process on 127.0.0.1, its output
/// in files under `dir`. Killed (if still running) when destroyed.
class daemon_process {
public:
  /// Starts the daemon with `extra` arguments and waits (at most 10 s) for
  /// its "listening on" line. `port` 0 picks a free one. Throws
  /// std::runtime_error when it does not come up.
  daemon_process(const std::string& dir, const std::string& name,
                 const std::vector<std::string>& extra = {}, int port = 0);

  /// "127.0.0.1:PORT".
  std::string address() const;

  int port() const noexcept {
    return port_;
  }

  /// Its checkpoint root.
  const std::string& root() const noexcept {
    return root_;
  }

  /// What it wrote to stderr so far.
  std::string log() const;

  bool running() {
    return process_->running();
  }

  int pid() const noexcept {
    return process_->pid();
  }

  void signal(int sig) {
    process_->signal(sig);
  }

  int wait(std::chrono::milliseconds timeout) {
    return process_->wait(timeout);
  }

  /// Kills it with SIGKILL and reaps it.
  void kill();

  /// Starts it again on the same port with the same arguments.
  void restart();

private:
  void start();

  std::string dir_;
  std::string name_;
  std::vector<std::string> extra_;
  int port_;
  std::string root_;
  std::unique_ptr<background_process> process_;
};

/// The content of a file, or empty when it cannot be read.
std::string read_text(const std::string& path);

/// Polls `pred` every 10 ms for at most `timeout`; its last result.
template <class Predicate>
bool eventually(Predicate pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

} // namespace epochrt::test
