// The training example (examples/jobs/linear_regression.json) and the host
// program example, held to what their documentation promises.

#define BOOST_TEST_MODULE examples
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <map>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <nlohmann/json.hpp>

#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/epochrt.hpp>
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using epochrt::test::process_runner;
using epochrt::test::run_in_background;
using epochrt::test::temp_dir;

namespace {

const std::string training_job
  = std::string{EPOCHRT_SOURCE_DIR} + "/examples/jobs/linear_regression.json";

const std::vector<std::string> fetch_model{
  "--fetch", "trainer_0:w", "--fetch", "trainer_0:b",
  "--fetch", "trainer_1:w", "--fetch", "trainer_1:b"};

std::vector<std::string> concat(std::vector<std::string> xs,
                                const std::vector<std::string>& ys) {
  xs.insert(xs.end(), ys.begin(), ys.end());
  return xs;
}

// The training job with every epoch slowed down by a Sleep op, so that a
// test can kill it mid-run at a known point.
std::string write_paced_job(const temp_dir& dir, int sleep_ms) {
  std::ifstream in{training_job};
  auto job = nlohmann::json::parse(in);
  for (auto& task : job["epoch"]) {
    auto& ops = task["steps"][0]["ops"];
    ops.insert(ops.begin(),
               nlohmann::json{{"type", "Sleep"}, {"args", {{"ms", sleep_ms}}}});
  }
  auto path = dir.sub("paced.json");
  std::ofstream{path} << job.dump(2);
  return path;
}

std::string last_line_with(const std::string& text, const std::string& key) {
  std::string result;
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);)
    if (line.find(key) != std::string::npos)
      result = line;
  return result;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_training_loss_falls_epoch_by_epoch_on_every_node) {
  caf::actor_system_config cfg;
  configure(cfg);
  caf::actor_system sys{cfg};
  auto ops = std::make_shared<op_registry>();
  BOOST_REQUIRE(!add_builtin_ops(*ops));
  auto job = load_job_file(training_job, *ops);
  BOOST_REQUIRE(job);
  std::map<std::string, std::vector<double>> losses; // per task
  job_runner_options opts;
  opts.on_epoch = [&](int64_t, const std::vector<task_output>& outputs) {
    for (auto& out : outputs)
      if (out.blob == "loss")
        losses[out.task].push_back(element_as_double(out.value, 0));
  };
  local_session sess{sys, ops};
  job_runner runner{*job, nullptr, {}, nullptr, opts};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE(epochs);
  BOOST_TEST(*epochs == 12);
  BOOST_REQUIRE(losses.size() == 2u);
  for (auto& [task, series] : losses) {
    BOOST_TEST_CONTEXT(task) {
      BOOST_REQUIRE(series.size() == 12u);
      for (size_t i = 1; i < series.size(); ++i)
        BOOST_TEST(series[i] < series[i - 1]);
      BOOST_TEST(series.back() < series.front() / 10);
    }
  }
}

BOOST_AUTO_TEST_CASE(
  a_killed_training_run_resumes_to_the_uninterrupted_weights) {
  temp_dir dir;
  auto job = write_paced_job(dir, 40);
  process_runner cli{EPOCHRT_CLI, std::chrono::seconds(120)};
  auto straight = cli.run(concat({"run", job}, fetch_model));
  BOOST_REQUIRE_MESSAGE(straight.exit_code == 0, straight.err);

  auto ckpt = dir.sub("ckpt");
  auto args = concat({"run", job, "--checkpoint-dir", ckpt}, fetch_model);
  {
    auto run = run_in_background(EPOCHRT_CLI, args, dir.sub("killed.out"),
                                 dir.sub("killed.err"));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto committed = [&] {
      record_keeper metadata{std::make_shared<file_metadata_handler>(ckpt)};
      auto epochs = metadata.committed_epochs();
      return epochs
        && std::find(epochs->begin(), epochs->end(), 4) != epochs->end();
    };
    while (!committed() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    BOOST_REQUIRE(committed());
    run.signal(SIGKILL);
    BOOST_REQUIRE_EQUAL(run.wait(std::chrono::seconds(10)), 128 + SIGKILL);
  }
  auto resumed = cli.run(args);
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  BOOST_TEST(resumed.err.find("resuming from epoch") != std::string::npos);
  BOOST_TEST(resumed.out == straight.out);
  auto verify = cli.run({"ckpt", "verify", ckpt});
  BOOST_TEST(verify.exit_code == 0);
}

BOOST_AUTO_TEST_CASE(the_host_program_resumes_instead_of_starting_over) {
  temp_dir dir;
  process_runner host{EPOCHRT_HOST_PROGRAM, std::chrono::seconds(60)};
  auto first = host.run({dir.sub("ckpt")});
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  BOOST_TEST(last_line_with(first.out, "weights")
             == "weights after epoch 5: 48,48,48");
  auto second = host.run({dir.sub("ckpt")});
  BOOST_REQUIRE_MESSAGE(second.exit_code == 0, second.err);
  BOOST_TEST(second.err.find("resuming from epoch 5") != std::string::npos);
  BOOST_TEST(last_line_with(second.out, "weights")
             == "weights after epoch 5: 48,48,48");
}
