#include <epochrt/runtime/deadlock_probe.hpp>

#include "test_util.hpp"

using namespace epochrt;

namespace {

using state = exchange_task_view::state;

// What one process reports in `round`: one task of its own.
exchange_probe_reply report(uint64_t round, const std::string& task, state what,
                            uint64_t activity, uint64_t sent,
                            uint64_t received) {
  exchange_probe_reply x;
  x.round = round;
  x.tasks = {exchange_task_view{task, what, "a barrier 'B' (call 1)"}};
  x.activity = activity;
  x.sent = sent;
  x.received = received;
  return x;
}

// A round in which processes "p0" and "p1" report their one task waiting,
// with these counts; what the probe says once both reported.
std::optional<std::string> quiet_round(deadlock_probe& probe, uint64_t sent0,
                                       uint64_t received0, uint64_t sent1,
                                       uint64_t received1) {
  auto round = probe.begin_round();
  auto first = probe.report(
    "p0", report(round, "task 'a' on n0", state::waiting, 5, sent0, received0));
  BOOST_TEST(!first.has_value()); // one report of two: never a verdict
  return probe.report(
    "p1", report(round, "task 'b' on n1", state::waiting, 7, sent1, received1));
}

} // namespace

BOOST_AUTO_TEST_SUITE(deadlock_probe_suite)

BOOST_AUTO_TEST_CASE(processes_whose_tasks_all_wait_and_stay_quiet_deadlock) {
  deadlock_probe probe{2, 2};
  BOOST_TEST(!quiet_round(probe, 3, 4, 4, 3).has_value()); // the baseline
  BOOST_TEST(!quiet_round(probe, 3, 4, 4, 3).has_value()); // quiet once
  auto found = quiet_round(probe, 3, 4, 4, 3);
  BOOST_REQUIRE(found);
  // Every waiting task of every process, in the order of their names.
  auto a = found->find("task 'a' on n0 waits in a barrier 'B' (call 1)");
  auto b = found->find("task 'b' on n1 waits in a barrier 'B' (call 1)");
  BOOST_TEST(found->find("deadlock") == 0u);
  BOOST_TEST(a != std::string::npos);
  BOOST_TEST(b != std::string::npos);
  BOOST_TEST(a < b);
}

BOOST_AUTO_TEST_CASE(a_message_between_processes_is_no_deadlock) {
  // p0 sent 4 messages, p1 received 3: one is on its way, and may end a
  // wait when it arrives, though neither process moves meanwhile.
  deadlock_probe probe{2, 1};
  for (int i = 0; i < 5; ++i)
    BOOST_TEST(!quiet_round(probe, 4, 0, 0, 3).has_value());
}

BOOST_AUTO_TEST_CASE(a_message_that_arrives_starts_the_count_again) {
  deadlock_probe probe{2, 1};
  BOOST_TEST(!quiet_round(probe, 4, 0, 0, 3).has_value()); // in transit
  BOOST_TEST(!quiet_round(probe, 4, 0, 0, 4).has_value()); // the baseline
  BOOST_TEST(quiet_round(probe, 4, 0, 0, 4).has_value());
}

BOOST_AUTO_TEST_CASE(a_round_missing_a_report_is_not_quiet) {
  deadlock_probe probe{2, 1};
  BOOST_TEST(!quiet_round(probe, 1, 1, 1, 1).has_value()); // the baseline
  auto round = probe.begin_round();
  BOOST_TEST(
    !probe
       .report("p0", report(round, "task 'a' on n0", state::waiting, 5, 1, 1))
       .has_value());
  // p1 never reported: the next round is a baseline again.
  BOOST_TEST(!quiet_round(probe, 1, 1, 1, 1).has_value());
  BOOST_TEST(quiet_round(probe, 1, 1, 1, 1).has_value());
}

BOOST_AUTO_TEST_CASE(reports_of_another_round_and_second_reports_are_ignored) {
  deadlock_probe probe{2, 1};
  auto old = probe.begin_round();
  auto round = probe.begin_round();
  BOOST_TEST(
    !probe.report("p1", report(old, "task 'b' on n1", state::waiting, 7, 1, 1))
       .has_value());
  BOOST_TEST(
    !probe
       .report("p0", report(round, "task 'a' on n0", state::waiting, 5, 1, 1))
       .has_value());
  // p0 again, in place of the missing p1: the round is still incomplete.
  BOOST_TEST(
    !probe
       .report("p0", report(round, "task 'a' on n0", state::waiting, 5, 1, 1))
       .has_value());
  BOOST_TEST(!quiet_round(probe, 1, 1, 1, 1).has_value()); // the baseline
  BOOST_TEST(quiet_round(probe, 1, 1, 1, 1).has_value());
}

BOOST_AUTO_TEST_CASE(activity_in_any_process_starts_the_count_again) {
  deadlock_probe probe{2, 2};
  BOOST_TEST(!quiet_round(probe, 2, 2, 2, 2).has_value());
  BOOST_TEST(!quiet_round(probe, 2, 2, 2, 2).has_value());
  // Both processes exchanged one more message: balanced, but not quiet.
  BOOST_TEST(!quiet_round(probe, 3, 3, 3, 3).has_value());
  BOOST_TEST(!quiet_round(probe, 3, 3, 3, 3).has_value());
  BOOST_TEST(quiet_round(probe, 3, 3, 3, 3).has_value());
}

BOOST_AUTO_TEST_CASE(a_task_running_in_another_process_is_no_deadlock) {
  deadlock_probe probe{2, 1};
  for (int i = 0; i < 4; ++i) {
    auto round = probe.begin_round();
    probe.report("p0",
                 report(round, "task 'a' on n0", state::waiting, 1, 0, 0));
    BOOST_TEST(
      !probe
         .report("p1", report(round, "task 'b' on n1", state::running, 1, 0, 0))
         .has_value());
  }
}

BOOST_AUTO_TEST_SUITE_END()
