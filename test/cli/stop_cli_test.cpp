// Graceful preemption of `epochrt run`: SIGTERM or SIGINT stops the job at
// the next epoch boundary with its checkpoints committed, prints the epoch a
// rerun resumes from, and exits 143 or 130; a second signal stops at once.
// Whenever the signal comes -- init, an epoch, a checkpoint write, a resume
// -- a rerun of the same command ends with the result of an uninterrupted
// run. Real signals to a real process; fault plans' delays hold the job at
// the moment to interrupt, so that the epoch it stops at is known.

#define BOOST_TEST_MODULE stop_cli
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include <epochrt/persistence/file_metadata_handler.hpp>

using epochrt::process::child_process;
using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::run_in_background;
using epochrt::test::temp_dir;
using namespace std::chrono_literals;

using epochrt::test::read_file;
using epochrt::test::value_of;

namespace {

const std::string pipeline = EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json";
using epochrt::test::contains;

/// The committed epochs of a checkpoint directory, as "0,1,2".
std::string committed(const std::string& dir) {
  epochrt::file_metadata_handler handler{dir};
  auto metadata = handler.load();
  if (!metadata)
    return "<unreadable>";
  std::string text;
  for (auto epoch : metadata->committed_epochs)
    text += (text.empty() ? "" : ",") + std::to_string(epoch);
  return text;
}

/// `epochrt run` in the background, for a test to signal.
struct running_job {
  running_job(const temp_dir& dir, std::vector<std::string> args)
    : out(dir.sub("run.out")), err(dir.sub("run.err")) {
    std::remove(out.c_str());
    std::remove(err.c_str());
    proc = run_in_background(EPOCHRT_CLI, args, out, err);
  }

  /// Waits until stderr holds `text`; false after 20 s.
  bool wait_for(const std::string& text) {
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(5ms))
      if (contains(read_file(err), text))
        return true;
    return false;
  }

  std::string out;
  std::string err;
  std::optional<child_process> proc;
};

/// A fault plan that holds the job: each rule a delay.
std::string plan_file(const temp_dir& dir, const std::string& rules) {
  auto path = dir.sub("plan.json");
  std::ofstream{path} << R"({"faults": [)" << rules << "]}";
  return path;
}

/// Every epoch group waits `ms` before its tasks start.
std::string slow_epochs(int ms) {
  return R"({"point": "job.group.start", "fault": "delay", "detail": "epoch",)"
         R"( "count": 0, "ms": )"
    + std::to_string(ms) + "}";
}

process_result cli(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, 60s}.run(args);
}

std::vector<std::string> run_args(const std::string& ckpt,
                                  const std::string& plan = {}) {
  std::vector<std::string> args{"run", pipeline,  "--checkpoint-dir",
                                ckpt,  "--fetch", "trainer_0:total"};
  if (!plan.empty()) {
    args.emplace_back("--fault-plan");
    args.push_back(plan);
  }
  return args;
}

/// The rerun after a stop ends as an uninterrupted run does: the total
/// after the last epoch, 4 epochs.
void expect_uninterrupted_result(const std::string& ckpt) {
  auto rerun = cli(run_args(ckpt));
  BOOST_TEST_REQUIRE(rerun.exit_code == 0, rerun.err);
  BOOST_TEST(value_of(rerun.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(rerun.out, "epochs") == "4");
}

} // namespace

BOOST_AUTO_TEST_SUITE(stop_cli)

BOOST_AUTO_TEST_CASE(sigterm_stops_after_the_running_epoch_and_exits_143) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  running_job job{dir, run_args(ckpt, plan_file(dir, slow_epochs(600)))};
  BOOST_TEST_REQUIRE(job.wait_for("starting epoch 2"), read_file(job.err));
  job.proc->signal(SIGTERM);
  BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
  // Epoch 2 ran to its end and is committed; epoch 3 never started.
  BOOST_TEST(committed(ckpt) == "0,1,2");
  BOOST_TEST(value_of(read_file(job.out), "resume_from") == "2");
  BOOST_TEST(value_of(read_file(job.out), "epochs") == "<missing>");
  auto err = read_file(job.err);
  BOOST_TEST(contains(err, "resumes from epoch 2"), err);
  BOOST_TEST(!contains(err, "starting epoch 3"), err);
}

BOOST_AUTO_TEST_CASE(sigint_stops_the_same_way_and_exits_130) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  running_job job{dir, run_args(ckpt, plan_file(dir, slow_epochs(600)))};
  BOOST_TEST_REQUIRE(job.wait_for("starting epoch 1"), read_file(job.err));
  job.proc->signal(SIGINT);
  BOOST_TEST_REQUIRE(job.proc->wait(20s) == 130, read_file(job.err));
  BOOST_TEST(committed(ckpt) == "0,1");
  BOOST_TEST(value_of(read_file(job.out), "resume_from") == "1");
}

BOOST_AUTO_TEST_CASE(a_rerun_after_a_stop_ends_with_the_uninterrupted_result) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  {
    running_job job{dir, run_args(ckpt, plan_file(dir, slow_epochs(600)))};
    BOOST_TEST_REQUIRE(job.wait_for("starting epoch 3"), read_file(job.err));
    job.proc->signal(SIGTERM);
    BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
  }
  auto plain_dir = dir.sub("plain");
  auto plain = cli(run_args(plain_dir));
  BOOST_TEST_REQUIRE(plain.exit_code == 0, plain.err);
  auto rerun = cli(run_args(ckpt));
  BOOST_TEST_REQUIRE(rerun.exit_code == 0, rerun.err);
  BOOST_TEST(contains(rerun.err, "resuming from epoch 3"), rerun.err);
  BOOST_TEST(rerun.out == plain.out);
}

BOOST_AUTO_TEST_CASE(a_signal_during_init_commits_epoch_0_then_stops) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  auto plan = plan_file(dir,
                        R"({"point": "job.group.start", "fault": "delay",)"
                        R"( "detail": "init", "ms": 600})");
  running_job job{dir, run_args(ckpt, plan)};
  BOOST_TEST_REQUIRE(job.wait_for("starting the init group"),
                     read_file(job.err));
  job.proc->signal(SIGTERM);
  BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
  BOOST_TEST(committed(ckpt) == "0");
  BOOST_TEST(value_of(read_file(job.out), "resume_from") == "0");
  BOOST_TEST(!contains(read_file(job.err), "starting epoch 1"));
  expect_uninterrupted_result(ckpt);
}

BOOST_AUTO_TEST_CASE(a_signal_during_a_checkpoint_write_waits_for_its_commit) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  // Epoch 2's write is still running when epoch 3 starts and the signal
  // comes: the stop waits for both writes and commits both.
  auto plan = plan_file(dir,
                        slow_epochs(600)
                          + R"(, {"point": "save.manifest.before",)"
                            R"( "fault": "delay", "epoch": 2,)"
                            R"( "ms": 1500})");
  running_job job{dir, run_args(ckpt, plan)};
  BOOST_TEST_REQUIRE(job.wait_for("starting epoch 3"), read_file(job.err));
  BOOST_TEST(committed(ckpt) == "0,1"); // epoch 2's write still runs
  job.proc->signal(SIGTERM);
  BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
  BOOST_TEST(committed(ckpt) == "0,1,2,3");
  BOOST_TEST(value_of(read_file(job.out), "resume_from") == "3");
  expect_uninterrupted_result(ckpt);
}

BOOST_AUTO_TEST_CASE(a_signal_during_a_resume_stops_after_the_load) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  {
    running_job job{dir, run_args(ckpt, plan_file(dir, slow_epochs(600)))};
    BOOST_TEST_REQUIRE(job.wait_for("starting epoch 2"), read_file(job.err));
    job.proc->signal(SIGTERM);
    BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
  }
  auto plan = plan_file(dir,
                        R"({"point": "load.open", "fault": "delay",)"
                        R"( "ms": 800})");
  running_job job{dir, run_args(ckpt, plan)};
  BOOST_TEST_REQUIRE(job.wait_for("resuming from epoch 2"), read_file(job.err));
  job.proc->signal(SIGINT);
  BOOST_TEST_REQUIRE(job.proc->wait(20s) == 130, read_file(job.err));
  BOOST_TEST(committed(ckpt) == "0,1,2");
  BOOST_TEST(value_of(read_file(job.out), "resume_from") == "2");
  BOOST_TEST(!contains(read_file(job.err), "starting epoch 3"));
  expect_uninterrupted_result(ckpt);
}

BOOST_AUTO_TEST_CASE(a_second_signal_stops_at_once_keeping_what_is_committed) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  // Epoch 2 would take a minute: only a stop at once ends this in time.
  auto plan = plan_file(dir, slow_epochs(60000));
  running_job job{dir, run_args(ckpt, plan)};
  BOOST_TEST_REQUIRE(job.wait_for("starting epoch 1"), read_file(job.err));
  BOOST_TEST_REQUIRE(job.wait_for("checkpoint of epoch 0 committed"),
                     read_file(job.err));
  job.proc->signal(SIGTERM);
  BOOST_TEST_REQUIRE(job.wait_for("send it again"), read_file(job.err));
  auto start = std::chrono::steady_clock::now();
  job.proc->signal(SIGTERM);
  BOOST_TEST_REQUIRE(job.proc->wait(10s) == 143, read_file(job.err));
  BOOST_TEST((std::chrono::steady_clock::now() - start < 5s));
  BOOST_TEST(committed(ckpt) == "0");
  expect_uninterrupted_result(ckpt);
}

BOOST_AUTO_TEST_CASE(without_a_checkpoint_dir_a_stop_says_a_rerun_starts_over) {
  temp_dir dir;
  running_job job{
    dir, {"run", pipeline, "--fault-plan", plan_file(dir, slow_epochs(600))}};
  BOOST_TEST_REQUIRE(job.wait_for("starting epoch 1"), read_file(job.err));
  job.proc->signal(SIGTERM);
  BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
  BOOST_TEST(value_of(read_file(job.out), "resume_from") == "none");
  BOOST_TEST(contains(read_file(job.err), "starts from scratch"));
}

BOOST_AUTO_TEST_CASE(a_master_of_daemons_stops_the_same_way) {
  temp_dir dir;
  auto daemon = epochrt::test::start_daemon(dir.str(), "trainer_1");
  auto ckpt = dir.sub("ckpt");
  auto pipeline3 = EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline3.json";
  auto args = std::vector<std::string>{
    "run",     pipeline3,        "--checkpoint-dir",
    ckpt,      "--node",         "trainer_1=" + daemon.address(),
    "--fetch", "trainer_1:total"};
  auto plan_args = args;
  plan_args.emplace_back("--fault-plan");
  plan_args.push_back(plan_file(dir, slow_epochs(600)));
  {
    running_job job{dir, plan_args};
    BOOST_TEST_REQUIRE(job.wait_for("starting epoch 2"), read_file(job.err));
    job.proc->signal(SIGTERM);
    BOOST_TEST_REQUIRE(job.proc->wait(20s) == 143, read_file(job.err));
    BOOST_TEST(committed(ckpt) == "0,1,2");
    BOOST_TEST(value_of(read_file(job.out), "resume_from") == "2");
  }
  BOOST_TEST(daemon.running()); // the daemon serves the next master
  process_result rerun;
  // The daemon frees its nodes once it sees the master gone.
  BOOST_TEST(epochrt::test::eventually(
    [&] {
      rerun = cli(args);
      return rerun.exit_code == 0;
    },
    10s));
  BOOST_TEST(contains(rerun.err, "resuming from epoch 2"), rerun.err);
  BOOST_TEST(value_of(rerun.out, "trainer_1:total") == "145");
  BOOST_TEST(value_of(rerun.out, "epochs") == "4");
}

BOOST_AUTO_TEST_SUITE_END()
