#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>

// The BlobChunk record without the value type in between. A checkpoint
// writes and reads gigabytes of chunks; going through `blob_chunk` would copy
// every payload into a `std::vector<char>` first. These functions produce
// exactly the bytes of `encode<blob_chunk>` and accept everything that
// `decode<blob_chunk>` accepts.

namespace epochrt {

/// A chunk whose fields borrow memory owned by someone else.
struct blob_chunk_view {
  std::string_view name;
  uint32_t index = 0;
  std::string_view data;
  std::vector<std::string_view> strings;
  uint64_t digest = 0;
};

/// Encodes one BlobChunk record. The payload (`data`, `strings`) is copied
/// exactly once, into the result. Thread-safe.
std::string encode_blob_chunk(std::string_view name, uint32_t index,
                              std::string_view data, const std::string* strings,
                              size_t num_strings, uint64_t digest);

/// Like `encode_blob_chunk` above, but leaves the record in `out`, reusing
/// its capacity. A writer that encodes many large chunks keeps one buffer:
/// memory touched for the first time costs page faults worth several
/// copies.
void encode_blob_chunk(std::string& out, std::string_view name, uint32_t index,
                       std::string_view data, const std::string* strings,
                       size_t num_strings, uint64_t digest);

/// Decodes one BlobChunk record and passes a view of it to `consumer`,
/// without copying the payload. The view borrows `bytes` (or a private
/// aligned copy when `bytes` is not word-aligned) and is valid only during
/// the call. Returns a `codec_errc` error for malformed bytes, else what
/// `consumer` returns. Never throws (unless `consumer` does). Thread-safe.
caf::error decode_blob_chunk(
  std::string_view bytes,
  const std::function<caf::error(const blob_chunk_view&)>& consumer);

} // namespace epochrt
