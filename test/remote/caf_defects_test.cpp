// The defects of CAF 0.17 that epochrt works around, each reproduced: the
// test fails without its workaround. Two actor systems of this process talk
// over 127.0.0.1.
//
// - A terminated BASP broker keeps its mailbox open, so a heartbeat tick
//   delivered during shutdown kept the broker (and its connections) alive
//   forever (actors/remote/basp_broker_closer.hpp). A weak reference to
//   each broker tells whether it was freed.
// - A connection's "last seen" time starts at zero, so a heartbeat tick
//   during the handshake closes it with connection_timeout (connect_actor
//   tries again), and the scribe CAF closes before registering it kept
//   itself alive (actors/remote/bounded_scribe.hpp; LeakSanitizer sees
//   that one in `make asan`).

#define BOOST_TEST_MODULE caf_defects
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <optional>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/network.hpp>
#include <epochrt/epochrt.hpp>

using namespace epochrt;
using namespace std::chrono_literals;

namespace {

// Enough rounds that, without the fix, a tick lands in the shutdown window
// of some round (it did in the first three of every trial on this machine).
constexpr int rounds = 12;

// An actor system configured as our processes are, with a heartbeat tick
// every `heartbeat` (zero: no heartbeat).
struct ticking_config : caf::actor_system_config {
  explicit ticking_config(std::chrono::milliseconds heartbeat) {
    network_options options;
    options.heartbeat_interval = heartbeat;
    options.connection_timeout = 2000ms;
    BOOST_REQUIRE(!configure_network(*this, options));
    set("scheduler.max-threads", 2);
  }
};

// A server ticks every millisecond: the window between its broker's end
// and its clock's end, a few milliseconds, always sees a tick.
constexpr std::chrono::milliseconds server_heartbeat = 1ms;

// A client starts without heartbeats: CAF 0.17 closes a connection that a
// tick finds still in its handshake (its "last seen" time starts at zero),
// which a 1 ms heartbeat makes likely. Its ticks start once it is connected
// (`start_ticking`).
constexpr std::chrono::milliseconds client_heartbeat = 0ms;

// A 5 ms heartbeat: a tick finds about one connection in a hundred in its
// handshake, the more the busier the machine.
constexpr std::chrono::milliseconds fast_client_heartbeat = 5ms;

// A class rather than a function of no arguments: CAF 0.17 spawns such a
// function by dereferencing a null argument tuple, which UBSan rejects.
class echo_actor : public caf::event_based_actor {
public:
  using caf::event_based_actor::event_based_actor;

  caf::behavior make_behavior() override {
    return {
      [](int32_t x) {
        return x;
      },
    };
  }
};

// Why `x` holds no value; empty when it holds one (Boost.Test evaluates a
// message even when its assertion holds).
template <class T>
std::string why(const caf::expected<T>& x) {
  return x ? std::string{} : error_text(x.error());
}

// Ends an actor when it goes, so that a failed assertion does not leave the
// actor system waiting for it forever.
class actor_guard {
public:
  explicit actor_guard(caf::actor whom) : whom_(std::move(whom)) {
    // nop
  }

  ~actor_guard() {
    caf::anon_send_exit(whom_, caf::exit_reason::user_shutdown);
  }

  actor_guard(const actor_guard&) = delete;
  actor_guard& operator=(const actor_guard&) = delete;

  const caf::actor& get() const {
    return whom_;
  }

private:
  caf::actor whom_;
};

caf::actor_addr broker_of(caf::actor_system& sys) {
  return caf::actor_cast<caf::actor_addr>(
    sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP")));
}

// True while something still holds `addr`'s actor. Safe after its actor
// system is gone: the weak reference keeps the control block.
bool still_alive(const caf::actor_addr& addr) {
  auto strong = caf::actor_cast<caf::strong_actor_ptr>(addr);
  if (strong == nullptr)
    return false;
  // A leaked broker: keep the reference rather than free an actor whose
  // system is gone.
  new caf::strong_actor_ptr(std::move(strong));
  return true;
}

// Sends `sys`'s broker the tick its heartbeat would: the broker then
// schedules the next one itself, every millisecond, as with a configured
// 1 ms heartbeat.
void start_ticking(caf::actor_system& sys) {
  auto broker
    = sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  caf::anon_send(broker, caf::tick_atom::value, sys.clock().now(),
                 caf::timespan{1ms}, caf::timespan{2000ms});
}

// One server and one client system, connected, one request answered; the
// systems end in the order given. The brokers' addresses, for the caller
// to check once both systems are gone.
std::pair<caf::actor_addr, caf::actor_addr> connect_and_end(bool server_first) {
  auto server_cfg = std::make_unique<ticking_config>(server_heartbeat);
  auto server = std::make_unique<caf::actor_system>(*server_cfg);
  auto client_cfg = std::make_unique<ticking_config>(client_heartbeat);
  auto client = std::make_unique<caf::actor_system>(*client_cfg);
  auto server_broker = broker_of(*server);
  auto client_broker = broker_of(*client);
  {
    actor_guard echo{server->spawn<echo_actor>()};
    auto port = publish_actor(echo.get(), "127.0.0.1", 0);
    BOOST_REQUIRE_MESSAGE(port, "publish: " << why(port));
    auto remote = connect_actor(*client, "127.0.0.1", *port, 5s);
    BOOST_REQUIRE_MESSAGE(remote, "connect: " << why(remote));
    start_ticking(*client);
    caf::scoped_actor self{*client};
    int32_t answer = 0;
    self->request(*remote, 5s, int32_t{7})
      .receive(
        [&](int32_t x) {
          answer = x;
        },
        [&](caf::error& err) {
          BOOST_FAIL(error_text(err));
        });
    BOOST_REQUIRE_EQUAL(answer, 7);
  }
  if (server_first) {
    server.reset();
    client.reset();
  } else {
    client.reset();
    server.reset();
  }
  return {server_broker, client_broker};
}

} // namespace

BOOST_AUTO_TEST_CASE(a_client_that_ends_first_frees_both_brokers) {
  for (int round = 0; round < rounds; ++round) {
    auto [server_broker, client_broker] = connect_and_end(false);
    BOOST_TEST_REQUIRE(!still_alive(client_broker), "round " << round);
    BOOST_TEST_REQUIRE(!still_alive(server_broker), "round " << round);
  }
}

BOOST_AUTO_TEST_CASE(a_server_that_ends_first_frees_both_brokers) {
  for (int round = 0; round < rounds; ++round) {
    auto [server_broker, client_broker] = connect_and_end(true);
    BOOST_TEST_REQUIRE(!still_alive(server_broker), "round " << round);
    BOOST_TEST_REQUIRE(!still_alive(client_broker), "round " << round);
  }
}

BOOST_AUTO_TEST_CASE(a_tick_during_the_handshake_does_not_fail_a_connect) {
  ticking_config server_cfg{server_heartbeat};
  caf::actor_system server{server_cfg};
  actor_guard echo{server.spawn<echo_actor>()};
  auto port = publish_actor(echo.get(), "127.0.0.1", 0);
  BOOST_REQUIRE_MESSAGE(port, "publish: " << why(port));
  {
    ticking_config client_cfg{fast_client_heartbeat};
    caf::actor_system client{client_cfg};
    // Each call opens a connection and runs both handshakes, even to a
    // node already connected (CAF then keeps the first connection).
    for (int i = 0; i < 200; ++i) {
      auto remote = connect_actor(client, "127.0.0.1", *port, 5s);
      BOOST_TEST_REQUIRE(static_cast<bool>(remote),
                         "connect " << i << ": " << why(remote));
    }
  }
}
