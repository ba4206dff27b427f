// A host program's own test suite that scripts faults on its own job with
// epochrt's C++ API: a fault plan given to the session and the checkpoint
// manager, in this process, no child processes. Each case states what the
// job must do under one fault: end with the result of an uninterrupted run,
// or fail with an error and then resume to that result.

#define BOOST_TEST_MODULE fault_injection_example
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <epochrt/epochrt.hpp>

using namespace std::chrono_literals;

namespace {

// The host's job: six epochs, each doubling the weights of node "worker".
epochrt::job build_job() {
  using epochrt::make_op;
  using epochrt::make_scalar;
  using epochrt::make_task;
  using epochrt::make_tensor;
  epochrt::job job{"doubling"};
  job.add_task(job.init_group(),
               make_task("init", "worker",
                         {make_op("ConstantFill", {}, {"weights"},
                                  {{"shape", make_tensor<int64_t>({1}, {3})},
                                   {"value", make_scalar(1.5)}}),
                          make_op("ConstantFill", {}, {"two"},
                                  {{"shape", make_tensor<int64_t>({1}, {3})},
                                   {"value", make_scalar(2.0)}})}));
  job.add_task(job.epoch_group(),
               make_task("double", "worker",
                         {make_op("Mul", {"weights", "two"}, {"weights"})},
                         {"weights"}));
  [[maybe_unused]] auto err = epochrt::epoch_limiter(job, 6);
  return job;
}

// What an uninterrupted run ends with: 1.5 doubled six times.
const std::string expected_weights = "96,96,96";

struct fixture {
  fixture() {
    BOOST_REQUIRE(!epochrt::add_builtin_ops(*ops));
    std::filesystem::create_directories(dir);
  }

  ~fixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  // Runs the job once with checkpoints in `dir`, under `plan_text` (none:
  // no faults); returns the weights, or the error.
  caf::expected<std::string> run(const std::string& plan_text = {}) {
    std::shared_ptr<epochrt::fault_injector> faults;
    if (!plan_text.empty()) {
      auto plan = epochrt::parse_fault_plan(plan_text, "plan");
      if (!plan)
        return std::move(plan.error());
      faults = std::make_shared<epochrt::fault_injector>(std::move(*plan));
    }
    epochrt::session_options opts;
    opts.group_timeout = 10s;
    opts.faults = faults;
    epochrt::local_session session{sys, ops, opts};
    epochrt::checkpoint_options ckpt_opts;
    ckpt_opts.faults = faults;
    epochrt::multi_node_checkpoint_manager ckpt{sys, dir, ckpt_opts};
    epochrt::job_runner runner{build_job(), &ckpt};
    auto epochs = runner.train(session);
    if (!epochs)
      return std::move(epochs.error());
    auto weights = session.fetch("worker", "weights");
    if (!weights)
      return std::move(weights.error());
    return epochrt::format_values(*weights);
  }

  std::vector<int64_t> committed() {
    epochrt::file_metadata_handler metadata{dir};
    auto loaded = metadata.load();
    return loaded ? loaded->committed_epochs : std::vector<int64_t>{};
  }

  // configure() runs before the system is built from the config.
  struct config : caf::actor_system_config {
    config() {
      epochrt::configure(*this);
    }
  } cfg;
  caf::actor_system sys{cfg};
  std::shared_ptr<epochrt::op_registry> ops
    = std::make_shared<epochrt::op_registry>();
  std::string dir = (std::filesystem::temp_directory_path()
                     / ("fault-example-" + std::to_string(::getpid()) + "-"
                        + std::to_string(++instances)))
                      .string();
  static inline int instances = 0;
};

std::string text(const caf::expected<std::string>& x) {
  return x ? *x : epochrt::error_text(x.error());
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(faults_on_the_doubling_job, fixture)

BOOST_AUTO_TEST_CASE(without_faults_the_weights_are_doubled_six_times) {
  BOOST_CHECK_EQUAL(text(run()), expected_weights);
}

BOOST_AUTO_TEST_CASE(a_full_disk_during_a_save_costs_that_checkpoint_only) {
  auto weights = run(R"({"faults": [{"point": "save.rename.before",
    "fault": "io_error", "error": "ENOSPC", "node": "worker", "epoch": 3}]})");
  BOOST_CHECK_EQUAL(text(weights), expected_weights);
  auto epochs = committed();
  BOOST_CHECK(std::find(epochs.begin(), epochs.end(), 3) == epochs.end());
  BOOST_CHECK(std::find(epochs.begin(), epochs.end(), 6) != epochs.end());
}

BOOST_AUTO_TEST_CASE(a_node_killed_mid_epoch_resumes_from_the_last_commit) {
  auto killed = run(R"({"faults": [{"point": "node.op", "fault": "kill_node",
    "node": "worker", "epoch": 4}]})");
  BOOST_REQUIRE(!killed);
  BOOST_CHECK(epochrt::in_category(killed.error(), epochrt::actors_category));
  BOOST_CHECK_EQUAL(killed.error().code(),
                    static_cast<uint8_t>(epochrt::actors_errc::node_lost));
  // The host's next run, fault-free, resumes where the checkpoints end.
  BOOST_CHECK_EQUAL(text(run()), expected_weights);
}

BOOST_AUTO_TEST_CASE(a_corrupted_checkpoint_is_never_loaded) {
  // The bad disk flips a bit of the last epoch's checkpoint and says it
  // wrote it: the run itself is not affected...
  auto first = run(R"({"faults": [{"point": "save.batch.before",
    "fault": "corrupt_write", "node": "worker", "epoch": 6}]})");
  BOOST_CHECK_EQUAL(text(first), expected_weights);
  // ...but resuming finds the damage, goes back to epoch 5 and redoes 6.
  BOOST_CHECK_EQUAL(text(run()), expected_weights);
}

BOOST_AUTO_TEST_CASE(a_slow_disk_only_slows_the_job) {
  auto start = std::chrono::steady_clock::now();
  auto weights = run(R"({"faults": [{"point": "save.manifest.after",
    "fault": "delay", "ms": 300, "node": "worker", "epoch": 2}]})");
  BOOST_CHECK_EQUAL(text(weights), expected_weights);
  BOOST_CHECK(std::chrono::steady_clock::now() - start >= 300ms);
}

BOOST_AUTO_TEST_CASE(a_frozen_node_fails_the_job_within_its_timeout) {
  auto start = std::chrono::steady_clock::now();
  auto frozen = run(R"({"faults": [{"point": "task.start",
    "fault": "freeze_node", "node": "worker", "epoch": 2}]})");
  BOOST_CHECK(!frozen);
  BOOST_CHECK(std::chrono::steady_clock::now() - start < 60s);
  BOOST_CHECK_EQUAL(text(run()), expected_weights);
}

BOOST_AUTO_TEST_SUITE_END()
