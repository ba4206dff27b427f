#include <epochrt/messages/codec.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>
#include <kj/exception.h>

#include "schema/epochrt.capnp.h"
#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/chunk_codec.hpp>
#include <epochrt/messages/codec_errc.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

namespace {

namespace sc = ::epochrt::schema;

using word = capnp::word;

constexpr size_t word_bytes = sizeof(word);

// Default size of the first segment when a type gives no size hint: big
// enough for every small message, small enough to zero cheaply.
constexpr size_t default_first_words = 256;

// Cap'n Proto counts every word it traverses; the limit only guards against
// messages whose pointers make a reader visit the same bytes over and over.
// Reading each field once visits about as many words as the input has, so a
// multiple of the input size accepts every honest message of any size (a
// 512 MiB chunk included) and bounds the work on a hostile one.
constexpr uint64_t traversal_factor = 4;
constexpr uint64_t traversal_slack_words = 1024;

size_t words_for(size_t bytes) noexcept {
  return (bytes + word_bytes - 1) / word_bytes;
}

size_t text_words(size_t length) noexcept {
  return words_for(length + 1); // Text carries a NUL terminator
}

// -- building into the output string ------------------------------------------

// A MessageBuilder whose first segment lies inside the std::string that
// `finish` returns, right behind room for the one-segment table. When the
// size hint covers the whole message (as it does for tensors and chunks),
// every payload byte is copied exactly once: from the value into the result.
// Otherwise later segments come from the heap and `finish` concatenates.
class string_message_builder : public capnp::MessageBuilder {
public:
  // Builds into `out`, reusing its capacity: large buffers that are touched
  // for the first time cost page faults, several times a memcpy.
  string_message_builder(std::string& out, size_t first_words) : out_(out) {
    first_words = std::max<size_t>(first_words, 8);
    // Zero-filled, as Cap'n Proto requires of a fresh segment.
    out_.assign(word_bytes + first_words * word_bytes, '\0');
    auto* first = out_.data() + word_bytes;
    if (reinterpret_cast<uintptr_t>(first) % alignof(word) == 0
        && first_words <= std::numeric_limits<uint32_t>::max()) {
      first_ = kj::arrayPtr(reinterpret_cast<word*>(first), first_words);
      have_first_ = true;
    }
  }

  kj::ArrayPtr<word> allocateSegment(unsigned int minimum_size) override {
    if (have_first_ && !first_used_ && first_.size() >= minimum_size) {
      first_used_ = true;
      return first_;
    }
    first_used_ = true;
    size_t n = std::max<size_t>(minimum_size, next_words_);
    next_words_ = std::min<size_t>(n * 2, size_t{1} << 26);
    auto segment = kj::heapArray<word>(n);
    std::memset(segment.begin(), 0, n * word_bytes);
    auto result = segment.asPtr();
    extra_.push_back(kj::mv(segment));
    return result;
  }

  // Leaves the flat-array encoding in `out`. Call once, as the last use.
  void finish() {
    auto segments = getSegmentsForOutput();
    if (segments.size() == 1 && have_first_
        && segments[0].begin() == first_.begin()) {
      uint32_t table[2] = {0, static_cast<uint32_t>(segments[0].size())};
      std::memcpy(out_.data(), table, sizeof(table));
      out_.resize(word_bytes + segments[0].size() * word_bytes);
      return;
    }
    // Segment table: count-1, then each size, as uint32, padded to a word.
    size_t table_words = (segments.size() + 2) / 2;
    size_t total = table_words;
    for (auto& segment : segments)
      total += segment.size();
    std::string result(total * word_bytes, '\0');
    std::vector<uint32_t> table(table_words * 2, 0);
    table[0] = static_cast<uint32_t>(segments.size() - 1);
    for (size_t i = 0; i < segments.size(); ++i)
      table[i + 1] = static_cast<uint32_t>(segments[i].size());
    std::memcpy(result.data(), table.data(), table_words * word_bytes);
    auto* pos = result.data() + table_words * word_bytes;
    for (auto& segment : segments) {
      std::memcpy(pos, segment.begin(), segment.size() * word_bytes);
      pos += segment.size() * word_bytes;
    }
    out_.swap(result); // the first segment lived in `out`: replace it last
  }

private:
  std::string& out_;
  kj::ArrayPtr<word> first_;
  bool have_first_ = false;
  bool first_used_ = false;
  size_t next_words_ = 1024;
  std::vector<kj::Array<word>> extra_;
};

// -- reading
// -------------------------------------------------------------------

// Makes `words` point at `bytes` as Cap'n Proto words, copying them into
// `storage` when they are not word-aligned. `words` is valid while both
// `bytes` and `storage` live.
caf::error as_words(std::string_view bytes, kj::Array<word>& storage,
                    kj::ArrayPtr<const word>& words) {
  if (bytes.empty())
    return make_error(codec_errc::malformed, "empty input");
  if (bytes.size() % word_bytes != 0)
    return make_error(codec_errc::malformed,
                      "input of " + std::to_string(bytes.size())
                        + " bytes is not a whole number of words");
  auto n = bytes.size() / word_bytes;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(word) == 0) {
    words = kj::arrayPtr(reinterpret_cast<const word*>(bytes.data()), n);
  } else {
    storage = kj::heapArray<word>(n);
    std::memcpy(storage.begin(), bytes.data(), bytes.size());
    words = kj::arrayPtr(storage.begin(), storage.size());
  }
  return {};
}

// Runs `f(reader)` on a reader over `words` and translates every exception
// (Cap'n Proto throws on malformed input) into codec_errc::malformed.
template <class F>
caf::error with_reader(kj::ArrayPtr<const word> words, F&& f) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords
    = words.size() * traversal_factor + traversal_slack_words;
  try {
    capnp::FlatArrayMessageReader reader(words, options);
    if (reader.getEnd() != words.end())
      return make_error(codec_errc::malformed,
                        "trailing bytes after the message");
    return f(reader);
  } catch (const kj::Exception& e) {
    return make_error(codec_errc::malformed, e.getDescription().cStr());
  } catch (const std::exception& e) {
    return make_error(codec_errc::malformed, e.what());
  }
}

caf::error invalid(std::string what) {
  return make_error(codec_errc::invalid_value, std::move(what));
}

std::string to_std(capnp::Text::Reader x) {
  return std::string(x.begin(), x.size());
}

capnp::Text::Reader text(const std::string& x) {
  // std::string guarantees the NUL that Text::Reader asserts.
  return capnp::Text::Reader(x.c_str(), x.size());
}

template <class ListBuilder>
void write_texts(ListBuilder list, const std::vector<std::string>& xs) {
  for (unsigned i = 0; i < xs.size(); ++i)
    list.set(i, text(xs[i]));
}

void read_texts(capnp::List<capnp::Text>::Reader list,
                std::vector<std::string>& out) {
  out.clear();
  out.reserve(list.size());
  for (auto x : list)
    out.push_back(to_std(x));
}

// -- enums
// ---------------------------------------------------------------------

sc::DType to_schema(dtype x) noexcept {
  switch (x) {
    case dtype::f32:
      return sc::DType::F32;
    case dtype::f64:
      return sc::DType::F64;
    case dtype::i32:
      return sc::DType::I32;
    case dtype::i64:
      return sc::DType::I64;
    case dtype::u8:
      return sc::DType::U8;
    case dtype::boolean:
      return sc::DType::BOOLEAN;
    case dtype::string:
      return sc::DType::STRING;
  }
  // Out of range: keep the number so that decode rejects it.
  return static_cast<sc::DType>(static_cast<uint16_t>(x));
}

caf::error from_schema(sc::DType x, dtype& out) {
  switch (x) {
    case sc::DType::F32:
      out = dtype::f32;
      return {};
    case sc::DType::F64:
      out = dtype::f64;
      return {};
    case sc::DType::I32:
      out = dtype::i32;
      return {};
    case sc::DType::I64:
      out = dtype::i64;
      return {};
    case sc::DType::U8:
      out = dtype::u8;
      return {};
    case sc::DType::BOOLEAN:
      out = dtype::boolean;
      return {};
    case sc::DType::STRING:
      out = dtype::string;
      return {};
  }
  return invalid("unknown dtype " + std::to_string(static_cast<uint16_t>(x)));
}

// Every reader and writer, declared up front for the list templates.
void write(sc::BlobEntry::Builder b, const blob_entry& x);
caf::error read(sc::BlobEntry::Reader r, blob_entry& x);
void write(sc::Manifest::Builder b, const manifest& x);
caf::error read(sc::Manifest::Reader r, manifest& x);
void write(sc::BlobChunk::Builder b, const blob_chunk& x);
caf::error read(sc::BlobChunk::Reader r, blob_chunk& x);
void write(sc::CheckpointStats::Builder b, const checkpoint_stats& x);
caf::error read(sc::CheckpointStats::Reader r, checkpoint_stats& x);
void write(sc::CheckpointMetadata::Builder b, const checkpoint_metadata& x);
caf::error read(sc::CheckpointMetadata::Reader r, checkpoint_metadata& x);

template <class T, class ListReader>
caf::error read_list(ListReader list, std::vector<T>& out) {
  out.clear();
  out.resize(list.size());
  for (unsigned i = 0; i < list.size(); ++i)
    if (auto err = read(list[i], out[i]))
      return err;
  return {};
}

template <class ListBuilder, class T>
void write_list(ListBuilder list, const std::vector<T>& xs) {
  for (unsigned i = 0; i < xs.size(); ++i)
    write(list[i], xs[i]);
}

// -- shapes
// --------------------------------------------------------

caf::error read_shape(capnp::List<int64_t>::Reader list,
                      std::vector<int64_t>& out) {
  out.clear();
  out.reserve(list.size());
  size_t count = 1;
  for (auto dim : list) {
    if (dim < 0)
      return invalid("negative dimension " + std::to_string(dim));
    // An overflowing element count could wrap around to match a small
    // payload and pass tensor::consistent().
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count)
        || count > SIZE_MAX / 8) // the bytes of 8-byte elements must fit too
      return invalid("shape has more elements than fit in size_t");
    out.push_back(dim);
  }
  return {};
}

size_t strings_words(const std::vector<std::string>& xs) noexcept {
  size_t n = xs.size();
  for (auto& x : xs)
    n += text_words(x.size());
  return n;
}

// -- checkpoint records
// --------------------------------------------------------

void write(sc::BlobEntry::Builder b, const blob_entry& x) {
  b.setName(text(x.name));
  b.setDtype(to_schema(x.type));
  b.setShape(kj::arrayPtr(x.shape.data(), x.shape.size()));
  b.setBytes(x.bytes);
  b.setDigest(x.digest);
  b.setChunks(x.chunks);
  b.setDataEpoch(x.data_epoch);
  b.setDataId(x.data_id);
  b.setOffset(x.offset);
}

caf::error read(sc::BlobEntry::Reader r, blob_entry& x) {
  x.name = to_std(r.getName());
  if (auto err = from_schema(r.getDtype(), x.type))
    return err;
  if (auto err = read_shape(r.getShape(), x.shape))
    return err;
  x.bytes = r.getBytes();
  x.digest = r.getDigest();
  x.chunks = r.getChunks();
  x.data_epoch = r.getDataEpoch();
  x.data_id = r.getDataId();
  x.offset = r.getOffset();
  if (x.data_epoch < inline_payload)
    return invalid("a blob entry with a negative data epoch");
  return {};
}

void write(sc::Manifest::Builder b, const manifest& x) {
  b.setNode(text(x.node));
  b.setEpoch(x.epoch);
  write_list(b.initBlobs(static_cast<unsigned>(x.blobs.size())), x.blobs);
  b.setTotalBytes(x.total_bytes);
  b.setCreatedUnixMs(x.created_unix_ms);
}

caf::error read(sc::Manifest::Reader r, manifest& x) {
  x.node = to_std(r.getNode());
  x.epoch = r.getEpoch();
  if (auto err = read_list(r.getBlobs(), x.blobs))
    return err;
  x.total_bytes = r.getTotalBytes();
  x.created_unix_ms = r.getCreatedUnixMs();
  return {};
}

size_t chunk_words(size_t name_size, size_t data_size, size_t strings_words) {
  return 1 + 5 + text_words(name_size) + words_for(data_size) + strings_words;
}

// Writes a BlobChunk from borrowed parts; shared by encode<blob_chunk> and
// encode_blob_chunk so that both give the same bytes.
void write_chunk(sc::BlobChunk::Builder b, std::string_view name,
                 uint32_t index, std::string_view data,
                 const std::string* strings, size_t num_strings,
                 uint64_t digest) {
  auto name_builder = b.initName(static_cast<unsigned>(name.size()));
  if (!name.empty())
    std::memcpy(name_builder.begin(), name.data(), name.size());
  b.setIndex(index);
  if (!data.empty()) {
    auto out = b.initData(static_cast<unsigned>(data.size()));
    std::memcpy(out.begin(), data.data(), data.size());
  }
  if (num_strings > 0) {
    auto list = b.initStrings(static_cast<unsigned>(num_strings));
    for (unsigned i = 0; i < num_strings; ++i)
      list.set(i, text(strings[i]));
  }
  b.setDigest(digest);
}

void write(sc::BlobChunk::Builder b, const blob_chunk& x) {
  write_chunk(b, x.name, x.index,
              std::string_view{x.data.data(), x.data.size()}, x.strings.data(),
              x.strings.size(), x.digest);
}

// Fills `view` with pointers into the message; valid while its bytes live.
caf::error read_chunk_view(sc::BlobChunk::Reader r, blob_chunk_view& view) {
  auto name = r.getName();
  view.name = std::string_view{name.begin(), name.size()};
  view.index = r.getIndex();
  auto data = r.getData();
  view.data = std::string_view{reinterpret_cast<const char*>(data.begin()),
                               data.size()};
  auto strings = r.getStrings();
  view.strings.clear();
  view.strings.reserve(strings.size());
  for (auto s : strings)
    view.strings.emplace_back(s.begin(), s.size());
  view.digest = r.getDigest();
  if (!view.data.empty() && !view.strings.empty())
    return invalid("a blob chunk with both bytes and strings");
  return {};
}

caf::error read(sc::BlobChunk::Reader r, blob_chunk& x) {
  blob_chunk_view view;
  if (auto err = read_chunk_view(r, view))
    return err;
  x.name.assign(view.name);
  x.index = view.index;
  x.data.assign(view.data.begin(), view.data.end());
  x.strings.assign(view.strings.begin(), view.strings.end());
  x.digest = view.digest;
  return {};
}

void write(sc::CheckpointStats::Builder b, const checkpoint_stats& x) {
  b.setNode(text(x.node));
  b.setDb(text(x.db));
  b.setDurationUs(x.duration_us);
  b.setBytes(x.bytes);
  b.setBlobs(x.blobs);
  b.setWrittenBytes(x.written_bytes);
  b.setReusedBlobs(x.reused_blobs);
  b.setSnapshotUs(x.snapshot_us);
  b.setSyncUs(x.sync_us);
}

caf::error read(sc::CheckpointStats::Reader r, checkpoint_stats& x) {
  x.node = to_std(r.getNode());
  x.db = to_std(r.getDb());
  x.duration_us = r.getDurationUs();
  x.bytes = r.getBytes();
  x.blobs = r.getBlobs();
  x.written_bytes = r.getWrittenBytes();
  x.reused_blobs = r.getReusedBlobs();
  x.snapshot_us = r.getSnapshotUs();
  x.sync_us = r.getSyncUs();
  return {};
}

void write(sc::CheckpointMetadata::Builder b, const checkpoint_metadata& x) {
  b.setDbPrefix(text(x.db_prefix));
  write_texts(b.initNodeNames(static_cast<unsigned>(x.node_names.size())),
              x.node_names);
  b.setCommittedEpochs(
    kj::arrayPtr(x.committed_epochs.data(), x.committed_epochs.size()));
  write_list(b.initLastStats(static_cast<unsigned>(x.last_stats.size())),
             x.last_stats);
  b.setLastAction(text(x.last_action));
  b.setFinalEpoch(x.final_epoch);
  b.setJobDefinition(text(x.job_definition));
}

caf::error read(sc::CheckpointMetadata::Reader r, checkpoint_metadata& x) {
  x.db_prefix = to_std(r.getDbPrefix());
  read_texts(r.getNodeNames(), x.node_names);
  x.committed_epochs.clear();
  for (auto epoch : r.getCommittedEpochs()) {
    if (!x.committed_epochs.empty() && epoch <= x.committed_epochs.back())
      return invalid("committed epochs are not strictly ascending");
    x.committed_epochs.push_back(epoch);
  }
  if (auto err = read_list(r.getLastStats(), x.last_stats))
    return err;
  x.last_action = to_std(r.getLastAction());
  x.final_epoch = r.getFinalEpoch();
  x.job_definition = to_std(r.getJobDefinition());
  return {};
}

// -- type map and size hints
// ---------------------------------------------------

template <class T>
struct schema_of;

#define EPOCHRT_SCHEMA_OF(type, capnp_struct) \
  template <>                                 \
  struct schema_of<type> {                    \
    using result = sc::capnp_struct;          \
  };

EPOCHRT_SCHEMA_OF(blob_entry, BlobEntry)
EPOCHRT_SCHEMA_OF(manifest, Manifest)
EPOCHRT_SCHEMA_OF(blob_chunk, BlobChunk)
EPOCHRT_SCHEMA_OF(checkpoint_stats, CheckpointStats)
EPOCHRT_SCHEMA_OF(checkpoint_metadata, CheckpointMetadata)

#undef EPOCHRT_SCHEMA_OF

// Upper bounds of the encoded size in words for the types that carry
// payloads, so that their payload lands in the result with one copy.
template <class T>
size_t size_hint(const T&) noexcept {
  return default_first_words;
}

size_t size_hint(const blob_chunk& x) noexcept {
  return chunk_words(x.name.size(), x.data.size(), strings_words(x.strings));
}

} // namespace

template <class T>
std::string encode(const T& value) {
  using schema_type = typename schema_of<T>::result;
  std::string result;
  {
    string_message_builder builder{result, size_hint(value)};
    write(builder.initRoot<schema_type>(), value);
    builder.finish();
  }
  // The size hint of a small message may be far above its size.
  if (result.size() < (size_t{1} << 20)
      && result.capacity() > 2 * result.size())
    result.shrink_to_fit();
  return result;
}

template <class T>
caf::expected<T> decode(std::string_view bytes) {
  using schema_type = typename schema_of<T>::result;
  kj::Array<word> storage;
  kj::ArrayPtr<const word> words;
  if (auto err = as_words(bytes, storage, words))
    return err;
  T result;
  auto err = with_reader(words, [&](capnp::MessageReader& reader) {
    return read(reader.getRoot<schema_type>(), result);
  });
  if (err)
    return err;
  return result;
}

void encode_blob_chunk(std::string& out, std::string_view name, uint32_t index,
                       std::string_view data, const std::string* strings,
                       size_t num_strings, uint64_t digest) {
  size_t string_words = num_strings;
  for (size_t i = 0; i < num_strings; ++i)
    string_words += text_words(strings[i].size());
  string_message_builder builder{
    out, chunk_words(name.size(), data.size(), string_words)};
  write_chunk(builder.initRoot<sc::BlobChunk>(), name, index, data, strings,
              num_strings, digest);
  builder.finish();
}

std::string encode_blob_chunk(std::string_view name, uint32_t index,
                              std::string_view data, const std::string* strings,
                              size_t num_strings, uint64_t digest) {
  std::string result;
  encode_blob_chunk(result, name, index, data, strings, num_strings, digest);
  return result;
}

caf::error decode_blob_chunk(
  std::string_view bytes,
  const std::function<caf::error(const blob_chunk_view&)>& consumer) {
  // The view points into `bytes` or `storage`, both alive until we return;
  // the consumer runs outside the try so that its own exceptions are not
  // mistaken for malformed input.
  kj::Array<word> storage;
  kj::ArrayPtr<const word> words;
  if (auto err = as_words(bytes, storage, words))
    return err;
  blob_chunk_view view;
  auto err = with_reader(words, [&](capnp::MessageReader& reader) {
    return read_chunk_view(reader.getRoot<sc::BlobChunk>(), view);
  });
  if (err)
    return err;
  return consumer(view);
}

#define EPOCHRT_INSTANTIATE_CODEC(type)           \
  template std::string encode<type>(const type&); \
  template caf::expected<type> decode<type>(std::string_view);

EPOCHRT_INSTANTIATE_CODEC(blob_entry)
EPOCHRT_INSTANTIATE_CODEC(manifest)
EPOCHRT_INSTANTIATE_CODEC(blob_chunk)
EPOCHRT_INSTANTIATE_CODEC(checkpoint_stats)
EPOCHRT_INSTANTIATE_CODEC(checkpoint_metadata)

#undef EPOCHRT_INSTANTIATE_CODEC

} // namespace epochrt
