// job_events through the C++ API: what a host program's observer is told
// while a job runs, and the per-node figures a checkpoint manager keeps.
#include <boost/test/unit_test.hpp>

#include <mutex>

#include "test/actors/test_support.hpp"

using namespace epochrt;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

/// Keeps every event, from whichever thread it comes.
class recorder : public job_events {
public:
  void on_event(const job_event& event) override {
    std::lock_guard<std::mutex> guard{mtx_};
    events_.push_back(event);
  }

  std::vector<job_event> of(job_event::kind what) {
    std::lock_guard<std::mutex> guard{mtx_};
    std::vector<job_event> result;
    for (auto& event : events_)
      if (event.what == what)
        result.push_back(event);
    return result;
  }

private:
  std::mutex mtx_;
  std::vector<job_event> events_;
};

class throwing_observer : public job_events {
public:
  void on_event(const job_event&) override {
    throw std::runtime_error("observer bug");
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(events, system_fixture)

BOOST_AUTO_TEST_CASE(an_observer_sees_every_epoch_snapshot_write_and_commit) {
  auto seen = std::make_shared<recorder>();
  checkpoint_options ckpt_opts;
  ckpt_opts.events = seen;
  multi_node_checkpoint_manager ckpt{sys, dir.str(), ckpt_opts};
  auto sess = new_session();
  job_runner_options opts;
  opts.events = seen;
  job_runner runner{load_example("pipeline3.json"), &ckpt, {}, nullptr, opts};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  using kind = job_event::kind;
  auto epoch_events = seen->of(kind::epoch);
  BOOST_REQUIRE(epoch_events.size() == 4u);
  for (size_t i = 0; i < epoch_events.size(); ++i) {
    BOOST_TEST(epoch_events[i].epoch == static_cast<int64_t>(i + 1));
    BOOST_TEST((epoch_events[i].start <= epoch_events[i].end));
  }
  auto started = seen->of(kind::epoch_started);
  BOOST_TEST_REQUIRE(started.size() == 4u);
  for (size_t i = 0; i < started.size(); ++i)
    BOOST_TEST(started[i].epoch == static_cast<int64_t>(i + 1));
  BOOST_TEST(seen->of(kind::snapshot).size() == 5u); // epochs 0 to 4
  auto writes = seen->of(kind::write);
  BOOST_TEST_REQUIRE(writes.size() == 15u); // 3 nodes, 5 epochs
  for (auto& write : writes) {
    BOOST_TEST(write.node == write.stats.node);
    BOOST_TEST(write.stats.sync_us > 0);
    BOOST_TEST(write.stats.snapshot_us + write.stats.sync_us
               <= write.stats.duration_us);
  }
  auto commits = seen->of(kind::commit);
  BOOST_TEST_REQUIRE(commits.size() == 5u);
  for (auto& commit : commits)
    BOOST_TEST(commit.ok);
  // Groups: init, four epochs, download and exit (empty groups run nothing).
  BOOST_TEST(seen->of(kind::group).size() >= 5u);
  BOOST_TEST(seen->of(kind::load).empty());
}

BOOST_AUTO_TEST_CASE(a_resume_tells_of_every_nodes_load) {
  {
    multi_node_checkpoint_manager ckpt{sys, dir.str()};
    auto sess = new_session();
    job_runner runner{load_example("pipeline3.json"), &ckpt};
    BOOST_REQUIRE(runner.train(*sess));
  }
  auto seen = std::make_shared<recorder>();
  multi_node_checkpoint_manager ckpt{sys, dir.str()};
  auto sess = new_session();
  job_runner_options opts;
  opts.events = seen;
  job_runner runner{load_example("pipeline3.json"), &ckpt, 2, nullptr, opts};
  BOOST_REQUIRE(runner.train(*sess));
  auto loads = seen->of(job_event::kind::load);
  BOOST_TEST_REQUIRE(loads.size() == 3u);
  for (auto& load : loads) {
    BOOST_TEST(load.epoch == 2);
    BOOST_TEST(load.stats.bytes > 0u);
  }
}

BOOST_AUTO_TEST_CASE(the_last_stats_split_a_save_into_its_parts) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  BOOST_REQUIRE(runner.train(*sess));
  BOOST_REQUIRE(!ckpt.init(*sess, {"trainer_0"}));
  BOOST_REQUIRE(!ckpt.save(7));
  auto& stats = ckpt.last_stats();
  BOOST_TEST_REQUIRE(stats.size() == 1u);
  BOOST_TEST(stats[0].node == "trainer_0");
  BOOST_TEST(stats[0].sync_us > 0);
  BOOST_TEST(stats[0].snapshot_us >= 0);
  BOOST_TEST(stats[0].snapshot_us + stats[0].sync_us <= stats[0].duration_us);
  BOOST_TEST(stats[0].written_bytes > 0u);
}

BOOST_AUTO_TEST_CASE(an_observer_that_throws_never_fails_the_job) {
  checkpoint_options ckpt_opts;
  ckpt_opts.events = std::make_shared<throwing_observer>();
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", ckpt_opts};
  auto sess = new_session();
  job_runner_options opts;
  opts.events = std::make_shared<throwing_observer>();
  job_runner runner{load_example("pipeline.json"), &ckpt, {}, nullptr, opts};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_SUITE_END()
