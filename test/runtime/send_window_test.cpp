#include <epochrt/runtime/send_window.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "test_util.hpp"

using namespace epochrt;

namespace {

// Destinations are names; a message is its number in push order.
using window = send_window<std::string, int>;

std::vector<int> items(const std::vector<window::send>& sent) {
  std::vector<int> result;
  for (auto& s : sent)
    result.push_back(s.item);
  return result;
}

auto to(const std::string& name) {
  return [name](const std::string& dest) {
    return dest == name;
  };
}

auto nowhere = [](const std::string&) {
  return false;
};

} // namespace

BOOST_AUTO_TEST_SUITE(send_window_suite)

BOOST_AUTO_TEST_CASE(messages_within_the_budget_go_at_once_in_order) {
  window w{100};
  BOOST_TEST(items(w.push("a", 1, 40)) == std::vector<int>{1});
  BOOST_TEST(items(w.push("b", 2, 60)) == std::vector<int>{2});
  BOOST_TEST(w.in_flight_bytes() == 100u);
  BOOST_TEST(w.queued() == 0u);
}

BOOST_AUTO_TEST_CASE(a_message_past_the_budget_waits_for_an_ack) {
  window w{100};
  auto first = w.push("a", 1, 80);
  BOOST_TEST(w.push("a", 2, 30).empty());
  BOOST_TEST(w.queued() == 1u);
  BOOST_TEST(items(w.ack(first[0].seq)) == std::vector<int>{2});
  BOOST_TEST(w.in_flight_bytes() == 30u);
}

BOOST_AUTO_TEST_CASE(a_control_message_waits_behind_data_pushed_before_it) {
  window w{100};
  auto first = w.push("a", 1, 100);
  BOOST_TEST(w.push("a", 2, 50).empty());
  BOOST_TEST(w.push("a", 3, 0).empty()); // a task's end after its put
  auto next = w.ack(first[0].seq);
  BOOST_TEST(items(next) == (std::vector<int>{2, 3}));
  BOOST_TEST(next[1].seq == 0u); // not acknowledged
  BOOST_TEST(w.in_flight_bytes() == 50u);
}

BOOST_AUTO_TEST_CASE(a_control_message_with_nothing_queued_goes_at_once) {
  window w{10};
  w.push("a", 1, 10);
  BOOST_TEST(items(w.push("a", 2, 0)) == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(a_message_larger_than_the_budget_goes_alone) {
  window w{100};
  BOOST_TEST(items(w.push("a", 1, 500)) == std::vector<int>{1});
  auto second = w.push("a", 2, 500);
  BOOST_TEST(second.empty());
  BOOST_TEST(items(w.ack(1)) == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(unknown_and_repeated_acks_are_ignored) {
  window w{100};
  auto first = w.push("a", 1, 100);
  w.push("a", 2, 100);
  BOOST_TEST(w.ack(77).empty());
  BOOST_TEST(items(w.ack(first[0].seq)) == std::vector<int>{2});
  BOOST_TEST(w.ack(first[0].seq).empty());
  BOOST_TEST(w.in_flight_bytes() == 100u);
}

BOOST_AUTO_TEST_CASE(
  forgetting_a_gone_receiver_frees_its_bytes_and_drops_its_queue) {
  window w{100};
  w.push("gone", 1, 100);
  BOOST_TEST(w.push("gone", 2, 10).empty());
  BOOST_TEST(w.push("alive", 3, 10).empty());
  auto next = w.forget(to("gone"), to("gone"));
  BOOST_TEST(items(next) == std::vector<int>{3});
  BOOST_TEST(w.in_flight_bytes() == 10u);
  BOOST_TEST(w.queued() == 0u);
}

BOOST_AUTO_TEST_CASE(forgetting_what_was_sent_keeps_the_queue) {
  // A run over here: its messages in flight no longer hold the budget,
  // but what is queued still goes (others may wait for it).
  window w{100};
  w.push("a", 1, 100);
  w.push("a", 2, 100);
  BOOST_TEST(items(w.forget(to("a"), nowhere)) == std::vector<int>{2});
  BOOST_TEST(w.in_flight_bytes() == 100u);
}

BOOST_AUTO_TEST_CASE(an_ack_the_check_refuses_frees_nothing) {
  window w{100};
  auto first = w.push("a", 1, 100);
  w.push("a", 2, 100);
  auto from_b = [](const std::string& dest) {
    return dest == "b";
  };
  BOOST_TEST(w.ack(first[0].seq, 0, from_b).empty());
  BOOST_TEST(w.in_flight_bytes() == 100u);
  BOOST_TEST(items(w.ack(first[0].seq, 0, to("a"))) == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(an_ack_that_never_comes_frees_its_bytes_once_expired) {
  // A receiver lost after its run ended here: nothing else frees them.
  window w{100};
  w.push("lost", 1, 100, 1000);
  BOOST_TEST(w.push("alive", 2, 50, 1500).empty());
  BOOST_TEST(w.expire(5999, 5000).empty()); // not yet 5 s old
  BOOST_TEST(items(w.expire(6000, 5000)) == std::vector<int>{2});
  BOOST_TEST(w.in_flight() == 1u); // 2, sent at 6000
  BOOST_TEST(w.expire(10999, 5000).empty());
  BOOST_TEST(w.in_flight() == 1u);
}

BOOST_AUTO_TEST_CASE(whatever_the_order_of_acks_everything_goes_once_in_order) {
  for (unsigned seed = 0; seed < 200; ++seed) {
    std::mt19937 rng{seed};
    window w{1000};
    std::vector<int> sent;
    std::vector<uint64_t> unacked;
    int pushed = 0;
    auto take = [&](std::vector<window::send> out) {
      for (auto& s : out) {
        sent.push_back(s.item);
        if (s.seq != 0)
          unacked.push_back(s.seq);
      }
      BOOST_TEST_REQUIRE((w.in_flight_bytes() <= 1000u || w.in_flight() == 1u));
    };
    while (pushed < 300 || !unacked.empty()) {
      bool push = pushed < 300 && (unacked.empty() || rng() % 2 == 0);
      if (push) {
        // Now and then a message larger than the budget, which goes alone.
        uint64_t bytes = rng() % 4 == 0 ? 0
          : rng() % 50 == 0             ? 1500
                                        : 1 + rng() % 600;
        take(w.push(rng() % 2 ? "a" : "b", pushed++, bytes));
      } else {
        auto k = rng() % unacked.size();
        auto seq = unacked[k];
        unacked.erase(unacked.begin() + static_cast<long>(k));
        take(w.ack(seq));
      }
    }
    BOOST_TEST_REQUIRE(w.queued() == 0u);
    BOOST_TEST_REQUIRE(w.in_flight_bytes() == 0u);
    std::vector<int> expected(300);
    for (int i = 0; i < 300; ++i)
      expected[static_cast<size_t>(i)] = i;
    BOOST_TEST_REQUIRE(sent == expected);
  }
}

BOOST_AUTO_TEST_SUITE_END()
