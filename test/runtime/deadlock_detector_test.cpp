#include <epochrt/runtime/deadlock_detector.hpp>

#include "test_util.hpp"

using namespace epochrt;

namespace {

using state = exchange_task_view::state;

exchange_task_view view(const std::string& task, state what,
                        const std::string& waits_in = {}) {
  return exchange_task_view{task, what, waits_in};
}

} // namespace

BOOST_AUTO_TEST_SUITE(deadlock_detector_suite)

BOOST_AUTO_TEST_CASE(tasks_that_all_wait_with_no_event_are_a_deadlock) {
  deadlock_detector detector{2};
  std::vector<exchange_task_view> tasks{
    view("task 'p' on n0", state::waiting, "put into channel 'q1' (full)"),
    view("task 'c' on n0", state::waiting, "take from channel 'q2' (empty)")};
  BOOST_TEST(
    !detector.observe(tasks, 7).has_value()); // no check before: no quiet yet
  BOOST_TEST(!detector.observe(tasks, 7).has_value()); // quiet once
  auto found = detector.observe(tasks, 7);
  BOOST_REQUIRE(found);
  BOOST_TEST(found->find("deadlock") == 0u);
  BOOST_TEST(found->find("task 'p' on n0 waits in put into channel 'q1' "
                         "(full)")
             != std::string::npos);
  BOOST_TEST(found->find("task 'c' on n0 waits in take from channel 'q2' "
                         "(empty)")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_event_between_checks_starts_the_count_again) {
  deadlock_detector detector{2};
  std::vector<exchange_task_view> tasks{
    view("task 'a' on n0", state::waiting, "call 0 of all-reduce 'g'")};
  BOOST_TEST(!detector.observe(tasks, 1).has_value());
  BOOST_TEST(!detector.observe(tasks, 1).has_value());
  BOOST_TEST(!detector.observe(tasks, 2).has_value()); // something happened
  BOOST_TEST(!detector.observe(tasks, 2).has_value());
  BOOST_TEST(detector.observe(tasks, 2).has_value());
}

BOOST_AUTO_TEST_CASE(a_running_task_may_still_end_the_waits) {
  deadlock_detector detector{1};
  std::vector<exchange_task_view> tasks{
    view("task 'c' on n0", state::waiting, "take from channel 'q' (empty)"),
    view("task 'p' on n1", state::running)};
  for (int i = 0; i < 5; ++i)
    BOOST_TEST(!detector.observe(tasks, 3).has_value());
}

BOOST_AUTO_TEST_CASE(work_in_flight_is_no_deadlock) {
  deadlock_detector detector{1};
  std::vector<exchange_task_view> tasks{
    view("task 'a' on n0", state::in_flight, "call 0 of all-reduce 'g'"),
    view("task 'b' on n0", state::waiting, "take from channel 'q' (empty)")};
  for (int i = 0; i < 5; ++i)
    BOOST_TEST(!detector.observe(tasks, 3).has_value());
}

BOOST_AUTO_TEST_CASE(ended_tasks_leave_the_waiting_ones_deadlocked) {
  deadlock_detector detector{1};
  std::vector<exchange_task_view> tasks{
    view("task 'a' on n0", state::ended),
    view("task 'b' on n0", state::waiting, "call 1 of barrier 'B'")};
  BOOST_TEST(!detector.observe(tasks, 4).has_value());
  BOOST_TEST(detector.observe(tasks, 4).has_value());
}

BOOST_AUTO_TEST_CASE(a_run_whose_tasks_all_ended_is_no_deadlock) {
  deadlock_detector detector{1};
  std::vector<exchange_task_view> tasks{view("task 'a' on n0", state::ended)};
  for (int i = 0; i < 3; ++i)
    BOOST_TEST(!detector.observe(tasks, 9).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
