#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/actors/api/logging.hpp>
#include <epochrt/actors/api/tls_options.hpp>

namespace epochrt {

class fault_injector;

/// How processes of one job reach and watch each other over CAF's
/// middleman.
struct network_options {
  /// How often connected processes send each other a heartbeat. Default:
  /// 500 ms.
  std::chrono::milliseconds heartbeat_interval{500};
  /// A peer heard nothing from for this long is dropped as lost, even when
  /// its socket stays open (a frozen or partitioned process). Default: 5 s;
  /// must be several heartbeat intervals.
  std::chrono::milliseconds connection_timeout{5000};
  /// With it, every connection this process opens or accepts is mutual TLS
  /// (CAF's openssl module): encrypted, and only with peers whose
  /// certificate the CA signed. Default: none, plain TCP.
  std::optional<tls_options> tls;
};

/// Who may connect to an actor published with `publish_actor`, and what an
/// admitted peer may send. Without TLS, every connection passes epochrt's
/// admission handshake on the raw socket before CAF's middleman sees a byte
/// of it (see docs/remote-nodes.md, Admission): until then a peer can make the
/// process hold a few hundred bytes and nothing more, for `timeout` at most.
struct admission_options {
  /// A peer must prove, by an HMAC-SHA256 over fresh nonces, that it knows
  /// this secret to be admitted. None: any peer that completes the
  /// handshake is (loopback only). Default: none.
  std::optional<std::string> secret;
  /// Longest a connection may take, from its TCP connect to the end of the
  /// handshake; it is then closed. Default: 5 s.
  std::chrono::milliseconds timeout{5000};
  /// Connections in the handshake at once, at most; the oldest is closed to
  /// make room for a new one. Default: 64.
  size_t max_pending_connections = 64;
  /// Largest message an admitted peer may send, in bytes; a connection
  /// announcing a longer one is closed before it is read. Default: 4 GiB
  /// (the most CAF's protocol can announce).
  uint64_t max_message_bytes = UINT32_MAX;
  /// A fault plan whose remote.heartbeat point strikes at each heartbeat
  /// an admitted peer sends (see actors/remote/bounded_scribe.hpp). Null: none.
  std::shared_ptr<fault_injector> faults;
  /// Takes each admitted connection that asked to carry a checkpoint copy's
  /// bytes instead of CAF's protocol (a node daemon's copy_stream_receiver):
  /// owns the socket and returns true, or returns false and it is closed.
  /// Called on the admitting thread: it must not block. Null: such
  /// connections are refused. Default: null.
  std::function<bool(int fd)> copy_streams;
};

/// Prepares `cfg` for a process that hosts or uses remote nodes: everything
/// `configure` does, plus CAF's middleman with heartbeats on (CAF's default
/// is off, which leaves a frozen peer undetected forever), plus TLS when
/// `options.tls` is set. Call once, before the actor_system is built from
/// `cfg`. Master and daemons must agree on the message types and on TLS,
/// so every process calls this. `logging` as for `configure`. The error of
/// `check_tls_options` when the TLS files are not usable; `cfg` is then
/// unchanged.
[[nodiscard]] caf::error configure_network(caf::actor_system_config& cfg,
                                           const network_options& options = {},
                                           const log_options& logging = {});

/// True when `sys` was configured with TLS.
bool uses_tls(caf::actor_system& sys);

/// Makes `whom` reachable at `host`:`port` (0: any free port), with
/// SO_REUSEADDR so that a restarted process gets its port back. Over TLS
/// when the system uses it (the TLS handshake, with a certificate required
/// of the peer, then comes before CAF's protocol; `admission` is not used);
/// otherwise through the admission handshake with `admission`. The port
/// bound. Blocks the calling thread: call it from a host thread.
caf::expected<uint16_t> publish_actor(const caf::actor& whom,
                                      const std::string& host, uint16_t port,
                                      const admission_options& admission = {});

/// The actor published at `host`:`port` with `publish_actor`, over TLS
/// when the system uses it, otherwise after the admission handshake, proving
/// `secret` when given. Unlike CAF's `remote_actor`, which waits forever for
/// a peer that accepts the connection and never completes the handshake (a
/// frozen process), gives up after `timeout` with caf::sec::request_timeout
/// or caf::sec::connection_timeout. It may open up to ten connections
/// within `timeout`: CAF 0.17 closes one that a heartbeat tick finds in
/// its handshake, which is tried again. Errors of the admission handshake:
/// actors_errc::auth_failed when one side lacks the secret or they differ.
/// Blocks the calling thread: call it from a host thread, never from an
/// actor.
caf::expected<caf::actor>
connect_actor(caf::actor_system& sys, const std::string& host, uint16_t port,
              std::chrono::milliseconds timeout,
              const std::optional<std::string>& secret = std::nullopt);

/// What connect_actor does, without blocking: starts connecting and returns
/// at once; `done` is called once, on one of `sys`'s threads, with the
/// actor or the error (the errors of connect_actor). May be called from
/// anywhere, an actor included. `done` must not block.
void connect_actor_async(caf::actor_system& sys, const std::string& host,
                         uint16_t port, std::chrono::milliseconds timeout,
                         const std::optional<std::string>& secret,
                         std::function<void(caf::expected<caf::actor>)> done);

} // namespace epochrt
