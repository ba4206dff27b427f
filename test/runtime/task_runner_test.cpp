#include <epochrt/runtime/task_runner.hpp>

#include <atomic>
#include <thread>

#include "test_util.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

task_def init_task() {
  return make_task(
    "init", "trainer_0",
    {make_op("ConstantFill", {}, {"total"},
             {{"shape", i64s({1}, {1})},
              {"value", make_scalar<int64_t>(100)},
              {"dtype", str("i64")}}),
     make_op("GivenTensorFill", {}, {"dataset"},
             {{"shape", i64s({1}, {10})},
              {"values", i64s({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})},
              {"dtype", str("i64")}}),
     make_op("CreateCursor", {}, {"cursor"})});
}

task_def epoch_task(workspace_type type = workspace_type::global) {
  auto task = make_task(
    "read", "trainer_0",
    {make_op("ReadNext", {"cursor", "dataset"}, {"batch", "finished"},
             {{"batch_size", make_scalar<int64_t>(3)}}),
     make_op("Sum", {"batch"}, {"batch_sum"}),
     make_op("Add", {"total", "batch_sum"}, {"total"})},
    {"total", "finished"});
  task.workspace = type;
  return task;
}

const tensor& output(const std::vector<task_output>& outs,
                     const std::string& blob) {
  for (auto& out : outs)
    if (out.blob == blob)
      return out.value;
  BOOST_FAIL("no output " + blob);
  return outs.front().value;
}

} // namespace

BOOST_AUTO_TEST_SUITE(task_runner_suite)

BOOST_AUTO_TEST_CASE(read_next_sum_add_reproduce_the_reference_totals) {
  for (auto type : {workspace_type::global, workspace_type::private_scratch}) {
    workspace ws;
    BOOST_REQUIRE(run_task(init_task(), ws, builtins()));
    std::vector<int64_t> totals;
    std::vector<bool> finished;
    for (int epoch = 0; epoch < 4; ++epoch) {
      auto outs = run_task(epoch_task(type), ws, builtins());
      BOOST_REQUIRE_MESSAGE(outs, error_of(outs));
      BOOST_REQUIRE(outs->size() == 2u);
      BOOST_TEST((*outs)[0].task == "read");
      totals.push_back(ints(output(*outs, "total"))[0]);
      finished.push_back(*truth_value(output(*outs, "finished")));
    }
    BOOST_TEST(totals == (std::vector<int64_t>{103, 115, 136, 145}),
               boost::test_tools::per_element());
    BOOST_TEST(finished == (std::vector<bool>{false, false, false, true}),
               boost::test_tools::per_element());
    BOOST_TEST(*ws.get("total") == i64s({1}, {145}));
  }
}

BOOST_AUTO_TEST_CASE(private_scratch_blobs_vanish_with_the_task) {
  workspace ws;
  BOOST_REQUIRE(run_task(init_task(), ws, builtins()));
  auto outs
    = run_task(epoch_task(workspace_type::private_scratch), ws, builtins());
  BOOST_REQUIRE(outs);
  // Scratch outputs are still reported ...
  BOOST_TEST(*truth_value(output(*outs, "finished")) == false);
  // ... but only blobs the workspace already had were written there.
  BOOST_TEST(!ws.has("batch"));
  BOOST_TEST(!ws.has("batch_sum"));
  BOOST_TEST(!ws.has("finished"));
  BOOST_TEST(*ws.get("total") == i64s({1}, {103}));
  BOOST_TEST(*ws.get("cursor") == make_scalar<int64_t>(3));
  BOOST_TEST(ws.names()
               == (std::vector<std::string>{"cursor", "dataset", "total"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_step_with_a_stop_blob_ends_when_it_is_true) {
  workspace ws;
  BOOST_REQUIRE(run_task(init_task(), ws, builtins()));
  auto task = epoch_task();
  task.steps[0].num_iter = 0; // until stopped
  task.steps[0].stop_blob = "finished";
  auto outs = run_task(task, ws, builtins());
  BOOST_REQUIRE_MESSAGE(outs, error_of(outs));
  BOOST_TEST(ints(output(*outs, "total"))[0] == 145);
  // num_iter bounds the loop even when the stop blob stays false.
  workspace ws2;
  BOOST_REQUIRE(run_task(init_task(), ws2, builtins()));
  task.steps[0].num_iter = 2;
  outs = run_task(task, ws2, builtins());
  BOOST_REQUIRE(outs);
  BOOST_TEST(ints(output(*outs, "total"))[0] == 115);
}

BOOST_AUTO_TEST_CASE(a_step_runs_its_ops_num_iter_times) {
  workspace ws;
  ws.set("x", make_scalar<int64_t>(0));
  ws.set("one", make_scalar<int64_t>(1));
  auto task = make_task("t", "n", {make_op("Add", {"x", "one"}, {"x"})}, {"x"});
  task.steps[0].num_iter = 5;
  auto outs = run_task(task, ws, builtins());
  BOOST_REQUIRE(outs);
  BOOST_TEST(ints((*outs)[0].value)[0] == 5);
}

BOOST_AUTO_TEST_CASE(a_missing_stop_blob_or_output_is_an_error) {
  workspace ws;
  auto task
    = make_task("t", "n", {make_op("CreateCursor", {}, {"c"})}, {"nope"});
  auto outs = run_task(task, ws, builtins());
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::missing_blob));
  BOOST_TEST(error_text(outs.error())
             == "task 't': output 'nope' does not "
                "exist");
  task.outputs.clear();
  task.steps[0].stop_blob = "stop";
  outs = run_task(task, ws, builtins());
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::missing_blob));
}

BOOST_AUTO_TEST_CASE(an_op_error_names_task_step_op_index_and_type) {
  workspace ws;
  ws.set("a", i64s({2}, {1, 2}));
  ws.set("b", i64s({3}, {1, 2, 3}));
  task_def task;
  task.name = "calc";
  task.node = "n";
  step_def first;
  first.ops = {make_op("Copy", {"a"}, {"c"})};
  step_def second;
  second.name = "combine";
  second.ops
    = {make_op("Copy", {"a"}, {"d"}), make_op("Add", {"a", "b"}, {"e"})};
  task.steps = {first, second};
  auto outs = run_task(task, ws, builtins());
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::shape_mismatch));
  BOOST_TEST(error_text(outs.error())
             == "task 'calc', step 1 'combine', op 1 'Add': shapes [2] and "
                "[3] differ and neither is a single element");
  BOOST_TEST(ws.has("d")); // ops before the failing one ran
}

BOOST_AUTO_TEST_CASE(an_invalid_op_fails_the_task_before_anything_runs) {
  workspace ws;
  auto task = make_task(
    "t", "n", {make_op("CreateCursor", {}, {"c"}), make_op("Foo", {}, {})});
  auto outs = run_task(task, ws, builtins());
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::unknown_op));
  BOOST_TEST(error_text(outs.error())
             == "task 't', step 0, op 1 'Foo': unknown op 'Foo'");
  BOOST_TEST(!ws.has("c"));
  task.steps[0].ops.pop_back();
  task.steps[0].num_iter = 0;
  outs = run_task(task, ws, builtins());
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::invalid_job));
}

BOOST_AUTO_TEST_CASE(an_op_that_throws_fails_with_op_failed) {
  op_registry reg;
  op_schema schema;
  schema.type = "Throw";
  schema.doc = "throws";
  schema.fn = [](op_context&) -> caf::error {
    throw std::runtime_error("boom");
  };
  BOOST_REQUIRE(!reg.add(std::move(schema)));
  workspace ws;
  auto err = run_ops(ws, {make_op("Throw", {}, {})}, reg);
  BOOST_TEST(is_code(err, runtime_errc::op_failed));
  BOOST_TEST(error_text(err).find("boom") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_set_cancel_flag_stops_the_task) {
  workspace ws;
  ws.set("x", make_scalar<int64_t>(0));
  ws.set("one", make_scalar<int64_t>(1));
  ws.set("never", make_scalar<bool>(false));
  auto task = make_task("t", "n", {make_op("Add", {"x", "one"}, {"x"})});
  task.steps[0].num_iter = 0;
  task.steps[0].stop_blob = "never";
  std::atomic<bool> cancel{false};
  std::thread canceller{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cancel = true;
  }};
  auto outs = run_task(task, ws, builtins(), &cancel);
  canceller.join();
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::cancelled));
  BOOST_TEST(error_text(outs.error()).find("cancelled") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_cancelled_task_ends_a_long_sleep_early) {
  workspace ws;
  auto task = make_task(
    "t", "n",
    {make_op("Sleep", {}, {}, {{"ms", make_scalar<int64_t>(60000)}})});
  std::atomic<bool> cancel{false};
  std::thread canceller{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  }};
  auto start = std::chrono::steady_clock::now();
  auto outs = run_task(task, ws, builtins(), &cancel);
  auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  BOOST_REQUIRE(!outs);
  BOOST_TEST(is_code(outs.error(), runtime_errc::cancelled));
  BOOST_TEST(error_text(outs.error())
             == "task 't', step 0, op 0 'Sleep': cancelled");
  BOOST_TEST((took < std::chrono::seconds(2)));
}

BOOST_AUTO_TEST_CASE(concurrent_tasks_on_one_workspace_never_lose_updates) {
  workspace ws;
  ws.set("total", i64s({1}, {0}));
  constexpr int threads = 4;
  constexpr int iters = 2000;
  std::vector<std::thread> pool;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto inc = "inc_" + std::to_string(t);
      ws.set(inc, make_scalar<int64_t>(t + 1));
      task_def task = make_task("add_" + std::to_string(t), "n",
                                {make_op("Add", {"total", inc}, {"total"}),
                                 make_op("Sum", {"total"}, {"seen"})});
      task.workspace
        = t % 2 == 0 ? workspace_type::global : workspace_type::private_scratch;
      task.steps[0].num_iter = iters;
      if (!run_task(task, ws, builtins()))
        ++failures;
    });
  }
  // Meanwhile, a checkpoint-like reader takes snapshots.
  for (int i = 0; i < 100; ++i) {
    auto snap = ws.snapshot({"total"});
    BOOST_REQUIRE(snap);
    BOOST_CHECK((*snap)[0].value->values<int64_t>()[0] >= 0);
  }
  for (auto& th : pool)
    th.join();
  BOOST_TEST(failures == 0);
  // 2000 * (1 + 2 + 3 + 4)
  BOOST_TEST(*ws.get("total") == i64s({1}, {20000}));
}

BOOST_AUTO_TEST_CASE(truth_value_accepts_one_numeric_or_bool_element) {
  BOOST_TEST(*truth_value(make_scalar<bool>(true)));
  BOOST_TEST(!*truth_value(make_scalar<int64_t>(0)));
  BOOST_TEST(*truth_value(i64s({1}, {2})));
  BOOST_TEST(!truth_value(i64s({2}, {1, 1})));
  BOOST_TEST(!truth_value(str("yes")));
}

BOOST_AUTO_TEST_SUITE_END()
