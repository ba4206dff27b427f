// One attempt at a job (actors/core/job_attempt_actor.hpp): refuses a job
// that could not end, and fails a group at once when its node ends, or at
// the timeout when it is silent, naming the group and epoch. On a real
// scheduler with bounded waits, with fake nodes.

#define BOOST_TEST_MODULE actors_job_attempt
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/text.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/job_attempt_actor.hpp>
#include <epochrt/actors/core/job_attempt_phase.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

using namespace epochrt;
using epochrt::test::contains;
using epochrt::test::held_promises;
using epochrt::test::reply_to;
using epochrt::test::scheduler_fixture;
using epochrt::test::stand_in;
using epochrt::test::takes;
using epochrt::test::task_holding;
using epochrt::test::task_on;
using std::chrono::milliseconds;

namespace {

static_assert(takes<job_attempt_actor, run_attempt>);
static_assert(std::is_same_v<reply_to<job_attempt_actor, run_attempt>,
                             caf::detail::type_list<job_result>>);
static_assert(!takes<job_attempt_actor, run_job>);
static_assert(!takes<job_attempt_actor, run_tasks>);

// The handle others hold is the narrow one: what the attempt sends itself
// (its fault-plan delays) is not part of what they can send it.
static_assert(std::is_same_v<
              decltype(spawn_job_attempt(std::declval<caf::actor_system&>(),
                                         std::declval<job_attempt_config>())),
              job_attempt_actor>);

// Takes a group and ends at once, leaving it unanswered (as a node actor
// that fails for a reason of its own would). `what` only names it.
caf::behavior task_dropping(caf::event_based_actor* self, std::string what) {
  return {
    [self, what](run_tasks&) -> caf::result<tasks_done> {
      self->quit(caf::exit_reason::user_shutdown);
      return caf::delegated<tasks_done>{};
    },
  };
}

// A node whose process has no op at all: refuses every check_ops, and
// counts the groups it is asked to run.
caf::behavior lacking_every_op(caf::event_based_actor*,
                               std::shared_ptr<std::atomic<int>> groups) {
  return {
    [](check_ops& msg) -> caf::result<void> {
      return make_error(runtime_errc::unknown_op,
                        "node a has no op '" + msg.types.front() + "'");
    },
    [groups](run_tasks& msg) {
      ++*groups;
      return tasks_done{msg.tasks.front().node, {}, {}};
    },
  };
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(job_attempt, scheduler_fixture)

BOOST_AUTO_TEST_CASE(a_job_attempt_runs_nothing_on_a_node_that_lacks_an_op) {
  auto groups = std::make_shared<std::atomic<int>>(0);
  auto node = sys->spawn(lacking_every_op, groups);
  job_attempt_config cfg;
  cfg.job.name = "j";
  auto init = task_on("init", "a");
  init.steps.push_back(step_def{"s", {op_def{"Add", {}, {}, {}}}, 1, {}});
  cfg.job.init_group.tasks.push_back(init);
  cfg.job.epoch_group.tasks.push_back(task_on("step", "a"));
  cfg.job.stop_conditions.push_back(stop_condition{"a", "stop"});
  cfg.where.nodes = {{"a", stand_in<node_actor>(node)}};
  auto attempt = spawn_job_attempt(*sys, cfg);
  auto epochs = ask<job_result>(attempt, run_attempt{}, milliseconds(5000));
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(in_category(epochs.error(), runtime_category));
  BOOST_TEST(contains(error_text(epochs.error()), "node a has no op 'Add'"),
             error_text(epochs.error()));
  BOOST_TEST(groups->load() == 0);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_job_attempt_refuses_a_job_whose_loop_could_not_end) {
  job_attempt_config cfg;
  cfg.job.name = "endless";
  auto attempt = spawn_job_attempt(*sys, cfg);
  auto epochs = ask<job_result>(attempt, run_attempt{});
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_error(epochs.error(), actors_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(a_job_attempt_fails_a_group_at_once_when_its_node_ends) {
  auto dropping = sys->spawn(task_dropping, "dropping");
  job_attempt_config cfg;
  cfg.job.name = "j";
  cfg.job.init_group.tasks.push_back(task_on("init", "dropping"));
  cfg.job.epoch_group.tasks.push_back(task_on("step", "dropping"));
  cfg.job.stop_conditions.push_back(stop_condition{"dropping", "stop"});
  cfg.where.nodes = {{"dropping", stand_in<node_actor>(dropping)}};
  // Far beyond the test's own wait: only the node's end may fail the group.
  cfg.group_timeout = std::chrono::hours(1);
  auto attempt = spawn_job_attempt(*sys, cfg);
  auto epochs = ask<job_result>(attempt, run_attempt{}, milliseconds(5000));
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_node_lost(epochs.error()), error_text(epochs.error()));
  BOOST_TEST(contains(error_text(epochs.error()),
                      "node dropping (init group, epoch 0) is down"),
             error_text(epochs.error()));
  // Should it still wait (the defect this guards against), the attempt must
  // not hold the actor system open.
  caf::anon_send_exit(attempt, caf::exit_reason::kill);
}

BOOST_AUTO_TEST_CASE(a_job_attempt_reports_the_group_and_epoch_of_a_lost_node) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto frozen = sys->spawn(task_holding, held);
  job_attempt_config cfg;
  cfg.job.name = "j";
  cfg.job.init_group.tasks.push_back(task_on("init", "frozen"));
  cfg.job.epoch_group.tasks.push_back(task_on("step", "frozen"));
  cfg.job.stop_conditions.push_back(stop_condition{"frozen", "stop"});
  cfg.where.nodes = {{"frozen", stand_in<node_actor>(frozen)}};
  cfg.group_timeout = milliseconds(200);
  auto attempt = spawn_job_attempt(*sys, cfg);
  auto epochs = ask<job_result>(attempt, run_attempt{});
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_node_lost(epochs.error()));
  BOOST_TEST(contains(error_text(epochs.error()),
                      "node frozen (init group, epoch 0) did not answer "
                      "within 200 ms"),
             error_text(epochs.error()));
  caf::anon_send_exit(frozen, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(every_phase_has_a_name_and_says_its_epoch) {
  std::set<std::string> names;
  auto last = static_cast<int>(attempt_phase::download_and_exit);
  for (int i = 0; i <= last; ++i) {
    auto phase = static_cast<attempt_phase>(i);
    BOOST_TEST_CONTEXT("phase " << i) {
      BOOST_TEST(names.insert(to_string(phase)).second, "names are unique");
      BOOST_TEST(to_string(phase) != "unknown phase");
    }
  }
  BOOST_TEST(describe(attempt_phase::saving, 3)
             == "saving the checkpoint of epoch 3");
  BOOST_TEST(describe(attempt_phase::committing, 4)
             == "committing the checkpoint of epoch 4");
}

BOOST_AUTO_TEST_SUITE_END()
