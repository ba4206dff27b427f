#include <epochrt/runtime/job_file.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include <sys/stat.h>
#include <unistd.h>

#include "test_util.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

std::string example(const std::string& name) {
  return std::string{EPOCHRT_SOURCE_DIR} + "/examples/jobs/" + name;
}

// A valid job with one task per group, as text to break in tests.
const char* valid_text = R"({
  "name": "t",
  "init": [{"name": "init", "node": "trainer_0",
            "ops": [{"type": "ConstantFill", "outputs": ["x"],
                     "args": {"value": 1, "dtype": "i64"}}]}],
  "epoch": [{"name": "step", "node": "trainer_0",
             "outputs": ["finished"],
             "steps": [{"name": "main", "num_iter": 1, "ops": [
               {"type": "CreateCursor", "outputs": ["c"]},
               {"type": "ConstantFill", "outputs": ["finished"],
                "args": {"value": 1, "dtype": "bool"}}]}]}],
  "stop_conditions": [{"node": "trainer_0", "blob": "finished"}]
})";

std::string parse_error(const std::string& text) {
  auto result = parse_job_json(text, "pipeline.json", builtins());
  BOOST_REQUIRE_MESSAGE(!result, "parsed: " + text);
  auto msg = error_text(result.error());
  BOOST_TEST(msg.find('\n') == std::string::npos);
  return msg;
}

// Replaces the first occurrence of `from` in the valid text.
std::string broken(const std::string& from, const std::string& to) {
  std::string text = valid_text;
  auto pos = text.find(from);
  BOOST_REQUIRE_MESSAGE(pos != std::string::npos, from);
  return text.replace(pos, from.size(), to);
}

std::vector<int64_t> totals_of(const job_simulation& sim,
                               const std::string& task) {
  std::vector<int64_t> result;
  for (auto& outs : sim.epoch_outputs)
    for (auto& out : outs)
      if (out.task == task && out.blob == "total")
        result.push_back(ints(out.value)[0]);
  return result;
}

} // namespace

BOOST_AUTO_TEST_SUITE(job_file_suite)

BOOST_AUTO_TEST_CASE(a_valid_file_loads) {
  auto result = parse_job_json(valid_text, "t.json", builtins());
  BOOST_REQUIRE_MESSAGE(result, error_of(result));
  auto& def = result->def();
  BOOST_TEST(def.name == "t");
  BOOST_REQUIRE(def.epoch_group.tasks.size() == 1u);
  auto& step = def.epoch_group.tasks[0].steps[0];
  BOOST_TEST(step.name == "main");
  BOOST_TEST(step.ops.size() == 2u);
  BOOST_TEST(def.init_group.tasks[0].steps[0].ops[0].args.at("value")
             == make_scalar<int64_t>(1));
  BOOST_TEST(result->nodes_to_checkpoint()
               == std::vector<std::string>{"trainer_0"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(arguments_become_tensors_by_json_type) {
  auto text = broken(R"("args": {"value": 1, "dtype": "i64"})",
                     R"("args": {"shape": [], "value": 2.5, "dtype": "f64"})");
  auto result = parse_job_json(text, "t.json", builtins());
  BOOST_REQUIRE_MESSAGE(result, error_of(result));
  auto& args = result->def().init_group.tasks[0].steps[0].ops[0].args;
  BOOST_TEST(args.at("shape") == i64s({0}, {}));
  BOOST_TEST(args.at("value") == make_scalar<double>(2.5));
  BOOST_TEST(args.at("dtype") == str("f64"));
}

BOOST_AUTO_TEST_CASE(a_syntax_error_gives_line_and_column) {
  auto msg = parse_error("{\n  \"name\": \"x\",\n  oops\n}");
  BOOST_TEST(msg.find("pipeline.json:3:3: syntax error: ") == 0u, msg);
}

BOOST_AUTO_TEST_CASE(an_unknown_op_names_its_path) {
  BOOST_TEST(parse_error(broken("CreateCursor", "Foo"))
             == "pipeline.json: epoch[0].steps[0].ops[0].type: unknown op "
                "'Foo'");
}

BOOST_AUTO_TEST_CASE(a_wrong_argument_type_names_its_path) {
  BOOST_TEST(parse_error(broken(R"("value": 1, "dtype": "bool")",
                                R"("value": "one", "dtype": "bool")"))
             == "pipeline.json: epoch[0].steps[0].ops[1].args.value: "
                "expected a number, got a string");
  BOOST_TEST(
    parse_error(broken(R"("value": 1, "dtype": "i64")", R"("value": {"x": 1})"))
    == "pipeline.json: init[0].ops[0].args.value: expected a "
       "number, boolean, string or list, got an object");
  BOOST_TEST(
    parse_error(broken(R"("value": 1, "dtype": "i64")", R"("shape": [1, "a"])"))
    == "pipeline.json: init[0].ops[0].args.shape: expected a list "
       "of numbers or a list of strings, got a mixed or nested list");
}

BOOST_AUTO_TEST_CASE(an_unknown_field_is_an_error) {
  BOOST_TEST(parse_error(broken(R"("name": "step")", R"("nmae": "step")"))
             == "pipeline.json: epoch[0]: unknown field 'nmae' (expected one "
                "of name, node, workspace, outputs, steps, ops)");
  BOOST_TEST(parse_error(broken(R"("name": "t")", R"("name": "t", "x": 1)"))
             == "pipeline.json: unknown field 'x' (expected one of name, "
                "init, epoch, download, exit, stop_conditions, "
                "nodes_to_checkpoint, epoch_limit, channels)");
}

BOOST_AUTO_TEST_CASE(a_wrong_field_type_or_missing_field_is_an_error) {
  BOOST_TEST(parse_error(broken(R"("num_iter": 1)", R"("num_iter": "1")"))
             == "pipeline.json: epoch[0].steps[0].num_iter: expected an "
                "integer, got a string");
  BOOST_TEST(parse_error(broken(R"("node": "trainer_0",
             "outputs")",
                                R"("outputs")"))
             == "pipeline.json: epoch[0]: missing required field 'node'");
  BOOST_TEST(parse_error("[]")
             == "pipeline.json: expected an object at the top level, got an "
                "array");
}

BOOST_AUTO_TEST_CASE(an_unknown_node_in_a_stop_condition_is_an_error) {
  BOOST_TEST(parse_error(broken(R"({"node": "trainer_0", "blob")",
                                R"({"node": "trainer_9", "blob")"))
             == "pipeline.json: stop_conditions[0].node: node 'trainer_9' "
                "runs no task of the job");
}

BOOST_AUTO_TEST_CASE(a_stop_blob_that_is_no_epoch_output_is_an_error) {
  BOOST_TEST(parse_error(broken(R"("blob": "finished")", R"("blob": "c")"))
             == "pipeline.json: stop_conditions[0].blob: blob 'c' is not an "
                "output of any epoch task on node 'trainer_0'");
}

BOOST_AUTO_TEST_CASE(duplicate_task_names_in_a_group_are_an_error) {
  auto text = broken(R"("stop_conditions")",
                     R"("exit": [{"name": "a", "node": "trainer_0"},
                                 {"name": "a", "node": "trainer_0"}],
  "stop_conditions")");
  BOOST_TEST(parse_error(text)
             == "pipeline.json: exit[1].name: duplicate task name 'a' (also "
                "task 0 of the exit group)");
}

BOOST_AUTO_TEST_CASE(a_bad_node_name_is_an_error) {
  BOOST_TEST(parse_error(broken(R"("node": "trainer_0")", R"("node": "../x")"))
             == "pipeline.json: init[0].node: invalid node name '../x': a "
                "node name must not start with '.' or '-'");
  BOOST_TEST(parse_error(broken(R"("node": "trainer_0")", R"("node": "a/b")"))
             == "pipeline.json: init[0].node: invalid node name 'a/b': a "
                "node name may only contain letters, digits, '_', '.', '-' "
                "and ':'");
}

BOOST_AUTO_TEST_CASE(a_duplicate_field_is_an_error) {
  BOOST_TEST(
    parse_error(broken(R"("name": "t")", R"("name": "t", "name": "u")"))
    == "pipeline.json: duplicate field 'name'");
}

BOOST_AUTO_TEST_CASE(an_epoch_limit_below_one_is_an_error) {
  BOOST_TEST(
    parse_error(broken(R"("name": "t")", R"("name": "t", "epoch_limit": 0)"))
    == "pipeline.json: epoch_limit: expected an integer >= 1, got 0");
}

BOOST_AUTO_TEST_CASE(an_unreadable_file_is_an_error) {
  auto result = load_job_file("/nonexistent/job.json", builtins());
  BOOST_REQUIRE(!result);
  BOOST_TEST(is_code(result.error(), runtime_errc::unreadable_file));
  BOOST_TEST(error_text(result.error())
             == "/nonexistent/job.json: cannot read: No such file or "
                "directory");
}

BOOST_AUTO_TEST_CASE(pipeline_json_totals_103_115_136_145_in_four_epochs) {
  auto j = load_job_file(example("pipeline.json"), builtins());
  BOOST_REQUIRE_MESSAGE(j, error_of(j));
  job_simulation sim;
  sim.run(*j);
  BOOST_TEST(sim.epochs == 4);
  BOOST_TEST(totals_of(sim, "read")
               == (std::vector<int64_t>{103, 115, 136, 145}),
             boost::test_tools::per_element());
  BOOST_TEST(*sim.ws("trainer_0").get("total") == i64s({1}, {145}));
  BOOST_TEST(!sim.ws("trainer_0").has("batch")); // private scratch
}

BOOST_AUTO_TEST_CASE(pipeline3_json_gives_the_same_totals_on_every_node) {
  auto j = load_job_file(example("pipeline3.json"), builtins());
  BOOST_REQUIRE_MESSAGE(j, error_of(j));
  BOOST_TEST(
    j->nodes()
      == (std::vector<std::string>{"trainer_0", "trainer_1", "trainer_2"}),
    boost::test_tools::per_element());
  BOOST_TEST(j->stop_conditions().size() == 3u);
  job_simulation sim;
  sim.run(*j);
  BOOST_TEST(sim.epochs == 4);
  for (int i = 0; i < 3; ++i) {
    auto n = std::to_string(i);
    BOOST_TEST(totals_of(sim, "read_" + n)
                 == (std::vector<int64_t>{103, 115, 136, 145}),
               boost::test_tools::per_element());
    BOOST_TEST(*sim.ws("trainer_" + n).get("total") == i64s({1}, {145}));
  }
}

BOOST_AUTO_TEST_CASE(download_json_ends_with_eight_twos_after_one_epoch) {
  auto j = load_job_file(example("download.json"), builtins());
  BOOST_REQUIRE_MESSAGE(j, error_of(j));
  job_simulation sim;
  sim.run(*j);
  BOOST_TEST(sim.epochs == 1);
  auto& ws = sim.ws("trainer_0");
  auto twos = make_tensor<float>({8}, std::vector<float>(8, 2.0f));
  BOOST_TEST(*ws.get("output") == twos);
  BOOST_TEST(*ws.get("download_result") == twos);
  BOOST_TEST(*ws.get("input1")
             == make_tensor<float>({8}, std::vector<float>(8, 1)));
}

BOOST_AUTO_TEST_CASE(a_duplicate_field_names_the_object_it_is_in) {
  BOOST_TEST(parse_error(broken(R"("args": {"value": 1, "dtype": "bool"})",
                                R"("args": {"value": 1, "dtype": "bool"},
                                   "args": {"value": 0, "dtype": "bool"})"))
             == "pipeline.json: epoch[0].steps[0].ops[1]: duplicate field "
                "'args'");
  BOOST_TEST(parse_error(
               broken(R"("dtype": "i64")", R"("dtype": "i64", "dtype": "i32")"))
             == "pipeline.json: init[0].ops[0].args: duplicate field "
                "'dtype'");
}

BOOST_AUTO_TEST_CASE(a_job_file_that_is_not_a_regular_file_is_refused_at_once) {
  char dir_template[] = "/tmp/epochrt-job-XXXXXX";
  std::string dir = ::mkdtemp(dir_template);
  auto fifo = dir + "/fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A FIFO without a writer would block a plain open forever.
  for (const auto& path : {std::string{"/dev/zero"}, dir, fifo}) {
    auto result = load_job_file(path, builtins());
    BOOST_REQUIRE(!result);
    BOOST_TEST((result.error() == runtime_errc::unreadable_file));
    BOOST_TEST(error_text(result.error())
               == path
                 + ": not a regular file (a "
                   "job file is a JSON file)");
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

BOOST_AUTO_TEST_CASE(a_job_file_over_the_size_limit_is_refused_unread) {
  char path_template[] = "/tmp/epochrt-job-XXXXXX";
  int fd = ::mkstemp(path_template);
  BOOST_REQUIRE(fd >= 0);
  // Sparse: no disk space, and reading it would take a while.
  BOOST_REQUIRE(::ftruncate(fd, 8ll << 30) == 0);
  ::close(fd);
  auto result = load_job_file(path_template, builtins());
  ::unlink(path_template);
  BOOST_REQUIRE(!result);
  BOOST_TEST(error_text(result.error()).find("more than the 67108864")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(mutated_job_files_load_or_fail_with_one_line) {
  std::vector<std::string> seeds;
  for (auto name : {"pipeline.json", "pipeline3.json", "download.json",
                    "linear_regression.json"}) {
    std::ifstream in{example(name)};
    seeds.emplace_back(std::istreambuf_iterator<char>{in},
                       std::istreambuf_iterator<char>{});
  }
  std::mt19937 gen{20261123};
  auto pick = [&](size_t n) {
    return std::uniform_int_distribution<size_t>{0, n - 1}(gen);
  };
  const std::string nasty[] = {"\x1b[2J",
                               std::string(1, '\0'),
                               "\xE2\x80\xA8",
                               "\\u0000",
                               "\"",
                               "{",
                               "[",
                               "]",
                               "}",
                               ",",
                               "1e999999",
                               "-0",
                               "99999999999999999999999",
                               "\xFF",
                               "null",
                               "\"args\": {}"};
  size_t loaded = 0;
  for (int round = 0; round < 3000; ++round) {
    auto text = seeds[pick(seeds.size())];
    for (int n = 1 + static_cast<int>(pick(4)); n > 0; --n) {
      auto at = pick(text.size() + 1);
      switch (pick(5)) {
        case 0: // flip a bit
          if (at < text.size())
            text[at] = static_cast<char>(text[at] ^ (1 << pick(8)));
          break;
        case 1: // cut a piece out
          text.erase(at, pick(32));
          break;
        case 2: // insert something a parser may choke on
          text.insert(at, nasty[pick(std::size(nasty))]);
          break;
        case 3: // repeat a piece
          text.insert(at, text.substr(pick(text.size() + 1), pick(64)));
          break;
        default: // end early
          text.resize(at);
      }
    }
    auto result = parse_job_json(text, "fuzz.json", builtins());
    if (result) {
      ++loaded;
      continue;
    }
    auto msg = error_text(result.error());
    BOOST_TEST_REQUIRE(!msg.empty());
    BOOST_TEST_REQUIRE(msg.find('\n') == std::string::npos, msg);
  }
  BOOST_TEST_MESSAGE(loaded << " of 3000 mutated job files loaded");
}

BOOST_AUTO_TEST_CASE(deep_nesting_and_huge_numbers_fail_as_values) {
  std::string deep(200000, '[');
  BOOST_TEST(!parse_job_json(deep, "deep.json", builtins()));
  deep += std::string(200000, ']');
  BOOST_TEST(!parse_job_json(deep, "deep.json", builtins()));
  auto huge = broken("\"value\": 1", "\"value\": " + std::string(100000, '9'));
  BOOST_TEST(!parse_job_json(huge, "huge.json", builtins()));
}

BOOST_AUTO_TEST_SUITE_END()
