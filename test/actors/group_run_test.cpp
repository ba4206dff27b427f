// A group run for a blocking caller (actors/core/group_run.hpp,
// start_group_run, what session::run uses): one group's tasks sent to their
// nodes, their outputs merged in node order, a failure
// or a silent node settled at once or at the timeout. On CAF's
// deterministic test coordinator, with fake nodes.

#define BOOST_TEST_MODULE actors_group_run
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/text.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/group_run.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/messages/protocol.hpp>

using namespace epochrt;
using epochrt::test::contains;
using epochrt::test::converts_to;
using epochrt::test::deterministic_fixture;
using epochrt::test::held_promises;
using epochrt::test::reply_to;
using epochrt::test::stand_in;
using epochrt::test::takes;
using epochrt::test::task_failing_with;
using epochrt::test::task_holding;
using epochrt::test::task_on;
using std::chrono::milliseconds;

namespace {

// A fake node: every task of a run_tasks gets one output, `<task>.out`
// holding `value`.
caf::behavior task_echo(caf::event_based_actor*, std::string name,
                        int64_t value) {
  return {
    [name, value](run_tasks& msg) {
      tasks_done done{name, {}, {}};
      for (auto& task : msg.tasks)
        done.outputs.push_back(
          task_output{task.name, task.name + ".out", make_scalar(value)});
      return done;
    },
  };
}

// With an argument: CAF 0.17 spawns a function of no arguments by
// dereferencing a null argument tuple (UBSan rejects it).
caf::behavior task_failing(caf::event_based_actor*, std::string why) {
  return {
    [why](run_tasks&) -> caf::result<tasks_done> {
      return make_error(actors_errc::task_failed, why);
    },
  };
}

// The outcome of a group run, once it is there.
std::shared_ptr<std::optional<caf::expected<tasks_done>>>
start_run(caf::actor_system& sys, std::map<std::string, node_actor> nodes,
          milliseconds timeout, run_tasks group) {
  auto outcome = std::make_shared<std::optional<caf::expected<tasks_done>>>();
  start_group_run(sys, std::move(nodes), timeout, std::move(group),
                  [outcome](caf::expected<tasks_done> done) {
                    outcome->emplace(std::move(done));
                  });
  return outcome;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(group_run, deterministic_fixture)

BOOST_AUTO_TEST_CASE(a_group_run_merges_outputs_in_node_order) {
  std::map<std::string, node_actor> nodes{
    {"a", stand_in<node_actor>(spawn(task_echo, "a", 1))},
    {"b", stand_in<node_actor>(spawn(task_echo, "b", 2))}};
  auto done = start_run(
    *sys, nodes, milliseconds(1000),
    run_tasks{"epoch",
              3,
              {task_on("tb", "b"), task_on("ta", "a"), task_on("tb2", "b")}});
  this->run();
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE((*done)->engaged());
  std::vector<std::string> tasks;
  for (auto& out : (**done)->outputs)
    tasks.push_back(out.task);
  // Nodes in order of first use, tasks of a node in order.
  BOOST_TEST((tasks == std::vector<std::string>{"tb", "tb2", "ta"}));
}

BOOST_AUTO_TEST_CASE(a_task_on_an_unknown_node_fails_before_anything_runs) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  std::map<std::string, node_actor> nodes{
    {"a", stand_in<node_actor>(spawn(task_holding, held))}};
  auto done
    = start_run(*sys, nodes, milliseconds(1000),
                run_tasks{"init", 0, {task_on("t0", "a"), task_on("t1", "x")}});
  this->run();
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(is_error((*done)->error(), actors_errc::unknown_node));
  BOOST_TEST(held->empty());
}

BOOST_AUTO_TEST_CASE(a_group_run_fails_fast_on_a_nodes_error) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  std::map<std::string, node_actor> nodes{
    {"busy", stand_in<node_actor>(spawn(task_holding, held))},
    {"bad",
     stand_in<node_actor>(spawn(task_failing, std::string{"task t1 failed"}))}};
  auto done = start_run(
    *sys, nodes, milliseconds(60000),
    run_tasks{"epoch", 2, {task_on("t0", "busy"), task_on("t1", "bad")}});
  this->run();
  // No time has passed: the busy node is not waited for.
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(is_error((*done)->error(), actors_errc::task_failed));
  BOOST_TEST(error_text((*done)->error()) == "task t1 failed");
}

BOOST_AUTO_TEST_CASE(a_silent_node_fails_the_group_as_lost_at_the_timeout) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  std::map<std::string, node_actor> nodes{
    {"ok", stand_in<node_actor>(spawn(task_echo, "ok", 1))},
    {"frozen", stand_in<node_actor>(spawn(task_holding, held))}};
  auto done = start_run(
    *sys, nodes, milliseconds(300),
    run_tasks{"download", 4, {task_on("t0", "ok"), task_on("t1", "frozen")}});
  this->run();
  BOOST_TEST(!done->has_value());
  advance(milliseconds(301));
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(is_node_lost((*done)->error()));
  BOOST_TEST(contains(error_text((*done)->error()),
                      "node frozen (download group, epoch 4)"),
             error_text((*done)->error()));
}

BOOST_AUTO_TEST_CASE(a_lost_remote_node_is_named_with_group_and_epoch) {
  std::map<std::string, node_actor> nodes;
  nodes["far"] = stand_in<node_actor>(spawn(
    task_failing_with,
    make_error(actors_errc::node_lost, "node far at 127.0.0.1:1 is gone")));
  auto done = start_run(*sys, nodes, milliseconds(1000),
                        run_tasks{"epoch", 9, {task_on("t", "far")}});
  this->run();
  BOOST_REQUIRE(done->has_value());
  BOOST_REQUIRE(!(*done)->engaged());
  BOOST_TEST(error_text((*done)->error())
               == "node far (epoch group, epoch 9): node far at 127.0.0.1:1 "
                  "is gone",
             error_text((*done)->error()));
}

BOOST_AUTO_TEST_SUITE_END()
