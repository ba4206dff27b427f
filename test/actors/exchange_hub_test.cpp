// The exchange of one process (actors/core/exchange_hub.hpp), driven
// directly: how a daemon's exchange connects to the other daemons of its
// runs (exchange_hub_options::connect_peer: only to daemons it exchanged
// data with, one attempt per address at a
// time, a connection never opened twice, and an address that could not be
// reached left alone for link_retry_delay, a few opened at a time), when a
// daemon whose endpoint went down is lost, and what it keeps of the
// collective calls of a run.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "test/actors/test_support.hpp"
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/messages/error_text.hpp>
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

  // `n` runs, in each of which this daemon sends data (a channel reply) to
  // the other: from the second on, the other is one to connect to.
  void run_times(exchange_hub& hub, int n) {
    auto plan = plan_of(hub);
    for (int run = 1; run <= n; ++run) {
      BOOST_REQUIRE(!hub.begin(static_cast<uint64_t>(run), "n0", plan));
      send_data(hub, caf::actor{other.ptr()}, static_cast<uint64_t>(run));
      hub.end(static_cast<uint64_t>(run), "n0", false);
    }
  }

  static void send_data(exchange_hub& hub, const caf::actor& to, uint64_t run) {
    exchange_reply reply;
    reply.run = run;
    hub.deliver(to, caf::make_message(std::move(reply)));
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
  BOOST_TEST(attempts.load() == 4); // from the second run on
  hub->shutdown();
}

BOOST_AUTO_TEST_CASE(a_daemon_connected_to_is_not_connected_to_again) {
  reachable = true;
  auto hub = make_hub(std::chrono::milliseconds(0));
  run_times(*hub, 20);
  BOOST_TEST(attempts.load() == 1);
  hub->shutdown();
}

// A daemon connects only to the daemons it exchanged data with: an all-
// reduce of a small blob, reduced by one owner, links every other daemon
// to that one only, not every pair of the job.
BOOST_AUTO_TEST_CASE(a_daemon_nothing_was_exchanged_with_is_not_connected_to) {
  reachable = true;
  auto hub = make_hub(std::chrono::milliseconds(0));
  auto plan = plan_of(*hub);
  for (uint64_t run = 1; run <= 5; ++run) {
    BOOST_REQUIRE(!hub->begin(run, "n0", plan));
    hub->end(run, "n0", false);
  }
  BOOST_TEST(attempts.load() == 0);
  hub->shutdown();
}

BOOST_AUTO_TEST_CASE(
  a_daemon_that_sent_data_through_the_relay_is_connected_to) {
  reachable = true;
  auto hub = make_hub(std::chrono::milliseconds(0));
  auto plan = plan_of(*hub);
  BOOST_REQUIRE(!hub->begin(1, "n0", plan));
  exchange_reply reply;
  reply.run = 1;
  exchange_relayed relayed{caf::actor{other.ptr()},
                           caf::make_message(std::move(reply))};
  hub->receive(caf::actor{relay.ptr()}, relayed);
  hub->end(1, "n0", false);
  BOOST_TEST(attempts.load() == 0);
  BOOST_REQUIRE(!hub->begin(2, "n0", plan));
  hub->end(2, "n0", false);
  BOOST_TEST(attempts.load() == 1);
  hub->shutdown();
}

// A task's end goes to every process of a run, partner or not.
BOOST_AUTO_TEST_CASE(a_daemon_that_told_only_of_task_ends_is_not_connected_to) {
  reachable = true;
  auto hub = make_hub(std::chrono::milliseconds(0));
  auto plan = plan_of(*hub);
  BOOST_REQUIRE(!hub->begin(1, "n0", plan));
  exchange_task_end end;
  end.run = 1;
  end.task = task_ref{"n1", "t1"};
  exchange_relayed relayed{caf::actor{other.ptr()},
                           caf::make_message(std::move(end))};
  hub->receive(caf::actor{relay.ptr()}, relayed);
  hub->end(1, "n0", false);
  BOOST_REQUIRE(!hub->begin(2, "n0", plan));
  hub->end(2, "n0", false);
  BOOST_TEST(attempts.load() == 0);
  hub->shutdown();
}

// A daemon of a job of 11 opens its connections to the 10 others a few at
// a time, the rest at later runs: all at once, every daemon of a large job
// would starve the machine's processes.
BOOST_AUTO_TEST_CASE(connections_are_opened_a_few_at_a_time) {
  // The attempts' ends, called once the test decides they failed (the
  // processes of a test share one node id, so none can stand for a
  // connection made to one daemon and not the others).
  std::vector<std::function<void(const caf::node_id&)>> pending;
  exchange_hub_options opts;
  opts.max_links_opening = 3;
  opts.link_retry_delay = std::chrono::milliseconds(0);
  opts.connect_peer = [&](const std::string&, uint16_t, const caf::actor&,
                          std::function<void(const caf::node_id&)>,
                          std::function<void(const caf::node_id&)> unlinked) {
    ++attempts;
    pending.push_back(unlinked);
  };
  auto hub = exchange_hub::make(sys, pool, opts);
  std::vector<std::unique_ptr<caf::scoped_actor>> daemons;
  exchange_plan plan;
  plan.relay = caf::actor{relay.ptr()};
  plan.peers.push_back(exchange_peer{"n0", hub->endpoint(), "127.0.0.1", 1000});
  for (uint16_t i = 1; i <= 10; ++i) {
    daemons.push_back(std::make_unique<caf::scoped_actor>(sys));
    plan.peers.push_back(
      exchange_peer{"n" + std::to_string(i), caf::actor{daemons.back()->ptr()},
                    "127.0.0.1", static_cast<uint16_t>(2000 + i)});
  }
  auto run = [&](uint64_t id) {
    BOOST_REQUIRE(!hub->begin(id, "n0", plan));
    for (auto& daemon : daemons)
      send_data(*hub, caf::actor{daemon->ptr()}, id);
    hub->end(id, "n0", false);
  };
  run(1); // through the relay: nothing exchanged yet
  BOOST_TEST(attempts.load() == 0);
  run(2);
  run(3);
  BOOST_TEST(attempts.load() == 3);
  for (auto& unlinked : pending)
    unlinked({});
  pending.clear();
  run(4);
  BOOST_TEST(attempts.load() == 6);
  hub->shutdown();
}

// An all-reduce of run `run` between t0 on n0 (this daemon) and t1 on n1
// (the other daemon), which t0 has joined: t0's wait.
std::shared_ptr<exchange_wait>
joined_all_reduce(exchange_hub& hub, exchange_plan plan, uint64_t run) {
  task_ref t0{"n0", "t0"};
  task_ref t1{"n1", "t1"};
  plan.collectives = {collective_plan{
    "ar", collective_kind::all_reduce, reduce_op::sum, "", {t0, t1}}};
  BOOST_REQUIRE(!hub.begin(run, "n0", plan));
  auto wait = std::make_shared<exchange_wait>();
  auto x
    = std::make_shared<const tensor>(make_tensor<float>({4}, {1, 2, 3, 4}));
  hub.contribute(run, t0, collective_kind::all_reduce, "ar", 0, {x}, wait);
  BOOST_REQUIRE(!wait->completed());
  return wait;
}

bool lost_with(const std::shared_ptr<exchange_wait>& wait,
               const std::string& why) {
  if (!wait->completed() || !wait->outcome().error)
    return false;
  auto text = error_text(wait->outcome().error);
  return text.find("node n1 was lost (" + why) != std::string::npos;
}

// CAF 0.17 kills every proxy of a process once the last connection to it
// closes, with remote_link_unreachable, although the process is still
// reached through another: here, when the other daemon gave up a connection
// of its own to this one during the handshake and tried again. A run that
// reaches it through the relay goes on, and ends as runs end.
BOOST_AUTO_TEST_CASE(a_daemon_reached_through_the_relay_outlives_its_own_link) {
  auto hub = make_hub(std::chrono::hours(1));
  auto wait = joined_all_reduce(*hub, plan_of(*hub), 1);
  hub->peer_down(other.address(), caf::exit_reason::remote_link_unreachable);
  BOOST_TEST(!wait->completed());
  hub->end(1, "n0", false);
  BOOST_TEST(wait->completed());
  BOOST_TEST(!lost_with(wait, ""));
  hub->shutdown();
}

// The other daemon began the run first and sent its item over its own
// connection; its link then closed (at this end only, the same CAF purge)
// before this daemon began the run. The item came, and must be there: it
// was the one message of 126 missing in a 64-daemon job that hung.
BOOST_AUTO_TEST_CASE(
  what_a_daemon_sent_before_the_run_began_outlives_its_link) {
  auto hub = make_hub(std::chrono::hours(1));
  auto plan = plan_of(*hub);
  task_ref t0{"n0", "t0"};
  task_ref t1{"n1", "t1"};
  plan.channels = {channel_plan{channel_def{"c", "n0", 1, {"x"}}, {t1}, {t0}}};
  exchange_put put{1, "c", 7, t1, {make_tensor<float>({1}, {5.0f})}};
  hub->receive(caf::actor{other.ptr()}, put);
  hub->peer_down(other.address(), caf::exit_reason::remote_link_unreachable);
  BOOST_REQUIRE(!hub->begin(1, "n0", plan));
  auto wait = std::make_shared<exchange_wait>();
  hub->take(1, t0, hub->next_op_id(), "c", wait);
  BOOST_REQUIRE(wait->completed());
  BOOST_REQUIRE(!wait->outcome().error);
  BOOST_REQUIRE(wait->outcome().values.size() == 1u);
  BOOST_TEST(wait->outcome().values[0]->values<float>()[0] == 5.0f);
  hub->end(1, "n0", false);
  hub->shutdown();
}

// What a run sent over the connection of its own may be lost with it.
BOOST_AUTO_TEST_CASE(a_run_that_sent_over_a_closed_link_loses_the_daemon) {
  reachable = true;
  auto hub = make_hub(std::chrono::hours(1));
  run_times(*hub, 2); // connects at run 2; run 3 goes over the connection
  auto wait = joined_all_reduce(*hub, plan_of(*hub), 3);
  hub->peer_down(other.address(), caf::exit_reason::remote_link_unreachable);
  BOOST_TEST(lost_with(wait, "the connection of its own"));
  hub->end(3, "n0", false);
  hub->shutdown();
}

// An actor that expects nothing, standing for another daemon's exchange.
// It takes an argument: CAF 0.17 dereferences a null pointer to spawn a
// function actor without one (UBSan).
caf::actor spawn_stand_in(caf::actor_system& sys) {
  return sys.spawn(
    [](caf::event_based_actor*, int) -> caf::behavior {
      return {[](int) {
        // nop
      }};
    },
    0);
}

// Completes within 10 s or fails the test.
void await_completion(const std::shared_ptr<exchange_wait>& wait) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!wait->completed() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_REQUIRE(wait->completed());
}

// The daemon that opened a connection watches the other's endpoint too:
// a run that sent over it and sees it close fails rather than wait for
// what was lost with it. Before, only the side that accepted watched.
BOOST_AUTO_TEST_CASE(a_run_that_sent_over_a_link_it_opened_sees_it_close) {
  reachable = true;
  // Stands for the other daemon's exchange. It expects nothing, and so
  // answers what it gets with an error, as CAF does: the exchange here
  // must outlive those answers.
  auto peer = spawn_stand_in(sys);
  auto hub = make_hub(std::chrono::hours(1));
  auto plan = plan_of(*hub);
  plan.peers[1].endpoint = peer;
  for (uint64_t run = 1; run <= 2; ++run) { // connects at run 2
    BOOST_REQUIRE(!hub->begin(run, "n0", plan));
    send_data(*hub, peer, run);
    hub->end(run, "n0", false);
  }
  BOOST_REQUIRE(attempts.load() == 1);
  auto wait = joined_all_reduce(*hub, plan, 3); // over the connection
  // How CAF 0.17 tells of the connection closed: the proxy killed.
  caf::anon_send_exit(peer, caf::exit_reason::remote_link_unreachable);
  await_completion(wait);
  BOOST_TEST(lost_with(wait, "the connection of its own"),
             error_text(wait->outcome().error));
  hub->end(3, "n0", false);
  hub->shutdown();
}

// An error that comes as a message (CAF's answer to a message another
// process did not expect, or one a peer sends on purpose) is dropped: by
// CAF's default it would stop the endpoint, and with it every exchange of
// the process.
BOOST_AUTO_TEST_CASE(an_error_sent_to_the_exchange_does_not_stop_it) {
  auto hub = make_hub(std::chrono::hours(1));
  auto wait = joined_all_reduce(*hub, plan_of(*hub), 1);
  caf::send_as(caf::actor{other.ptr()}, hub->endpoint(),
               caf::make_error(caf::sec::unexpected_message));
  // Still there: the down of the other daemon's exchange reaches the run.
  auto peer = spawn_stand_in(sys);
  auto plan = plan_of(*hub);
  plan.peers[1].endpoint = peer;
  auto second = joined_all_reduce(*hub, plan, 2);
  hub->receive_link(peer);
  caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
  await_completion(second);
  BOOST_TEST(lost_with(second, "its exchange stopped"),
             error_text(second->outcome().error));
  hub->end(1, "n0", false);
  hub->end(2, "n0", false);
  BOOST_TEST(wait->completed());
  hub->shutdown();
}

BOOST_AUTO_TEST_CASE(a_daemon_whose_exchange_stopped_is_lost) {
  auto hub = make_hub(std::chrono::hours(1));
  auto wait = joined_all_reduce(*hub, plan_of(*hub), 1);
  hub->peer_down(other.address(), caf::exit_reason::user_shutdown);
  BOOST_TEST(lost_with(wait, "its exchange stopped"));
  hub->end(1, "n0", false);
  hub->shutdown();
}

BOOST_AUTO_TEST_CASE(the_relay_gone_loses_every_daemon_reached_through_it) {
  auto hub = make_hub(std::chrono::hours(1));
  auto wait = joined_all_reduce(*hub, plan_of(*hub), 1);
  hub->peer_down(relay.address(), caf::exit_reason::remote_link_unreachable);
  BOOST_TEST(lost_with(wait, "its process is gone"));
  hub->end(1, "n0", false);
  hub->shutdown();
}

// A session's exchange reaches every daemon directly: there, the down is
// the daemon's.
BOOST_AUTO_TEST_CASE(a_daemon_reached_directly_is_lost_when_unreachable) {
  auto hub = make_hub(std::chrono::hours(1));
  auto plan = plan_of(*hub);
  plan.relay = hub->endpoint();
  auto wait = joined_all_reduce(*hub, plan, 1);
  hub->peer_down(other.address(), caf::exit_reason::remote_link_unreachable);
  BOOST_TEST(lost_with(wait, "its process is gone"));
  hub->end(1, "n0", false);
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

namespace {

// A daemon's exchange whose messages to another daemon go through the
// relay (a scoped actor that receives what the exchange forwards), with a
// window of 100 bytes.
struct relay_window_fixture : linking_fixture {
  std::shared_ptr<exchange_hub> hub;

  relay_window_fixture() {
    exchange_hub_options opts;
    opts.relay_window_bytes = 100;
    opts.silence_limit = std::chrono::milliseconds(400);
    hub = exchange_hub::make(sys, pool, opts);
    BOOST_REQUIRE(!hub->begin(1, "n0", plan_of(*hub)));
  }

  ~relay_window_fixture() {
    hub->shutdown();
  }

  // A channel reply of run `run` carrying `bytes` bytes of f32.
  caf::message reply_of(uint64_t run, int64_t bytes) {
    exchange_reply reply;
    reply.run = run;
    reply.values.push_back(make_zero_tensor(dtype::f32, {bytes / 4}));
    return caf::make_message(std::move(reply));
  }

  // What the relay got next, or nothing within 200 ms.
  std::optional<exchange_forward> forwarded() {
    std::optional<exchange_forward> result;
    relay->receive(
      [&](exchange_forward& msg) {
        result = std::move(msg);
      },
      caf::after(std::chrono::milliseconds(200)) >> [] {});
    return result;
  }

  void ack(uint64_t seq, const caf::actor& from) {
    exchange_relayed relayed{from, caf::make_message(exchange_relay_ack{seq})};
    hub->receive(caf::actor{relay.ptr()}, relayed);
  }

  void ack(uint64_t seq) {
    ack(seq, caf::actor{other.ptr()});
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(exchange_relay_window, relay_window_fixture)

BOOST_AUTO_TEST_CASE(data_beyond_the_window_waits_for_its_receivers_ack) {
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 60));
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 60));
  auto first = forwarded();
  BOOST_REQUIRE(first);
  BOOST_TEST((first->peer == caf::actor{other.ptr()}));
  BOOST_TEST(first->seq != 0u);
  BOOST_TEST(!forwarded()); // 120 bytes would pass the window
  BOOST_TEST(hub->relay_backlog().second == 1u);
  ack(first->seq);
  auto second = forwarded();
  BOOST_REQUIRE(second);
  BOOST_TEST(second->seq != first->seq);
}

BOOST_AUTO_TEST_CASE(a_control_message_keeps_its_place_behind_waiting_data) {
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 40));
  exchange_task_end end;
  end.run = 1;
  end.task = task_ref{"n0", "t"};
  hub->deliver(caf::actor{other.ptr()}, caf::make_message(end));
  auto first = forwarded();
  BOOST_REQUIRE(first);
  BOOST_TEST(!forwarded()); // the task's end must not pass the put
  ack(first->seq);
  auto second = forwarded();
  auto third = forwarded();
  BOOST_REQUIRE(second);
  BOOST_REQUIRE(third);
  BOOST_TEST(second->payload.match_elements<exchange_reply>());
  BOOST_TEST(third->payload.match_elements<exchange_task_end>());
  BOOST_TEST(third->seq == 0u);
}

BOOST_AUTO_TEST_CASE(a_relayed_message_is_acknowledged_through_its_relay) {
  exchange_relayed relayed{caf::actor{other.ptr()}, reply_of(1, 8), 42};
  hub->receive(caf::actor{relay.ptr()}, relayed);
  auto ack = forwarded();
  BOOST_REQUIRE(ack);
  BOOST_TEST((ack->peer == caf::actor{other.ptr()}));
  BOOST_REQUIRE(ack->payload.match_elements<exchange_relay_ack>());
  BOOST_TEST(ack->payload.get_as<exchange_relay_ack>(0).seq == 42u);
}

BOOST_AUTO_TEST_CASE(the_end_of_a_run_frees_what_it_sent_through_the_relay) {
  // A node lost in the run never acknowledges: its end frees the window.
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  BOOST_REQUIRE(forwarded());
  BOOST_REQUIRE(!hub->begin(2, "n0", plan_of(*hub)));
  hub->deliver(caf::actor{other.ptr()}, reply_of(2, 100));
  BOOST_TEST(!forwarded());
  hub->end(1, "n0", false);
  BOOST_TEST(forwarded().has_value());
}

BOOST_AUTO_TEST_CASE(an_ack_from_another_than_the_receiver_frees_nothing) {
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  auto first = forwarded();
  BOOST_REQUIRE(first);
  caf::scoped_actor stranger{sys};
  ack(first->seq, caf::actor{stranger.ptr()});
  BOOST_TEST(hub->relay_backlog().second == 1u);
  ack(first->seq);
  BOOST_TEST(forwarded().has_value());
}

BOOST_AUTO_TEST_CASE(an_ack_that_never_comes_frees_the_window_in_time) {
  // Its receiver lost after the run ended here: nothing else frees it.
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  BOOST_REQUIRE(!hub->begin(2, "n0", plan_of(*hub)));
  hub->end(1, "n0", false);
  hub->deliver(caf::actor{other.ptr()}, reply_of(2, 100));
  hub->deliver(caf::actor{other.ptr()}, reply_of(2, 100));
  BOOST_REQUIRE(forwarded()); // run 1's
  BOOST_REQUIRE(forwarded()); // run 2's first: run 1 ended
  auto late = std::chrono::steady_clock::now();
  std::optional<exchange_forward> third;
  for (int i = 0; i < 10 && !third; ++i)
    third = forwarded();
  BOOST_REQUIRE(third);
  BOOST_TEST((std::chrono::steady_clock::now() - late
              >= std::chrono::milliseconds(300)));
}

BOOST_AUTO_TEST_CASE(a_relay_gone_drops_what_waits_for_it) {
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  hub->deliver(caf::actor{other.ptr()}, reply_of(1, 100));
  BOOST_REQUIRE(forwarded());
  hub->peer_down(relay->address(), caf::exit_reason::remote_link_unreachable);
  BOOST_TEST(hub->relay_backlog().first == 0u);
  BOOST_TEST(hub->relay_backlog().second == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// A small all-reduce "ar" of run 1 over three processes: this one (node
// n0), and two others played by actors a (node na) and b (node nb), in
// the participant order `order`. Processes are ranked by their first
// participant: with three, rank 0 is the root of the tree and the other
// two its children.
struct senders_fixture : system_fixture {
  std::shared_ptr<worker_pool> pool = started_pool(1);
  std::shared_ptr<exchange_hub> hub = exchange_hub::make(sys, pool);
  caf::scoped_actor a{sys};
  caf::scoped_actor b{sys};
  task_ref t0{"n0", "t0"};
  task_ref ta{"na", "ta"};
  task_ref tb{"nb", "tb"};
  std::shared_ptr<exchange_wait> wait = std::make_shared<exchange_wait>();

  ~senders_fixture() {
    hub->end(1, "n0", false);
    hub->shutdown();
  }

  // Begins the run with participants `order` and contributes t0's blob.
  void contribute(std::vector<task_ref> order) {
    exchange_plan plan;
    plan.collectives = {collective_plan{"ar", collective_kind::all_reduce,
                                        reduce_op::sum, "", std::move(order)}};
    plan.peers = {exchange_peer{"n0", hub->endpoint(), "", 0},
                  exchange_peer{"na", caf::actor{a.ptr()}, "", 0},
                  exchange_peer{"nb", caf::actor{b.ptr()}, "", 0}};
    BOOST_REQUIRE(!hub->begin(1, "n0", plan));
    hub->contribute(1, t0, collective_kind::all_reduce, "ar", 0, {blob(1.0f)},
                    wait);
  }

  static std::shared_ptr<const tensor> blob(float x) {
    return std::make_shared<const tensor>(
      make_tensor<float>({4}, {x, x, x, x}));
  }

  // Participant `p`'s blob, as its process sends it up the tree.
  static exchange_part part_of(uint32_t p, float x) {
    collective_contribution c;
    c.participant = p;
    c.types = {dtype::f32};
    c.shapes = {{4}};
    c.values = {*blob(x)};
    return exchange_part{1, "ar", 0, 0, {std::move(c)}};
  }

  static exchange_result result_of(float x) {
    exchange_result r;
    r.run = 1;
    r.collective = "ar";
    r.values = {*blob(x)};
    return r;
  }

  // The first element of t0's result, once it came within 10 s.
  float result() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!wait->completed() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    BOOST_REQUIRE(wait->completed());
    BOOST_REQUIRE_MESSAGE(!wait->outcome().error,
                          error_text(wait->outcome().error));
    BOOST_REQUIRE(wait->outcome().values.size() == 1u);
    return wait->outcome().values[0]->values<float>()[0];
  }
};

} // namespace

// Who may send what in a collective is checked against the plan, not taken
// from the message: a process that forges another's part or the result
// changes no one's result.
BOOST_FIXTURE_TEST_SUITE(exchange_senders, senders_fixture)

BOOST_AUTO_TEST_CASE(a_part_for_another_childs_participant_is_refused) {
  // This process is the root; a's part comes, then b forges another.
  contribute({t0, ta, tb});
  auto from_a = part_of(1, 10.0f);
  hub->receive(caf::actor{a.ptr()}, from_a);
  auto forged = part_of(1, 100.0f);
  hub->receive(caf::actor{b.ptr()}, forged);
  BOOST_TEST(!wait->completed());
  auto from_b = part_of(2, 5.0f);
  hub->receive(caf::actor{b.ptr()}, from_b);
  BOOST_TEST(result() == 16.0f);
}

BOOST_AUTO_TEST_CASE(a_part_for_this_process_participant_is_refused) {
  contribute({t0, ta, tb});
  auto forged = part_of(0, 100.0f); // t0's own
  hub->receive(caf::actor{a.ptr()}, forged);
  auto from_a = part_of(1, 10.0f);
  auto from_b = part_of(2, 5.0f);
  hub->receive(caf::actor{a.ptr()}, from_a);
  hub->receive(caf::actor{b.ptr()}, from_b);
  BOOST_TEST(result() == 16.0f);
}

BOOST_AUTO_TEST_CASE(a_result_from_a_process_other_than_the_parent_is_refused) {
  contribute({ta, t0, tb}); // a is the root, this process a child
  auto forged = result_of(999.0f);
  hub->receive(caf::actor{b.ptr()}, forged);
  BOOST_TEST(!wait->completed());
  auto from_root = result_of(16.0f);
  hub->receive(caf::actor{a.ptr()}, from_root);
  BOOST_TEST(result() == 16.0f);
}

BOOST_AUTO_TEST_CASE(a_result_before_this_process_contributed_is_refused) {
  exchange_plan plan;
  plan.collectives = {collective_plan{
    "ar", collective_kind::all_reduce, reduce_op::sum, "", {ta, t0, tb}}};
  plan.peers = {exchange_peer{"n0", hub->endpoint(), "", 0},
                exchange_peer{"na", caf::actor{a.ptr()}, "", 0},
                exchange_peer{"nb", caf::actor{b.ptr()}, "", 0}};
  BOOST_REQUIRE(!hub->begin(1, "n0", plan));
  auto early = result_of(999.0f);
  hub->receive(caf::actor{a.ptr()}, early);
  hub->contribute(1, t0, collective_kind::all_reduce, "ar", 0, {blob(1.0f)},
                  wait);
  BOOST_TEST(!wait->completed());
  auto from_root = result_of(16.0f);
  hub->receive(caf::actor{a.ptr()}, from_root);
  BOOST_TEST(result() == 16.0f);
}

BOOST_AUTO_TEST_SUITE_END()

// What waits in a run when the last node of this process in it is lost is
// told the node was lost: a task of another process, waiting on a channel
// here, then fails as its node's loss, which a job recovers from.
BOOST_FIXTURE_TEST_SUITE(exchange_losses, senders_fixture)

BOOST_AUTO_TEST_CASE(
  a_request_left_when_the_last_node_is_lost_is_answered_lost) {
  task_ref t1{"n1", "t1"};
  exchange_plan plan;
  plan.channels = {channel_plan{channel_def{"c", "n1", 1, {"x"}}, {t1}, {tb}}};
  plan.peers = {exchange_peer{"n0", hub->endpoint(), "", 0},
                exchange_peer{"n1", hub->endpoint(), "", 0},
                exchange_peer{"nb", caf::actor{b.ptr()}, "", 0}};
  BOOST_REQUIRE(!hub->begin(1, "n0", plan)); // n1 never begins it
  exchange_take take{1, "c", 7, tb};
  hub->receive(caf::actor{b.ptr()}, take);
  hub->node_lost("n0", "killed");
  std::optional<exchange_reply> reply;
  for (int i = 0; i < 4 && !reply; ++i)
    b->receive(
      [&](exchange_reply& r) {
        reply = std::move(r);
      },
      [](exchange_node_lost&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
  BOOST_REQUIRE(reply.has_value());
  BOOST_TEST(reply->op == 7u);
  BOOST_TEST((reply->status == exchange_status::lost), reply->error);
  BOOST_TEST(reply->error.find("node n0 was lost (killed)")
               != std::string::npos,
             reply->error);
}

BOOST_AUTO_TEST_SUITE_END()
