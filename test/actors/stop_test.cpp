// job_runner::request_stop through the C++ API: what a host program that
// handles its own signals gets. The job stops at the next epoch boundary
// with its checkpoints committed, and a new runner resumes it to the result
// of an uninterrupted run.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "test/actors/test_support.hpp"
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

bool is_stopped(const caf::error& err) {
  return is_error(err, actors_errc::stopped);
}

std::vector<int64_t> committed_epochs(const std::string& dir) {
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir)};
  auto epochs = metadata.committed_epochs();
  return epochs ? *epochs : std::vector<int64_t>{-1};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(stop, system_fixture)

BOOST_AUTO_TEST_CASE(a_stop_requested_before_train_runs_nothing) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  runner.request_stop();
  BOOST_TEST(runner.stop_requested());
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_stopped(epochs.error()), error_text(epochs.error()));
  BOOST_TEST(!sess->fetch("trainer_0", "total")); // init never ran
  BOOST_TEST(!std::filesystem::exists(ckpt.get_ckpt_db_name("trainer_0", 0)));
}

BOOST_AUTO_TEST_CASE(a_stop_during_an_epoch_commits_it_and_starts_no_other) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner* self = nullptr;
  job_runner_options opts;
  // Called on the runner's thread as epoch 2 ends: as if a signal came
  // while epoch 2 ran.
  opts.on_epoch = [&self](int64_t epoch, const std::vector<task_output>&) {
    if (epoch == 2)
      self->request_stop();
  };
  job_runner runner{load_example("pipeline.json"), &ckpt, {}, nullptr, opts};
  self = &runner;
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_stopped(epochs.error()), error_text(epochs.error()));
  BOOST_TEST(error_text(epochs.error()).find("after epoch 2")
               != std::string::npos,
             error_text(epochs.error()));
  BOOST_TEST(committed_epochs(dir.str()) == (std::vector<int64_t>{0, 1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 115);
}

BOOST_AUTO_TEST_CASE(a_new_runner_resumes_a_stopped_job_to_the_same_result) {
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    job_runner* self = nullptr;
    job_runner_options opts;
    opts.on_epoch = [&self](int64_t epoch, const std::vector<task_output>&) {
      if (epoch == 1)
        self->request_stop();
    };
    job_runner runner{load_example("pipeline.json"), &ckpt, {}, nullptr, opts};
    self = &runner;
    BOOST_REQUIRE(!runner.train(*sess));
  }
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_CASE(a_stop_after_the_last_epoch_leaves_download_to_the_rerun) {
  auto first_element = [](session& sess) {
    auto value = sess.fetch("trainer_0", "download_result");
    BOOST_REQUIRE_MESSAGE(value, why(value));
    return element_as_double(*value, 0);
  };
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    job_runner* self = nullptr;
    job_runner_options opts;
    opts.on_epoch = [&self](int64_t, const std::vector<task_output>&) {
      self->request_stop();
    };
    job_runner runner{load_example("download.json"), &ckpt, {}, nullptr, opts};
    self = &runner;
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE(!epochs);
    BOOST_TEST(is_stopped(epochs.error()), error_text(epochs.error()));
    BOOST_TEST(committed_epochs(dir.str()) == (std::vector<int64_t>{0, 1}),
               boost::test_tools::per_element());
    BOOST_TEST(first_element(*sess) == 1.0); // the download group never ran
  }
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("download.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(first_element(*sess) == 2.0);
}

BOOST_AUTO_TEST_CASE(request_stop_from_another_thread_stops_the_job) {
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    std::thread stopper{[&runner] {
      runner.request_stop();
    }};
    auto epochs = runner.train(*sess);
    stopper.join();
    // The job may have ended before the request came: then it is complete.
    if (epochs) {
      BOOST_TEST(*epochs == 4);
    } else {
      BOOST_TEST(is_stopped(epochs.error()), error_text(epochs.error()));
    }
  }
  // Its manager, destroyed, released the directory for the next one.
  checkpoint_manager again{sys, dir.str(), "trainer_0"};
  auto resumed_sess = new_session();
  job_runner resumed{load_example("pipeline.json"), &again};
  auto resumed_epochs = resumed.train(*resumed_sess);
  BOOST_REQUIRE_MESSAGE(resumed_epochs, why(resumed_epochs));
  BOOST_TEST(scalar(*resumed_sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_SUITE_END()
