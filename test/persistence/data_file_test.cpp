// Payloads beside the database (the data file), and incremental checkpoints
// that refer to the payloads of an earlier epoch.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "test/persistence/test_util.hpp"
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/detail/data_file.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

// Payloads of 4 KiB and more go to the data file, in pieces of 1000 bytes
// (so that a payload spans several).
writer_options data_options() {
  writer_options opts;
  opts.inline_bytes = 4096;
  opts.data_piece_bytes = 1000;
  return opts;
}

using blob_list = std::vector<std::pair<std::string, tensor>>;

blob_list large_and_small() {
  return {
    {"a", floats(5000, 1)},                          // 20000 bytes: data file
    {"b", floats(3000, 7)},                          // 12000 bytes: data file
    {"small", floats(10, 3)},                        // inline
    {"names", make_string_tensor({2}, {"x", "yz"})}, // inline, always
  };
}

caf::expected<manifest> write_db(const std::string& path, int64_t epoch,
                                 const blob_list& blobs,
                                 const std::vector<blob_entry>& reused = {},
                                 writer_options opts = data_options()) {
  return write_database(path, epoch, blobs, reused, opts);
}

std::string data_file(const std::string& db) {
  return detail::data_file_path(db);
}

void flip_byte(const std::string& file, uint64_t offset) {
  std::fstream f{file, std::ios::in | std::ios::out | std::ios::binary};
  BOOST_REQUIRE(f);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c ^= 0x10;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

// Every blob reads back exactly as written, or not at all.
void check_all_or_error(const std::string& db, const blob_list& blobs) {
  auto reader = checkpoint_reader::open(db);
  if (!reader)
    return;
  for (auto& [name, value] : blobs) {
    auto back = (*reader)->read(name);
    if (back)
      BOOST_CHECK_MESSAGE(*back == value, "blob " << name << " misread");
  }
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(data_files, persistence_fixture)

BOOST_AUTO_TEST_CASE(large_numeric_payloads_go_to_the_data_file) {
  auto db = (*this)("trainer_0.1");
  auto written = write_db(db, 1, large_and_small());
  BOOST_REQUIRE_MESSAGE(written, describe(written));
  BOOST_TEST(entry_of(*written, "a").data_epoch == 1);
  BOOST_TEST(entry_of(*written, "a").chunks == 0u);
  BOOST_TEST(entry_of(*written, "b").data_epoch == 1);
  BOOST_TEST(entry_of(*written, "small").data_epoch == inline_payload);
  BOOST_TEST(entry_of(*written, "names").data_epoch == inline_payload);
  BOOST_TEST(fs::file_size(data_file(db))
             == detail::data_header_bytes + 20000 + 12000);
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  for (auto& [name, value] : large_and_small()) {
    auto back = (*reader)->read(name);
    BOOST_REQUIRE_MESSAGE(back, describe(back));
    BOOST_TEST((*back == value));
  }
  BOOST_TEST(!(*reader)->verify());
}

BOOST_AUTO_TEST_CASE(a_checkpoint_of_small_blobs_has_no_data_file) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, {{"small", floats(10, 3)}}));
  BOOST_TEST(!fs::exists(data_file(db)));
}

BOOST_AUTO_TEST_CASE(a_flipped_byte_in_a_payload_is_corrupt) {
  auto db = (*this)("trainer_0.1");
  auto written = write_db(db, 1, large_and_small());
  BOOST_REQUIRE(written);
  flip_byte(data_file(db), entry_of(*written, "b").offset + 11999);
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("b"), persistence_errc::corrupt));
  BOOST_TEST(
    static_cast<bool>((*reader)->read("a"))); // the other payload is fine
  BOOST_TEST(has_code((*reader)->verify(), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(a_truncated_data_file_is_corrupt) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, large_and_small()));
  fs::resize_file(data_file(db), fs::file_size(data_file(db)) - 1);
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("b"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(a_missing_data_file_is_corrupt) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, large_and_small()));
  fs::remove(data_file(db));
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
  BOOST_TEST(static_cast<bool>((*reader)->read("small")));
}

BOOST_AUTO_TEST_CASE(a_damaged_data_file_header_is_corrupt) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, large_and_small()));
  flip_byte(data_file(db), 3);
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(a_thousand_mutated_data_files_never_read_as_other_values) {
  auto blobs = large_and_small();
  auto pristine = (*this)("pristine.1");
  BOOST_REQUIRE(write_db(pristine, 1, blobs));
  auto size = fs::file_size(data_file(pristine));
  std::mt19937_64 rng{20261123};
  auto db = (*this)("trainer_0.1");
  for (int round = 0; round < 1000; ++round) {
    fs::remove_all(db);
    fs::copy(pristine, db);
    auto file = data_file(db);
    switch (rng() % 4) {
      case 0: // a flipped bit anywhere, header included
        flip_byte(file, rng() % size);
        break;
      case 1: // cut short
        fs::resize_file(file, rng() % size);
        break;
      case 2: // grown: trailing garbage must not matter or mislead
        fs::resize_file(file, size + 1 + rng() % 4096);
        break;
      default: { // two payload bytes swapped
        auto x = detail::data_header_bytes + rng() % (size - 16);
        auto y = detail::data_header_bytes + rng() % (size - 16);
        flip_byte(file, x);
        flip_byte(file, y);
        break;
      }
    }
    check_all_or_error(db, blobs);
  }
}

// Enough payload (24 MiB in six blobs) for read_all to use two threads.
blob_list many_large() {
  blob_list blobs;
  for (int i = 0; i < 6; ++i)
    blobs.emplace_back("p" + std::to_string(i),
                       floats((size_t{1} << 20) + static_cast<size_t>(i),
                              static_cast<float>(i)));
  blobs.emplace_back("small", floats(10, 3));
  return blobs;
}

BOOST_AUTO_TEST_CASE(read_all_gives_what_reads_one_by_one_give) {
  auto db = (*this)("trainer_0.1");
  auto blobs = many_large();
  BOOST_REQUIRE(write_db(db, 1, blobs));
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  std::vector<std::string> names{"small", "p5", "p0", "p3", "p1", "p4", "p2"};
  auto all = (*reader)->read_all(names);
  BOOST_REQUIRE_MESSAGE(all, describe(all));
  BOOST_REQUIRE(all->size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    auto one = (*reader)->read(names[i]);
    BOOST_REQUIRE(one);
    BOOST_TEST(((*all)[i] == *one), names[i]);
  }
}

BOOST_AUTO_TEST_CASE(read_all_fails_on_one_damaged_payload_among_many) {
  auto db = (*this)("trainer_0.1");
  auto written = write_db(db, 1, many_large());
  BOOST_REQUIRE(written);
  flip_byte(data_file(db), entry_of(*written, "p2").offset + 12345);
  auto reader = checkpoint_reader::open(db);
  BOOST_REQUIRE(reader);
  std::vector<std::string> names{"p0", "p1", "p2", "p3", "p4", "p5"};
  BOOST_TEST(has_code((*reader)->read_all(names), persistence_errc::corrupt));
  BOOST_TEST(
    has_code((*reader)->read_all({"p0", "nope"}), persistence_errc::not_found));
}

// -- incremental checkpoints --------------------------------------------------

BOOST_AUTO_TEST_CASE(a_reused_payload_is_read_from_the_earlier_epoch) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  auto b2 = floats(3000, 99);
  auto db2 = (*this)("trainer_0.2");
  auto second = write_db(db2, 2, {{"b", b2}}, {entry_of(*first, "a")});
  BOOST_REQUIRE_MESSAGE(second, describe(second));
  BOOST_TEST(entry_of(*second, "a").data_epoch == 1);
  BOOST_TEST(entry_of(*second, "b").data_epoch == 2);
  // Only the new payload was written.
  BOOST_TEST(fs::file_size(data_file(db2))
             == detail::data_header_bytes + 12000);
  auto reader = checkpoint_reader::open(db2);
  BOOST_REQUIRE(reader);
  auto a = (*reader)->read("a");
  BOOST_REQUIRE_MESSAGE(a, describe(a));
  BOOST_TEST((*a == large_and_small()[0].second));
  BOOST_TEST((*(*reader)->read("b") == b2));
  BOOST_TEST(!(*reader)->verify());
}

BOOST_AUTO_TEST_CASE(a_reference_chain_points_at_the_epoch_that_wrote_it) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  auto second = write_db((*this)("trainer_0.2"), 2, {},
                         {entry_of(*first, "a"), entry_of(*first, "b")});
  BOOST_REQUIRE(second);
  auto third
    = write_db((*this)("trainer_0.3"), 3, {}, {entry_of(*second, "a")});
  BOOST_REQUIRE_MESSAGE(third, describe(third));
  BOOST_TEST(entry_of(*third, "a").data_epoch == 1);
  BOOST_TEST(!fs::exists(data_file((*this)("trainer_0.3"))));
  auto reader = checkpoint_reader::open((*this)("trainer_0.3"));
  BOOST_REQUIRE(reader);
  BOOST_TEST((*(*reader)->read("a") == large_and_small()[0].second));
}

BOOST_AUTO_TEST_CASE(
  reusing_a_rewritten_payload_is_not_found_and_the_writer_goes_on) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  auto stale = entry_of(*first, "a");
  // Epoch 1 is written again, as after a fall-back: its data file gets a
  // new id.
  BOOST_REQUIRE(write_db((*this)("trainer_0.1"), 1, large_and_small()));
  auto writer = checkpoint_writer::create((*this)("trainer_0.2"), "trainer_0",
                                          2, data_options());
  BOOST_REQUIRE(writer);
  BOOST_TEST(has_code((*writer)->reuse(stale), persistence_errc::not_found));
  BOOST_TEST(!(*writer)->put("a", large_and_small()[0].second));
  BOOST_TEST(static_cast<bool>((*writer)->finish()));
}

BOOST_AUTO_TEST_CASE(reusing_a_removed_payload_is_not_found) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  fs::remove_all((*this)("trainer_0.1"));
  auto writer = checkpoint_writer::create((*this)("trainer_0.2"), "trainer_0",
                                          2, data_options());
  BOOST_REQUIRE(writer);
  BOOST_TEST(has_code((*writer)->reuse(entry_of(*first, "a")),
                      persistence_errc::not_found));
}

BOOST_AUTO_TEST_CASE(reading_a_reference_to_a_rewritten_epoch_is_corrupt) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(
    write_db((*this)("trainer_0.2"), 2, {}, {entry_of(*first, "a")}));
  // Same bytes, new id: still refused, since nothing else can tell.
  BOOST_REQUIRE(write_db((*this)("trainer_0.1"), 1, large_and_small()));
  auto reader = checkpoint_reader::open((*this)("trainer_0.2"));
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(reading_a_reference_to_a_removed_epoch_is_corrupt) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(
    write_db((*this)("trainer_0.2"), 2, {}, {entry_of(*first, "a")}));
  fs::remove_all((*this)("trainer_0.1"));
  auto reader = checkpoint_reader::open((*this)("trainer_0.2"));
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
  BOOST_TEST(has_code((*reader)->verify(), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(a_flipped_byte_in_a_referenced_payload_is_corrupt) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(
    write_db((*this)("trainer_0.2"), 2, {}, {entry_of(*first, "a")}));
  flip_byte(data_file((*this)("trainer_0.1")), entry_of(*first, "a").offset);
  auto reader = checkpoint_reader::open((*this)("trainer_0.2"));
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(
  a_payload_cannot_be_reused_from_the_same_or_a_later_epoch) {
  auto first = write_db((*this)("trainer_0.3"), 3, large_and_small());
  BOOST_REQUIRE(first);
  for (int64_t epoch : {3, 2}) {
    auto writer
      = checkpoint_writer::create((*this)("trainer_0." + std::to_string(epoch)),
                                  "trainer_0", epoch, data_options());
    BOOST_REQUIRE(writer);
    BOOST_TEST(has_code((*writer)->reuse(entry_of(*first, "a")),
                        persistence_errc::invalid_argument));
  }
}

BOOST_AUTO_TEST_CASE(
  reusing_a_damaged_payload_is_not_found_unless_only_located) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  flip_byte(data_file((*this)("trainer_0.1")),
            entry_of(*first, "a").offset + 7);
  auto writer = checkpoint_writer::create((*this)("trainer_0.2"), "trainer_0",
                                          2, data_options());
  BOOST_REQUIRE(writer);
  // Checked against its digest (the default), the damage is found and the
  // caller writes the blob again from memory.
  BOOST_TEST(has_code((*writer)->reuse(entry_of(*first, "a")),
                      persistence_errc::not_found));
  // A caller that checked the payload before may skip the read.
  BOOST_TEST(!(*writer)->reuse(entry_of(*first, "b"),
                               checkpoint_writer::reuse_check::location));
  BOOST_TEST(!(*writer)->put("a", large_and_small()[0].second));
  BOOST_TEST(static_cast<bool>((*writer)->finish()));
}

BOOST_AUTO_TEST_CASE(a_manifest_placing_two_blobs_on_one_range_is_corrupt) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  auto twin = entry_of(*first, "a");
  twin.name = "a_again";
  // The writer does not look for this: a crafted manifest could.
  BOOST_REQUIRE(
    write_db((*this)("trainer_0.2"), 2, {}, {entry_of(*first, "a"), twin}));
  auto reader = checkpoint_reader::open((*this)("trainer_0.2"));
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
  BOOST_TEST(has_code((*reader)->read("a_again"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(an_inline_entry_cannot_be_reused) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  auto writer = checkpoint_writer::create((*this)("trainer_0.2"), "trainer_0",
                                          2, data_options());
  BOOST_REQUIRE(writer);
  BOOST_TEST(has_code((*writer)->reuse(entry_of(*first, "small")),
                      persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(
  a_reference_from_a_database_named_without_its_epoch_is_corrupt) {
  auto first = write_db((*this)("trainer_0.1"), 1, large_and_small());
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(
    write_db((*this)("trainer_0.2"), 2, {}, {entry_of(*first, "a")}));
  fs::rename((*this)("trainer_0.2"), (*this)("renamed"));
  auto reader = checkpoint_reader::open((*this)("renamed"));
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_SUITE_END()
