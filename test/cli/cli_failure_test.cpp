// A job that fails ends: `epochrt run` prints one error line and exits 1
// within a bounded time, however many of its tasks fail at once and however
// their failures interleave, and when the threads of its tasks cannot even
// be created. Each case runs the real CLI as a child process under a time
// limit, repeatedly, because the hangs these cases guard against depended on
// the order in which failures reached the actors.

#define BOOST_TEST_MODULE cli_failure
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"

using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::temp_dir;

namespace {

// A failed job's process takes well under a second here; a hang ran for
// ever.
constexpr auto time_limit = std::chrono::seconds(30);

std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> result;
  std::istringstream in{err};
  for (std::string line; std::getline(in, line);)
    if (line.rfind("epochrt: error: ", 0) == 0)
      result.push_back(line);
  return result;
}

std::string describe(const process_result& r) {
  return "exit " + std::to_string(r.exit_code)
    + (r.timed_out ? " (timed out)" : "") + "\n--- stderr\n"
    + r.err.substr(0, 4000);
}

using epochrt::test::contains;

// A job of `nodes` nodes whose `failing_group` has one task per node, each
// copying a blob that does not exist; the other groups succeed (and the
// epoch's stop condition ends the loop after one epoch).
std::string failing_job(int nodes, const std::string& failing_group) {
  auto task = [](int i, bool fail, bool output) {
    std::string node = "\"n" + std::to_string(i) + "\"";
    std::string op = fail ? R"({"type": "Copy", "inputs": ["missing"],
                                "outputs": ["y"]})"
                          : R"({"type": "ConstantFill", "outputs": ["y"],
                                "args": {"value": 1}})";
    return "{\"node\": " + node + ", \"outputs\": [" + (output ? "\"y\"" : "")
      + "], \"ops\": [" + op + "]}";
  };
  auto group = [&](const std::string& name) {
    std::string text = "\"" + name + "\": [";
    for (int i = 0; i < nodes; ++i)
      text += (i > 0 ? ", " : "")
        + task(i, name == failing_group, name == "epoch");
    return text + "]";
  };
  return "{\"name\": \"fail_" + failing_group + "\", " + group("init") + ", "
    + group("epoch") + ", " + group("exit")
    + ", \"stop_conditions\": [{\"node\": \"n0\", \"blob\": \"y\"}]}";
}

std::string write_file(const temp_dir& dir, const std::string& name,
                       const std::string& text) {
  auto path = (dir.path() / name).string();
  std::ofstream{path} << text;
  return path;
}

// Runs `args` `runs` times; each run must exit 1 with one error line
// containing `expected` within the time limit.
void require_fails_every_time(const std::vector<std::string>& args, int runs,
                              const std::string& expected) {
  process_runner cli{EPOCHRT_CLI, time_limit};
  for (int run = 1; run <= runs; ++run) {
    auto result = cli.run(args);
    BOOST_REQUIRE_MESSAGE(!result.timed_out && result.exit_code == 1,
                          "run " << run << " of " << runs << ": "
                                 << describe(result));
    auto errors = error_lines(result.err);
    BOOST_REQUIRE_MESSAGE(errors.size() == 1, describe(result));
    BOOST_TEST(contains(errors.front(), expected), errors.front());
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(fifty_nodes_failing_at_once_exit_1_every_time) {
  temp_dir dir;
  auto job = write_file(dir, "job.json", failing_job(50, "epoch"));
  require_fails_every_time({"run", job}, 5,
                           "job 'fail_epoch' failed: task_failed: node n");
}

BOOST_AUTO_TEST_CASE(five_nodes_failing_at_once_exit_1_every_time) {
  temp_dir dir;
  auto job = write_file(dir, "job.json", failing_job(5, "epoch"));
  require_fails_every_time({"run", job}, 10, "input 'missing' does not exist");
}

BOOST_AUTO_TEST_CASE(failing_nodes_with_checkpoints_being_written_exit_1) {
  // The epoch fails while the checkpoint of init may still be written: the
  // checkpoint manager and the persistence actors end too.
  temp_dir dir;
  auto job = write_file(dir, "job.json", failing_job(50, "epoch"));
  for (int run = 0; run < 3; ++run) {
    auto ckpt = (dir.path() / ("ckpt" + std::to_string(run))).string();
    require_fails_every_time({"run", job, "--checkpoint-dir", ckpt}, 1,
                             "input 'missing' does not exist");
  }
}

BOOST_AUTO_TEST_CASE(
  a_long_sleep_beside_a_failing_node_does_not_hold_the_exit) {
  // Node a sleeps two minutes while node b fails: the job fails at once, and
  // the process must not wait for the sleep.
  temp_dir dir;
  auto job = write_file(dir, "job.json", R"({"name": "sleepy", "epoch": [
      {"node": "a", "outputs": ["y"], "ops": [
        {"type": "Sleep", "args": {"ms": 120000}},
        {"type": "ConstantFill", "outputs": ["y"], "args": {"value": 1}}]},
      {"node": "b", "ops": [
        {"type": "Copy", "inputs": ["missing"], "outputs": ["z"]}]}],
      "stop_conditions": [{"node": "a", "blob": "y"}]})");
  process_runner cli{EPOCHRT_CLI, time_limit};
  auto start = std::chrono::steady_clock::now();
  auto result = cli.run({"run", job});
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE_MESSAGE(!result.timed_out && result.exit_code == 1,
                        describe(result));
  BOOST_TEST(contains(result.err, "node b: task 'epoch/b/1'"), result.err);
  BOOST_TEST((took < std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_CASE(failing_init_and_exit_groups_exit_1) {
  temp_dir dir;
  auto init = write_file(dir, "init.json", failing_job(50, "init"));
  require_fails_every_time({"run", init}, 3, "job 'fail_init' failed");
  auto exit = write_file(dir, "exit.json", failing_job(50, "exit"));
  require_fails_every_time({"run", exit}, 3, "job 'fail_exit' failed");
}

// Runs `epochrt run job ARGS` under a 3 GiB address-space limit with 8 MiB
// thread stacks, twice, within the time limit.
std::vector<process_result>
run_under_a_memory_limit(const std::string& job, const std::string& args = {}) {
  process_runner bash{"/bin/bash", time_limit};
  std::vector<process_result> results;
  for (int run = 1; run <= 2; ++run)
    results.push_back(
      bash.run({"-c",
                "ulimit -s 8192 && ulimit -v 3145728 && exec "
                  + std::string{EPOCHRT_CLI} + " run " + job + " " + args}));
  return results;
}

// Each run under a memory limit must exit 1 with one error line containing
// `expected`.
void require_fails_under_a_memory_limit(const std::string& job,
                                        const std::string& expected,
                                        const std::string& args = {}) {
  int run = 0;
  for (auto& result : run_under_a_memory_limit(job, args)) {
    ++run;
    BOOST_REQUIRE_MESSAGE(!result.timed_out && result.exit_code == 1,
                          "run " << run << ": " << describe(result));
    auto errors = error_lines(result.err);
    BOOST_REQUIRE_MESSAGE(errors.size() == 1, describe(result));
    BOOST_TEST(contains(errors.front(), expected), errors.front());
  }
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define EPOCHRT_SANITIZED 1
#endif

// One node with 1000 tasks that sleep `ms` each; one epoch.
std::string thousand_tasks_job(const temp_dir& dir, int ms) {
  std::string tasks;
  for (int i = 0; i < 1000; ++i)
    tasks += std::string{i > 0 ? ", " : ""} + R"({"node": "n0", "outputs": [)"
      + (i == 0 ? "\"y\"" : "")
      + R"(], "ops": [{"type": "Sleep", "args": {"ms": )" + std::to_string(ms)
      + "}}]}";
  return write_file(
    dir, "job.json",
    R"({"name": "threads", "init": [{"node": "n0", "ops": [
          {"type": "ConstantFill", "outputs": ["y"], "args": {"value": 1}}]}],
        "epoch": [)"
      + tasks + R"(], "stop_conditions": [{"node": "n0", "blob": "y"}]})");
}

BOOST_AUTO_TEST_CASE(
  a_thousand_tasks_share_the_worker_pool_under_a_memory_limit) {
#ifdef EPOCHRT_SANITIZED
  // Sanitizers reserve terabytes of address space: no address-space limit
  // can be set under them.
  BOOST_TEST_MESSAGE("skipped: built with a sanitizer");
#else
  // A thread each, with 8 MiB stacks, would need far more than 3 GiB; the
  // pool runs them on its few threads, a few at a time.
  temp_dir dir;
  auto job = thousand_tasks_job(dir, 2);
  int run = 0;
  for (auto& result : run_under_a_memory_limit(job, "--worker-threads 8")) {
    ++run;
    BOOST_TEST((!result.timed_out && result.exit_code == 0),
               "run " << run << ": " << describe(result));
    BOOST_TEST(contains(result.out, "epochs=1"), describe(result));
  }
#endif
}

BOOST_AUTO_TEST_CASE(a_worker_pool_that_cannot_start_fails_the_run_at_once) {
#ifdef EPOCHRT_SANITIZED
  BOOST_TEST_MESSAGE("skipped: built with a sanitizer");
#else
  // 1000 threads with 8 MiB stacks do not fit in 3 GiB: the run says so
  // before anything runs.
  temp_dir dir;
  auto job = thousand_tasks_job(dir, 300);
  require_fails_under_a_memory_limit(
    job, "cannot start the worker pool: thread ", "--worker-threads 1000");
#endif
}

BOOST_AUTO_TEST_CASE(nodes_whose_threads_cannot_start_fail_the_job) {
#ifdef EPOCHRT_SANITIZED
  BOOST_TEST_MESSAGE("skipped: built with a sanitizer");
#else
  // 1000 nodes: each has a persistence actor on a thread of its own, more
  // than a 3 GiB address space holds.
  temp_dir dir;
  std::string tasks;
  for (int i = 0; i < 1000; ++i)
    tasks += std::string{i > 0 ? ", " : ""} + R"({"node": "n)"
      + std::to_string(i) + R"(", "outputs": ["y"], "ops": [
          {"type": "ConstantFill", "outputs": ["y"], "args": {"value": 1}}]})";
  auto job = write_file(dir, "job.json",
                        R"({"name": "wide", "epoch": [)" + tasks
                          + R"(], "stop_conditions": [
                            {"node": "n0", "blob": "y"}]})");
  require_fails_under_a_memory_limit(
    job, "could not be started: no thread for its persistence actor");
#endif
}
