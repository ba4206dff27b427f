// The exchange of one process (actors/core/exchange_hub.hpp), driven
// directly: how a daemon's exchange connects to the other daemons of its
// runs (exchange_hub_options::connect_peer: one attempt per address at a
// time, a connection never opened twice, and an address that could not be
// reached left alone for link_retry_delay), and what it keeps of the
// collective calls of a run.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <caf/scoped_actor.hpp>

#include "test/actors/test_support.hpp"
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/runtime/worker_pool.hpp>

using namespace epochrt;
using epochrt::test::system_fixture;

namespace {

std::shared_ptr<worker_pool> started_pool(size_t threads) {
  auto made = worker_pool::make({threads});
  BOOST_REQUIRE(made);
  return std::shared_ptr<worker_pool>{std::move(*made)};
}

// A daemon's exchange whose connect_peer counts its attempts and either
// fails them at once or reports the connection up.
struct linking_fixture : system_fixture {
  std::shared_ptr<worker_pool> pool = started_pool(1);
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

namespace {

// Two nodes of one process, n0 and n1, with a task each in an all-reduce
// "ar" of run 1.
struct calls_fixture : system_fixture {
  std::shared_ptr<worker_pool> pool = started_pool(2);
  std::shared_ptr<exchange_hub> hub = exchange_hub::make(sys, pool);
  task_ref t0{"n0", "t0"};
  task_ref t1{"n1", "t1"};

  calls_fixture() {
    exchange_plan plan;
    plan.collectives = {collective_plan{
      "ar", collective_kind::all_reduce, reduce_op::sum, "", {t0, t1}}};
    plan.peers = {exchange_peer{"n0", hub->endpoint(), "", 0},
                  exchange_peer{"n1", hub->endpoint(), "", 0}};
    BOOST_REQUIRE(!hub->begin(1, "n0", plan));
    BOOST_REQUIRE(!hub->begin(1, "n1", plan));
  }

  ~calls_fixture() {
    hub->end(1, "n0", false);
    hub->end(1, "n1", false);
    hub->shutdown();
  }

  // Call `call` of "ar" by both tasks, with blobs of `count` f32 each
  // (large enough to be reduced on the pool): its results, once they came.
  std::vector<tensor_ptr> all_reduce(uint64_t call, size_t count) {
    std::vector<std::shared_ptr<exchange_wait>> waits;
    for (auto* t : {&t0, &t1}) {
      auto x = std::make_shared<const tensor>(make_tensor<float>(
        {static_cast<int64_t>(count)}, std::vector<float>(count, 1.0f)));
      waits.push_back(std::make_shared<exchange_wait>());
      hub->contribute(1, *t, collective_kind::all_reduce, "ar", call, {x},
                      waits.back());
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (auto& w : waits)
      while (!w->completed() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (auto& w : waits) {
      BOOST_REQUIRE(w->completed());
      BOOST_REQUIRE(!w->outcome().error);
    }
    return waits[0]->outcome().values;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(exchange_calls, calls_fixture)

// A training loop makes thousands of calls in one run: a call the exchange
// kept would keep its results alive, and their buffers could never be used
// again for the next calls' results.
BOOST_AUTO_TEST_CASE(the_results_of_a_finished_call_are_not_kept) {
  std::weak_ptr<const tensor> first;
  {
    auto values = all_reduce(0, 1 << 18);
    BOOST_REQUIRE(values.size() == 1u);
    BOOST_TEST(values[0]->values<float>()[0] == 2.0f);
    first = values[0];
  }
  BOOST_TEST(first.expired());
}

BOOST_AUTO_TEST_CASE(calls_after_a_forgotten_one_go_on) {
  for (uint64_t call = 0; call < 50; ++call) {
    auto values = all_reduce(call, 1 << 16);
    BOOST_REQUIRE(values.size() == 1u);
    auto* x = values[0]->values<float>();
    BOOST_TEST((x[0] == 2.0f && x[(1 << 16) - 1] == 2.0f));
  }
}

BOOST_AUTO_TEST_CASE(a_contribution_to_a_forgotten_call_is_ignored) {
  all_reduce(0, 16);
  auto late = std::make_shared<exchange_wait>();
  auto x = std::make_shared<const tensor>(make_tensor<float>({1}, {1.0f}));
  hub->contribute(1, t0, collective_kind::all_reduce, "ar", 0, {x}, late);
  BOOST_TEST(!late->completed());
  // The next call is not disturbed by it.
  auto values = all_reduce(1, 16);
  BOOST_TEST(values[0]->values<float>()[15] == 2.0f);
}

BOOST_AUTO_TEST_SUITE_END()
