#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "test/persistence/test_util.hpp"
#include <epochrt/messages/codec.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

// The commit record in `dir`, as a checkpoint manager reads and changes it.
record_keeper keeper_of(const std::string& dir) {
  return record_keeper{std::make_shared<file_metadata_handler>(dir)};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(metadata, persistence_fixture)

BOOST_AUTO_TEST_CASE(fresh_directory_has_no_committed_epoch) {
  auto handler = keeper_of((*this)("ckpt"));
  auto last = handler.resume_epoch(std::nullopt);
  BOOST_REQUIRE_MESSAGE(last, describe(last));
  BOOST_TEST(!last->has_value());
  auto committed = handler.committed_epochs();
  BOOST_REQUIRE(committed);
  BOOST_TEST(committed->empty());
}

BOOST_AUTO_TEST_CASE(commits_persist_across_instances) {
  auto dir = (*this)("ckpt");
  {
    auto handler = keeper_of(dir);
    handler.set_params(dir, {"trainer_0", "trainer_1"});
    BOOST_REQUIRE(!handler.commit(0));
    BOOST_REQUIRE(!handler.commit(2));
    BOOST_REQUIRE(!handler.commit(1));
    BOOST_REQUIRE(!handler.commit(2)); // idempotent
  }
  auto again = keeper_of(dir);
  BOOST_TEST(*again.committed_epochs() == (std::vector<int64_t>{0, 1, 2}),
             boost::test_tools::per_element());
  auto last = again.resume_epoch(std::nullopt);
  BOOST_REQUIRE(last);
  BOOST_TEST(**last == 2);
  auto state = file_metadata_handler{dir}.load();
  BOOST_REQUIRE(state);
  BOOST_TEST(state->node_names
             == (std::vector<std::string>{"trainer_0", "trainer_1"}));
  BOOST_TEST(state->db_prefix == dir);
}

BOOST_AUTO_TEST_CASE(uncommit_persists_across_instances) {
  auto dir = (*this)("ckpt");
  {
    auto handler = keeper_of(dir);
    BOOST_REQUIRE(!handler.commit(3));
    BOOST_REQUIRE(!handler.commit(4));
    BOOST_REQUIRE(!handler.uncommit(4));
    BOOST_REQUIRE(!handler.uncommit(17)); // not committed: nothing to do
  }
  auto again = keeper_of(dir);
  BOOST_TEST(*again.committed_epochs() == (std::vector<int64_t>{3}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(user_epoch_that_is_committed_is_returned) {
  auto handler = keeper_of((*this)("ckpt"));
  BOOST_REQUIRE(!handler.commit(1));
  BOOST_REQUIRE(!handler.commit(5));
  auto last = handler.resume_epoch(1);
  BOOST_REQUIRE(last);
  BOOST_TEST(**last == 1);
}

BOOST_AUTO_TEST_CASE(user_epoch_not_committed_is_an_error) {
  auto handler = keeper_of((*this)("ckpt"));
  BOOST_REQUIRE(!handler.commit(1));
  auto last = handler.resume_epoch(2);
  BOOST_REQUIRE(has_code(last, persistence_errc::not_committed));
  // The message names the committed epochs.
  BOOST_TEST(caf::to_string(last.error()).find('1') != std::string::npos);
}

BOOST_AUTO_TEST_CASE(corrupt_metadata_file_is_an_error) {
  auto dir = (*this)("ckpt");
  fs::create_directories(dir);
  std::ofstream{fs::path{dir} / file_metadata_handler::file_name}
    << "this is not a metadata record";
  auto handler = keeper_of(dir);
  BOOST_TEST(
    has_code(handler.resume_epoch(std::nullopt), persistence_errc::corrupt));
  BOOST_TEST(has_code(handler.commit(1), persistence_errc::corrupt));
  BOOST_TEST(has_code(handler.check_writable(), persistence_errc::corrupt));
  BOOST_TEST(has_code(handler.committed_epochs(), persistence_errc::corrupt));
  BOOST_TEST(has_code(handler.final_epoch(), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(
  truncated_metadata_file_without_a_previous_one_is_an_error) {
  auto dir = (*this)("ckpt");
  {
    auto handler = keeper_of(dir);
    BOOST_REQUIRE(!handler.commit(1)); // the first file: no previous one
  }
  auto file = fs::path{dir} / file_metadata_handler::file_name;
  fs::resize_file(file, fs::file_size(file) - 8);
  auto handler = keeper_of(dir);
  BOOST_TEST(
    has_code(handler.resume_epoch(std::nullopt), persistence_errc::corrupt));
}

namespace {

fs::path latest_of(const std::string& dir) {
  return fs::path{dir} / file_metadata_handler::file_name;
}

fs::path previous_of(const std::string& dir) {
  return fs::path{dir} / file_metadata_handler::previous_file_name;
}

void flip_a_bit(const fs::path& file) {
  std::fstream f{file, std::ios::in | std::ios::out | std::ios::binary};
  f.seekg(-1, std::ios::end);
  char c = 0;
  f.get(c);
  f.seekp(-1, std::ios::end);
  f.put(static_cast<char>(c ^ 0x10));
}

std::vector<int64_t> committed(const std::string& dir) {
  auto epochs = keeper_of(dir).committed_epochs();
  BOOST_REQUIRE_MESSAGE(epochs, describe(epochs));
  return *epochs;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_damaged_latest_generation_falls_back_to_the_previous) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  BOOST_REQUIRE(!handler.commit(1));
  BOOST_REQUIRE(!handler.commit(2));
  flip_a_bit(latest_of(dir));
  BOOST_TEST(committed(dir) == (std::vector<int64_t>{1}),
             boost::test_tools::per_element());
  std::string damage;
  auto state = file_metadata_handler{dir}.load(&damage);
  BOOST_REQUIRE(state);
  BOOST_TEST(damage.find(latest_of(dir).string()) != std::string::npos, damage);
  auto last = handler.resume_epoch(std::nullopt);
  BOOST_REQUIRE(last);
  BOOST_TEST(**last == 1);
}

BOOST_AUTO_TEST_CASE(a_change_after_a_fall_back_keeps_the_sound_generation) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  BOOST_REQUIRE(!handler.commit(1));
  BOOST_REQUIRE(!handler.commit(2));
  flip_a_bit(latest_of(dir));
  BOOST_REQUIRE(!handler.commit(3)); // on the previous generation: {1, 3}
  BOOST_TEST(committed(dir) == (std::vector<int64_t>{1, 3}),
             boost::test_tools::per_element());
  // The damaged file was not kept: the previous generation is still {1}.
  flip_a_bit(latest_of(dir));
  BOOST_TEST(committed(dir) == (std::vector<int64_t>{1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(both_generations_damaged_is_corrupt) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  BOOST_REQUIRE(!handler.commit(1));
  BOOST_REQUIRE(!handler.commit(2));
  flip_a_bit(latest_of(dir));
  flip_a_bit(previous_of(dir));
  BOOST_TEST(has_code(handler.committed_epochs(), persistence_errc::corrupt));
  BOOST_TEST(has_code(handler.commit(3), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(a_missing_latest_beside_databases_falls_back_too) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  BOOST_REQUIRE(!handler.commit(1));
  BOOST_REQUIRE(!handler.commit(2));
  fs::create_directories(fs::path{dir} / "trainer_0.1");
  std::ofstream{fs::path{dir} / "trainer_0.1" / "CURRENT"} << "MANIFEST-1\n";
  fs::remove(latest_of(dir));
  BOOST_TEST(committed(dir) == (std::vector<int64_t>{1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reset_forgets_the_previous_generation) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  BOOST_REQUIRE(!handler.commit(1));
  BOOST_REQUIRE(!handler.commit(2));
  BOOST_REQUIRE(!file_metadata_handler{dir}.reset());
  BOOST_TEST(!fs::exists(previous_of(dir)));
  flip_a_bit(latest_of(dir));
  // Never the generation of the job that was reset away.
  BOOST_TEST(has_code(handler.committed_epochs(), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(report_stores_action_and_stats) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  std::vector<checkpoint_stats> stats{{"trainer_0", "db", 10, 100, 2}};
  BOOST_REQUIRE(!handler.commit(0));
  BOOST_REQUIRE(!handler.report("save", stats));
  auto state = file_metadata_handler{dir}.load();
  BOOST_REQUIRE(state);
  BOOST_TEST(state->last_action == "save");
  BOOST_TEST((state->last_stats == stats));
  BOOST_TEST(state->committed_epochs == (std::vector<int64_t>{0}));
}

BOOST_AUTO_TEST_CASE(reporting_a_load_leaves_the_file_as_it_was) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  std::vector<checkpoint_stats> stats{{"trainer_0", "db", 10, 100, 2}};
  BOOST_REQUIRE(!handler.commit(0));
  BOOST_REQUIRE(!handler.report("checkpoint_save", stats));
  auto file = fs::path{dir} / file_metadata_handler::file_name;
  auto read = [&] {
    std::ifstream in{file, std::ios::binary};
    return std::string{std::istreambuf_iterator<char>{in},
                       std::istreambuf_iterator<char>{}};
  };
  auto before = read();
  BOOST_REQUIRE(!handler.report("checkpoint_load", {}));
  BOOST_REQUIRE(!handler.report("checkpoint_partial_load", {}));
  BOOST_TEST(read() == before);
}

BOOST_AUTO_TEST_CASE(no_temporary_file_is_left_behind) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir);
  BOOST_REQUIRE(!handler.commit(0));
  BOOST_REQUIRE(!handler.check_writable());
  std::vector<std::string> names;
  for (auto& entry : fs::directory_iterator{dir})
    names.push_back(entry.path().filename().string());
  BOOST_TEST(names == std::vector<std::string>{"epochrt.metadata"});
}

BOOST_AUTO_TEST_CASE(a_directory_that_can_be_made_is_made_and_writable) {
  auto dir = (*this)("new/ckpt");
  auto handler = keeper_of(dir);
  BOOST_TEST(!handler.check_writable());
  BOOST_TEST(fs::is_directory(dir));
}

BOOST_AUTO_TEST_CASE(a_directory_under_a_regular_file_is_not_writable) {
  // chmod cannot stop root; a path below a regular file can never exist.
  std::ofstream{root / "file"} << "x";
  auto handler = keeper_of((*this)("file/ckpt"));
  BOOST_TEST(
    has_code(handler.check_writable(), persistence_errc::not_writable));
  BOOST_TEST(has_code(handler.commit(1), persistence_errc::io_error));
}

BOOST_AUTO_TEST_SUITE_END()
