#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include <leveldb/db.h>

#include "test/persistence/test_util.hpp"
#include <epochrt/messages/codec.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/digest.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

tensor big_floats(size_t n, float base = 0) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), base);
  return make_tensor<float>({static_cast<int64_t>(n / 4), 4}, values);
}

std::vector<std::pair<std::string, tensor>> mixed_blobs() {
  return {
    {"w", big_floats(10000)}, // 40000 bytes: many chunks of 4096
    {"iter", make_scalar<int64_t>(42)},
    {"names", make_string_tensor({2, 2}, {"a", "", "long string", "z"})},
    {"mask", make_tensor<bool>({3}, {true, false, true})},
    {"empty", make_tensor<double>({0}, {})},
    {"bytes", make_tensor<uint8_t>({4}, {0, 1, 254, 255})},
  };
}

writer_options small_chunks() {
  writer_options opts;
  opts.chunk_bytes = 4096;
  opts.batch_bytes = 10000;
  return opts;
}

caf::expected<manifest>
write_db(const std::string& path, int64_t epoch,
         const std::vector<std::pair<std::string, tensor>>& blobs,
         writer_options opts = small_chunks()) {
  auto writer = checkpoint_writer::create(path, "trainer_0", epoch, opts);
  if (!writer)
    return std::move(writer.error());
  for (auto& [name, value] : blobs)
    if (auto err = (*writer)->put(name, value))
      return err;
  return (*writer)->finish();
}

std::string chunk_key(const std::string& name, uint32_t index) {
  std::string key = "c/" + name;
  key += '\0';
  for (int shift = 24; shift >= 0; shift -= 8)
    key += static_cast<char>((index >> shift) & 0xff);
  return key;
}

// Rewrites one record of a closed database behind the reader's back, with
// valid LevelDB checksums, so that only our digests can notice.
void rewrite_record(const std::string& path, const std::string& key,
                    const std::function<void(std::string&)>& change) {
  leveldb::DB* raw = nullptr;
  leveldb::Options options;
  BOOST_REQUIRE(leveldb::DB::Open(options, path, &raw).ok());
  std::unique_ptr<leveldb::DB> db{raw};
  std::string value;
  BOOST_REQUIRE(db->Get({}, key, &value).ok());
  change(value);
  if (value.empty())
    BOOST_REQUIRE(db->Delete({}, key).ok());
  else
    BOOST_REQUIRE(db->Put({}, key, value).ok());
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(checkpoints, persistence_fixture)

BOOST_AUTO_TEST_CASE(mixed_tensors_round_trip) {
  auto path = (*this)("trainer_0.3");
  auto blobs = mixed_blobs();
  auto written = write_db(path, 3, blobs);
  BOOST_REQUIRE_MESSAGE(written, describe(written));
  BOOST_TEST(written->node == "trainer_0");
  BOOST_TEST(written->epoch == 3);
  BOOST_TEST(written->blobs.size() == blobs.size());
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE_MESSAGE(reader, describe(reader));
  BOOST_TEST(((*reader)->get_manifest() == *written));
  for (auto& [name, value] : blobs) {
    auto back = (*reader)->read(name);
    BOOST_REQUIRE_MESSAGE(back, name << ": " << describe(back));
    BOOST_TEST((*back == value), name);
  }
  BOOST_TEST(!(*reader)->verify());
}

BOOST_AUTO_TEST_CASE(manifest_describes_every_blob) {
  auto path = (*this)("trainer_0.1");
  auto blobs = mixed_blobs();
  auto written = write_db(path, 1, blobs);
  BOOST_REQUIRE(written);
  uint64_t total = 0;
  for (size_t i = 0; i < blobs.size(); ++i) {
    auto& entry = written->blobs[i];
    auto& value = blobs[i].second;
    BOOST_TEST(entry.name == blobs[i].first);
    BOOST_TEST((entry.type == value.type));
    BOOST_TEST(entry.shape == value.shape);
    BOOST_TEST(entry.bytes == value.byte_size());
    BOOST_TEST(entry.digest == payload_digest(value));
    total += entry.bytes;
  }
  BOOST_TEST(written->blobs[0].chunks == 10u); // 40000 bytes / 4096
  BOOST_TEST(written->blobs[4].chunks == 1u);  // empty: one empty chunk
  BOOST_TEST(written->total_bytes == total);
  BOOST_TEST(written->created_unix_ms > 0);
}

BOOST_AUTO_TEST_CASE(large_string_tensor_is_split_into_chunks) {
  std::vector<std::string> strings;
  for (int i = 0; i < 100; ++i)
    strings.push_back(std::string(100 + i, static_cast<char>('a' + i % 26)));
  auto value = make_string_tensor({100}, strings);
  auto path = (*this)("trainer_0.0");
  auto written = write_db(path, 0, {{"s", value}});
  BOOST_REQUIRE(written);
  BOOST_TEST(written->blobs[0].chunks > 1u);
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  auto back = (*reader)->read("s");
  BOOST_REQUIRE_MESSAGE(back, describe(back));
  BOOST_TEST((*back == value));
}

BOOST_AUTO_TEST_CASE(default_options_round_trip_a_multi_mib_tensor) {
  auto path = (*this)("trainer_0.0");
  auto value = big_floats(3 << 20, 7); // 12 MiB
  auto written = write_db(path, 0, {{"w", value}}, writer_options{});
  BOOST_REQUIRE(written);
  // Beside the database, in its data file, by default.
  BOOST_TEST(written->blobs[0].chunks == 0u);
  BOOST_TEST(written->blobs[0].data_epoch == 0);
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  auto back = (*reader)->read("w");
  BOOST_REQUIRE_MESSAGE(back, describe(back));
  BOOST_TEST((*back == value));
}

BOOST_AUTO_TEST_CASE(reading_twice_does_not_change_the_database) {
  auto path = (*this)("trainer_0.0");
  BOOST_REQUIRE(write_db(path, 0, mixed_blobs()));
  std::vector<std::string> before;
  for (auto& entry : fs::directory_iterator{path})
    before.push_back(entry.path().filename().string());
  for (int i = 0; i < 2; ++i) {
    auto reader = checkpoint_reader::open(path);
    BOOST_REQUIRE_MESSAGE(reader, describe(reader));
    BOOST_TEST(!(*reader)->verify());
  }
  std::vector<std::string> after;
  for (auto& entry : fs::directory_iterator{path})
    after.push_back(entry.path().filename().string());
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  // No log was turned into a table file: the same files (LOG may rotate).
  auto tables = [](const std::vector<std::string>& xs) {
    return std::count_if(xs.begin(), xs.end(), [](auto& x) {
      return x.size() > 4 && x.substr(x.size() - 4) == ".ldb";
    });
  };
  BOOST_TEST(tables(before) == tables(after));
}

BOOST_AUTO_TEST_CASE(missing_database_is_not_found) {
  auto reader = checkpoint_reader::open((*this)("nothing.1"));
  BOOST_TEST(has_code(reader, persistence_errc::not_found), describe(reader));
}

BOOST_AUTO_TEST_CASE(directory_that_is_no_database_is_not_found) {
  fs::create_directories(root / "plain.1");
  auto reader = checkpoint_reader::open((*this)("plain.1"));
  BOOST_TEST(has_code(reader, persistence_errc::not_found), describe(reader));
}

BOOST_AUTO_TEST_CASE(database_without_manifest_is_incomplete) {
  auto path = (*this)("trainer_0.2");
  BOOST_REQUIRE(write_db(path, 2, mixed_blobs()));
  rewrite_record(path, "manifest", [](std::string& x) {
    x.clear();
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_TEST(has_code(reader, persistence_errc::incomplete), describe(reader));
}

BOOST_AUTO_TEST_CASE(undecodable_manifest_is_corrupt) {
  auto path = (*this)("trainer_0.2");
  BOOST_REQUIRE(write_db(path, 2, mixed_blobs()));
  rewrite_record(path, "manifest", [](std::string& x) {
    x = "garbage!";
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_TEST(has_code(reader, persistence_errc::corrupt), describe(reader));
}

BOOST_AUTO_TEST_CASE(manifest_with_one_bit_flipped_in_a_blob_type_is_corrupt) {
  // f32 and i32 differ in one bit and have the same element size, so the
  // chunks and their digests fit either: only the manifest's own digest can
  // tell that the blob was not saved as i32. (Found by a corrupt_write at
  // save.manifest.before; before the manifest carried a digest, "w" came
  // back as an i32 tensor.)
  auto path = (*this)("trainer_0.2");
  auto written = write_db(path, 2, {{"w", big_floats(1000)}});
  BOOST_REQUIRE(written);
  auto retyped = *written;
  retyped.blobs[0].type = dtype::i32;
  auto before = encode(*written);
  auto after = encode(retyped);
  BOOST_REQUIRE_EQUAL(before.size(), after.size());
  size_t differing_bits = 0;
  for (size_t i = 0; i < before.size(); ++i)
    differing_bits += static_cast<size_t>(
      __builtin_popcount(static_cast<unsigned char>(before[i] ^ after[i])));
  BOOST_REQUIRE_EQUAL(differing_bits, 1u);
  rewrite_record(path, "manifest", [&](std::string& x) {
    auto pos = x.find(before);
    BOOST_REQUIRE(pos != std::string::npos);
    x.replace(pos, after.size(), after);
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_TEST(has_code(reader, persistence_errc::corrupt), describe(reader));
}

BOOST_AUTO_TEST_CASE(flipped_byte_in_a_chunk_is_corrupt) {
  auto path = (*this)("trainer_0.4");
  BOOST_REQUIRE(write_db(path, 4, mixed_blobs()));
  rewrite_record(path, chunk_key("w", 3), [](std::string& x) {
    x[x.size() - 16] ^= 0x01; // inside the payload
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  auto w = (*reader)->read("w");
  BOOST_TEST(has_code(w, persistence_errc::corrupt), describe(w));
  BOOST_TEST(has_code((*reader)->verify(), persistence_errc::corrupt));
  // The other blobs are still readable.
  BOOST_TEST(static_cast<bool>((*reader)->read("iter")));
}

BOOST_AUTO_TEST_CASE(flipped_byte_in_a_string_chunk_is_corrupt) {
  auto path = (*this)("trainer_0.4");
  BOOST_REQUIRE(write_db(path, 4, mixed_blobs()));
  rewrite_record(path, chunk_key("names", 0), [](std::string& x) {
    auto pos = x.find("long string");
    BOOST_REQUIRE(pos != std::string::npos);
    x[pos] = 'L';
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("names"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(missing_chunk_is_corrupt) {
  auto path = (*this)("trainer_0.4");
  BOOST_REQUIRE(write_db(path, 4, mixed_blobs()));
  rewrite_record(path, chunk_key("w", 9), [](std::string& x) {
    x.clear();
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("w"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(swapped_chunks_are_corrupt) {
  auto path = (*this)("trainer_0.4");
  BOOST_REQUIRE(write_db(path, 4, mixed_blobs()));
  std::string first;
  rewrite_record(path, chunk_key("w", 0), [&](std::string& x) {
    first = x;
  });
  rewrite_record(path, chunk_key("w", 1), [&](std::string& x) {
    x = first;
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("w"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(garbage_chunk_is_corrupt) {
  auto path = (*this)("trainer_0.4");
  BOOST_REQUIRE(write_db(path, 4, mixed_blobs()));
  rewrite_record(path, chunk_key("iter", 0), [](std::string& x) {
    x = std::string(x.size(), '\x7f');
  });
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("iter"), persistence_errc::corrupt));
}

BOOST_AUTO_TEST_CASE(flipped_byte_in_the_files_is_detected) {
  // Below our records: LevelDB's own checksums of its log and tables.
  auto path = (*this)("trainer_0.5");
  BOOST_REQUIRE(write_db(path, 5, {{"w", big_floats(4000)}}));
  for (auto& entry : fs::directory_iterator{path}) {
    auto ext = entry.path().extension();
    if (ext != ".log" && ext != ".ldb")
      continue;
    std::fstream file{entry.path(),
                      std::ios::in | std::ios::out | std::ios::binary};
    auto size = fs::file_size(entry.path());
    if (size < 1000)
      continue;
    file.seekg(static_cast<std::streamoff>(size / 2));
    char c = 0;
    file.read(&c, 1);
    c ^= 0x20;
    file.seekp(static_cast<std::streamoff>(size / 2));
    file.write(&c, 1);
  }
  auto reader = checkpoint_reader::open(path);
  if (!reader) {
    BOOST_TEST((has_code(reader, persistence_errc::corrupt)
                || has_code(reader, persistence_errc::incomplete)),
               describe(reader));
    return;
  }
  auto err = (*reader)->verify();
  BOOST_TEST(has_code(err, persistence_errc::corrupt), describe(err));
}

BOOST_AUTO_TEST_CASE(unknown_blob_is_not_found) {
  auto path = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(path, 1, mixed_blobs()));
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST(has_code((*reader)->read("nope"), persistence_errc::not_found));
}

BOOST_AUTO_TEST_CASE(rewriting_a_checkpoint_replaces_it) {
  auto path = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(path, 1, {{"a", make_scalar<int32_t>(1)}}));
  BOOST_REQUIRE(write_db(path, 1, {{"b", make_scalar<int32_t>(2)}}));
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST((*reader)->get_manifest().blobs.size() == 1u);
  BOOST_TEST(has_code((*reader)->read("a"), persistence_errc::not_found));
  auto b = (*reader)->read("b");
  BOOST_REQUIRE(b);
  BOOST_TEST((*b == make_scalar<int32_t>(2)));
  // Nothing left beside it.
  std::vector<std::string> names;
  for (auto& entry : fs::directory_iterator{root})
    names.push_back(entry.path().filename().string());
  BOOST_TEST(names == std::vector<std::string>{"trainer_0.1"});
}

BOOST_AUTO_TEST_CASE(abandoned_writer_leaves_the_old_checkpoint_intact) {
  auto path = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(path, 1, {{"a", make_scalar<int32_t>(1)}}));
  // Abandoned while writing, once sealed, once synced.
  for (int steps = 0; steps < 3; ++steps) {
    {
      auto writer = checkpoint_writer::create(path, "trainer_0", 1);
      BOOST_REQUIRE(writer);
      BOOST_REQUIRE(!(*writer)->put("a", make_scalar<int32_t>(2)));
      if (steps >= 1)
        BOOST_REQUIRE((*writer)->seal());
      if (steps >= 2)
        BOOST_REQUIRE(!(*writer)->sync());
      BOOST_TEST(fs::exists(path + ".partial"));
      // Destroyed without finish().
    }
    BOOST_TEST(!fs::exists(path + ".partial"), steps);
    auto reader = checkpoint_reader::open(path);
    BOOST_REQUIRE(reader);
    auto a = (*reader)->read("a");
    BOOST_REQUIRE(a);
    BOOST_TEST((*a == make_scalar<int32_t>(1)), steps);
  }
}

BOOST_AUTO_TEST_CASE(abandoned_first_writer_leaves_nothing) {
  auto path = (*this)("trainer_0.1");
  {
    auto writer = checkpoint_writer::create(path, "trainer_0", 1);
    BOOST_REQUIRE(writer);
  }
  BOOST_TEST(fs::is_empty(root));
}

BOOST_AUTO_TEST_CASE(stale_partial_directory_is_replaced) {
  auto path = (*this)("trainer_0.1");
  fs::create_directories(path + ".partial/junk");
  BOOST_REQUIRE(write_db(path, 1, mixed_blobs()));
  BOOST_TEST(!fs::exists(path + ".partial"));
  BOOST_TEST(static_cast<bool>(checkpoint_reader::open(path)));
}

BOOST_AUTO_TEST_CASE(missing_parent_directories_are_created) {
  auto path = (*this)("a/b/trainer_0.1");
  BOOST_TEST(static_cast<bool>(write_db(path, 1, mixed_blobs())));
  BOOST_TEST(static_cast<bool>(checkpoint_reader::open(path)));
}

BOOST_AUTO_TEST_CASE(invalid_node_name_is_rejected) {
  auto writer = checkpoint_writer::create((*this)("x.1"), "../x", 1);
  BOOST_TEST(has_code(writer, persistence_errc::invalid_name));
}

BOOST_AUTO_TEST_CASE(blob_put_twice_is_rejected) {
  auto writer = checkpoint_writer::create((*this)("n.1"), "n", 1);
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE(!(*writer)->put("a", make_scalar<int32_t>(1)));
  BOOST_TEST(has_code((*writer)->put("a", make_scalar<int32_t>(1)),
                      persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(inconsistent_tensor_is_rejected) {
  auto writer = checkpoint_writer::create((*this)("n.1"), "n", 1);
  BOOST_REQUIRE(writer);
  auto bad = make_tensor<float>({2}, {1, 2});
  bad.data.pop_back();
  BOOST_TEST(
    has_code((*writer)->put("a", bad), persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(invalid_blob_name_is_rejected) {
  auto writer = checkpoint_writer::create((*this)("n.1"), "n", 1);
  BOOST_REQUIRE(writer);
  BOOST_TEST(has_code((*writer)->put("a b", make_scalar<int32_t>(1)),
                      persistence_errc::invalid_name));
}

BOOST_AUTO_TEST_CASE(writer_is_used_up_by_finish) {
  auto writer = checkpoint_writer::create((*this)("n.1"), "n", 1);
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE((*writer)->finish());
  BOOST_TEST(has_code((*writer)->put("a", make_scalar<int32_t>(1)),
                      persistence_errc::invalid_argument));
  BOOST_TEST(has_code((*writer)->finish(), persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(a_sealed_database_is_complete_but_not_yet_published) {
  auto path = (*this)("trainer_0.1");
  auto writer = checkpoint_writer::create(path, "trainer_0", 1);
  BOOST_REQUIRE(writer);
  for (auto& [name, value] : mixed_blobs())
    BOOST_REQUIRE(!(*writer)->put(name, value));
  BOOST_REQUIRE(!(*writer)->put("big", big_floats(100000))); // a data file
  auto sealed = (*writer)->seal();
  BOOST_REQUIRE_MESSAGE(sealed, describe(sealed));
  BOOST_TEST(sealed->blobs.size() == 7u);
  BOOST_TEST(!fs::exists(path));
  BOOST_TEST((*writer)->partial_path() == path + ".partial");
  {
    auto reader = checkpoint_reader::open((*writer)->partial_path());
    BOOST_REQUIRE_MESSAGE(reader, describe(reader));
    BOOST_TEST(!(*reader)->verify());
    auto big = (*reader)->read("big");
    BOOST_REQUIRE(big);
    BOOST_TEST((*big == big_floats(100000)));
  }
  BOOST_REQUIRE(!(*writer)->sync());
  BOOST_TEST(!fs::exists(path));
  auto written = (*writer)->finish();
  BOOST_REQUIRE_MESSAGE(written, describe(written));
  BOOST_TEST(written->created_unix_ms == sealed->created_unix_ms);
  BOOST_TEST(!fs::exists(path + ".partial"));
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST(!(*reader)->verify());
}

BOOST_AUTO_TEST_CASE(a_sealed_writer_takes_no_more_blobs_and_seals_once) {
  auto path = (*this)("trainer_0.1");
  auto writer = checkpoint_writer::create(path, "trainer_0", 1);
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE(!(*writer)->put("a", make_scalar<int32_t>(1)));
  BOOST_REQUIRE((*writer)->seal());
  BOOST_TEST(has_code((*writer)->put("b", make_scalar<int32_t>(2)),
                      persistence_errc::invalid_argument));
  BOOST_TEST(has_code((*writer)->seal(), persistence_errc::invalid_argument));
  // Refusing them did not fail the writer.
  BOOST_REQUIRE((*writer)->finish());
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST((*reader)->get_manifest().blobs.size() == 1u);
}

BOOST_AUTO_TEST_CASE(empty_checkpoint_is_complete) {
  auto path = (*this)("n.1");
  auto writer = checkpoint_writer::create(path, "n", 1);
  BOOST_REQUIRE(writer);
  BOOST_REQUIRE((*writer)->finish());
  auto reader = checkpoint_reader::open(path);
  BOOST_REQUIRE(reader);
  BOOST_TEST((*reader)->get_manifest().blobs.empty());
  BOOST_TEST(!(*reader)->verify());
}

BOOST_AUTO_TEST_CASE(writer_fails_under_a_regular_file) {
  std::ofstream{root / "file"} << "x";
  auto writer = checkpoint_writer::create((*this)("file/n.1"), "n", 1);
  BOOST_TEST(has_code(writer, persistence_errc::io_error), describe(writer));
}

BOOST_AUTO_TEST_SUITE_END()
