#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include "actors/tls_options.hpp"

namespace epochrt {

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

/// Prepares `cfg` for a process that hosts or uses remote nodes: everything
/// `configure` does, plus CAF's middleman with heartbeats on (CAF's default
/// is off, which leaves a frozen peer undetected forever), plus TLS when
/// `options.tls` is set. Call once, before the actor_system is built from
/// `cfg`. Master and daemons must agree on the message types and on TLS,
/// so every process calls this. The error of `check_tls_options` when the
/// TLS files are not usable; `cfg` is then unchanged.
[[nodiscard]] caf::error configure_network(caf::actor_system_config& cfg,
                                           const network_options& options = {});

/// True when `sys` was configured with TLS.
bool uses_tls(caf::actor_system& sys);

/// Makes `whom` reachable at `host`:`port` (0: any free port), over TLS
/// when the system uses it, with SO_REUSEADDR so that a restarted process
/// gets its port back. The port bound.
caf::expected<uint16_t> publish_actor(const caf::actor& whom,
                                      const std::string& host, uint16_t port);

/// The actor published at `host`:`port`, over TLS when the system uses it.
/// Unlike CAF's `remote_actor`, which waits forever for a peer that accepts
/// the connection and never completes the handshake (a frozen process),
/// gives up after `timeout` with caf::sec::request_timeout. Blocks the
/// calling thread: call it from a host thread, never from an actor.
caf::expected<caf::actor> connect_actor(caf::actor_system& sys,
                                        const std::string& host, uint16_t port,
                                        std::chrono::milliseconds timeout);

} // namespace epochrt
