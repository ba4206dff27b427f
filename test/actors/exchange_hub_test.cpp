// How a daemon's exchange connects to the other daemons of its runs
// (actors/core/exchange_hub.hpp, exchange_hub_options::connect_peer): one
// attempt per address at a time, a connection never opened twice, and an
// address that could not be reached left alone for link_retry_delay.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>

#include <caf/scoped_actor.hpp>

#include "test/actors/test_support.hpp"
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/runtime/worker_pool.hpp>

using namespace epochrt;
using epochrt::test::system_fixture;

namespace {

// A daemon's exchange whose connect_peer counts its attempts and either
// fails them at once or reports the connection up.
struct linking_fixture : system_fixture {
  std::shared_ptr<worker_pool> pool = [] {
    auto made = worker_pool::make({1});
    BOOST_REQUIRE(made);
    return std::shared_ptr<worker_pool>{std::move(*made)};
  }();
  caf::scoped_actor relay{sys};
  caf::scoped_actor other{sys};
  std::atomic<int> attempts{0};
  bool reachable = false;

  std::shared_ptr<exchange_hub> make_hub(std::chrono::milliseconds retry) {
    exchange_hub_options opts;
    opts.link_retry_delay = retry;
    opts.connect_peer
      = [this](const std::string&, uint16_t, const caf::actor&,
               std::function<void(const caf::node_id&)> linked,
               std::function<void(const caf::node_id&)> unlinked) {
          ++attempts;
          if (reachable)
            linked(other->node());
          else
            unlinked({});
        };
    return exchange_hub::make(sys, pool, opts);
  }

  // A run of node n0 (this daemon, address ...:1000) with n1 on another
  // daemon whose address sorts after it: this daemon is the one to connect.
  exchange_plan plan_of(const exchange_hub& hub) {
    exchange_plan plan;
    plan.peers
      = {exchange_peer{"n0", hub.endpoint(), "127.0.0.1", 1000},
         exchange_peer{"n1", caf::actor{other.ptr()}, "127.0.0.1", 2000}};
    plan.relay = caf::actor{relay.ptr()};
    return plan;
  }

  void run_times(exchange_hub& hub, int n) {
    auto plan = plan_of(hub);
    for (int run = 1; run <= n; ++run) {
      BOOST_REQUIRE(!hub.begin(static_cast<uint64_t>(run), "n0", plan));
      hub.end(static_cast<uint64_t>(run), "n0", false);
    }
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(exchange_links, linking_fixture)

BOOST_AUTO_TEST_CASE(
  an_unreachable_daemon_is_tried_again_only_after_the_delay) {
  auto hub = make_hub(std::chrono::hours(1));
  run_times(*hub, 20);
  BOOST_TEST(attempts.load() == 1);
  hub->shutdown();
}

BOOST_AUTO_TEST_CASE(without_a_delay_every_run_tries_an_unreachable_daemon) {
  auto hub = make_hub(std::chrono::milliseconds(0));
  run_times(*hub, 5);
  BOOST_TEST(attempts.load() == 5);
  hub->shutdown();
}

BOOST_AUTO_TEST_CASE(a_daemon_connected_to_is_not_connected_to_again) {
  reachable = true;
  auto hub = make_hub(std::chrono::milliseconds(0));
  run_times(*hub, 20);
  BOOST_TEST(attempts.load() == 1);
  hub->shutdown();
}

BOOST_AUTO_TEST_SUITE_END()
