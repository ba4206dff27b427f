#include "actors/network.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/timespan.hpp>

#include "actors/configure.hpp"

namespace epochrt {

void configure_network(caf::actor_system_config& cfg,
                       const network_options& options) {
  configure(cfg);
  cfg.load<caf::io::middleman>();
  cfg.set("middleman.heartbeat-interval",
          caf::timespan{options.heartbeat_interval});
  cfg.set("middleman.connection-timeout",
          caf::timespan{options.connection_timeout});
  // Our processes talk to each other only: a peer of another application
  // is refused at the handshake.
  cfg.set("middleman.app-identifiers", std::vector<std::string>{"epochrt-1"});
}

} // namespace epochrt
