// --max-failures covers the whole job: a daemon lost during init, an epoch,
// the last epoch's save, the download group or the exit group is brought
// back and the job ends as an uninterrupted run would. Each loss is placed
// in its phase deterministically, by host code the job runner calls at a
// fixed point (before train, the epoch observer, the upload builder) or by
// an op of an in-process node: the killed daemon has nothing in flight
// until the phase under test sends it its next request, so that request is
// the one that finds it lost, however loaded the machine.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <functional>
#include <mutex>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "test/remote/daemon_jobs.hpp"
#include "test/support/log_capture.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/multi_node_checkpoint_manager.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/upload_task_group_builder.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

using namespace epochrt;
using namespace std::chrono_literals;
using epochrt::process::node_daemon;
using epochrt::process::read_text;
using epochrt::test::restart;
using epochrt::test::start_daemon;
using epochrt::test::temp_dir;
using epochrt::test::with_download_and_exit;

namespace {

struct network_config : caf::actor_system_config {
  explicit network_config(const log_options& logging = {}) {
    BOOST_REQUIRE(!configure_network(*this, {}, logging));
  }
};

struct plain_config : caf::actor_system_config {
  plain_config() {
    configure(*this);
  }
};

// What each phase's hook does: set by a test, called by host code or by the
// KillDaemon op of the in-process node trainer_2.
std::function<void()> kill_hook;

void add_test_ops(op_registry& ops) {
  BOOST_REQUIRE(!add_builtin_ops(ops));
  op_schema kill;
  kill.type = "KillDaemon";
  kill.doc = "Test only: calls the test's hook (kills a daemon).";
  kill.min_inputs = kill.max_inputs = 0;
  kill.min_outputs = kill.max_outputs = 0;
  kill.fn = [](op_context&) -> caf::error {
    if (kill_hook)
      kill_hook();
    return {};
  };
  BOOST_REQUIRE(!ops.add(std::move(kill)));
}

// Builds nothing to upload; calls a hook where the upload group would run:
// after the last commit, before the download group.
class hook_upload_builder : public upload_task_group_builder {
public:
  std::function<void()> hook;

  caf::expected<task_group_def>
  build(int64_t, const basic_checkpoint_manager&) override {
    if (hook)
      hook();
    return task_group_def{};
  }
};

// trainer_0 and trainer_1 on daemons d0 and d1, trainer_2 in the master.
struct recovery_fixture {
  test::log_capture capture; // before the system: it outlives every actor
  temp_dir dir;
  node_daemon d0 = start_daemon(dir.str(), "d0");
  node_daemon d1 = start_daemon(dir.str(), "d1");
  std::shared_ptr<op_registry> ops = [] {
    auto result = std::make_shared<op_registry>();
    add_test_ops(*result);
    return result;
  }();
  network_config cfg{capture.options()};
  caf::actor_system sys{cfg};
  distributed_session sess{
    sys,
    ops,
    {{"trainer_0", node_address{"127.0.0.1", static_cast<uint16_t>(d0.port())}},
     {"trainer_1",
      node_address{"127.0.0.1", static_cast<uint16_t>(d1.port())}}},
    options()};
  int kills = 0;

  recovery_fixture() {
    BOOST_REQUIRE(!sess.connect_all());
  }

  ~recovery_fixture() {
    kill_hook = nullptr;
  }

  static distributed_session_options options() {
    distributed_session_options result;
    result.timeouts.group_timeout = 30s;
    result.timeouts.checkpoint_timeout = 30s;
    result.timeouts.request_timeout = 10s;
    result.handshake_timeout = 5s;
    result.reconnect_timeout = 10s;
    result.reconnect_backoff_min = 20ms;
    result.reconnect_backoff_max = 200ms;
    return result;
  }

  // A supervisor's view: d1 dies and is started again at once, on the same
  // port with the same checkpoint root. Nothing the master sent to it is in
  // flight when this runs.
  void lose_d1() {
    ++kills;
    d1.kill();
    restart(d1);
  }

  job make_job(bool victim_downloads = true, bool kill_in_download = false) {
    auto loaded = parse_job_json(
      with_download_and_exit(victim_downloads, kill_in_download),
      "recovery.json", *ops);
    if (!loaded)
      throw std::runtime_error(error_text(loaded.error()));
    return std::move(*loaded);
  }

  std::vector<int64_t> totals(session& where) {
    std::vector<int64_t> result;
    for (auto node : {"trainer_0", "trainer_1", "trainer_2"}) {
      auto value = where.fetch(node, "total");
      if (!value)
        throw std::runtime_error(error_text(value.error()));
      result.push_back(value->values<int64_t>()[0]);
    }
    return result;
  }

  // The same job, uninterrupted, in one process (the hooks do nothing).
  std::vector<int64_t> in_process_totals(job the_job) {
    plain_config local_cfg;
    caf::actor_system local_sys{local_cfg};
    local_session local{local_sys, ops};
    job_runner runner{std::move(the_job)};
    auto epochs = runner.train(local);
    if (!epochs)
      throw std::runtime_error(error_text(epochs.error()));
    return totals(local);
  }

  std::string logged() {
    return capture.text();
  }
};

using epochrt::test::contains;

job_runner_options allowing(int failures) {
  job_runner_options result;
  result.max_node_failures = failures;
  return result;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(recovering_in_every_phase, recovery_fixture)

BOOST_AUTO_TEST_CASE(the_reference_job_ends_with_1146_everywhere) {
  auto expected = std::vector<int64_t>{1146, 1146, 1146};
  BOOST_TEST(in_process_totals(make_job()) == expected,
             boost::test_tools::per_element());
  auto without_victim_download = std::vector<int64_t>{1146, 146, 1146};
  BOOST_TEST(in_process_totals(make_job(false, true))
               == without_victim_download,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_daemon_lost_before_init_is_recovered) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  job_runner runner{make_job(), &ckpt, {}, nullptr, allowing(1)};
  lose_d1();
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, (epochs ? "" : error_text(epochs.error())));
  BOOST_TEST(*epochs == 4);
  // The attempt's first request to the nodes notices the loss: whether
  // their processes have the job's ops.
  BOOST_TEST(
    contains(logged(), "node trainer_1 could not be asked for its ops"),
    logged());
  BOOST_TEST(totals(sess) == in_process_totals(make_job()),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_daemon_lost_between_epochs_is_recovered_from_scratch) {
  // No checkpoints: the next request d1 gets is epoch 3's tasks, and the
  // job starts again from scratch.
  auto opts = allowing(1);
  opts.on_epoch = [this](int64_t epoch, const std::vector<task_output>&) {
    if (epoch == 2 && kills == 0)
      lose_d1();
  };
  job_runner runner{make_job(), nullptr, {}, nullptr, opts};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, (epochs ? "" : error_text(epochs.error())));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(contains(logged(), "node trainer_1 (epoch group, epoch 3)"),
             logged());
  BOOST_TEST(totals(sess) == in_process_totals(make_job()),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_daemon_lost_at_the_last_save_is_recovered) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  auto opts = allowing(1);
  opts.on_epoch = [this](int64_t epoch, const std::vector<task_output>&) {
    if (epoch == 4 && kills == 0)
      lose_d1();
  };
  job_runner runner{make_job(), &ckpt, {}, nullptr, opts};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, (epochs ? "" : error_text(epochs.error())));
  BOOST_TEST(*epochs == 4);
  // Epoch 3's write may have been cut short too: the job resumes from the
  // last epoch committed, 3 or 2.
  BOOST_TEST(contains(logged(), "saving the checkpoint of epoch 4"), logged());
  BOOST_TEST(contains(logged(), "resuming from epoch"), logged());
  BOOST_TEST(totals(sess) == in_process_totals(make_job()),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_daemon_found_lost_by_the_download_group_is_recovered) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  hook_upload_builder upload;
  upload.hook = [this] {
    if (kills == 0)
      lose_d1();
  };
  job_runner runner{make_job(), &ckpt, {}, &upload, allowing(3)};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, (epochs ? "" : error_text(epochs.error())));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(contains(logged(), "node trainer_1 (download group, epoch 4)"),
             logged());
  BOOST_TEST(contains(logged(), "the job had stopped after epoch 4"), logged());
  BOOST_TEST(totals(sess) == in_process_totals(make_job()),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(
  a_daemon_found_lost_by_the_exit_group_is_recovered_from_the_last_state) {
  // trainer_2's download task kills d1, which has no download task: the
  // exit group finds it lost, after the other nodes' downloads changed
  // their totals. Those must be reloaded before the download runs again.
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  kill_hook = [this] {
    if (kills == 0)
      lose_d1();
  };
  job_runner runner{make_job(false, true), &ckpt, {}, nullptr, allowing(3)};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, (epochs ? "" : error_text(epochs.error())));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(contains(logged(), "node trainer_1 (exit group, epoch 4)"),
             logged());
  BOOST_TEST(kills == 1);
  kill_hook = nullptr;
  BOOST_TEST(totals(sess) == in_process_totals(make_job(false, true)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_recovery_counts_and_the_last_names_group_and_epoch) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  hook_upload_builder upload;
  upload.hook = [this] {
    lose_d1();
  };
  job_runner runner{make_job(), &ckpt, {}, &upload, allowing(1)};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE(!epochs);
  auto text = error_text(epochs.error());
  BOOST_TEST(epochs.error().code()
               == static_cast<uint8_t>(actors_errc::node_lost),
             text);
  BOOST_TEST(contains(text, "node trainer_1 (download group, epoch 4)"), text);
  BOOST_TEST(contains(text, "(failure 2, more than 1 allowed)"), text);
  BOOST_TEST(kills == 2);
}

BOOST_AUTO_TEST_SUITE_END()
