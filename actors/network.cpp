#include "actors/network.hpp"

#include <set>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/timespan.hpp>

#include "actors/configure.hpp"

namespace epochrt {

caf::error configure_network(caf::actor_system_config& cfg,
                             const network_options& options) {
  if (options.tls)
    if (auto err = check_tls_options(*options.tls))
      return err;
  configure(cfg);
  cfg.load<caf::io::middleman>();
  cfg.set("middleman.heartbeat-interval",
          caf::timespan{options.heartbeat_interval});
  cfg.set("middleman.connection-timeout",
          caf::timespan{options.connection_timeout});
  // Our processes talk to each other only: a peer of another application
  // is refused at the handshake.
  cfg.set("middleman.app-identifiers", std::vector<std::string>{"epochrt-1"});
  if (options.tls) {
    // CAF requires certificates on both sides as soon as any of these is
    // set (SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = options.tls->certificate_file;
    cfg.openssl_key = options.tls->key_file;
    cfg.openssl_cafile = options.tls->ca_file;
  }
  return {};
}

bool uses_tls(caf::actor_system& sys) {
  return sys.has_openssl_manager();
}

caf::expected<uint16_t> publish_actor(const caf::actor& whom,
                                      const std::string& host, uint16_t port) {
  auto& sys = whom.home_system();
  if (uses_tls(sys))
    return caf::openssl::publish(whom, port, host.c_str(), true);
  return sys.middleman().publish(whom, port, host.c_str(), true);
}

caf::expected<caf::actor> connect_actor(caf::actor_system& sys,
                                        const std::string& host, uint16_t port,
                                        std::chrono::milliseconds timeout) {
  // Both middleman actors speak the same protocol; the openssl one wraps
  // each connection in a TLS session.
  auto connector = uses_tls(sys) ? sys.openssl_manager().actor_handle()
                                 : sys.middleman().actor_handle();
  caf::expected<caf::actor> result{caf::sec::no_actor_published_at_port};
  caf::scoped_actor self{sys};
  self->request(connector, timeout, caf::connect_atom::value, host, port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
          const std::set<std::string>&) {
        if (ptr)
          result = caf::actor_cast<caf::actor>(std::move(ptr));
      },
      [&](caf::error& err) {
        result = std::move(err);
      });
  return result;
}

} // namespace epochrt
