// Host code and blocking: what a host program plugs in (op checks) fails a
// call as an error value and leaves the actor system usable, and no work
// that waits on a node's workspace holds one of CAF's scheduler threads.

#define BOOST_TEST_MODULE actors_host_code
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include <caf/actor_registry.hpp>

#include "test/actors/test_support.hpp"
#include "test/support/thread_starved_child.hpp"
#include <epochrt/actors/core/node_handle.hpp>

using namespace epochrt;
using namespace epochrt::test;
using namespace std::chrono_literals;

namespace {

using clock_type = std::chrono::steady_clock;

// A host op with one output, so that it runs holding its node's workspace,
// that takes `ms` milliseconds.
op_schema hold_op() {
  op_schema schema;
  schema.type = "Hold";
  schema.doc = "out = 1 after `ms` milliseconds, the workspace held";
  schema.min_outputs = schema.max_outputs = 1;
  schema.args = {{"ms", arg_kind::integer, true, "how long"}};
  schema.fn = [](op_context& ctx) -> caf::error {
    std::this_thread::sleep_for(std::chrono::milliseconds{ctx.int_arg("ms")});
    ctx.set_output(0, make_scalar<int64_t>(1));
    return caf::none;
  };
  return schema;
}

// A host op whose schema check throws `what` (a non-std exception when
// empty).
op_schema throwing_check_op(std::string type, std::string what) {
  op_schema schema;
  schema.type = std::move(type);
  schema.min_outputs = schema.max_outputs = 1;
  schema.fn = [](op_context& ctx) -> caf::error {
    ctx.set_output(0, make_scalar<int64_t>(1));
    return caf::none;
  };
  schema.check = [what](const op_def&) -> std::string {
    if (what.empty())
      throw 42;
    throw std::runtime_error(what);
  };
  return schema;
}

task_group_def one_task(const std::string& node, op_def op) {
  task_group_def group;
  add_task(group, make_task(node + "_task", node, {std::move(op)}));
  return group;
}

struct host_ops_fixture {
  std::unique_ptr<caf::actor_system_config> cfg = [] {
    auto result = make_config();
    // One scheduler thread: any handler that waits holds every actor.
    result->set("scheduler.max-threads", 1);
    return result;
  }();
  caf::actor_system sys{*cfg};
  std::shared_ptr<op_registry> ops = [] {
    auto result = std::make_shared<op_registry>();
    BOOST_REQUIRE(!add_builtin_ops(*result));
    BOOST_REQUIRE(!result->add(hold_op()));
    BOOST_REQUIRE(!result->add(throwing_check_op("ThrowsStd", "boom")));
    BOOST_REQUIRE(!result->add(throwing_check_op("ThrowsInt", "")));
    return result;
  }();

  session_options options() {
    session_options opts;
    opts.group_timeout = 60s;
    opts.request_timeout = 10s;
    return opts;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(host_code, host_ops_fixture)

BOOST_AUTO_TEST_CASE(
  a_long_op_does_not_stall_other_nodes_on_one_scheduler_thread) {
  local_session sess{sys, ops, options()};
  BOOST_REQUIRE(sess.node("a"));
  BOOST_REQUIRE(sess.node("b"));
  // Node a runs an op that holds its workspace for 2 s ...
  auto held = std::async(std::launch::async, [&] {
    return sess.run(
      one_task(
        "a", make_op("Hold", {}, {"x"}, {{"ms", make_scalar<int64_t>(2000)}})),
      "hold");
  });
  std::this_thread::sleep_for(300ms);
  // ... while it is asked for a blob, which has to wait for the op ...
  auto fetched = std::async(std::launch::async, [&] {
    return sess.fetch("a", "x");
  });
  std::this_thread::sleep_for(100ms);
  // ... and node b's group must still run at once.
  auto start = clock_type::now();
  auto other = sess.run(one_task("b", make_op("ConstantFill", {}, {"y"})), "b");
  auto took = clock_type::now() - start;
  BOOST_REQUIRE_MESSAGE(other, why(other));
  BOOST_TEST(
    std::chrono::duration_cast<std::chrono::milliseconds>(took).count() < 500,
    "node b's group took "
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
      << " ms while node a's op ran");
  auto held_result = held.get();
  BOOST_TEST(static_cast<bool>(held_result), why(held_result));
  auto value = fetched.get();
  BOOST_REQUIRE_MESSAGE(value, why(value));
  BOOST_TEST(element_as_double(*value, 0) == 1);
}

BOOST_AUTO_TEST_CASE(
  a_blocked_task_holds_one_worker_and_the_rest_serve_others) {
  auto opts = options();
  opts.worker_threads = 2;
  local_session sess{sys, ops, opts};
  // Node a's task blocks one of the two workers for 2 s ...
  auto blocked = std::async(std::launch::async, [&] {
    return sess.run(
      one_task("a",
               make_op("Sleep", {}, {}, {{"ms", make_scalar<int64_t>(2000)}})),
      "blocked");
  });
  std::this_thread::sleep_for(300ms);
  // ... and node b's group runs on the other at once.
  auto start = clock_type::now();
  auto other = sess.run(one_task("b", make_op("ConstantFill", {}, {"y"})), "b");
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
    clock_type::now() - start);
  BOOST_REQUIRE_MESSAGE(other, why(other));
  BOOST_TEST(took.count() < 1000,
             "node b's group took " << took.count() << " ms");
  auto result = blocked.get();
  BOOST_TEST(static_cast<bool>(result), why(result));
}

BOOST_AUTO_TEST_CASE(no_more_tasks_run_at_once_than_the_pool_has_workers) {
  auto opts = options();
  opts.worker_threads = 2;
  local_session sess{sys, ops, opts};
  // Four nodes' tasks of 400 ms on two workers: two rounds, never one.
  task_group_def group;
  for (auto node : {"a", "b", "c", "d"})
    add_task(group,
             make_task(std::string{node} + "_task", node,
                       {make_op("Sleep", {}, {},
                                {{"ms", make_scalar<int64_t>(400)}})}));
  auto start = clock_type::now();
  auto done = sess.run(group, "four");
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
    clock_type::now() - start);
  BOOST_REQUIRE_MESSAGE(done, why(done));
  BOOST_TEST(took.count() >= 790,
             "four tasks on two workers took " << took.count() << " ms");
  BOOST_TEST(took.count() < 10000);
}

BOOST_AUTO_TEST_CASE(a_session_without_threads_for_its_pool_says_so_on_use) {
  // The session cannot start its pool where no thread may be started.
  auto code = test::exit_code_without_threads([this] {
    auto opts = options();
    opts.worker_threads = 3;
    local_session sess{sys, ops, opts};
    auto node = sess.node("a");
    if (node || !sess.start_error())
      return 3;
    auto text = error_text(node.error());
    return text.find("cannot start the worker pool: thread 1 of 3")
        != std::string::npos
      ? 0
      : 4;
  });
  BOOST_TEST(code == 0);
}

BOOST_AUTO_TEST_CASE(a_throwing_op_check_fails_the_group_naming_the_op) {
  local_session sess{sys, ops, options()};
  auto failed = sess.run(one_task("n", make_op("ThrowsStd", {}, {"x"})));
  BOOST_REQUIRE(!failed);
  auto text = error_text(failed.error());
  BOOST_TEST(text.find("the check of op 'ThrowsStd' threw an exception: boom")
               != std::string::npos,
             text);
  failed = sess.run(one_task("n", make_op("ThrowsInt", {}, {"x"})));
  BOOST_REQUIRE(!failed);
  text = error_text(failed.error());
  BOOST_TEST(text.find("the check of op 'ThrowsInt' threw an unknown "
                       "exception")
               != std::string::npos,
             text);
  // The node, its session and the system still serve.
  auto ok = sess.run(one_task("n", make_op("ConstantFill", {}, {"x"})));
  BOOST_TEST(static_cast<bool>(ok), why(ok));
  auto pipeline = load_job_file(
    std::string{EPOCHRT_SOURCE_DIR} + "/examples/jobs/pipeline.json", *ops);
  BOOST_REQUIRE(pipeline);
  job_runner runner{std::move(*pipeline)};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
}

BOOST_AUTO_TEST_CASE(a_job_file_using_a_throwing_check_is_refused_naming_it) {
  auto loaded = parse_job_json(
    R"({"name": "j", "epoch": [{"node": "n", "outputs": ["x"],
        "ops": [{"type": "ThrowsStd", "outputs": ["x"]}]}],
        "stop_conditions": [{"node": "n", "blob": "x"}]})",
    "j.json", *ops);
  BOOST_REQUIRE(!loaded);
  auto text = error_text(loaded.error());
  BOOST_TEST(text.find("the check of op 'ThrowsStd' threw an exception: boom")
               != std::string::npos,
             text);
}

BOOST_AUTO_TEST_CASE(after_failed_jobs_no_actor_or_task_thread_keeps_running) {
  // 20 nodes whose epoch tasks all fail at once, beside a node that sleeps:
  // once the session is gone, every actor and task thread of the job ends.
  std::string tasks = R"({"node": "slow", "ops": [
    {"type": "Sleep", "args": {"ms": 60000}}]})";
  for (int i = 0; i < 20; ++i)
    tasks += R"(, {"node": "n)" + std::to_string(i) + R"(", "outputs": ["y"],
      "ops": [{"type": "Copy", "inputs": ["missing"], "outputs": ["y"]}]})";
  auto baseline = sys.registry().running();
  for (int run = 0; run < 5; ++run) {
    auto loaded = parse_job_json(R"({"name": "fails", "epoch": [)" + tasks
                                   + R"(], "stop_conditions": [
                                   {"node": "n0", "blob": "y"}]})",
                                 "fails.json", *ops);
    BOOST_REQUIRE_MESSAGE(loaded, why(loaded));
    {
      local_session sess{sys, ops, options()};
      job_runner runner{std::move(*loaded)};
      auto epochs = runner.train(sess);
      BOOST_REQUIRE(!epochs);
      BOOST_TEST(error_text(epochs.error()).find("input 'missing'")
                   != std::string::npos,
                 error_text(epochs.error()));
    }
    auto deadline = clock_type::now() + 5s;
    while (sys.registry().running() != baseline && clock_type::now() < deadline)
      std::this_thread::sleep_for(10ms);
    BOOST_REQUIRE_MESSAGE(sys.registry().running() == baseline,
                          "run " << run << ": "
                                 << sys.registry().running() - baseline
                                 << " actors or task threads still running");
  }
}

BOOST_AUTO_TEST_SUITE_END()
