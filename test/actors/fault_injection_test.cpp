// A host program scripts faults through the C++ API: a fault plan given to
// a session (session_options::faults) strikes at the job runner's, the
// nodes' and the tasks' injection points, in this process, without child
// processes.

#include <boost/test/unit_test.hpp>

#include "test/actors/test_support.hpp"
#include "test/support/text.hpp"
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/messages/error_text.hpp>

using namespace epochrt;
using namespace std::chrono_literals;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

struct fault_fixture : system_fixture {
  std::shared_ptr<fault_injector> faults;

  // A session whose nodes and job runner consult `plan_text`.
  std::unique_ptr<local_session> session_with(const std::string& plan_text,
                                              session_options opts) {
    auto plan = parse_fault_plan(plan_text, "plan");
    BOOST_REQUIRE_MESSAGE(plan, why(plan));
    faults = std::make_shared<fault_injector>(std::move(*plan));
    opts.faults = faults;
    return std::make_unique<local_session>(sys, ops, opts);
  }

  std::unique_ptr<local_session> session_with(const std::string& plan_text) {
    return session_with(plan_text, quick_options());
  }

  caf::expected<int64_t> train_pipeline(session& sess) {
    job_runner runner{load_example("pipeline.json")};
    return runner.train(sess);
  }
};

using epochrt::test::contains;

} // namespace

BOOST_FIXTURE_TEST_SUITE(fault_injection, fault_fixture)

BOOST_AUTO_TEST_CASE(an_io_error_at_a_group_start_fails_the_job_naming_it) {
  auto sess = session_with(R"({"faults": [{"point": "job.group.start",
    "fault": "io_error", "detail": "epoch", "epoch": 2}]})");
  auto epochs = train_pipeline(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_CHECK(in_category(epochs.error(), fault_category));
  auto text = error_text(epochs.error());
  BOOST_CHECK_MESSAGE(contains(text,
                               "injected EIO at job.group.start (epoch "
                               "2, epoch)"),
                      text);
}

BOOST_AUTO_TEST_CASE(
  a_delay_at_an_epoch_start_delays_without_changing_the_result) {
  auto sess = session_with(R"({"faults": [{"point": "job.epoch.start",
    "fault": "delay", "ms": 300, "epoch": 3}]})");
  auto start = std::chrono::steady_clock::now();
  auto epochs = train_pipeline(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_CHECK(std::chrono::steady_clock::now() - start >= 300ms);
  BOOST_CHECK_EQUAL(*epochs, 4);
  BOOST_CHECK_EQUAL(scalar(*sess, "trainer_0", "total"), 145);
  BOOST_CHECK_EQUAL(faults->strikes().size(), 1u);
}

BOOST_AUTO_TEST_CASE(an_io_error_before_an_op_fails_its_task) {
  auto sess = session_with(R"({"faults": [{"point": "node.op",
    "fault": "io_error", "error": "ENOSPC", "node": "trainer_0",
    "detail": "Add", "hit": 2}]})");
  auto epochs = train_pipeline(*sess);
  BOOST_REQUIRE(!epochs);
  auto text = error_text(epochs.error());
  BOOST_CHECK_MESSAGE(contains(text, "node trainer_0"), text);
  BOOST_CHECK_MESSAGE(contains(text,
                               "injected ENOSPC at node.op (node "
                               "trainer_0, epoch 2, Add)"),
                      text);
}

BOOST_AUTO_TEST_CASE(a_killed_node_fails_the_job_as_a_lost_node) {
  auto sess = session_with(R"({"faults": [{"point": "task.start",
    "fault": "kill_node", "node": "trainer_0", "epoch": 1}]})");
  auto epochs = train_pipeline(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_CHECK(in_category(epochs.error(), actors_category));
  BOOST_CHECK_EQUAL(epochs.error().code(),
                    static_cast<uint8_t>(actors_errc::node_lost));
  BOOST_CHECK_MESSAGE(
    contains(error_text(epochs.error()), "killed by the fault plan"),
    error_text(epochs.error()));
}

BOOST_AUTO_TEST_CASE(a_frozen_node_fails_the_job_at_its_group_timeout) {
  auto opts = quick_options();
  opts.group_timeout = 500ms;
  auto sess = session_with(R"({"faults": [{"point": "node.op",
    "fault": "freeze_node", "node": "trainer_0", "epoch": 2}]})",
                           opts);
  auto start = std::chrono::steady_clock::now();
  auto epochs = train_pipeline(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_CHECK(std::chrono::steady_clock::now() - start < 20s);
  BOOST_CHECK_MESSAGE(contains(error_text(epochs.error()), "epoch"),
                      error_text(epochs.error()));
}

BOOST_AUTO_TEST_CASE(a_failed_snapshot_costs_that_epochs_checkpoint_only) {
  auto sess = session_with(R"({"faults": [{"point": "node.snapshot",
    "fault": "io_error", "node": "trainer_0", "epoch": 2}]})");
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_CHECK_EQUAL(scalar(*sess, "trainer_0", "total"), 145);
  auto metadata = file_metadata_handler{dir.str()}.load();
  BOOST_REQUIRE(metadata);
  BOOST_CHECK((metadata->committed_epochs == std::vector<int64_t>{0, 1, 3, 4}));
}

BOOST_AUTO_TEST_CASE(a_plan_that_never_matches_changes_nothing) {
  auto sess = session_with(R"({"faults": [{"point": "node.op",
    "fault": "io_error", "node": "elsewhere"}]})");
  auto epochs = train_pipeline(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_CHECK_EQUAL(scalar(*sess, "trainer_0", "total"), 145);
  BOOST_CHECK(faults->strikes().empty());
}

BOOST_AUTO_TEST_CASE(the_same_plan_strikes_the_same_hits_on_every_run) {
  const std::string plan = R"({"seed": 11, "faults": [{"point": "node.op",
    "fault": "delay", "ms": 1, "probability": 0.3, "count": 0,
    "node": "trainer_0"}]})";
  std::vector<std::string> first;
  for (int run = 0; run < 3; ++run) {
    auto sess = session_with(plan);
    auto epochs = train_pipeline(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    if (run == 0)
      first = faults->strikes();
    else
      BOOST_CHECK(faults->strikes() == first);
  }
  BOOST_CHECK(!first.empty());
}

BOOST_AUTO_TEST_SUITE_END()
