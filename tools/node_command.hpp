#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <epochrt/logging.hpp>

#include "tools/network_flags.hpp"

namespace epochrt::cli {

/// The arguments of `epochrt node`.
struct node_options {
  /// "HOST:PORT" to listen on; port 0 picks a free one.
  std::string listen = "127.0.0.1:0";
  /// Where the attached nodes' checkpoints and files go.
  std::string checkpoint_root = ".";
  /// Leaves the root unlocked (node_server_options::lock_root).
  bool shared_root = false;
  /// The file holding the secret masters must prove they know.
  std::optional<std::string> secret_file;
  /// Largest tensor a master may send.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  /// A master silent this long is dropped (heartbeats every fifth of it).
  int64_t connection_timeout_ms = 5000;
  /// A connection that has not passed the admission handshake this long
  /// after it connected is closed.
  int64_t admission_timeout_ms = 5000;
  /// Mutual TLS with the masters.
  tls_flags tls;
  /// A fault plan for this daemon (docs/fault-plans.md).
  std::optional<std::string> fault_plan;
  /// Appends every injection point the daemon reaches to this file.
  std::optional<std::string> fault_trace;
  /// Threads that run the tasks of the daemon's nodes; 0: the default
  /// (node_server_options::worker_threads).
  size_t worker_threads = 0;
  /// Log lines below this level are dropped (-q, -v).
  log_level log = log_level::info;
};

/// Runs `epochrt node`: a node daemon that serves one master at a time
/// until SIGINT or SIGTERM. Prints "listening on HOST:PORT" to stdout once
/// it accepts connections; logs to stderr. Returns the exit code: 0 after a
/// signal, exit_bad_input for bad arguments (a non-loopback address with
/// neither a secret nor TLS, a bad secret file, a fault plan that cannot be
/// read or is invalid, a root another daemon holds — one line on stderr),
/// exit_failure when the address cannot be listened on.
int run_node(const node_options& opts);

} // namespace epochrt::cli
