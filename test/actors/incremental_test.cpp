// Incremental checkpoints and retention through the C++ API: checkpoint
// managers over local sessions, with real checkpoints on disk.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "test/actors/test_support.hpp"
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

tensor floats(size_t n, float base) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), base);
  return make_tensor<float>({static_cast<int64_t>(n)}, values);
}

// 256 KiB each: payloads that go to the data file.
constexpr size_t big = 65536;

struct incremental_fixture : system_fixture {
  std::unique_ptr<local_session> sess = new_session();

  incremental_fixture() {
    put("frozen", floats(big, 1));
    put("moving", floats(big, 2));
    put("small", floats(4, 3));
  }

  void put(const std::string& blob, tensor value) {
    BOOST_REQUIRE(!sess->put("trainer_0", blob, std::move(value)));
  }

  // Saves and commits `epoch`; the node's stats.
  checkpoint_stats save(basic_checkpoint_manager& ckpt, int64_t epoch) {
    auto err = ckpt.save(epoch);
    BOOST_REQUIRE_MESSAGE(!err, error_text(err));
    err = ckpt.write_checkpoint_metadata(epoch);
    BOOST_REQUIRE_MESSAGE(!err, error_text(err));
    BOOST_REQUIRE(ckpt.last_stats().size() == 1u);
    return ckpt.last_stats()[0];
  }

  std::string db(int64_t epoch) const {
    return dir.sub("trainer_0." + std::to_string(epoch));
  }

  bool exists(int64_t epoch) const {
    return std::filesystem::exists(db(epoch));
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(incremental, incremental_fixture)

BOOST_AUTO_TEST_CASE(the_first_save_writes_every_payload) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  auto stats = save(ckpt, 1);
  BOOST_TEST(stats.reused_blobs == 0u);
  BOOST_TEST(stats.written_bytes == stats.bytes);
  BOOST_TEST(stats.bytes == 2 * big * 4 + 16);
}

BOOST_AUTO_TEST_CASE(
  a_blob_unchanged_since_the_last_save_is_not_written_again) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 1);
  put("moving", floats(big, 20));
  auto stats = save(ckpt, 2);
  BOOST_TEST(stats.reused_blobs == 1u);
  BOOST_TEST(stats.written_bytes == big * 4 + 16); // moving, and small inline
  // Loaded into a fresh session, epoch 2 is exactly what was saved.
  auto other = new_session();
  checkpoint_manager reader{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!reader.init(*other));
  BOOST_REQUIRE(!reader.load(2));
  BOOST_TEST((*other->fetch("trainer_0", "frozen") == floats(big, 1)));
  BOOST_TEST((*other->fetch("trainer_0", "moving") == floats(big, 20)));
}

BOOST_AUTO_TEST_CASE(a_blob_written_with_equal_bytes_is_still_written) {
  // Changes are known from versions, never by comparing bytes: a write is
  // a change.
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 1);
  put("frozen", floats(big, 1));
  auto stats = save(ckpt, 2);
  BOOST_TEST(stats.reused_blobs == 1u); // "moving" only
}

BOOST_AUTO_TEST_CASE(a_save_after_a_load_refers_to_the_loaded_payloads) {
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    BOOST_REQUIRE(!ckpt.init(*sess));
    save(ckpt, 1);
  }
  auto other = new_session();
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*other, {}, 1));
  BOOST_REQUIRE(!ckpt.load(1));
  auto stats = save(ckpt, 2);
  BOOST_TEST(stats.reused_blobs == 2u);
  BOOST_TEST(stats.written_bytes == 16u);
}

BOOST_AUTO_TEST_CASE(full_every_forces_a_full_save_at_its_epochs) {
  checkpoint_options opts;
  opts.full_every = 2;
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 1);
  BOOST_TEST(save(ckpt, 2).reused_blobs == 0u);
  BOOST_TEST(save(ckpt, 3).reused_blobs == 2u);
  BOOST_TEST(save(ckpt, 4).reused_blobs == 0u);
}

BOOST_AUTO_TEST_CASE(a_removed_earlier_checkpoint_makes_the_next_save_full) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 1);
  std::filesystem::remove_all(db(1));
  auto stats = save(ckpt, 2);
  BOOST_TEST(stats.reused_blobs == 0u);
  BOOST_TEST(stats.written_bytes == stats.bytes);
  auto intact = ckpt.check_db_intact(2);
  BOOST_TEST((intact && *intact == checkpoint_state::usable));
}

BOOST_AUTO_TEST_CASE(saving_an_epoch_again_never_refers_to_itself) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 2);
  // Epoch 2 again (as after a fall-back) replaces the database the last
  // save wrote: nothing in it may be referred to.
  auto stats = save(ckpt, 2);
  BOOST_TEST(stats.reused_blobs == 0u);
  auto intact = ckpt.check_db_intact(2);
  BOOST_TEST((intact && *intact == checkpoint_state::usable));
}

BOOST_AUTO_TEST_CASE(a_payload_damaged_on_disk_is_written_again_not_passed_on) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 1);
  // A bad disk flips a bit of a payload after its save reported success.
  {
    std::fstream f{db(1) + "/blobs.data",
                   std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(100);
    f.put('\x7f');
  }
  put("moving", floats(big, 9));
  auto stats = save(ckpt, 2);
  BOOST_TEST(stats.reused_blobs == 0u); // read back, failed, written again
  auto other = new_session();
  checkpoint_manager reader{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!reader.init(*other));
  BOOST_REQUIRE(!reader.load(2));
  BOOST_TEST((*other->fetch("trainer_0", "frozen") == floats(big, 1)));
}

BOOST_AUTO_TEST_CASE(a_payload_read_back_once_is_not_read_again) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 1);
  BOOST_TEST(save(ckpt, 2).reused_blobs == 2u); // read back, checked
  // Damage now goes unseen by the writer (it checked the payload once)
  // but never by a load.
  {
    std::fstream f{db(1) + "/blobs.data",
                   std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(100);
    f.put('\x7f');
  }
  BOOST_TEST(save(ckpt, 3).reused_blobs == 2u);
  auto intact = ckpt.check_db_intact(3);
  BOOST_TEST((intact && *intact == checkpoint_state::corrupt));
}

// -- retention ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(keep_last_removes_older_epochs_after_each_commit) {
  checkpoint_options opts;
  opts.keep_last = 2;
  opts.full_every = 1; // no references: every old database can go
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  BOOST_REQUIRE(!ckpt.init(*sess));
  for (int64_t epoch = 1; epoch <= 5; ++epoch)
    save(ckpt, epoch);
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir.str())};
  BOOST_TEST(*metadata.committed_epochs() == (std::vector<int64_t>{4, 5}),
             boost::test_tools::per_element());
  for (int64_t epoch = 1; epoch <= 3; ++epoch)
    BOOST_TEST(!exists(epoch));
  BOOST_TEST(exists(4));
  BOOST_TEST(exists(5));
}

BOOST_AUTO_TEST_CASE(keep_last_keeps_payloads_a_kept_epoch_refers_to) {
  checkpoint_options opts;
  opts.keep_last = 1;
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  BOOST_REQUIRE(!ckpt.init(*sess));
  for (int64_t epoch = 1; epoch <= 4; ++epoch) {
    put("moving", floats(big, static_cast<float>(epoch)));
    save(ckpt, epoch);
  }
  // Epoch 1 holds "frozen", which epoch 4 refers to; 2 and 3 are gone.
  BOOST_TEST(exists(1));
  BOOST_TEST(!exists(2));
  BOOST_TEST(!exists(3));
  auto other = new_session();
  checkpoint_manager reader{sys, dir.str(), "trainer_0"};
  BOOST_REQUIRE(!reader.init(*other));
  BOOST_REQUIRE(!reader.load(4));
  BOOST_TEST((*other->fetch("trainer_0", "frozen") == floats(big, 1)));
  BOOST_TEST((*other->fetch("trainer_0", "moving") == floats(big, 4)));
}

BOOST_AUTO_TEST_CASE(retention_keeps_epochs_committed_after_the_one_saved) {
  // Epochs 1..5 committed by an earlier run; this one went back to 3 (as
  // --resume-from 2 would) and keeps 2: it keeps 2 and 3, and leaves 4
  // and 5 alone, never the epochs it just saved.
  {
    checkpoint_options full;
    full.full_every = 1; // no references: only retention keeps an epoch
    checkpoint_manager first{sys, dir.str(), "trainer_0", full};
    BOOST_REQUIRE(!first.init(*sess));
    for (int64_t epoch = 1; epoch <= 5; ++epoch)
      save(first, epoch);
  }
  checkpoint_options opts;
  opts.keep_last = 2;
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  BOOST_REQUIRE(!ckpt.init(*sess));
  save(ckpt, 3);
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir.str())};
  BOOST_TEST(*metadata.committed_epochs() == (std::vector<int64_t>{2, 3, 4, 5}),
             boost::test_tools::per_element());
  BOOST_TEST(!exists(1));
  for (int64_t epoch = 2; epoch <= 5; ++epoch)
    BOOST_TEST(exists(epoch));
}

BOOST_AUTO_TEST_CASE(a_job_with_keep_last_ends_with_the_last_epochs_only) {
  checkpoint_options opts;
  opts.keep_last = 2;
  auto fresh = new_session();
  {
    multi_node_checkpoint_manager ckpt{sys, dir.str(), opts};
    job_runner runner{load_example("incremental.json"), &ckpt};
    auto epochs = runner.train(*fresh);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  }
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir.str())};
  BOOST_TEST(*metadata.committed_epochs() == (std::vector<int64_t>{7, 8}),
             boost::test_tools::per_element());
  // Resumed by a new manager (the first, destroyed, released the
  // directory), it loads epoch 8 through its references and has nothing
  // left to do.
  auto again = new_session();
  multi_node_checkpoint_manager ckpt2{sys, dir.str(), opts};
  job_runner resumed{load_example("incremental.json"), &ckpt2};
  auto more = resumed.train(*again);
  BOOST_REQUIRE_MESSAGE(more, why(more));
  BOOST_TEST(
    (*again->fetch("trainer_0", "w") == *fresh->fetch("trainer_0", "w")));
  BOOST_TEST(
    (*again->fetch("trainer_0", "acc") == *fresh->fetch("trainer_0", "acc")));
}

BOOST_AUTO_TEST_SUITE_END()
