#include <epochrt/actors/api/network.hpp>

#include <algorithm>
#include <chrono>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/timespan.hpp>

#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/remote/admission_middleman_actor.hpp>
#include <epochrt/actors/remote/basp_broker_closer.hpp>

namespace epochrt {

caf::error configure_network(caf::actor_system_config& cfg,
                             const network_options& options,
                             const log_options& logging) {
  if (options.tls)
    if (auto err = check_tls_options(*options.tls))
      return err;
  configure(cfg, logging);
  cfg.load<caf::io::middleman>();
  // Frees CAF's BASP broker at shutdown, which CAF 0.17 may leak (see the
  // class).
  cfg.load<detail::basp_broker_closer>();
  cfg.set("middleman.heartbeat-interval",
          caf::timespan{options.heartbeat_interval});
  cfg.set("middleman.connection-timeout",
          caf::timespan{options.connection_timeout});
  // Each message is read where it arrives, on the multiplexer's thread. A
  // BASP worker would first copy its whole payload (a collective's piece
  // of a MiB) to read it on another thread: a copy more of every byte
  // received, for a read that costs no more than that copy.
  cfg.set("middleman.workers", size_t{0});
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

namespace {

// A middleman actor for one publish or connect: it lives only for that
// call, since what it makes (a doorman, a connection) belongs to CAF's BASP
// broker afterwards.
caf::io::middleman_actor admission_actor(caf::actor_system& sys,
                                         const admission_options& options) {
  auto basp
    = sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  return sys
    .spawn<detail::admission_middleman_actor, caf::detached + caf::hidden>(
      std::move(basp), options);
}

// Both kinds of middleman actor speak CAF's protocol; the openssl one
// wraps each connection in a TLS session, ours runs the admission
// handshake first.
caf::io::middleman_actor
connector_of(caf::actor_system& sys, std::chrono::milliseconds timeout,
             const std::optional<std::string>& secret) {
  if (uses_tls(sys))
    return sys.openssl_manager().actor_handle();
  admission_options admission;
  admission.secret = secret;
  admission.timeout = timeout;
  return admission_actor(sys, admission);
}

using steady = std::chrono::steady_clock;

// At most this many connections per connect call: a bound for the retries
// below, in case something answers connection_timeout at once every time.
constexpr int max_connect_attempts = 10;

// CAF 0.17's BASP broker starts a new connection's "last seen" time at
// zero, so a heartbeat tick that comes before the peer's first bytes finds
// the connection silent for ages and closes it with connection_timeout:
// about one connect in (heartbeat interval / handshake time), a few per
// thousand with our intervals, and most with a very short interval. Such an
// early connection_timeout is worth another connection while time is left.
// A peer that never answers CAF's handshake after admission gets the same
// error at the first tick, and is tried again until the deadline or the
// bound: the wait stays within `timeout` either way.
bool worth_another_attempt(const caf::error& err, steady::time_point deadline,
                           int attempts) {
  return err == caf::sec::connection_timeout && attempts < max_connect_attempts
    && steady::now() < deadline;
}

std::chrono::milliseconds time_left(steady::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
    deadline - steady::now());
  return std::max(left, std::chrono::milliseconds{1});
}

// Ends what `connector_of` made for one attempt (the openssl manager's
// actor is the system's, and stays).
void release_connector(caf::local_actor* self,
                       const caf::io::middleman_actor& connector) {
  if (!uses_tls(self->system()))
    self->send_exit(connector, caf::exit_reason::user_shutdown);
}

// One connect request of `self`, through a connector bounded by the time
// left, and another after a spurious connection_timeout; `finish` gets the
// result.
void request_connection(caf::event_based_actor* self, const std::string& host,
                        uint16_t port, std::optional<std::string> secret,
                        steady::time_point deadline, int attempts,
                        std::function<void(caf::expected<caf::actor>)> finish) {
  auto left = time_left(deadline);
  auto connector = connector_of(self->system(), left, secret);
  self->request(connector, left, caf::connect_atom::value, host, port)
    .then(
      [=](const caf::node_id&, caf::strong_actor_ptr& ptr,
          const std::set<std::string>&) {
        release_connector(self, connector);
        if (ptr)
          finish(caf::actor_cast<caf::actor>(std::move(ptr)));
        else
          finish(caf::make_error(caf::sec::no_actor_published_at_port));
      },
      [=](caf::error& err) {
        release_connector(self, connector);
        if (worth_another_attempt(err, deadline, attempts))
          request_connection(self, host, port, secret, deadline, attempts + 1,
                             finish);
        else
          finish(std::move(err));
      });
}

} // namespace

caf::expected<uint16_t> publish_actor(const caf::actor& whom,
                                      const std::string& host, uint16_t port,
                                      const admission_options& admission) {
  auto& sys = whom.home_system();
  if (uses_tls(sys))
    return caf::openssl::publish(whom, port, host.c_str(), true);
  auto publisher = admission_actor(sys, admission);
  caf::expected<uint16_t> result{caf::sec::cannot_open_port};
  caf::scoped_actor self{sys};
  self
    ->request(publisher, caf::infinite, caf::publish_atom::value, port,
              caf::actor_cast<caf::strong_actor_ptr>(whom),
              std::set<std::string>{}, host, true)
    .receive(
      [&](uint16_t bound) {
        result = bound;
      },
      [&](caf::error& err) {
        result = std::move(err);
      });
  self->send_exit(publisher, caf::exit_reason::user_shutdown);
  return result;
}

caf::expected<caf::actor>
connect_actor(caf::actor_system& sys, const std::string& host, uint16_t port,
              std::chrono::milliseconds timeout,
              const std::optional<std::string>& secret) {
  auto deadline = steady::now() + timeout;
  caf::expected<caf::actor> result{caf::sec::no_actor_published_at_port};
  caf::scoped_actor self{sys};
  for (int attempts = 1;; ++attempts) {
    auto left = time_left(deadline);
    auto connector = connector_of(sys, left, secret);
    self->request(connector, left, caf::connect_atom::value, host, port)
      .receive(
        [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
            const std::set<std::string>&) {
          if (ptr)
            result = caf::actor_cast<caf::actor>(std::move(ptr));
          else
            result = caf::make_error(caf::sec::no_actor_published_at_port);
        },
        [&](caf::error& err) {
          result = std::move(err);
        });
    release_connector(self.ptr(), connector);
    if (result || !worth_another_attempt(result.error(), deadline, attempts))
      break;
  }
  return result;
}

void connect_actor_async(caf::actor_system& sys, const std::string& host,
                         uint16_t port, std::chrono::milliseconds timeout,
                         const std::optional<std::string>& secret,
                         std::function<void(caf::expected<caf::actor>)> done) {
  // `done` goes in as an argument, not a capture: CAF 0.17 dereferences a
  // null pointer to spawn a function actor without arguments (UBSan).
  auto body = [=](caf::event_based_actor* self,
                  std::function<void(caf::expected<caf::actor>)> done) {
    auto finish = [=](caf::expected<caf::actor> result) {
      done(std::move(result));
      self->quit();
    };
    request_connection(self, host, port, secret, steady::now() + timeout, 1,
                       finish);
  };
  sys.spawn<caf::hidden>(body, std::move(done));
}

} // namespace epochrt
