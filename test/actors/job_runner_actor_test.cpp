// The job runner actor (actors/core/job_runner_actor.hpp): the owner of a
// job's control flow runs the job as attempts and recovers between them --
// a new attempt after a loss, none past the limit, and an end with both
// errors when the recovery fails. On a real scheduler with bounded waits,
// with fake nodes and a stand-in for the session's recovery.

#define BOOST_TEST_MODULE actors_job_runner
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/text.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/job_runner_actor.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>

using namespace epochrt;
using epochrt::test::contains;
using epochrt::test::reply_to;
using epochrt::test::scheduler_fixture;
using epochrt::test::stand_in;
using epochrt::test::takes;
using epochrt::test::task_failing_with;
using epochrt::test::task_on;
using epochrt::test::why;

namespace {

static_assert(takes<job_runner_actor, run_job>);
static_assert(std::is_same_v<reply_to<job_runner_actor, run_job>,
                             caf::detail::type_list<job_result>>);
static_assert(!takes<job_runner_actor, run_attempt>);
static_assert(!takes<job_runner_actor, run_tasks>);
static_assert(
  std::is_same_v<decltype(spawn_job_runner(std::declval<caf::actor_system&>(),
                                           std::declval<job_runner_config>())),
                 job_runner_actor>);

// A node that answers every group with a true "stop" output of each task,
// and takes a cancel and a reset: what a recovered node does.
caf::behavior task_stopping(caf::event_based_actor*, std::string name) {
  return {
    [name](run_tasks& msg) {
      tasks_done done{name, {}, {}};
      for (auto& task : msg.tasks)
        done.outputs.push_back(task_output{task.name, "stop", make_scalar(1)});
      return done;
    },
    [](cancel_tasks&) {
      // Nothing runs.
    },
    [](reset_workspace&) {
      // Nothing is held.
    },
  };
}

// Init and epoch on node "a", until a's "stop" is true.
job_runner_config one_node_job(caf::actor node) {
  job_runner_config cfg;
  auto& job = cfg.attempt.job;
  job.name = "j";
  job.init_group.tasks.push_back(task_on("init", "a"));
  job.epoch_group.tasks.push_back(task_on("step", "a"));
  job.stop_conditions.push_back(stop_condition{"a", "stop"});
  cfg.attempt.where.nodes = {{"a", stand_in<node_actor>(std::move(node))}};
  return cfg;
}

caf::error lost_a() {
  return make_error(actors_errc::node_lost, "node a at 127.0.0.1:1 is gone");
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(job_runner, scheduler_fixture)

BOOST_AUTO_TEST_CASE(a_job_runner_recovers_a_lost_node_with_a_new_attempt) {
  auto lost = sys->spawn(task_failing_with, lost_a());
  auto back = sys->spawn(task_stopping, std::string{"a"});
  auto cfg = one_node_job(lost);
  cfg.max_node_failures = 1;
  auto recoveries = std::make_shared<std::atomic<int>>(0);
  cfg.recover_nodes = [recoveries, back]() -> caf::expected<job_nodes> {
    ++*recoveries;
    job_nodes where;
    where.nodes = {{"a", stand_in<node_actor>(back)}};
    return where;
  };
  auto runner = spawn_job_runner(*sys, cfg);
  auto done = ask<job_result>(runner, run_job{});
  BOOST_REQUIRE_MESSAGE(done, why(done));
  BOOST_TEST(done->last_epoch == 1);
  BOOST_TEST(recoveries->load() == 1);
  caf::anon_send_exit(lost, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(back, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_job_runner_allowed_no_failure_ends_with_the_loss) {
  auto lost = sys->spawn(task_failing_with, lost_a());
  auto cfg = one_node_job(lost);
  auto recoveries = std::make_shared<std::atomic<int>>(0);
  cfg.recover_nodes = [recoveries]() -> caf::expected<job_nodes> {
    ++*recoveries;
    return make_error(actors_errc::node_lost, "not called");
  };
  auto runner = spawn_job_runner(*sys, cfg);
  auto done = ask<job_result>(runner, run_job{});
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_node_lost(done.error()));
  BOOST_TEST(
    contains(error_text(done.error()), "node a at 127.0.0.1:1 is gone"),
    error_text(done.error()));
  BOOST_TEST(recoveries->load() == 0);
  caf::anon_send_exit(lost, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_job_runner_counts_a_loss_past_its_limit) {
  auto lost = sys->spawn(task_failing_with, lost_a());
  auto cfg = one_node_job(lost);
  cfg.max_node_failures = 1;
  cfg.recover_nodes = [lost]() -> caf::expected<job_nodes> {
    job_nodes where; // the same node, lost again
    where.nodes = {{"a", stand_in<node_actor>(lost)}};
    return where;
  };
  auto runner = spawn_job_runner(*sys, cfg);
  auto done = ask<job_result>(runner, run_job{});
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_node_lost(done.error()));
  BOOST_TEST(
    contains(error_text(done.error()), "(failure 2, more than 1 allowed)"),
    error_text(done.error()));
  caf::anon_send_exit(lost, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_failed_recovery_ends_the_job_naming_both_errors) {
  auto lost = sys->spawn(task_failing_with, lost_a());
  auto cfg = one_node_job(lost);
  cfg.max_node_failures = 3;
  cfg.recover_nodes = []() -> caf::expected<job_nodes> {
    return make_error(actors_errc::node_lost, "no daemon at 127.0.0.1:1");
  };
  auto runner = spawn_job_runner(*sys, cfg);
  auto done = ask<job_result>(runner, run_job{});
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_node_lost(done.error()));
  BOOST_TEST(contains(error_text(done.error()),
                      "is gone; recovery failed: no daemon at 127.0.0.1:1"),
             error_text(done.error()));
  caf::anon_send_exit(lost, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_recovery_that_throws_ends_the_job_instead_of_waiting) {
  auto lost = sys->spawn(task_failing_with, lost_a());
  auto cfg = one_node_job(lost);
  cfg.max_node_failures = 1;
  cfg.recover_nodes = []() -> caf::expected<job_nodes> {
    throw std::runtime_error("host code failed");
  };
  auto runner = spawn_job_runner(*sys, cfg);
  auto done = ask<job_result>(runner, run_job{});
  BOOST_REQUIRE(!done);
  BOOST_TEST(contains(error_text(done.error()), "host code failed"),
             error_text(done.error()));
  caf::anon_send_exit(lost, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
