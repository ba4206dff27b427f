#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <epochrt/epochrt.hpp>

#include "runtime.hpp"

namespace epochrt::python {

/// What `epochrt.serve_node` starts: an epochrt::node_server in this
/// process, serving the ops of `ops` (Python ops included) to one master
/// at a time, as `epochrt node` does.
///
/// It serves on an actor system of its own (`runtime::make_private`), not
/// the module's shared one: its threads and its middleman are the
/// daemon's, and a session in the same process reaches it over TCP as
/// any master would. Serving needs no GIL: it runs on that system's
/// threads and on the server's worker pool, which takes the GIL only for
/// the call of a Python op.
///
/// `stop` and the destructor wait for the attached nodes to be dropped,
/// whose tasks may be calling Python ops: they release the GIL while they
/// wait (the destructor when it holds it). Thread-safe.
class node_daemon {
public:
  /// Starts serving. Throws `error`: BadInput for what node_server::start
  /// refuses as bad input (a non-loopback address with neither a secret
  /// nor TLS, a root that cannot be made, a root another daemon holds,
  /// TLS files that are not usable); NodeLost (code unreachable) when the
  /// address cannot be listened on. Must be called without the GIL.
  node_daemon(std::shared_ptr<const epochrt::op_registry> ops,
              const network_options& network, node_server_options options);

  ~node_daemon();

  node_daemon(const node_daemon&) = delete;
  node_daemon& operator=(const node_daemon&) = delete;

  /// The port it listens on (also after `stop`).
  uint16_t port() const noexcept {
    return port_;
  }

  /// The host it listens on, as given.
  const std::string& host() const noexcept {
    return host_;
  }

  /// The checkpoint root, absolute.
  const std::string& checkpoint_root() const noexcept {
    return root_;
  }

  /// Closes the port and drops every attached node, its root lock kept
  /// until the daemon is destroyed (writes of dropped nodes may still be
  /// ending). Idempotent. Must be called without the GIL.
  void stop();

  /// True until `stop`.
  bool serving() const;

private:
  // Declared first: the server's actors must end before their system.
  std::shared_ptr<runtime> runtime_;
  std::shared_ptr<const epochrt::op_registry> ops_;
  std::string host_;
  uint16_t port_ = 0;
  std::string root_;
  mutable std::mutex mtx_;
  bool serving_ = false;
  std::unique_ptr<epochrt::node_server> server_;
};

} // namespace epochrt::python
