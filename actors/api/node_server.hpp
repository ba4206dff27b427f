#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

namespace epochrt {

class copy_stream_receiver;
class dir_lock;
class exchange_hub;
class fault_injector;

class op_registry;
class worker_pool;

/// How a node daemon serves.
struct node_server_options {
  /// The address to listen on. Default: 127.0.0.1. An address that is not
  /// loopback (127.0.0.0/8, ::1 or "localhost"; names are not resolved)
  /// needs a `secret`, or TLS on the actor system (`configure_network` with
  /// `network_options::tls`), or both: whoever reaches the port could
  /// otherwise run ops here.
  std::string host = "127.0.0.1";
  /// The port; 0 picks a free one (see `node_server::port`). Default: 0.
  uint16_t port = 0;
  /// Every checkpoint and every path argument of an op lands under this
  /// directory, created when missing. Default: the working directory.
  std::string checkpoint_root = ".";
  /// Whether the server locks `checkpoint_root` for its life (see
  /// `dir_lock`), so that a second daemon on the same root is refused.
  /// False only for daemons of one job that share a root on purpose, each
  /// hosting other nodes (as `epochrt sweep` runs them on one machine).
  /// Default: true.
  bool lock_root = true;
  /// The shared secret a master must prove it knows before it is obeyed.
  /// None: no authentication by secret; allowed on loopback, or on any
  /// address when TLS authenticates the master by its certificate.
  std::optional<std::string> secret;
  /// Largest tensor a master may send, in bytes; a message may carry at
  /// most this plus `message_overhead_bytes` (a connection announcing a
  /// longer one is closed before it is read). Default: 1 GiB.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  /// Longest a connection may take to pass the admission handshake (and,
  /// with a secret, prove it); it is then closed. Default: 5 s.
  std::chrono::milliseconds admission_timeout = std::chrono::seconds(5);
  /// Connections in the admission handshake at once, at most; the oldest
  /// is closed to make room. Default: 64.
  size_t max_pending_connections = 64;
  /// Longest a task of one group may run. Default: 24 h.
  std::chrono::milliseconds task_timeout = std::chrono::hours(24);
  /// The fault plan the daemon's nodes and its side of the remote path
  /// consult (docs/fault-plans.md). Null: no faults.
  std::shared_ptr<fault_injector> faults;
  /// Threads of the worker pool that runs the tasks of every node the
  /// daemon hosts (and their fetches, puts, resets and request checks),
  /// created by `start`, none later; see `session_options::worker_threads`
  /// for what its size means. 0: the machine's hardware threads, at least 4.
  size_t worker_threads = 0;
};

/// What a message may carry beyond `max_tensor_bytes`: names, shapes, op
/// definitions.
constexpr uint64_t message_overhead_bytes = uint64_t{1} << 20;

/// A node daemon: hosts the nodes one master attaches — each with its
/// workspace, its tasks on the daemon's worker pool and its persistence actor
/// writing under the checkpoint root — and obeys that master only, after the
/// handshake of messages/remote_protocol.hpp. Without TLS, every connection
/// passes the admission handshake first (`admission_options`), which bounds
/// what an unauthenticated peer can make the daemon hold. When the master goes
/// away (its process exits, dies, or stops answering heartbeats), its nodes are
/// dropped and the next master may attach.
///
/// Borrows `sys`, which must outlive the server and have the middleman
/// loaded (`configure_network`). Not copyable; stop() or destruction
/// closes the port and drops every node.
class node_server {
public:
  /// Listens and serves in `sys`'s threads, with the root locked (unless
  /// `lock_root` is false) until the server is destroyed.
  /// actors_errc::invalid_argument when a non-loopback address has neither
  /// a secret nor TLS (see `host`), or the root cannot be made;
  /// persistence_errc::locked when another daemon (or job) holds the
  /// root's lock, naming its pid; actors_errc::unreachable when the address
  /// cannot be listened on; runtime_errc::op_failed when the threads of the
  /// worker pool cannot be created.
  static caf::expected<std::unique_ptr<node_server>>
  start(caf::actor_system& sys, std::shared_ptr<const op_registry> ops,
        node_server_options options);

  ~node_server();

  node_server(const node_server&) = delete;
  node_server& operator=(const node_server&) = delete;

  /// The port it listens on.
  uint16_t port() const noexcept {
    return port_;
  }

  /// The checkpoint root, absolute.
  const std::string& checkpoint_root() const noexcept {
    return root_;
  }

  /// Closes the port and drops every attached node. Idempotent.
  void stop();

private:
  node_server(caf::actor_system& sys, caf::actor gatekeeper, caf::actor store,
              uint16_t port, std::string root, std::unique_ptr<dir_lock> lock,
              std::shared_ptr<fault_injector> faults,
              std::shared_ptr<worker_pool> pool,
              std::shared_ptr<exchange_hub> hub,
              std::shared_ptr<copy_stream_receiver> streams);

  caf::actor_system& sys_;
  caf::actor gatekeeper_;
  caf::actor store_; // the replica store
  uint16_t port_;
  std::string root_;
  // Kept past stop(): writes of the dropped nodes may still be ending.
  std::unique_ptr<dir_lock> lock_;
  std::shared_ptr<fault_injector> faults_;
  std::shared_ptr<worker_pool> pool_;
  std::shared_ptr<exchange_hub> hub_;
  std::shared_ptr<copy_stream_receiver> streams_; // null under TLS
};

} // namespace epochrt
