// The node actor (actors/core/node_actor.hpp): runs the tasks of a group on
// the worker pool and answers once, with outputs in task order; cancels,
// fails at its deadline; frozen or killed by a fault, answers as a lost
// node would. On a real scheduler with bounded waits.

#define BOOST_TEST_MODULE actors_node
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/after.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "test/actors/protocol_fixtures.hpp"
#include "test/support/text.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/actors/core/pooled_task.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/faults/fault_point.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>

using namespace epochrt;
using epochrt::test::contains;
using epochrt::test::converts_to;
using epochrt::test::reply_to;
using epochrt::test::scheduler_fixture;
using epochrt::test::takes;
using epochrt::test::task_on;
using epochrt::test::why;
using std::chrono::milliseconds;

namespace {

static_assert(takes<node_actor, run_tasks>);
static_assert(std::is_same_v<reply_to<node_actor, run_tasks>,
                             caf::detail::type_list<tasks_done>>);
static_assert(std::is_same_v<reply_to<node_actor, fetch_blobs>,
                             caf::detail::type_list<blob_values>>);
static_assert(std::is_same_v<reply_to<node_actor, cancel_tasks>,
                             caf::detail::type_list<void>>);
static_assert(std::is_same_v<reply_to<node_actor, check_ops>,
                             caf::detail::type_list<void>>);
// Checkpoints are the persistence actor's; faults reach a node from its
// own tasks, never from whoever holds its handle.
static_assert(!takes<node_actor, begin_save>);
static_assert(!takes<node_actor, run_job>);
static_assert(!converts_to<node_task_events, node_actor>);

// A node on a daemon is one proxy that stands for both it and its
// persistence actor.
static_assert(converts_to<node_actor, node_and_persistence_actor>);

// The handle others hold is the narrow one.
static_assert(std::is_same_v<
              decltype(spawn_node(std::declval<caf::actor_system&>(), "",
                                  nullptr, nullptr, milliseconds{}, nullptr)),
              node_actor>);

op_def op(std::string type, std::vector<std::string> outputs,
          std::map<std::string, tensor> args) {
  return op_def{std::move(type), {}, std::move(outputs), std::move(args)};
}

// A task that sleeps `ms`, then fills `blob` with `value`, and outputs it.
task_def sleep_then_fill(const std::string& name, int64_t ms,
                         const std::string& blob, double value) {
  task_def task = task_on(name, "n");
  task.steps.push_back(step_def{
    "sleep", {op("Sleep", {}, {{"ms", make_scalar<int64_t>(ms)}})}, 1, {}});
  task.steps.push_back(step_def{
    "fill",
    {op("ConstantFill", {blob}, {{"value", make_scalar<double>(value)}})},
    1,
    {}});
  task.outputs.push_back(blob);
  return task;
}

// The next group reply `self` gets within `wait`, sent to it as the answer
// to a plain send: an empty error for a tasks_done, the error, or nothing.
std::optional<caf::error> next_group_reply(caf::scoped_actor& self,
                                           milliseconds wait) {
  std::optional<caf::error> reply;
  self->receive(
    [&](tasks_done&) {
      reply = caf::error{};
    },
    [&](caf::error& err) {
      reply = std::move(err);
    },
    caf::after(wait) >> [] {});
  return reply;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(node, scheduler_fixture)

BOOST_AUTO_TEST_CASE(a_node_answers_run_tasks_with_outputs_in_task_order) {
  auto n = node();
  // The first task ends last: the order is the tasks', not their ends'.
  auto done = ask<tasks_done>(n,
                              run_tasks{"epoch",
                                        1,
                                        {sleep_then_fill("first", 100, "x", 1),
                                         sleep_then_fill("second", 0, "y", 2),
                                         sleep_then_fill("third", 0, "z", 3)}});
  BOOST_REQUIRE_MESSAGE(done, why(done));
  BOOST_TEST(done->node == "n");
  std::vector<std::string> blobs;
  for (auto& out : done->outputs)
    blobs.push_back(out.blob);
  BOOST_TEST((blobs == std::vector<std::string>{"x", "y", "z"}));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_nodes_group_fails_at_its_deadline) {
  auto n = node(milliseconds(150));
  auto started = std::chrono::steady_clock::now();
  auto done = ask<tasks_done>(
    n, run_tasks{"epoch", 1, {sleep_then_fill("slow", 5000, "x", 1)}});
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_error(done.error(), actors_errc::task_failed));
  BOOST_TEST(contains(error_text(done.error()), "did not end within 150 ms"),
             error_text(done.error()));
  BOOST_TEST((took < std::chrono::seconds(3)));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(
  cancel_tasks_stops_running_tasks_and_answers_when_they_ended) {
  auto n = node();
  caf::scoped_actor self{*sys};
  // The task sleeps, then would write `after`; cancelled, it stops at
  // its next op.
  auto group = self->request(
    n, std::chrono::seconds(10),
    run_tasks{"epoch", 1, {sleep_then_fill("t", 400, "after", 1)}});
  auto cancelled = ask<caf::unit_t>(n, cancel_tasks{});
  BOOST_REQUIRE_MESSAGE(cancelled, why(cancelled));
  // The task has ended: the group's answer is already on its way.
  std::optional<caf::error> group_error;
  group.receive(
    [&](tasks_done&) {
      group_error = caf::error{};
    },
    [&](caf::error& err) {
      group_error = std::move(err);
    });
  BOOST_REQUIRE(group_error.has_value());
  BOOST_TEST(static_cast<bool>(*group_error));
  auto after = ask<blob_values>(n, fetch_blobs{{"after"}});
  BOOST_TEST(!after);
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(
  a_failing_task_answers_its_group_without_waiting_for_the_rest) {
  auto n = node();
  task_def failing = task_on("failing", "n");
  failing.steps.push_back(step_def{"bad", {op("NoSuchOp", {}, {})}, 1, {}});
  auto started = std::chrono::steady_clock::now();
  auto done = ask<tasks_done>(
    n, run_tasks{"epoch", 1, {sleep_then_fill("slow", 5000, "x", 1), failing}});
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_error(done.error(), actors_errc::task_failed),
             error_text(done.error()));
  BOOST_TEST((took < std::chrono::seconds(3)));
  // The slow task was asked to stop with the group: it ends well before
  // its 5 s sleep.
  auto idle = ask<caf::unit_t>(n, cancel_tasks{}, milliseconds(3000));
  BOOST_TEST(static_cast<bool>(idle), why(idle));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_group_past_its_deadline_gets_one_reply_only) {
  auto n = node(milliseconds(100));
  caf::scoped_actor self{*sys};
  self->send(n, run_tasks{"epoch", 1, {sleep_then_fill("slow", 300, "x", 1)}});
  auto first = next_group_reply(self, milliseconds(5000));
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(static_cast<bool>(*first));
  // The task ends after the deadline's reply: it must not answer again.
  auto idle = ask<caf::unit_t>(n, cancel_tasks{});
  BOOST_REQUIRE_MESSAGE(idle, why(idle));
  auto second = next_group_reply(self, milliseconds(300));
  BOOST_TEST(!second.has_value());
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_frozen_node_answers_no_group_even_when_its_tasks_end) {
  auto n = node();
  caf::scoped_actor self{*sys};
  self->send(n, run_tasks{"epoch", 1, {sleep_then_fill("t", 200, "x", 1)}});
  // Queued behind the group: the group is the node's when it freezes. (What
  // a task that meets the fault tells its node.)
  self->send(caf::actor_cast<node_task_events>(n), node_fault_atom::value,
             static_cast<uint8_t>(fault_kind::freeze_node));
  auto answered = next_group_reply(self, milliseconds(1000));
  BOOST_TEST(!answered.has_value());
  caf::anon_send_exit(n, caf::exit_reason::kill);
}

namespace {

// The answers an actor got to its requests, in arrival order.
struct answers {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<caf::error> errors; // none: the request succeeded

  void add(caf::error err) {
    std::lock_guard<std::mutex> guard{mutex};
    errors.push_back(std::move(err));
    changed.notify_all();
  }

  // Waits up to `wait` for `count` answers; returns those it has.
  std::vector<caf::error> wait_for(size_t count, milliseconds wait) {
    std::unique_lock<std::mutex> guard{mutex};
    changed.wait_for(guard, wait, [&] {
      return errors.size() >= count;
    });
    return errors;
  }
};

// Sends `n` one request of each kind a node serves (fetch, put, cancel,
// reset) and records their answers in `out`.
void ask_each_request(caf::event_based_actor* self, node_actor n,
                      std::shared_ptr<answers> out) {
  auto on_error = [out](caf::error& err) {
    out->add(std::move(err));
  };
  auto on_unit = [out] {
    out->add(caf::error{});
  };
  self->request(n, caf::infinite, fetch_blobs{{"w"}})
    .then(
      [out](blob_values&) {
        out->add(caf::error{});
      },
      on_error);
  self
    ->request(n, caf::infinite,
              put_blobs{{blob_value{"v", make_scalar<double>(2)}}})
    .then(on_unit, on_error);
  self->request(n, caf::infinite, cancel_tasks{}).then(on_unit, on_error);
  self->request(n, caf::infinite, reset_workspace{"test"})
    .then(on_unit, on_error);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_frozen_node_holds_every_request_until_it_exits) {
  auto n = node();
  BOOST_REQUIRE(
    ask<caf::unit_t>(n, put_blobs{{blob_value{"w", make_scalar<double>(1)}}}));
  caf::scoped_actor self{*sys};
  self->send(caf::actor_cast<node_task_events>(n), node_fault_atom::value,
             static_cast<uint8_t>(fault_kind::freeze_node));
  auto out = std::make_shared<answers>();
  sys->spawn(ask_each_request, n, out);
  // Each takes microseconds, a cancel with no task running none at all;
  // frozen, the node answers none of them.
  BOOST_TEST(out->wait_for(1, milliseconds(300)).empty());
  // Its end answers what it holds: no requester is left waiting for a
  // timeout of its own (here, for ever).
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
  auto got = out->wait_for(4, milliseconds(10000));
  BOOST_REQUIRE_EQUAL(got.size(), 4u);
  for (auto& err : got)
    BOOST_TEST((err == caf::sec::request_receiver_down || is_node_lost(err)),
               (err ? error_text(err) : "a frozen node answered"));
}

BOOST_AUTO_TEST_CASE(a_node_killed_while_its_tasks_run_answers_them_as_lost) {
  auto n = node();
  caf::scoped_actor self{*sys};
  self->send(n, run_tasks{"epoch", 1, {sleep_then_fill("t", 2000, "x", 1)}});
  // What a task that meets the fault tells its node.
  self->send(caf::actor_cast<node_task_events>(n), node_fault_atom::value,
             static_cast<uint8_t>(fault_kind::kill_node));
  auto reply = next_group_reply(self, milliseconds(5000));
  BOOST_REQUIRE(reply.has_value());
  BOOST_TEST(is_node_lost(*reply), error_text(*reply));
}

BOOST_AUTO_TEST_CASE(
  a_task_ending_after_its_node_was_killed_leaves_the_answer_to_it) {
  // One worker: the killed task, then the failing one right after it, on
  // the same thread, before the node actor hears of the kill.
  auto one = worker_pool::make({1});
  BOOST_REQUIRE(one);
  std::shared_ptr<worker_pool> single = std::move(*one);
  auto plan = parse_fault_plan(R"({"faults": [{"point": "task.start",
    "fault": "kill_node", "node": "n", "detail": "killed"}]})",
                               "plan");
  BOOST_REQUIRE_MESSAGE(plan, why(plan));
  auto n = spawn_node(*sys, "n", ws, ops, milliseconds(10000), single,
                      std::make_shared<fault_injector>(std::move(*plan)));
  task_def failing = task_on("failing", "n");
  failing.steps.push_back(step_def{"bad", {op("NoSuchOp", {}, {})}, 1, {}});
  auto done = ask<tasks_done>(
    n, run_tasks{"epoch", 1, {task_on("killed", "n"), failing}});
  BOOST_REQUIRE(!done);
  BOOST_TEST(is_node_lost(done.error()), error_text(done.error()));
  BOOST_TEST(contains(error_text(done.error()), "killed by the fault plan"),
             error_text(done.error()));
  // Joined here, not by whichever thread lets go of it last.
  single->stop();
}

BOOST_AUTO_TEST_CASE(a_node_stores_and_fetches_blobs) {
  auto n = node();
  auto put = ask<caf::unit_t>(
    n, put_blobs{{blob_value{"w", make_scalar<double>(2.5)}}});
  BOOST_REQUIRE_MESSAGE(put, why(put));
  auto got = ask<blob_values>(n, fetch_blobs{{"w"}});
  BOOST_REQUIRE_MESSAGE(got, why(got));
  BOOST_REQUIRE_EQUAL(got->blobs.size(), 1u);
  BOOST_TEST(got->blobs[0].name == "w");
  auto missing = ask<blob_values>(n, fetch_blobs{{"nope"}});
  BOOST_TEST(!missing);
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_node_names_the_first_op_its_process_lacks) {
  auto n = node();
  auto known = ask<caf::unit_t>(n, check_ops{{"Add", "ConstantFill"}});
  BOOST_TEST(static_cast<bool>(known), why(known));
  auto unknown = ask<caf::unit_t>(n, check_ops{{"Add", "PyScale", "Nope"}});
  BOOST_REQUIRE(!unknown);
  BOOST_TEST(in_category(unknown.error(), runtime_category));
  BOOST_TEST(unknown.error().code()
             == static_cast<uint8_t>(runtime_errc::unknown_op));
  BOOST_TEST(contains(why(unknown), "node n has no op 'PyScale' where it runs"),
             why(unknown));
  caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
