#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/process/child_process.hpp"

namespace epochrt::process {

/// An `epochrt node` daemon on 127.0.0.1 run as a child process: the
/// benchmarks', the tests' and `epochrt sweep`'s. Started, it has printed
/// its "listening on" line, so port() is the port it serves.
class node_daemon : public child_process {
public:
  struct options {
    /// The `epochrt` program.
    std::string program;
    /// Its --checkpoint-root.
    std::string root;
    /// The port on 127.0.0.1; 0: a free one.
    uint16_t port = 0;
    /// More arguments of `epochrt node`.
    std::vector<std::string> args;
    /// Where its stderr (its log) is appended.
    std::string log_path;
    /// How long it may take to print its "listening on" line.
    std::chrono::milliseconds ready_timeout{10000};
    /// How it is started and stopped (own_group, parent_death_signal,
    /// stop_signal, ...); its argv, stdout and stderr are set from the
    /// fields above.
    child_process::options launch;
  };

  /// Why start gave no daemon.
  enum class failure {
    /// It could not be started at all.
    cannot_start,
    /// It ended before it listened: on a fixed port, the port may still
    /// be held by a daemon that just died.
    ended,
    /// It printed no "listening on" line in time; it was killed.
    silent,
  };

  /// Starts the daemon and reads its port. nullopt with `error` (and
  /// `why`, when given) when it does not come up; the child is gone then.
  static std::optional<node_daemon>
  start(const options& opts, std::string& error, failure* why = nullptr);

  /// Starts it again, with the same options, on the port it had; stops it
  /// first if it still runs. False with `error` when it does not come up.
  bool restart(std::string& error);

  /// "127.0.0.1:PORT".
  std::string address() const;

  const std::string& root() const noexcept {
    return opts_.root;
  }

  /// What it wrote to its log so far.
  std::string log() const;

private:
  node_daemon(child_process proc, options opts)
    : child_process(std::move(proc)), opts_(std::move(opts)) {}

  options opts_;
};

} // namespace epochrt::process
