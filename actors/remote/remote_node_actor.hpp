#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/session.hpp>
#include <epochrt/messages/node_protocols.hpp>

namespace epochrt {

/// How the master reaches one node on a daemon.
/// What a fault plan did to the link between the master and one node. It
/// outlives a connection: the master's reconnection to a node that is
/// partitioned (until the window ends) or frozen (for good) fails as it
/// would against a real partition or a frozen host.
struct remote_link_faults {
  /// steady_clock time, in nanoseconds since its epoch, until which no
  /// message passes; 0: none.
  std::atomic<int64_t> partitioned_until{0};
  std::atomic<bool> frozen{false};
};

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
  /// Shared by the connections to this node, for the faults of
  /// `timeouts.faults` (remote.attach, remote.send, remote.receive); null:
  /// connect_remote_node makes one of its own.
  std::shared_ptr<remote_link_faults> link;
};

/// A node attached on a daemon, seen from the master.
struct remote_node {
  /// A local actor that stands for the node: it takes every request a node
  /// actor or a persistence actor takes, forwards it with a time limit, and
  /// answers actors_errc::node_lost — naming the node and its address — for
  /// every request in flight and every later one once the connection is
  /// lost (peer gone, killed, or silent past the heartbeat timeout).
  node_and_persistence_actor proxy;
  /// Set once the connection is lost; the proxy then only refuses.
  std::shared_ptr<const std::atomic<bool>> lost;
  /// The daemon's exchange endpoint: where the tasks of other nodes reach
  /// the node's channels and collectives.
  caf::actor exchange;
};

/// Connects to the daemon at `cfg.address`, proves and checks the shared
/// secret, and attaches node `cfg.name`. Blocks the calling thread (a host
/// thread, never an actor): at most `cfg.handshake_timeout` to connect, and
/// about twice that for the handshake. actors_errc::unreachable when no
/// daemon answers there, actors_errc::auth_failed when the secrets do not
/// match, actors_errc::rejected when the daemon refuses the node.
///
/// Faults of `cfg.timeouts.faults` on the master's side of the remote path
/// (docs/fault-plans.md): remote.attach strikes before the connection is
/// made (crash, delay — on the calling thread — or io_error, which fails
/// the attach with fault_errc::injected); remote.send before each request
/// is forwarded and remote.receive as each reply arrives (detail: the
/// message's type, epoch: the message's when it has one):
///
/// - delay: the request is sent, or the reply delivered, `ms` later
///   (a timer, never a sleep);
/// - duplicate: the request goes to the daemon twice, with the same CAF
///   request id (the gate obeys it once, see node_gate_actor.hpp); a reply is
///   delivered twice, and the second, finding its request answered, is
///   ignored — as CAF ignores a second response;
/// - drop: the message is lost. On a TCP stream a message is lost only when
///   the stream breaks, so the master does what it does when CAF finds a
///   connection silent: after the connection timeout (the middleman's
///   `connection-timeout`; at most the request's own timeout) the node is
///   lost — every request in flight fails with actors_errc::node_lost and
///   `remote_node::lost` is set — so a job runner with failures left
///   reconnects;
/// - partition: no message passes, either way, for `ms`; the ones that
///   try are lost (as for drop), and when the window is at least the
///   connection timeout the node is lost at that timeout even if none
///   tried, as CAF's heartbeats would make it. Reconnections fail
///   (actors_errc::unreachable) until the window ends;
/// - kill_node: the master tells the daemon to stop the node (its gate,
///   node and persistence actors, with the injected error as the reason;
///   the daemon goes on serving) and the node is lost at once;
/// - freeze_node: the node stops answering for good: nothing passes, the
///   node is lost at the connection timeout, and every reconnection fails.
caf::expected<remote_node> connect_remote_node(caf::actor_system& sys,
                                               const remote_node_config& cfg);

} // namespace epochrt
