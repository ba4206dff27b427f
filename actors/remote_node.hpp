#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/node_address.hpp"
#include "actors/session.hpp"

namespace epochrt {

/// How the master reaches one node on a daemon.
struct remote_node_config {
  std::string name;
  node_address address;
  /// The shared secret; none when the daemon has none.
  std::optional<std::string> secret;
  /// Per-request time limits, by kind of request.
  session_options timeouts;
  /// Longest the connection (TCP, TLS, CAF's handshake) may take, and each
  /// step of epochrt's handshake after it.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
};

/// A node attached on a daemon, seen from the master.
struct remote_node {
  /// A local actor that stands for the node: it takes every request a node
  /// actor or a persistence actor takes, forwards it with a time limit, and
  /// answers actors_errc::node_lost — naming the node and its address — for
  /// every request in flight and every later one once the connection is
  /// lost (peer gone, killed, or silent past the heartbeat timeout).
  caf::actor proxy;
  /// Set once the connection is lost; the proxy then only refuses.
  std::shared_ptr<const std::atomic<bool>> lost;
};

/// Connects to the daemon at `cfg.address`, proves and checks the shared
/// secret, and attaches node `cfg.name`. Blocks the calling thread (a host
/// thread, never an actor): at most `cfg.handshake_timeout` to connect, and
/// about twice that for the handshake. actors_errc::unreachable when no
/// daemon answers there, actors_errc::auth_failed when the secrets do not match,
/// actors_errc::rejected when the daemon refuses the node.
caf::expected<remote_node> connect_remote_node(caf::actor_system& sys,
                                               const remote_node_config& cfg);

} // namespace epochrt
