#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <string>
#include <typeinfo>

#include "test/messages/disk_record_samples.hpp"
#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/chunk_codec.hpp>
#include <epochrt/messages/codec.hpp>
#include <epochrt/messages/codec_errc.hpp>
#include <epochrt/messages/error_text.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

bool has_code(const caf::error& err, codec_errc code) {
  return is_error(err, code);
}

// Feeds `bytes` to the decoder of every record: nothing may throw or crash.
void decode_as_every_record(const std::string& bytes) {
  for_each_disk_record([&](const auto& sample) {
    using type = std::decay_t<decltype(sample)>;
    auto result = decode<type>(bytes);
    if (result)
      BOOST_CHECK(true);
    else
      BOOST_CHECK(in_category(result.error(), codec_category));
  });
}

} // namespace

BOOST_AUTO_TEST_SUITE(codec)

BOOST_AUTO_TEST_CASE(every_record_round_trips) {
  for_each_disk_record([](const auto& sample) {
    using type = std::decay_t<decltype(sample)>;
    auto bytes = encode(sample);
    BOOST_TEST_CONTEXT(typeid(type).name()) {
      BOOST_TEST(bytes.size() % 8 == 0);
      auto back = decode<type>(bytes);
      BOOST_REQUIRE_MESSAGE(back, describe(back));
      BOOST_TEST(same(*back, sample), caf::deep_to_string(*back));
      // Re-encoding is deterministic.
      BOOST_TEST(encode(*back) == bytes);
    }
  });
}

BOOST_AUTO_TEST_CASE(value_types_compare_equal_after_round_trip) {
  auto check = [](const auto& x) {
    using type = std::decay_t<decltype(x)>;
    auto back = decode<type>(encode(x));
    BOOST_REQUIRE(back);
    BOOST_TEST((*back == x));
  };
  check(sample_manifest());
  check(sample_blob_chunk());
  check(sample_checkpoint_metadata());
}

BOOST_AUTO_TEST_CASE(defaults_round_trip) {
  auto back = decode<checkpoint_metadata>(encode(checkpoint_metadata{}));
  BOOST_REQUIRE(back);
  BOOST_TEST((*back == checkpoint_metadata{}));
  auto m = decode<manifest>(encode(manifest{}));
  BOOST_REQUIRE(m);
  BOOST_TEST((*m == manifest{}));
}

BOOST_AUTO_TEST_CASE(large_chunk_over_default_traversal_limit_round_trips) {
  // 80 MiB: above Cap'n Proto's default 64 MiB traversal limit.
  auto x = sample_blob_chunk();
  x.data.assign(size_t{80} << 20, '\0');
  for (size_t i = 0; i < x.data.size(); i += 4093)
    x.data[i] = static_cast<char>(i);
  auto bytes = encode(x);
  auto back = decode<blob_chunk>(bytes);
  BOOST_REQUIRE_MESSAGE(back, describe(back));
  BOOST_TEST((*back == x));
}

BOOST_AUTO_TEST_CASE(misaligned_input_decodes) {
  auto bytes = encode(sample_manifest());
  std::string buffer(bytes.size() + 1, '\0');
  std::memcpy(buffer.data() + 1, bytes.data(), bytes.size());
  auto back = decode<manifest>(std::string_view{buffer}.substr(1));
  BOOST_REQUIRE(back);
  BOOST_TEST((*back == sample_manifest()));
}

BOOST_AUTO_TEST_CASE(empty_input_is_malformed) {
  auto back = decode<manifest>(std::string_view{});
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::malformed));
  decode_as_every_record(std::string{});
}

BOOST_AUTO_TEST_CASE(every_truncation_is_malformed) {
  for_each_disk_record([](const auto& sample) {
    using type = std::decay_t<decltype(sample)>;
    auto bytes = encode(sample);
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto back = decode<type>(std::string_view{bytes.data(), n});
      BOOST_REQUIRE_MESSAGE(!back, typeid(type).name() << " cut at " << n);
      BOOST_CHECK(has_code(back.error(), codec_errc::malformed));
    }
  });
}

BOOST_AUTO_TEST_CASE(trailing_bytes_are_malformed) {
  auto bytes = encode(sample_manifest()) + std::string(8, '\0');
  auto back = decode<manifest>(bytes);
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::malformed));
}

BOOST_AUTO_TEST_CASE(random_garbage_never_crashes) {
  std::mt19937_64 rng{42};
  for (int round = 0; round < 300; ++round) {
    std::string bytes(rng() % 200, '\0');
    for (auto& c : bytes)
      c = static_cast<char>(rng());
    if (round % 2 == 0)
      bytes.resize(bytes.size() / 8 * 8);
    decode_as_every_record(bytes);
  }
}

BOOST_AUTO_TEST_CASE(flipped_bytes_never_crash) {
  std::mt19937_64 rng{7};
  auto bytes = encode(sample_checkpoint_metadata());
  for (int round = 0; round < 2000; ++round) {
    auto copy = bytes;
    for (int k = 0; k < 3; ++k)
      copy[rng() % copy.size()] ^= static_cast<char>(1 + rng() % 255);
    auto back = decode<checkpoint_metadata>(copy);
    if (!back)
      BOOST_CHECK(in_category(back.error(), codec_category));
  }
}

BOOST_AUTO_TEST_CASE(negative_dimension_is_rejected) {
  auto x = sample_blob_entry();
  x.shape = {-1};
  auto back = decode<blob_entry>(encode(x));
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::invalid_value));
}

BOOST_AUTO_TEST_CASE(overflowing_shape_is_rejected) {
  auto x = sample_blob_entry();
  x.shape = {int64_t{1} << 32, int64_t{1} << 32}; // wraps to 0 elements
  auto back = decode<blob_entry>(encode(x));
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::invalid_value));
}

BOOST_AUTO_TEST_CASE(unknown_dtype_is_rejected) {
  auto x = sample_manifest();
  x.blobs[0].type = static_cast<dtype>(42);
  auto back = decode<manifest>(encode(x));
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::invalid_value));
}

BOOST_AUTO_TEST_CASE(unsorted_committed_epochs_are_rejected) {
  auto x = sample_checkpoint_metadata();
  x.committed_epochs = {3, 1};
  auto back = decode<checkpoint_metadata>(encode(x));
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::invalid_value));
}

BOOST_AUTO_TEST_CASE(chunk_with_bytes_and_strings_is_rejected) {
  auto x = sample_blob_chunk();
  x.strings = {"x"};
  auto back = decode<blob_chunk>(encode(x));
  BOOST_REQUIRE(!back);
  BOOST_TEST(has_code(back.error(), codec_errc::invalid_value));
}

BOOST_AUTO_TEST_CASE(decoding_as_another_type_does_not_crash) {
  auto bytes = encode(sample_manifest());
  decode_as_every_record(bytes);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(chunk_codec)

BOOST_AUTO_TEST_CASE(borrowed_encoding_equals_value_encoding) {
  for (auto& x : {sample_blob_chunk(), sample_string_chunk()}) {
    auto borrowed = encode_blob_chunk(
      x.name, x.index, std::string_view{x.data.data(), x.data.size()},
      x.strings.data(), x.strings.size(), x.digest);
    BOOST_TEST(borrowed == encode(x));
  }
}

BOOST_AUTO_TEST_CASE(view_decoding_sees_every_field) {
  auto x = sample_blob_chunk();
  auto err = decode_blob_chunk(encode(x), [&](const blob_chunk_view& v) {
    BOOST_TEST(v.name == x.name);
    BOOST_TEST(v.index == x.index);
    BOOST_TEST(v.data == std::string_view(x.data.data(), x.data.size()));
    BOOST_TEST(v.strings.empty());
    BOOST_TEST(v.digest == x.digest);
    return caf::error{};
  });
  BOOST_TEST(!err);
  auto s = sample_string_chunk();
  err = decode_blob_chunk(encode(s), [&](const blob_chunk_view& v) {
    BOOST_REQUIRE(v.strings.size() == s.strings.size());
    for (size_t i = 0; i < s.strings.size(); ++i)
      BOOST_TEST(v.strings[i] == s.strings[i]);
    return caf::error{};
  });
  BOOST_TEST(!err);
}

BOOST_AUTO_TEST_CASE(view_decoding_of_misaligned_input_works) {
  auto bytes = encode(sample_blob_chunk());
  std::string buffer(bytes.size() + 3, '\0');
  std::memcpy(buffer.data() + 3, bytes.data(), bytes.size());
  bool called = false;
  auto err = decode_blob_chunk(std::string_view{buffer}.substr(3),
                               [&](const blob_chunk_view& v) {
                                 called = true;
                                 BOOST_TEST(v.data.size() == 5u);
                                 BOOST_TEST(v.data[3] == 'a');
                                 return caf::error{};
                               });
  BOOST_TEST(!err);
  BOOST_TEST(called);
}

BOOST_AUTO_TEST_CASE(view_decoding_of_garbage_is_an_error) {
  bool called = false;
  auto err = decode_blob_chunk("garbage!", [&](const blob_chunk_view&) {
    called = true;
    return caf::error{};
  });
  BOOST_TEST(has_code(err, codec_errc::malformed));
  BOOST_TEST(!called);
}

BOOST_AUTO_TEST_CASE(consumer_error_is_returned) {
  auto err = decode_blob_chunk(
    encode(sample_blob_chunk()), [](const blob_chunk_view&) {
      return make_error(codec_errc::invalid_value, "mine");
    });
  BOOST_TEST(has_code(err, codec_errc::invalid_value));
}

BOOST_AUTO_TEST_SUITE_END()
