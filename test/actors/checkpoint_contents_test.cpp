// read_checkpoint_blobs, verify_checkpoint and verify_committed (actors/api/
// checkpoint_contents.hpp): a checkpoint database's blobs read back for a
// host, digests checked, all or nothing, the directory left as it was.

#define BOOST_TEST_MODULE actors_checkpoint_contents
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test/actors/test_support.hpp"
#include "test/support/damaged_database.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

// The names and last-write times of every file under `dir`.
std::vector<std::pair<std::string, std::filesystem::file_time_type>>
snapshot(const std::string& dir) {
  std::vector<std::pair<std::string, std::filesystem::file_time_type>> result;
  for (auto& entry : std::filesystem::recursive_directory_iterator(dir))
    result.emplace_back(entry.path().string(), entry.last_write_time());
  std::sort(result.begin(), result.end());
  return result;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(checkpoint_contents, system_fixture)

BOOST_AUTO_TEST_CASE(every_blob_comes_back_in_manifest_order) {
  checkpoint_whole_pipeline();
  auto blobs = read_checkpoint_blobs(dir.str(), "trainer_0", 4);
  BOOST_REQUIRE_MESSAGE(blobs, why(blobs));
  std::vector<std::string> names;
  for (auto& [name, value] : *blobs)
    names.push_back(name);
  BOOST_TEST((std::find(names.begin(), names.end(), "total") != names.end()));
  for (auto& [name, value] : *blobs)
    if (name == "total")
      BOOST_TEST(value.values<int64_t>()[0] == 145);
}

BOOST_AUTO_TEST_CASE(the_blobs_named_come_back_in_that_order) {
  checkpoint_whole_pipeline();
  auto blobs
    = read_checkpoint_blobs(dir.str(), "trainer_0", 0, {"total", "dataset"});
  BOOST_REQUIRE_MESSAGE(blobs, why(blobs));
  BOOST_REQUIRE(blobs->size() == 2u);
  BOOST_TEST((*blobs)[0].first == "total");
  BOOST_TEST((*blobs)[0].second.values<int64_t>()[0] == 100);
  BOOST_TEST((*blobs)[1].first == "dataset");
  BOOST_TEST((*blobs)[1].second.element_count() == 10u);
}

BOOST_AUTO_TEST_CASE(a_blob_the_database_lacks_is_not_found_and_named) {
  checkpoint_whole_pipeline();
  auto blobs
    = read_checkpoint_blobs(dir.str(), "trainer_0", 1, {"total", "nothing"});
  BOOST_REQUIRE(!blobs);
  BOOST_TEST(is_error(blobs.error(), persistence_errc::not_found));
  BOOST_TEST(error_text(blobs.error()).find("nothing") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_database_that_does_not_exist_is_not_found) {
  checkpoint_whole_pipeline();
  auto blobs = read_checkpoint_blobs(dir.str(), "trainer_0", 7);
  BOOST_REQUIRE(!blobs);
  BOOST_TEST(is_error(blobs.error(), persistence_errc::not_found));
  BOOST_TEST(is_error(verify_checkpoint(dir.str(), "trainer_0", 7),
                      persistence_errc::not_found));
}

BOOST_AUTO_TEST_CASE(a_bad_node_name_or_epoch_is_invalid_name) {
  checkpoint_whole_pipeline();
  BOOST_TEST(is_error(read_checkpoint_blobs(dir.str(), "../x", 1).error(),
                      persistence_errc::invalid_name));
  BOOST_TEST(is_error(verify_checkpoint(dir.str(), "trainer_0", -1),
                      persistence_errc::invalid_name));
}

BOOST_AUTO_TEST_CASE(an_intact_database_verifies_and_a_corrupt_one_does_not) {
  checkpoint_whole_pipeline();
  BOOST_TEST(!verify_checkpoint(dir.str(), "trainer_0", 2));
  corrupt_database(dir.path() / "trainer_0.2");
  auto err = verify_checkpoint(dir.str(), "trainer_0", 2);
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(!read_checkpoint_blobs(dir.str(), "trainer_0", 2));
  BOOST_TEST(!verify_checkpoint(dir.str(), "trainer_0", 3));
}

BOOST_AUTO_TEST_CASE(verify_committed_names_the_damaged_database_of_its_epoch) {
  checkpoint_whole_pipeline();
  corrupt_database(dir.path() / "trainer_0.2");
  checkpoint_metadata record;
  record.committed_epochs = {1, 2};
  record.node_names = {"trainer_0"};
  auto found = verify_committed(dir.str(), record);
  BOOST_REQUIRE(found);
  BOOST_REQUIRE_EQUAL(found->size(), 2u);
  BOOST_TEST((*found)[0].epoch == 1);
  BOOST_REQUIRE_EQUAL((*found)[0].nodes.size(), 1u);
  BOOST_TEST(!(*found)[0].nodes[0].second);
  BOOST_TEST((*found)[1].epoch == 2);
  BOOST_REQUIRE_EQUAL((*found)[1].nodes.size(), 1u);
  BOOST_TEST((*found)[1].nodes[0].first == "trainer_0");
  BOOST_TEST(static_cast<bool>((*found)[1].nodes[0].second));
}

BOOST_AUTO_TEST_CASE(verify_committed_of_a_record_committing_nothing_is_empty) {
  checkpoint_whole_pipeline();
  auto found = verify_committed(dir.str(), checkpoint_metadata{});
  BOOST_REQUIRE(found);
  BOOST_TEST(found->empty());
}

BOOST_AUTO_TEST_CASE(reading_leaves_the_directory_as_it_was) {
  checkpoint_whole_pipeline();
  auto before = snapshot(dir.str());
  BOOST_REQUIRE(read_checkpoint_blobs(dir.str(), "trainer_0", 4));
  BOOST_REQUIRE(!verify_checkpoint(dir.str(), "trainer_0", 4));
  BOOST_TEST((snapshot(dir.str()) == before));
}

BOOST_AUTO_TEST_SUITE_END()
