// Timings a node reports (actors/detail/place_within.hpp): a task's span,
// as its node measured it, placed inside its group's span as the job
// runner measured it, whatever the node says.

#define BOOST_TEST_MODULE actors_task_timings
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <epochrt/actors/detail/place_within.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(task_timings)

BOOST_AUTO_TEST_CASE(a_reported_span_is_placed_inside_its_group) {
  using clock = std::chrono::steady_clock;
  auto from = clock::time_point{} + std::chrono::seconds(100);
  auto to = from + std::chrono::milliseconds(10); // 10,000 us
  auto [start, end] = detail::place_within(from, to, 2000, 3000);
  BOOST_TEST((start == from + std::chrono::microseconds(2000)));
  BOOST_TEST((end == from + std::chrono::microseconds(5000)));
}

BOOST_AUTO_TEST_CASE(
  a_node_that_lies_about_its_timings_stays_inside_the_group) {
  using clock = std::chrono::steady_clock;
  auto from = clock::time_point{} + std::chrono::seconds(100);
  auto to = from + std::chrono::milliseconds(10);
  constexpr auto huge = std::numeric_limits<int64_t>::max();
  constexpr auto tiny = std::numeric_limits<int64_t>::min();
  for (auto [offset, duration] : std::vector<std::pair<int64_t, int64_t>>{
         {huge, huge}, {tiny, tiny}, {-5, 20000}, {9000, huge}, {0, tiny}}) {
    auto [start, end] = detail::place_within(from, to, offset, duration);
    BOOST_TEST((from <= start && start <= end && end <= to),
               offset << ", " << duration);
  }
  // A group whose end comes before its start (a clock that went back).
  auto [start, end] = detail::place_within(to, from, 5, 5);
  BOOST_TEST((start == to && end == to));
}

BOOST_AUTO_TEST_SUITE_END()
