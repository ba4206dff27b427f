#include <epochrt/runtime/job.hpp>

#include "test_util.hpp"
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job_file.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

job counting_job(int64_t epochs) {
  job j{"count"};
  j.add_task(
    j.init_group(),
    make_task(
      "init", "trainer_0",
      {make_op("ConstantFill", {}, {"x"}, {{"dtype", str("i64")}}),
       make_op("ConstantFill", {}, {"one"},
               {{"dtype", str("i64")}, {"value", make_scalar<int64_t>(1)}})}));
  j.add_task(j.epoch_group(),
             make_task("inc", "trainer_0",
                       {make_op("Add", {"x", "one"}, {"x"})}, {"x"}));
  BOOST_REQUIRE(!epoch_limiter(j, epochs));
  return j;
}

} // namespace

BOOST_AUTO_TEST_SUITE(job_suite)

BOOST_AUTO_TEST_CASE(add_task_names_unnamed_tasks_after_group_node_and_index) {
  job j{"j"};
  j.add_task(j.epoch_group(), make_task("", "a", {}));
  j.add_task(j.epoch_group(), make_task("mine", "b", {}));
  j.add_task(j.exit_group(), make_task("", "b", {}));
  BOOST_TEST(j.epoch_group().tasks[0].name == "epoch/a/0");
  BOOST_TEST(j.epoch_group().tasks[1].name == "mine");
  BOOST_TEST(j.exit_group().tasks[0].name == "exit/b/0");
  job_def def;
  def.name = "d";
  def.init_group.tasks.push_back(make_task("", "n", {}));
  auto k = job::from_def(def);
  BOOST_TEST(k.init_group().tasks[0].name == "init/n/0");
}

BOOST_AUTO_TEST_CASE(nodes_are_listed_in_first_use_order) {
  job j{"j"};
  j.add_task(j.init_group(), make_task("i1", "b", {}));
  j.add_task(j.init_group(), make_task("i2", "a", {}));
  j.add_task(j.epoch_group(), make_task("e1", "c", {}));
  j.add_task(j.epoch_group(), make_task("e2", "a", {}));
  j.add_task(j.exit_group(), make_task("x", "d", {}));
  BOOST_TEST(j.nodes() == (std::vector<std::string>{"b", "a", "c", "d"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(nodes_to_checkpoint_defaults_to_the_init_nodes) {
  job j{"j"};
  j.add_task(j.init_group(), make_task("i1", "b", {}));
  j.add_task(j.init_group(), make_task("i2", "a", {}));
  j.add_task(j.init_group(), make_task("i3", "b", {}));
  j.add_task(j.epoch_group(), make_task("e", "c", {}));
  BOOST_TEST(j.nodes_to_checkpoint() == (std::vector<std::string>{"b", "a"}),
             boost::test_tools::per_element());
  j.set_nodes_to_checkpoint({"c"});
  BOOST_TEST(j.nodes_to_checkpoint() == std::vector<std::string>{"c"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(add_stop_condition_adds_an_output_task_only_when_needed) {
  job j{"j"};
  j.add_task(
    j.epoch_group(),
    make_task("read", "n", {make_op("CreateCursor", {}, {"f"})}, {"f"}));
  j.add_stop_condition("n", "f");
  BOOST_TEST(j.epoch_group().tasks.size() == 1u);
  j.add_stop_condition("n", "g");
  BOOST_REQUIRE(j.epoch_group().tasks.size() == 2u);
  auto& added = j.epoch_group().tasks[1];
  BOOST_TEST(added.node == "n");
  BOOST_TEST(added.steps.empty());
  BOOST_TEST(added.outputs == std::vector<std::string>{"g"},
             boost::test_tools::per_element());
  BOOST_TEST(j.stop_conditions().size() == 2u);
}

BOOST_AUTO_TEST_CASE(make_task_takes_the_workspace_kind_global_by_default) {
  auto fill = [] {
    return std::vector<op_def>{make_op("CreateCursor", {}, {"scratch"})};
  };
  auto global = make_task("t", "n", fill(), {"scratch"});
  BOOST_TEST((global.workspace == workspace_type::global));
  auto scratch
    = make_task("t", "n", fill(), {"scratch"}, workspace_type::private_scratch);
  BOOST_TEST((scratch.workspace == workspace_type::private_scratch));
  // The same task as a job file's "workspace": "private" ...
  auto parsed = parse_job_json(R"({"name": "j", "epoch": [
    {"name": "t", "node": "n", "workspace": "private", "outputs": ["scratch"],
     "ops": [{"type": "CreateCursor", "outputs": ["scratch"]}]}],
    "stop_conditions": [{"node": "n", "blob": "scratch"}]})",
                               "j.json", builtins());
  BOOST_REQUIRE_MESSAGE(parsed, error_of(parsed));
  BOOST_TEST((parsed->epoch_group().tasks.at(0) == scratch));
  // ... and it runs as one: its new blob is reported, not kept.
  workspace ws;
  auto outs = run_task(scratch, ws, builtins());
  BOOST_REQUIRE_MESSAGE(outs, error_of(outs));
  BOOST_TEST(outs->size() == 1u);
  BOOST_TEST(!ws.has("scratch"));
  BOOST_REQUIRE(run_task(global, ws, builtins()));
  BOOST_TEST(ws.has("scratch"));
}

BOOST_AUTO_TEST_CASE(epoch_limiter_of_one_stops_after_one_epoch) {
  auto j = counting_job(1);
  BOOST_REQUIRE(!j.validate(builtins()));
  job_simulation sim;
  sim.run(j);
  BOOST_TEST(sim.epochs == 1);
  BOOST_TEST(*sim.ws("trainer_0").get("x") == make_scalar<int64_t>(1));
}

BOOST_AUTO_TEST_CASE(epoch_limiter_of_three_stops_after_three_epochs) {
  auto j = counting_job(3);
  BOOST_REQUIRE(!j.validate(builtins()));
  job_simulation sim;
  sim.run(j);
  BOOST_TEST(sim.epochs == 3);
  BOOST_TEST(*sim.ws("trainer_0").get("x") == make_scalar<int64_t>(3));
  BOOST_TEST(sim.ws("trainer_0").has("epoch_limiter/epochs"));
}

BOOST_AUTO_TEST_CASE(epoch_limit_reads_the_smallest_limiter_of_a_job) {
  job plain{"j"};
  plain.add_task(plain.init_group(), make_task("i", "n", {}));
  BOOST_TEST(!epoch_limit(plain).has_value());
  auto j = counting_job(7);
  BOOST_TEST((epoch_limit(j) == std::optional<int64_t>{7}));
  BOOST_REQUIRE(!epoch_limiter(j, 3));
  BOOST_TEST((epoch_limit(j) == std::optional<int64_t>{3}));
  BOOST_REQUIRE(!epoch_limiter(j, 5));
  BOOST_TEST((epoch_limit(j) == std::optional<int64_t>{3}));
}

BOOST_AUTO_TEST_CASE(epoch_limiter_rejects_zero_epochs_and_empty_jobs) {
  job j{"j"};
  BOOST_TEST(is_code(epoch_limiter(j, 1), runtime_errc::invalid_job));
  j.add_task(j.init_group(), make_task("i", "n", {}));
  BOOST_TEST(is_code(epoch_limiter(j, 0), runtime_errc::bad_argument));
  BOOST_TEST(j.epoch_group().tasks.empty());
  BOOST_REQUIRE(!epoch_limiter(j, 2));
  BOOST_REQUIRE(!epoch_limiter(j, 5)); // a second limiter gets its own blobs
  BOOST_TEST(j.epoch_group().tasks[1].outputs[0] == "epoch_limiter/finished_2");
  BOOST_TEST(!j.validate(builtins()));
}

BOOST_AUTO_TEST_CASE(validate_reports_the_field_path_of_the_problem) {
  auto base = counting_job(2);
  auto check = [&](auto mutate, const std::string& expected,
                   runtime_errc code = runtime_errc::invalid_job) {
    auto j = base;
    mutate(j);
    auto err = j.validate(builtins());
    BOOST_TEST(is_code(err, code), expected);
    BOOST_TEST(error_text(err) == expected);
  };
  check(
    [](job& j) {
      j.epoch_group().tasks[0].steps[0].ops[0].type = "Foo";
    },
    "epoch_group.tasks[0].steps[0].ops[0]: unknown op 'Foo'",
    runtime_errc::unknown_op);
  check(
    [](job& j) {
      j.init_group().tasks[0].steps[0].ops[1].args["value"] = str("x");
    },
    "init_group.tasks[0].steps[0].ops[1]: arg 'value': expected a "
    "number, got a string",
    runtime_errc::bad_argument);
  check(
    [](job& j) {
      j.epoch_group().tasks[1].name = "inc";
    },
    "epoch_group.tasks[1].name: duplicate task name 'inc' (also task 0 "
    "of the epoch group)");
  check(
    [](job& j) {
      j.epoch_group().tasks[0].node = "../x";
    },
    "epoch_group.tasks[0].node: invalid node name '../x': a node name "
    "must not start with '.' or '-'");
  check(
    [](job& j) {
      j.epoch_group().tasks[0].steps[0].num_iter = -1;
    },
    "epoch_group.tasks[0].steps[0].num_iter: expected an integer >= 0, "
    "got -1");
  check(
    [](job& j) {
      j.epoch_group().tasks[0].steps[0].num_iter = 0;
    },
    "epoch_group.tasks[0].steps[0].num_iter: 0 (run until stopped) needs "
    "a stop_blob");
  auto with_def = [](auto change) {
    return [change](job& j) {
      auto def = j.def();
      change(def);
      j = job::from_def(std::move(def));
    };
  };
  check(with_def([](job_def& d) {
          d.stop_conditions.push_back({"ghost", "f"});
        }),
        "stop_conditions[1].node: node 'ghost' runs no task of the job");
  check(with_def([](job_def& d) {
          d.stop_conditions.push_back({"trainer_0", "x_missing"});
        }),
        "stop_conditions[1].blob: blob 'x_missing' is not an output of any "
        "epoch task on node 'trainer_0'");
  check(with_def([](job_def& d) {
          d.stop_conditions.clear();
        }),
        "stop_conditions: the epoch group has tasks but no stop condition, "
        "so it would never end (add a stop condition or an epoch limit)");
  check(with_def([](job_def& d) {
          d.nodes_to_checkpoint = {"ghost"};
        }),
        "nodes_to_checkpoint[0]: node 'ghost' runs no task of the job");
  check(with_def([](job_def& d) {
          d.epoch_group.tasks[0].outputs.push_back("has space");
        }),
        "epoch_group.tasks[0].outputs[1]: invalid blob name 'has space' (1 "
        "to 256 printable characters, no spaces)");
}

BOOST_AUTO_TEST_SUITE_END()
