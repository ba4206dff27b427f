// Copies of checkpoint databases on another host (persistence/
// checkpoint_copy): what the sending end lists and reads, what the
// receiving end writes, checks and publishes. The bytes go from a
// database_file_reader to a database_copy in this process, as the network
// would carry them.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "test/persistence/test_util.hpp"
#include "test/support/text.hpp"
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_copy.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/detail/data_file.hpp>
#include <epochrt/persistence/digest.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

using blob_list = std::vector<std::pair<std::string, tensor>>;

// Payloads of 4 KiB and more go to the data file; smaller ones are LevelDB
// records of at most 1000 bytes.
writer_options small_options() {
  writer_options opts;
  opts.inline_bytes = 4096;
  opts.chunk_bytes = 1000;
  return opts;
}

blob_list blobs(float base = 0) {
  return {
    {"a", floats(5000, base + 1)},                   // data file
    {"b", floats(3000, base + 7)},                   // data file
    {"small", floats(500, base + 3)},                // inline, 2 chunks
    {"names", make_string_tensor({2}, {"x", "yz"})}, // inline
  };
}

caf::expected<manifest> write_db(const std::string& path, int64_t epoch,
                                 const blob_list& values,
                                 const std::vector<blob_entry>& reused = {}) {
  return write_database(path, epoch, values, reused, small_options());
}

// What happens to a piece on its way; may change it.
using transit = std::function<void(const std::string& file, uint64_t offset,
                                   std::vector<char>& piece)>;

// Sends the database at `from` (described by `listing`) to a new
// database_copy for `to`, in pieces of `piece_bytes`, and finishes it.
caf::error send(const std::string& from, const database_listing& listing,
                const std::string& to, size_t piece_bytes = 4096,
                copy_options opts = {}, const transit& on_the_way = {}) {
  auto copy = database_copy::create(to, listing, std::move(opts));
  if (!copy)
    return std::move(copy.error());
  std::vector<uint64_t> digests;
  std::vector<char> piece;
  for (auto& file : listing.files) {
    auto reader = database_file_reader::open(from, file.name);
    if (!reader)
      return std::move(reader.error());
    for (;;) {
      auto offset = reader->bytes_read();
      if (auto err = reader->read(piece_bytes, piece))
        return err;
      if (piece.empty())
        break;
      if (on_the_way)
        on_the_way(file.name, offset, piece);
      if (auto err = (*copy)->append(file.name, piece.data(), piece.size()))
        return err;
    }
    digests.push_back(reader->digest());
  }
  return (*copy)->finish(digests);
}

// Sends every database of `listings`, the node's databases in `from_dir`,
// to the same names in `to_dir`.
caf::error send_all(const std::vector<database_listing>& listings,
                    const std::string& from_dir, const std::string& to_dir) {
  for (auto& listing : listings)
    if (auto err = send(db_name(listing.epoch, "trainer_0", from_dir), listing,
                        db_name(listing.epoch, "trainer_0", to_dir)))
      return err;
  return {};
}

// The single listing of a database that refers to no other.
database_listing listing_of(const std::string& db, int64_t epoch) {
  auto listings = list_for_copy(db, epoch);
  BOOST_REQUIRE_MESSAGE(listings, describe(listings));
  BOOST_REQUIRE_EQUAL(listings->size(), 1u);
  return listings->front();
}

// Whether the database at `db` gives exactly `values`.
bool loads(const std::string& db, const blob_list& values) {
  auto reader = checkpoint_reader::open(db);
  if (!reader)
    return false;
  for (auto& [name, value] : values) {
    auto back = (*reader)->read(name);
    if (!back || !(*back == value))
      return false;
  }
  return !(*reader)->verify();
}

std::vector<int64_t> epochs_of(const std::vector<database_listing>& xs) {
  std::vector<int64_t> result;
  for (auto& x : xs)
    result.push_back(x.epoch);
  return result;
}

std::vector<std::string> names_of(const database_listing& x) {
  std::vector<std::string> result;
  for (auto& file : x.files)
    result.push_back(file.name);
  return result;
}

std::shared_ptr<fault_injector> plan(fault_point point, fault_kind kind) {
  fault_rule rule;
  rule.point = point;
  rule.kind = kind;
  if (kind == fault_kind::io_error)
    rule.error = EIO;
  fault_plan p;
  p.faults.push_back(rule);
  return std::make_shared<fault_injector>(std::move(p));
}

bool injected(const caf::error& err) {
  return is_error(err, fault_errc::injected);
}

copy_options with_faults(const std::shared_ptr<fault_injector>& faults) {
  copy_options opts;
  opts.faults = faults.get();
  opts.node = "trainer_0";
  opts.epoch = 1;
  return opts;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(checkpoint_copies, persistence_fixture)

// -- the sending end ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_full_database_is_listed_alone_with_its_files) {
  auto db = (*this)("src/trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, blobs()));
  auto listing = listing_of(db, 1);
  BOOST_TEST(listing.epoch == 1);
  auto names = names_of(listing);
  BOOST_TEST(std::is_sorted(names.begin(), names.end()));
  BOOST_TEST(std::count(names.begin(), names.end(), "blobs.data") == 1);
  BOOST_TEST(std::count(names.begin(), names.end(), "CURRENT") == 1);
  for (auto& file : listing.files) {
    BOOST_TEST(file.name != "LOCK");
    BOOST_TEST(file.name != "LOG");
    BOOST_TEST(file.bytes == fs::file_size(db + "/" + file.name));
  }
  auto id = listing.data_id;
  BOOST_TEST(id != 0u);
  std::ifstream in{detail::data_file_path(db), std::ios::binary};
  std::string header(detail::data_header_bytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  BOOST_TEST(*detail::parse_data_header(header, "blobs.data") == id);
}

BOOST_AUTO_TEST_CASE(a_database_without_a_data_file_has_data_id_0) {
  auto db = (*this)("src/trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, {{"small", floats(10, 1)}}));
  auto listing = listing_of(db, 1);
  BOOST_TEST(listing.data_id == 0u);
  auto names = names_of(listing);
  BOOST_TEST(std::count(names.begin(), names.end(), "blobs.data") == 0);
}

BOOST_AUTO_TEST_CASE(
  an_incremental_listing_names_the_databases_it_refers_to_in_order) {
  auto dir = (*this)("src");
  auto e0 = write_db(db_name(0, "trainer_0", dir), 0, blobs(0));
  BOOST_REQUIRE(e0);
  BOOST_REQUIRE(write_db(db_name(1, "trainer_0", dir), 1, blobs(1)));
  // Epoch 2 refers to epoch 0 for "a" and writes "b" itself; epoch 3
  // refers to epoch 0 for "a" and to epoch 2 for "b", and has no data of
  // its own.
  auto e2 = write_db(db_name(2, "trainer_0", dir), 2,
                     {{"b", floats(3000, 9)}, {"small", floats(10, 2)}},
                     {entry_of(*e0, "a")});
  BOOST_REQUIRE(e2);
  BOOST_REQUIRE(write_db(db_name(3, "trainer_0", dir), 3,
                         {{"small", floats(10, 3)}},
                         {entry_of(*e2, "a"), entry_of(*e2, "b")}));
  auto listings = list_for_copy(db_name(3, "trainer_0", dir), 3);
  BOOST_REQUIRE_MESSAGE(listings, describe(listings));
  BOOST_TEST(epochs_of(*listings) == (std::vector<int64_t>{0, 2, 3}),
             boost::test_tools::per_element());
  BOOST_TEST((*listings)[0].data_id == entry_of(*e0, "a").data_id);
  BOOST_TEST((*listings)[1].data_id == entry_of(*e2, "b").data_id);
  BOOST_TEST((*listings)[2].data_id == 0u);
  BOOST_TEST(names_of((*listings)[0])
               == names_of(listing_of(db_name(0, "trainer_0", dir), 0)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_sealed_database_is_listed_as_it_will_be_published) {
  auto dir = (*this)("src");
  auto e0 = write_db(db_name(0, "trainer_0", dir), 0, blobs(0));
  BOOST_REQUIRE(e0);
  auto db = db_name(2, "trainer_0", dir);
  auto writer = checkpoint_writer::create(db, "trainer_0", 2, small_options());
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE(!(*writer)->reuse(entry_of(*e0, "a")));
  BOOST_REQUIRE(!(*writer)->put("b", floats(3000, 9)));
  BOOST_REQUIRE((*writer)->seal());
  auto sealed = list_for_copy(db, 2, (*writer)->partial_path());
  BOOST_REQUIRE_MESSAGE(sealed, describe(sealed));
  BOOST_REQUIRE((*writer)->finish());
  auto published = list_for_copy(db, 2);
  BOOST_REQUIRE_MESSAGE(published, describe(published));
  BOOST_TEST(epochs_of(*sealed) == (std::vector<int64_t>{0, 2}),
             boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(sealed->size(), published->size());
  for (size_t i = 0; i < sealed->size(); ++i) {
    auto& x = (*sealed)[i];
    auto& y = (*published)[i];
    BOOST_TEST(x.data_id == y.data_id);
    BOOST_TEST(x.manifest_digest == y.manifest_digest);
    BOOST_TEST(names_of(x) == names_of(y), boost::test_tools::per_element());
    for (size_t f = 0; f < x.files.size() && f < y.files.size(); ++f)
      BOOST_TEST(x.files[f].bytes == y.files[f].bytes, x.files[f].name);
  }
  BOOST_TEST(sealed->back().manifest_digest != 0u);
}

BOOST_AUTO_TEST_CASE(a_listing_whose_earlier_database_is_gone_is_corrupt) {
  auto dir = (*this)("src");
  auto e0 = write_db(db_name(0, "trainer_0", dir), 0, blobs());
  BOOST_REQUIRE(e0);
  BOOST_REQUIRE(
    write_db(db_name(2, "trainer_0", dir), 2, {}, {entry_of(*e0, "a")}));
  fs::remove_all(db_name(0, "trainer_0", dir));
  auto listings = list_for_copy(db_name(2, "trainer_0", dir), 2);
  BOOST_TEST(has_code(listings, persistence_errc::corrupt), describe(listings));
}

BOOST_AUTO_TEST_CASE(
  a_listing_whose_earlier_database_was_rewritten_is_corrupt) {
  auto dir = (*this)("src");
  auto e0 = write_db(db_name(0, "trainer_0", dir), 0, blobs());
  BOOST_REQUIRE(e0);
  BOOST_REQUIRE(
    write_db(db_name(2, "trainer_0", dir), 2, {}, {entry_of(*e0, "a")}));
  BOOST_REQUIRE(write_db(db_name(0, "trainer_0", dir), 0, blobs()));
  auto listings = list_for_copy(db_name(2, "trainer_0", dir), 2);
  BOOST_TEST(has_code(listings, persistence_errc::corrupt), describe(listings));
}

BOOST_AUTO_TEST_CASE(listing_a_missing_database_is_not_found) {
  auto listings = list_for_copy((*this)("trainer_0.1"), 1);
  BOOST_TEST(has_code(listings, persistence_errc::not_found),
             describe(listings));
}

BOOST_AUTO_TEST_CASE(listing_a_database_as_another_epoch_is_corrupt) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, blobs()));
  BOOST_TEST(has_code(list_for_copy(db, 2), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(a_file_reader_gives_the_file_in_pieces_with_its_digest) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, blobs()));
  auto whole = read_file(db + "/blobs.data");
  auto reader = database_file_reader::open(db, "blobs.data");
  BOOST_REQUIRE_MESSAGE(reader, describe(reader));
  std::string back;
  std::vector<char> piece;
  size_t pieces = 0;
  for (;;) {
    BOOST_REQUIRE(!reader->read(3000, piece));
    if (piece.empty())
      break;
    BOOST_TEST(piece.size() <= 3000u);
    back.append(piece.data(), piece.size());
    ++pieces;
  }
  BOOST_TEST(pieces == (whole.size() + 2999) / 3000);
  BOOST_TEST(back == whole);
  BOOST_TEST(reader->bytes_read() == whole.size());
  BOOST_TEST(reader->digest() == digest_bytes(whole.data(), whole.size()));
}

BOOST_AUTO_TEST_CASE(a_file_reader_refuses_names_outside_the_database) {
  auto db = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(db, 1, blobs()));
  std::ofstream{(*this)("secret")} << "x";
  for (auto& name : std::vector<std::string>{
         "../secret", "/etc/passwd", "sub/file", ".", "..", "", "a\0b"s})
    BOOST_TEST(has_code(database_file_reader::open(db, name),
                        persistence_errc::invalid_name),
               name);
  BOOST_TEST(has_code(database_file_reader::open(db, "nothing"),
                      persistence_errc::not_found));
}

// -- the receiving end --------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_copy_of_a_full_database_loads_with_the_same_blobs) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  auto err = send(from, listing, to);
  BOOST_REQUIRE_MESSAGE(!err, describe(err));
  fs::remove_all((*this)("src")); // the copy stands alone
  BOOST_TEST(loads(to, blobs()));
  auto again = listing_of(to, 1);
  BOOST_TEST(names_of(again) == names_of(listing),
             boost::test_tools::per_element());
  BOOST_TEST(again.data_id == listing.data_id);
  BOOST_TEST(!fs::exists(to + ".copying"));
}

BOOST_AUTO_TEST_CASE(a_copy_sent_in_large_pieces_is_the_same) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto err = send(from, listing_of(from, 1), to, size_t{4} << 20);
  BOOST_REQUIRE_MESSAGE(!err, describe(err));
  BOOST_TEST(loads(to, blobs()));
}

BOOST_AUTO_TEST_CASE(copying_the_listed_databases_yields_loadable_checkpoints) {
  auto src = (*this)("src");
  auto dst = (*this)("dst");
  auto e0 = write_db(db_name(0, "trainer_0", src), 0, blobs());
  BOOST_REQUIRE(e0);
  blob_list e2_blobs{{"b", floats(3000, 9)}, {"small", floats(10, 2)}};
  BOOST_REQUIRE(
    write_db(db_name(2, "trainer_0", src), 2, e2_blobs, {entry_of(*e0, "a")}));
  auto listings = list_for_copy(db_name(2, "trainer_0", src), 2);
  BOOST_REQUIRE(listings);
  BOOST_REQUIRE(epochs_of(*listings) == (std::vector<int64_t>{0, 2}));
  auto err = send_all(*listings, src, dst);
  BOOST_REQUIRE_MESSAGE(!err, describe(err));
  fs::remove_all(src);
  e2_blobs.emplace_back("a", blobs()[0].second);
  BOOST_TEST(loads(db_name(2, "trainer_0", dst), e2_blobs));
  BOOST_TEST(loads(db_name(0, "trainer_0", dst), blobs()));
}

BOOST_AUTO_TEST_CASE(a_byte_flipped_in_transit_fails_finish_leaving_path) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs(0)));
  BOOST_REQUIRE(write_db(to, 1, blobs(100))); // what the receiver had
  auto err = send(
    from, listing_of(from, 1), to, 4096, {},
    [](const std::string& file, uint64_t offset, std::vector<char>& piece) {
      if (file == "blobs.data" && offset == 8192)
        piece[17] ^= 0x04;
    });
  BOOST_TEST(has_code(err, persistence_errc::corrupt), describe(err));
  BOOST_TEST(contains(describe(err), "blobs.data"), describe(err));
  BOOST_TEST(loads(to, blobs(100)));
  BOOST_TEST(!fs::exists(to + ".copying"));
}

BOOST_AUTO_TEST_CASE(a_copy_short_of_bytes_fails_finish) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  auto copy = database_copy::create(to, listing);
  BOOST_REQUIRE(copy);
  std::vector<uint64_t> digests;
  for (auto& file : listing.files) {
    auto bytes = read_file(from + "/" + file.name);
    digests.push_back(digest_bytes(bytes.data(), bytes.size()));
    if (file.name != "blobs.data") // sent all but this one
      BOOST_REQUIRE(!(*copy)->append(file.name, bytes.data(), bytes.size()));
  }
  auto err = (*copy)->finish(digests);
  BOOST_TEST(has_code(err, persistence_errc::corrupt), describe(err));
  BOOST_TEST(contains(describe(err), "blobs.data"), describe(err));
  BOOST_TEST(contains(describe(err), "has 0 bytes"), describe(err));
  BOOST_TEST(!fs::exists(to));
}

BOOST_AUTO_TEST_CASE(a_copy_destroyed_unfinished_leaves_nothing) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  {
    auto copy = database_copy::create(to, listing);
    BOOST_REQUIRE(copy);
    auto bytes = read_file(from + "/blobs.data");
    BOOST_REQUIRE(!(*copy)->append("blobs.data", bytes.data(), 100));
    BOOST_TEST(fs::exists(to + ".copying"));
  }
  BOOST_TEST(!fs::exists(to + ".copying"));
  BOOST_TEST(!fs::exists(to));
}

BOOST_AUTO_TEST_CASE(a_stale_copying_directory_is_replaced) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  fs::create_directories(to + ".copying/junk");
  std::ofstream{to + ".copying/blobs.data"} << "stale";
  auto err = send(from, listing_of(from, 1), to);
  BOOST_REQUIRE_MESSAGE(!err, describe(err));
  BOOST_TEST(loads(to, blobs()));
  BOOST_TEST(!fs::exists(to + "/junk"));
  BOOST_TEST(!fs::exists(to + ".copying"));
}

BOOST_AUTO_TEST_CASE(a_replaced_older_database_at_path_is_gone_after_finish) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs(0)));
  BOOST_REQUIRE(write_db(to, 1, {{"only_in_the_old", floats(2000, 5)}}));
  auto err = send(from, listing_of(from, 1), to);
  BOOST_REQUIRE_MESSAGE(!err, describe(err));
  BOOST_TEST(loads(to, blobs(0)));
  auto reader = checkpoint_reader::open(to);
  BOOST_REQUIRE(reader);
  BOOST_TEST(
    has_code((*reader)->read("only_in_the_old"), persistence_errc::not_found));
  for (auto& entry : fs::directory_iterator{(*this)("dst")})
    BOOST_TEST(entry.path().filename() == "trainer_0.1"); // no leftovers
}

BOOST_AUTO_TEST_CASE(a_copy_refuses_listed_names_outside_the_database) {
  database_listing listing;
  listing.epoch = 1;
  listing.files = {{"CURRENT", 16}, {"../evil", 4}};
  auto copy = database_copy::create((*this)("trainer_0.1"), listing);
  BOOST_TEST(has_code(copy, persistence_errc::invalid_name));
  BOOST_TEST(!fs::exists((*this)("evil")));
  listing.files = {{"CURRENT", 16}, {"CURRENT", 16}};
  BOOST_TEST(has_code(database_copy::create((*this)("trainer_0.1"), listing),
                      persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(an_append_to_an_unlisted_file_fails_the_copy) {
  database_listing listing;
  listing.files = {{"CURRENT", 4}};
  auto copy = database_copy::create((*this)("trainer_0.1"), listing);
  BOOST_REQUIRE(copy);
  BOOST_TEST(has_code((*copy)->append("MANIFEST-000001", "abcd", 4),
                      persistence_errc::invalid_argument));
  BOOST_TEST(has_code((*copy)->append("CURRENT", "abcd", 4),
                      persistence_errc::invalid_argument)); // failed
}

BOOST_AUTO_TEST_CASE(an_append_beyond_the_listed_size_fails_the_copy) {
  database_listing listing;
  listing.files = {{"CURRENT", 4}};
  auto copy = database_copy::create((*this)("trainer_0.1"), listing);
  BOOST_REQUIRE(copy);
  BOOST_REQUIRE(!(*copy)->append("CURRENT", "abc", 3));
  BOOST_TEST(has_code((*copy)->append("CURRENT", "de", 2),
                      persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(a_finished_copy_takes_no_more) {
  database_listing listing;
  listing.files = {{"CURRENT", 4}};
  auto path = (*this)("trainer_0.1");
  auto copy = database_copy::create(path, listing);
  BOOST_REQUIRE(copy);
  BOOST_REQUIRE(!(*copy)->append("CURRENT", "abcd", 4));
  BOOST_REQUIRE(!(*copy)->finish({digest_bytes("abcd", 4)}));
  BOOST_TEST(read_file(path + "/CURRENT") == "abcd");
  BOOST_TEST(has_code((*copy)->append("CURRENT", "", 0),
                      persistence_errc::invalid_argument));
  BOOST_TEST(has_code((*copy)->finish({digest_bytes("abcd", 4)}),
                      persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(finish_wants_one_digest_per_listed_file) {
  database_listing listing;
  listing.files = {{"CURRENT", 0}, {"MANIFEST-000001", 0}};
  auto copy = database_copy::create((*this)("trainer_0.1"), listing);
  BOOST_REQUIRE(copy);
  BOOST_TEST(has_code((*copy)->finish({digest_bytes("", 0)}),
                      persistence_errc::invalid_argument));
  BOOST_TEST(!fs::exists((*this)("trainer_0.1")));
}

// -- holds_database -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(an_identical_database_is_held) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  BOOST_TEST(!holds_database(to, listing));
  BOOST_REQUIRE(!send(from, listing, to));
  BOOST_TEST(holds_database(to, listing));
  BOOST_TEST(holds_database(from, listing));
}

BOOST_AUTO_TEST_CASE(a_database_written_again_is_not_held) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  BOOST_REQUIRE(!send(from, listing_of(from, 1), to));
  // The same blobs again: the same files and sizes, another data id.
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto rewritten = listing_of(from, 1);
  BOOST_TEST(!holds_database(to, rewritten));
}

BOOST_AUTO_TEST_CASE(a_database_missing_a_file_is_not_held) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  BOOST_REQUIRE(!send(from, listing, to));
  fs::remove(to + "/blobs.data");
  BOOST_TEST(!holds_database(to, listing));
}

BOOST_AUTO_TEST_CASE(a_database_with_a_file_of_another_size_is_not_held) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  BOOST_REQUIRE(!send(from, listing, to));
  std::ofstream{to + "/blobs.data", std::ios::app} << "x";
  BOOST_TEST(!holds_database(to, listing));
}

// -- fault points -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_copy_passes_copy_write_per_append_then_the_renames) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto listing = listing_of(from, 1);
  size_t appends = 0;
  for (auto& file : listing.files)
    appends += (file.bytes + 4095) / 4096;
  auto faults = std::make_shared<fault_injector>(fault_plan{});
  auto trace = (*this)("trace");
  BOOST_REQUIRE(!faults->trace_to(trace));
  BOOST_REQUIRE(!send(from, listing, to, 4096, with_faults(faults)));
  std::vector<std::string> points;
  std::ifstream in{trace};
  for (std::string line; std::getline(in, line);) {
    points.push_back(line.substr(0, line.find('\t')));
    BOOST_TEST(line.find("\ttrainer_0\t1\t") != std::string::npos, line);
  }
  std::vector<std::string> expected(appends, "copy.write");
  expected.push_back("copy.rename.before");
  expected.push_back("copy.rename.after");
  BOOST_TEST(points == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_io_error_at_copy_write_fails_the_append) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto faults = plan(fault_point::copy_write, fault_kind::io_error);
  auto err = send(from, listing_of(from, 1), to, 4096, with_faults(faults));
  BOOST_TEST(injected(err), describe(err));
  BOOST_TEST(!fs::exists(to));
  BOOST_TEST(!fs::exists(to + ".copying"));
}

BOOST_AUTO_TEST_CASE(a_corrupt_write_at_copy_write_is_caught_by_finish) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto faults = plan(fault_point::copy_write, fault_kind::corrupt_write);
  auto err = send(from, listing_of(from, 1), to, 4096, with_faults(faults));
  BOOST_TEST(has_code(err, persistence_errc::corrupt), describe(err));
  BOOST_TEST(faults->strikes().size() == 1u);
  BOOST_TEST(!fs::exists(to));
}

BOOST_AUTO_TEST_CASE(a_short_write_at_copy_write_is_caught_by_finish) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs()));
  auto faults = plan(fault_point::copy_write, fault_kind::short_write);
  // One piece per file: the cut shortens the file.
  auto err
    = send(from, listing_of(from, 1), to, size_t{4} << 20, with_faults(faults));
  BOOST_TEST(has_code(err, persistence_errc::corrupt), describe(err));
  BOOST_TEST(faults->strikes().size() == 1u);
  BOOST_TEST(!fs::exists(to));
}

BOOST_AUTO_TEST_CASE(an_io_error_before_the_rename_leaves_the_old_database) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs(0)));
  BOOST_REQUIRE(write_db(to, 1, blobs(100)));
  auto faults = plan(fault_point::copy_rename_before, fault_kind::io_error);
  auto err = send(from, listing_of(from, 1), to, 4096, with_faults(faults));
  BOOST_TEST(injected(err), describe(err));
  BOOST_TEST(loads(to, blobs(100)));
  BOOST_TEST(!fs::exists(to + ".copying"));
}

BOOST_AUTO_TEST_CASE(an_io_error_after_the_rename_leaves_the_copy_in_place) {
  auto from = (*this)("src/trainer_0.1");
  auto to = (*this)("dst/trainer_0.1");
  BOOST_REQUIRE(write_db(from, 1, blobs(0)));
  BOOST_REQUIRE(write_db(to, 1, blobs(100)));
  auto faults = plan(fault_point::copy_rename_after, fault_kind::io_error);
  auto err = send(from, listing_of(from, 1), to, 4096, with_faults(faults));
  BOOST_TEST(injected(err), describe(err));
  BOOST_TEST(loads(to, blobs(0)));
  BOOST_TEST(!fs::exists(to + ".copying"));
}

BOOST_AUTO_TEST_SUITE_END()
