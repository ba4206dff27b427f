// Persistence fault points seen through the checkpoint manager: a session's
// fault plan reaches its nodes' persistence actors, checkpoint_options'
// plan reaches the default metadata file, and what they inject comes back
// as a clear error naming the point, as a real I/O error would.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <filesystem>

#include "test/actors/test_support.hpp"
#include <epochrt/faults/fault_injector.hpp>

using namespace epochrt;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

std::shared_ptr<fault_injector> plan_of(fault_point point, fault_kind kind,
                                        std::optional<int64_t> epoch = {}) {
  fault_rule x;
  x.point = point;
  x.kind = kind;
  x.epoch = epoch;
  if (kind == fault_kind::io_error)
    x.error = EIO;
  fault_plan p;
  p.faults.push_back(std::move(x));
  return std::make_shared<fault_injector>(std::move(p));
}

std::string text(const caf::error& err) {
  return err ? error_text(err) : std::string{"ok"};
}

const tensor weights = make_tensor<float>({4}, {1, 2, 3, 4});

struct fault_fixture : system_fixture {
  // A session whose nodes consult `faults`, with trainer_0 holding "w".
  std::unique_ptr<local_session>
  session_with(std::shared_ptr<fault_injector> faults) {
    auto opts = quick_options();
    opts.faults = std::move(faults);
    auto sess = std::make_unique<local_session>(sys, ops, opts);
    sess->workspace_of("trainer_0")->set("w", weights);
    return sess;
  }

  bool partial_left() {
    for (auto& entry : std::filesystem::directory_iterator{dir.path()})
      if (entry.path().extension() == ".partial")
        return true;
    return false;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(fault_points, fault_fixture)

BOOST_AUTO_TEST_CASE(io_error_at_a_save_point_fails_the_save_naming_the_point) {
  auto sess = session_with(
    plan_of(fault_point::save_rename_before, fault_kind::io_error));
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  auto err = ckpt.save(1);
  BOOST_TEST(text(err).find("injected EIO at save.rename.before (node "
                            "trainer_0, epoch 1)")
               != std::string::npos,
             text(err));
  BOOST_TEST(!partial_left());
  auto exists = ckpt.check_db_exists(1);
  BOOST_REQUIRE_MESSAGE(exists, why(exists));
  BOOST_TEST((*exists != checkpoint_state::usable));
}

BOOST_AUTO_TEST_CASE(io_error_at_a_commit_point_fails_the_commit) {
  checkpoint_options opts;
  opts.faults
    = plan_of(fault_point::commit_rename_before, fault_kind::io_error, 1);
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  auto sess = session_with(nullptr);
  BOOST_REQUIRE(!ckpt.init(*sess));
  BOOST_REQUIRE(!ckpt.save(1));
  auto err = ckpt.write_checkpoint_metadata(1);
  BOOST_TEST(text(err).find("commit.rename.before") != std::string::npos,
             text(err));
  auto committed = ckpt.check_committed(1);
  BOOST_TEST(is_error(committed, persistence_errc::not_committed),
             text(committed));
}

BOOST_AUTO_TEST_CASE(
  io_error_at_load_chunk_fails_the_load_and_keeps_the_workspace) {
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = session_with(nullptr);
    BOOST_REQUIRE(!ckpt.init(*sess));
    BOOST_REQUIRE(!ckpt.save(1));
    BOOST_REQUIRE(!ckpt.write_checkpoint_metadata(1));
  }
  auto sess
    = session_with(plan_of(fault_point::load_chunk, fault_kind::io_error, 1));
  auto changed = make_tensor<float>({1}, {9});
  sess->workspace_of("trainer_0")->set("w", changed);
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  auto err = ckpt.load(1);
  BOOST_TEST(text(err).find("injected EIO at load.chunk (node trainer_0, "
                            "epoch 1, w)")
               != std::string::npos,
             text(err));
  auto w = sess->fetch("trainer_0", "w");
  BOOST_REQUIRE_MESSAGE(w, why(w));
  BOOST_TEST((*w == changed));
}

BOOST_AUTO_TEST_CASE(corrupt_write_at_save_fsync_after_is_found_by_the_load) {
  auto sess = session_with(
    plan_of(fault_point::save_fsync_after, fault_kind::corrupt_write));
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  BOOST_REQUIRE(!ckpt.save(1)); // the disk said all was well
  BOOST_REQUIRE(!ckpt.write_checkpoint_metadata(1));
  auto intact = ckpt.check_db_intact(1);
  BOOST_REQUIRE_MESSAGE(intact, why(intact));
  // Corrupt (a digest fails), or incomplete (LevelDB cannot read back the
  // record that holds the manifest): not usable either way.
  BOOST_TEST((*intact == checkpoint_state::corrupt
              || *intact == checkpoint_state::incomplete));
  sess->workspace_of("trainer_0")->set("w", make_tensor<float>({1}, {9}));
  auto err = ckpt.load(1);
  // LevelDB's "Corruption: ..." or our digests' "... is corrupt".
  BOOST_TEST(text(err).find("orrupt") != std::string::npos, text(err));
  auto w = sess->fetch("trainer_0", "w");
  BOOST_REQUIRE_MESSAGE(w, why(w));
  BOOST_TEST((*w == make_tensor<float>({1}, {9})));
}

BOOST_AUTO_TEST_SUITE_END()
