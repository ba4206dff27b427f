#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include <leveldb/db.h>

#include "test/persistence/test_util.hpp"
#include <epochrt/persistence/checkpoint_listing.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

void write_db(const std::string& path, const std::string& node, int64_t epoch) {
  auto writer = checkpoint_writer::create(path, node, epoch);
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE(!(*writer)->put("w", make_tensor<float>({2}, {1, 2})));
  BOOST_REQUIRE((*writer)->finish());
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(listing, persistence_fixture)

BOOST_AUTO_TEST_CASE(lists_databases_sorted_with_completeness) {
  write_db((*this)("trainer_1.10"), "trainer_1", 10);
  write_db((*this)("trainer_1.2"), "trainer_1", 2);
  write_db((*this)("trainer_0.3"), "trainer_0", 3);
  {
    // A database without manifest: an interrupted save made by hand.
    leveldb::DB* db = nullptr;
    leveldb::Options options;
    options.create_if_missing = true;
    BOOST_REQUIRE(leveldb::DB::Open(options, (*this)("trainer_0.4"), &db).ok());
    delete db;
  }
  // Things that are not checkpoints.
  fs::create_directories(root / "trainer_0.5.partial");
  write_db((*this)("trainer_0.6.copying"), "trainer_0", 6); // a copy underway
  fs::create_directories(root / "not_a_db.6");
  fs::create_directories(root / "noepoch");
  std::ofstream{root / file_metadata_handler::file_name} << "x";
  auto found = list_checkpoints(root.string());
  BOOST_REQUIRE_MESSAGE(found, describe(found));
  BOOST_REQUIRE(found->size() == 4u);
  auto& xs = *found;
  BOOST_TEST(xs[0].node == "trainer_0");
  BOOST_TEST(xs[0].epoch == 3);
  BOOST_TEST(xs[0].complete);
  BOOST_TEST(xs[1].node == "trainer_0");
  BOOST_TEST(xs[1].epoch == 4);
  BOOST_TEST(!xs[1].complete);
  BOOST_TEST(xs[2].epoch == 2);
  BOOST_TEST(xs[3].epoch == 10); // numeric, not lexical, order
  BOOST_TEST(xs[3].path == (*this)("trainer_1.10"));
  for (auto& x : xs)
    BOOST_TEST(x.bytes > 0u);
}

BOOST_AUTO_TEST_CASE(empty_directory_lists_nothing) {
  auto found = list_checkpoints(root.string());
  BOOST_REQUIRE(found);
  BOOST_TEST(found->empty());
}

BOOST_AUTO_TEST_CASE(missing_directory_is_not_found) {
  BOOST_TEST(
    has_code(list_checkpoints((*this)("nope")), persistence_errc::not_found));
}

BOOST_AUTO_TEST_SUITE_END()
