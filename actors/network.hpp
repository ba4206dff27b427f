#pragma once

#include <chrono>

namespace caf {
class actor_system_config;
} // namespace caf

namespace epochrt {

/// How processes of one job watch each other over CAF's middleman.
struct network_options {
  /// How often connected processes send each other a heartbeat. Default:
  /// 500 ms.
  std::chrono::milliseconds heartbeat_interval{500};
  /// A peer heard nothing from for this long is dropped as lost, even when
  /// its socket stays open (a frozen or partitioned process). Default: 5 s;
  /// must be several heartbeat intervals.
  std::chrono::milliseconds connection_timeout{5000};
};

/// Prepares `cfg` for a process that hosts or uses remote nodes: everything
/// `configure` does, plus CAF's middleman with heartbeats on (CAF's default
/// is off, which leaves a frozen peer undetected forever). Call once, before
/// the actor_system is built from `cfg`. Master and daemons must agree on
/// the message types, so every process calls this.
void configure_network(caf::actor_system_config& cfg,
                       const network_options& options = {});

} // namespace epochrt
