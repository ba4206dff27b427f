// Fault plans are read as strictly as job files, and an injector strikes
// exactly the hits its rules select, the same ones on every run.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include <caf/message.hpp>

#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/messages/error_text.hpp>

using namespace epochrt;

namespace {

fault_plan parse_ok(const std::string& text) {
  auto plan = parse_fault_plan(text, "plan.json");
  if (!plan)
    BOOST_FAIL("plan refused: " << to_string(plan.error()));
  return std::move(*plan);
}

std::string parse_error(const std::string& text) {
  auto plan = parse_fault_plan(text, "plan.json");
  BOOST_REQUIRE_MESSAGE(!plan, "a bad plan was accepted: " << text);
  BOOST_CHECK(in_category(plan.error(), fault_category));
  BOOST_CHECK_EQUAL(plan.error().code(),
                    static_cast<uint8_t>(fault_errc::invalid_plan));
  return plan.error().context().get_as<std::string>(0);
}

using epochrt::test::contains;

// The hits, numbered from 1, at which `rule` strikes among `hits` of
// save.open at `node`.
std::vector<int> strikes(fault_rule rule, int hits, const char* node,
                         uint64_t seed = 0) {
  rule.point = fault_point::save_open;
  fault_plan plan;
  plan.seed = seed;
  plan.faults.push_back(rule);
  fault_injector faults{plan};
  std::vector<int> result;
  for (int i = 1; i <= hits; ++i)
    if (strike(&faults, fault_point::save_open, {node, i, {}}))
      result.push_back(i);
  return result;
}

} // namespace

BOOST_AUTO_TEST_SUITE(fault_plan_format)

BOOST_AUTO_TEST_CASE(a_full_plan_is_read_field_by_field) {
  auto plan = parse_ok(R"({
    // comments are allowed, as in job files
    "seed": 7,
    "faults": [
      {"point": "save.rename.before", "fault": "crash", "node": "trainer_0",
       "epoch": 2, "hit": 1},
      {"point": "save.batch.before", "fault": "io_error", "error": "ENOSPC",
       "probability": 0.25, "count": 0},
      {"point": "job.epoch.start", "fault": "delay", "ms": 200},
      {"point": "node.op", "fault": "kill_node", "detail": "Add"}
    ]})");
  BOOST_CHECK_EQUAL(plan.seed, 7u);
  BOOST_REQUIRE_EQUAL(plan.faults.size(), 4u);
  auto& crash = plan.faults[0];
  BOOST_CHECK(crash.point == fault_point::save_rename_before);
  BOOST_CHECK(crash.kind == fault_kind::crash);
  BOOST_CHECK_EQUAL(*crash.node, "trainer_0");
  BOOST_CHECK_EQUAL(*crash.epoch, 2);
  BOOST_CHECK_EQUAL(crash.hit, 1u);
  BOOST_CHECK_EQUAL(crash.count, 1u);
  auto& io = plan.faults[1];
  BOOST_CHECK_EQUAL(io.error, ENOSPC);
  BOOST_CHECK_EQUAL(io.probability, 0.25);
  BOOST_CHECK_EQUAL(io.count, 0u);
  BOOST_CHECK_EQUAL(plan.faults[2].ms, 200u);
  BOOST_CHECK_EQUAL(*plan.faults[3].detail, "Add");
}

BOOST_AUTO_TEST_CASE(an_io_error_without_an_error_is_eio) {
  auto plan
    = parse_ok(R"({"faults": [{"point": "load.open", "fault": "io_error"}]})");
  BOOST_CHECK_EQUAL(plan.faults.at(0).error, EIO);
}

BOOST_AUTO_TEST_CASE(a_seed_may_be_any_64_bit_number) {
  auto plan = parse_ok(R"({"seed": 18446744073709551615, "faults": []})");
  BOOST_CHECK_EQUAL(plan.seed, UINT64_MAX);
  BOOST_CHECK_EQUAL(parse_ok(to_json(plan)).seed, UINT64_MAX);
}

BOOST_AUTO_TEST_CASE(a_plan_survives_its_json_round_trip) {
  auto plan = parse_ok(R"({"seed": 3, "faults": [
      {"point": "commit.write.before", "fault": "corrupt_write", "hit": 4},
      {"point": "save.open", "fault": "io_error", "error": "EACCES",
       "node": "n1", "epoch": 0, "count": 2, "probability": 0.5},
      {"point": "job.stop_check", "fault": "delay", "ms": 5}]})");
  auto again = parse_ok(to_json(plan));
  BOOST_CHECK_EQUAL(to_json(again), to_json(plan));
  BOOST_CHECK_EQUAL(again.faults.at(1).error, EACCES);
  BOOST_CHECK_EQUAL(*again.faults.at(1).node, "n1");
}

BOOST_AUTO_TEST_CASE(every_mistake_is_one_line_naming_the_field) {
  struct bad {
    const char* text;
    const char* says;
  };
  const bad cases[] = {
    {R"({"faults": [{"point": "save.opne", "fault": "crash"}]})",
     "faults[0].point: unknown point 'save.opne'"},
    {R"({"faults": [{"point": "save.open", "fault": "crsh"}]})",
     "faults[0].fault: unknown fault 'crsh'"},
    {R"({"faults": [{"point": "job.epoch.start", "fault": "corrupt_write"}]})",
     "point job.epoch.start takes no corrupt_write"},
    {R"({"faults": [{"point": "save.open", "fault": "crash", "hit": 0}]})",
     "faults[0].hit: expected an integer >= 1, got 0"},
    {R"({"faults": [{"point": "save.open", "fault": "crash",
                     "probability": 1.5}]})",
     "faults[0].probability: expected a number above 0 and at most 1"},
    {R"({"faults": [{"point": "save.open", "fault": "delay"}]})",
     "missing required field 'ms'"},
    {R"({"faults": [{"point": "save.open", "fault": "crash", "ms": 3}]})",
     "only delay and partition faults take ms"},
    {R"({"faults": [{"point": "save.open", "fault": "crash",
                     "error": "EIO"}]})",
     "only an io_error fault takes an error"},
    {R"({"faults": [{"point": "save.open", "fault": "io_error",
                     "error": "EWHAT"}]})",
     "unknown error 'EWHAT'"},
    {R"({"faults": [{"point": "save.open", "fault": "crash",
                     "node": "bad name"}]})",
     "faults[0].node: invalid node name"},
    {R"({"faults": [{"point": "save.open", "fault": "crash",
                     "probability": 0}]})",
     "expected a number above 0 and at most 1, got 0"},
    {R"({"faults": [{"point": "job.epoch.start", "fault": "crash",
                     "node": "n"}]})",
     "faults[0].node: point job.epoch.start names no node"},
    {R"({"faults": [{"point": "remote.heartbeat", "fault": "drop",
                     "epoch": 1}]})",
     "faults[0].epoch: point remote.heartbeat knows no epoch"},
    {R"({"faults": [{"point": "save.open", "fault": "crash",
                     "when": 1}]})",
     "unknown field 'when'"},
    {R"({"faults": [{"point": "save.open", "fault": "crash",
                     "fault": "delay"}]})",
     "duplicate field 'fault'"},
    {R"({"faults": {}})", "faults: expected an array of faults"},
    {R"({"seed": -1, "faults": []})", "seed: expected an integer >= 0"},
    {R"({})", "missing required field 'faults'"},
    {R"([1])", "expected an object at the top level"},
    {R"({"faults": [)", "plan.json:1:13: syntax error"},
  };
  for (auto& c : cases) {
    auto text = parse_error(c.text);
    BOOST_CHECK_MESSAGE(contains(text, c.says),
                        "for " << c.text << "\n got: " << text
                               << "\n want: " << c.says);
    BOOST_CHECK_MESSAGE(text.rfind("plan.json", 0) == 0, text);
    BOOST_CHECK(text.find('\n') == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(thousands_of_mutated_plans_parse_or_fail_in_one_line) {
  const std::string valid = R"({"seed": 7, "faults": [
    {"point": "save.rename.before", "fault": "crash", "node": "trainer_0",
     "epoch": 2, "hit": 1},
    {"point": "save.batch.before", "fault": "io_error", "error": "ENOSPC",
     "probability": 0.25, "count": 0},
    {"point": "job.epoch.start", "fault": "delay", "ms": 200}]})";
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  const char alphabet[] = "{}[]\":,0123456789-.eE truefalsnul\\/*\n\xff";
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    auto text = valid;
    auto edits = 1 + next() % 4;
    for (uint64_t e = 0; e < edits && !text.empty(); ++e) {
      auto at = next() % text.size();
      switch (next() % 3) {
        case 0: // replace a byte
          text[at] = alphabet[next() % (sizeof(alphabet) - 1)];
          break;
        case 1: // delete a run
          text.erase(at, 1 + next() % 8);
          break;
        default: // duplicate a run
          text.insert(at, text.substr(at, 1 + next() % 16));
      }
    }
    auto plan = parse_fault_plan(text, "plan.json");
    if (plan) {
      ++accepted;
      // What is accepted is a plan its own JSON reproduces.
      auto again = parse_fault_plan(to_json(*plan), "again");
      BOOST_REQUIRE_MESSAGE(again, text);
      BOOST_CHECK_EQUAL(to_json(*again), to_json(*plan));
      continue;
    }
    auto what = plan.error().context().get_as<std::string>(0);
    BOOST_CHECK_MESSAGE(what.rfind("plan.json", 0) == 0, what);
    BOOST_CHECK(what.find('\n') == std::string::npos);
  }
  // Some mutations leave a valid plan (a changed number), most do not.
  BOOST_CHECK_GT(accepted, 0);
  BOOST_CHECK_LT(accepted, 5000);
}

BOOST_AUTO_TEST_CASE(a_plan_file_that_is_not_a_regular_file_is_refused) {
  auto plan = load_fault_plan("/dev/zero");
  BOOST_REQUIRE(!plan);
  BOOST_CHECK_EQUAL(plan.error().code(),
                    static_cast<uint8_t>(fault_errc::unreadable_plan));
  BOOST_CHECK(!load_fault_plan("/nonexistent/plan.json"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(fault_injector_triggers)

BOOST_AUTO_TEST_CASE(no_injector_means_no_fault) {
  BOOST_CHECK(!strike(nullptr, fault_point::save_open, {"n", 1, {}}));
}

BOOST_AUTO_TEST_CASE(a_rule_with_a_hit_strikes_that_hit_only) {
  fault_rule rule;
  rule.kind = fault_kind::io_error;
  rule.error = EIO;
  rule.hit = 3;
  BOOST_CHECK((strikes(rule, 6, "n") == std::vector<int>{3}));
}

BOOST_AUTO_TEST_CASE(a_rule_strikes_count_times_then_stops) {
  fault_rule rule;
  rule.kind = fault_kind::io_error;
  rule.count = 2;
  BOOST_CHECK((strikes(rule, 5, "n") == std::vector<int>{1, 2}));
  rule.count = 0;
  BOOST_CHECK_EQUAL(strikes(rule, 5, "n").size(), 5u);
}

BOOST_AUTO_TEST_CASE(a_node_filter_counts_only_that_nodes_hits) {
  fault_rule rule;
  rule.kind = fault_kind::io_error;
  rule.node = "a";
  rule.hit = 1;
  BOOST_CHECK(strikes(rule, 3, "b").empty());
  BOOST_CHECK((strikes(rule, 3, "a") == std::vector<int>{1}));
}

BOOST_AUTO_TEST_CASE(an_epoch_filter_matches_that_epoch_only) {
  fault_rule rule;
  rule.kind = fault_kind::io_error;
  rule.epoch = 4;
  // strikes() passes the hit's number as its epoch.
  BOOST_CHECK((strikes(rule, 6, "n") == std::vector<int>{4}));
}

BOOST_AUTO_TEST_CASE(a_detail_filter_matches_that_detail_only) {
  fault_plan plan;
  fault_rule rule;
  rule.point = fault_point::node_op;
  rule.kind = fault_kind::io_error;
  rule.detail = "Add";
  rule.count = 0;
  plan.faults.push_back(rule);
  fault_injector faults{plan};
  BOOST_CHECK(!strike(&faults, fault_point::node_op, {"n", 1, "Copy"}));
  BOOST_CHECK(strike(&faults, fault_point::node_op, {"n", 1, "Add"}));
}

BOOST_AUTO_TEST_CASE(a_seeded_probability_strikes_the_same_hits_every_time) {
  fault_rule rule;
  rule.kind = fault_kind::io_error;
  rule.probability = 0.3;
  rule.count = 0;
  auto first = strikes(rule, 1000, "n", 42);
  BOOST_CHECK(first == strikes(rule, 1000, "n", 42));
  // About 300 of 1000, and another seed picks other hits.
  BOOST_CHECK_GT(first.size(), 200u);
  BOOST_CHECK_LT(first.size(), 400u);
  BOOST_CHECK(first != strikes(rule, 1000, "n", 43));
}

BOOST_AUTO_TEST_CASE(an_action_carries_the_rules_parameters) {
  fault_plan plan;
  fault_rule rule;
  rule.point = fault_point::job_epoch_start;
  rule.kind = fault_kind::delay;
  rule.ms = 25;
  plan.faults.push_back(rule);
  fault_injector faults{plan};
  auto action = strike(&faults, fault_point::job_epoch_start, {{}, 1, {}});
  BOOST_CHECK(action.kind == fault_kind::delay);
  BOOST_CHECK_EQUAL(action.ms, 25u);
  BOOST_REQUIRE_EQUAL(faults.strikes().size(), 1u);
  BOOST_CHECK(contains(faults.strikes()[0], "delay at job.epoch.start"));
}

BOOST_AUTO_TEST_CASE(strike_blocking_sleeps_a_delay_and_returns_an_io_error) {
  fault_plan plan;
  fault_rule slow;
  slow.point = fault_point::save_open;
  slow.kind = fault_kind::delay;
  slow.ms = 50;
  fault_rule failing;
  failing.point = fault_point::save_batch_before;
  failing.kind = fault_kind::io_error;
  failing.error = ENOSPC;
  plan.faults = {slow, failing};
  fault_injector faults{plan};
  fault_action action;
  auto start = std::chrono::steady_clock::now();
  BOOST_CHECK(
    !strike_blocking(&faults, fault_point::save_open, {"n", 2, {}}, action));
  BOOST_CHECK(std::chrono::steady_clock::now() - start
              >= std::chrono::milliseconds(50));
  auto err = strike_blocking(&faults, fault_point::save_batch_before,
                             {"n", 2, {}}, action);
  BOOST_REQUIRE(err);
  BOOST_CHECK(in_category(err, fault_category));
  auto text = err.context().get_as<std::string>(0);
  BOOST_CHECK_MESSAGE(contains(text,
                               "injected ENOSPC at save.batch.before "
                               "(node n, epoch 2)"),
                      text);
}

BOOST_AUTO_TEST_CASE(a_delay_ends_early_when_cancelled_or_interrupted) {
  fault_injector faults{fault_plan{}};
  std::atomic<bool> cancel{false};
  auto start = std::chrono::steady_clock::now();
  std::thread canceller{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  }};
  faults.delay(std::chrono::minutes(1), &cancel);
  canceller.join();
  BOOST_CHECK(std::chrono::steady_clock::now() - start
              < std::chrono::seconds(10));
  std::thread interrupter{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    faults.interrupt_delays();
  }};
  faults.delay(std::chrono::minutes(1));
  interrupter.join();
  BOOST_CHECK(std::chrono::steady_clock::now() - start
              < std::chrono::seconds(20));
  // After an interrupt, every delay returns at once.
  auto again = std::chrono::steady_clock::now();
  faults.delay(std::chrono::minutes(1));
  BOOST_CHECK(std::chrono::steady_clock::now() - again
              < std::chrono::seconds(10));
}

BOOST_AUTO_TEST_CASE(a_trace_has_a_line_per_hit_counted_per_point_and_node) {
  epochrt::test::temp_dir dir;
  auto path = dir.str() + "/trace";
  fault_injector faults{fault_plan{}};
  BOOST_REQUIRE(!faults.trace_to(path));
  strike(&faults, fault_point::save_open, {"a", 1, {}});
  strike(&faults, fault_point::save_open, {"b", 1, {}});
  strike(&faults, fault_point::save_open, {"a", 2, {}});
  strike(&faults, fault_point::node_op, {"a", 2, "Add"});
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  BOOST_CHECK_EQUAL(text.str(),
                    "save.open\ta\t1\t\t1\n"
                    "save.open\tb\t1\t\t1\n"
                    "save.open\ta\t2\t\t2\n"
                    "node.op\ta\t2\tAdd\t1\n");
}

BOOST_AUTO_TEST_SUITE_END()
