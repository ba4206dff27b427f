// Checkpoint managers and job runners over a distributed session: the same
// calls as in one process, with two of pipeline3's nodes on daemons in
// child processes and the third in the master.

#include <boost/test/unit_test.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "test/support/node_daemons.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/multi_node_checkpoint_manager.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

using namespace epochrt;
using namespace std::chrono_literals;
using epochrt::process::node_daemon;
using epochrt::test::start_daemon;
using epochrt::test::temp_dir;

namespace {

struct network_config : caf::actor_system_config {
  network_config() {
    // Plain TCP: nothing to check, nothing that can fail.
    BOOST_REQUIRE(!configure_network(*this));
  }
};

// Totals of every pipeline3 node after epochs 0 (init) to 4.
const int64_t totals[] = {100, 103, 115, 136, 145};

struct mixed_fixture {
  temp_dir dir;
  node_daemon d0 = start_daemon(dir.str(), "d0");
  node_daemon d1 = start_daemon(dir.str(), "d1");
  network_config cfg;
  caf::actor_system sys{cfg};
  std::shared_ptr<op_registry> ops = [] {
    auto result = std::make_shared<op_registry>();
    BOOST_REQUIRE(!add_builtin_ops(*result));
    return result;
  }();
  distributed_session sess{
    sys,
    ops,
    {{"trainer_0", node_address{"127.0.0.1", static_cast<uint16_t>(d0.port())}},
     {"trainer_1",
      node_address{"127.0.0.1", static_cast<uint16_t>(d1.port())}}},
    options()};

  static distributed_session_options options() {
    distributed_session_options result;
    result.timeouts.group_timeout = 60s;
    result.timeouts.checkpoint_timeout = 60s;
    result.timeouts.request_timeout = 10s;
    return result;
  }

  job pipeline3() {
    auto loaded
      = load_job_file(EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline3.json", *ops);
    if (!loaded)
      throw std::runtime_error(error_text(loaded.error()));
    return std::move(*loaded);
  }

  int64_t total_of(const std::string& node) {
    auto value = sess.fetch(node, "total");
    if (!value)
      throw std::runtime_error(error_text(value.error()));
    return value->values<int64_t>()[0];
  }

  // Runs pipeline3 to its end with checkpoints in `ckpt`.
  void train(multi_node_checkpoint_manager& ckpt) {
    job_runner runner{pipeline3(), &ckpt};
    auto epochs = runner.train(sess);
    if (!epochs)
      throw std::runtime_error(error_text(epochs.error()));
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(managers_across_processes, mixed_fixture)

BOOST_AUTO_TEST_CASE(a_job_over_remote_and_local_nodes_ends_as_in_process) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  job_runner runner{pipeline3(), &ckpt};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, (epochs ? "" : error_text(epochs.error())));
  BOOST_TEST(*epochs == 4);
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    BOOST_TEST(total_of(node) == totals[4], node);
  BOOST_TEST(sess.is_remote("trainer_0"));
  BOOST_TEST(!sess.is_remote("trainer_2"));
}

BOOST_AUTO_TEST_CASE(existence_and_integrity_are_checked_on_every_node) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  train(ckpt);
  auto exists = ckpt.check_db_exists(3);
  BOOST_REQUIRE(exists);
  BOOST_TEST((*exists == checkpoint_state::usable));
  auto intact = ckpt.check_db_intact(3);
  BOOST_REQUIRE(intact);
  BOOST_TEST((*intact == checkpoint_state::usable));
  auto missing = ckpt.check_db_exists(9);
  BOOST_REQUIRE(missing);
  BOOST_TEST((*missing == checkpoint_state::missing));
}

BOOST_AUTO_TEST_CASE(a_full_load_restores_every_node_to_an_epoch) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  train(ckpt);
  BOOST_REQUIRE(!ckpt.load(2));
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    BOOST_TEST(total_of(node) == totals[2], node);
}

BOOST_AUTO_TEST_CASE(a_partial_load_brings_named_blobs_into_remote_nodes) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  train(ckpt);
  job_runner runner{pipeline3(), &ckpt};
  auto loaded = runner.load_blobs_from_checkpoints({"total"}, 1, sess);
  BOOST_REQUIRE_MESSAGE(!loaded, error_text(loaded));
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    BOOST_TEST(total_of(node) == totals[1], node);
}

BOOST_AUTO_TEST_CASE(
  blobs_of_a_remote_checkpoint_come_into_the_masters_workspace) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  train(ckpt);
  // Another manager of the same directory, over one remote node.
  multi_node_checkpoint_manager reader{sys, dir.sub("ckpt")};
  BOOST_REQUIRE(!reader.init(sess, {"trainer_1"}));
  workspace here;
  auto read = reader.read_blobs({"total", "dataset", "absent"}, 3, here);
  BOOST_REQUIRE(read);
  BOOST_TEST(*read == 2u);
  auto total = here.get("total");
  BOOST_REQUIRE(total);
  BOOST_TEST(total->values<int64_t>()[0] == totals[3]);
  BOOST_TEST(!here.get("absent"));
}

BOOST_AUTO_TEST_CASE(a_blob_two_nodes_hold_is_not_merged_into_one_workspace) {
  multi_node_checkpoint_manager ckpt{sys, dir.sub("ckpt")};
  train(ckpt);
  job_runner runner{pipeline3(), &ckpt};
  workspace here;
  auto loaded = runner.load_blobs_from_checkpoints({"total"}, 3, sess, here);
  BOOST_REQUIRE(loaded);
  BOOST_TEST(error_text(loaded).find("in the checkpoints of both")
             != std::string::npos);
  BOOST_TEST(here.names().empty());
}

BOOST_AUTO_TEST_SUITE_END()
