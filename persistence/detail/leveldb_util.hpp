#pragma once

// LevelDB glue shared by the reader and writer. Internal to persistence/:
// the only place besides their .cpp files that includes LevelDB headers.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <leveldb/env.h>
#include <leveldb/slice.h>
#include <leveldb/status.h>

namespace epochrt::detail {

/// A LevelDB info log that drops every line. Without one, LevelDB writes a
/// LOG file into the database directory at every open, so even reading a
/// checkpoint would change it. Stateless and thread-safe; lives forever.
leveldb::Logger* silent_info_log();

/// Translates a failed LevelDB status into our error: corruption becomes
/// persistence_errc::corrupt, a missing database not_found, everything
/// else io_error. `what` says what we were doing.
caf::error from_status(const leveldb::Status& st, std::string_view what);

// Key layout of a checkpoint database:
//   "manifest"                        -> digest, Manifest (written last)
//   "c/" <blob name> "\0" <index:u32 big-endian> -> BlobChunk
// Blob names never hold a NUL (messages/names.hpp), so the NUL ends the
// name unambiguously and the chunks of one blob sort together, in order.
inline constexpr std::string_view manifest_key = "manifest";

/// The value stored under `manifest_key` for an encoded Manifest `record`:
/// the XXH3-64 of the record (8 bytes, little-endian), then the record.
/// Chunks check themselves (name, index, digest) and the payloads against
/// the manifest, but nothing else checks the manifest: a flipped bit in a
/// blob's type (f32 and i32 differ in one) would load as another tensor.
std::string manifest_value(std::string_view record);

/// The record in a value made by `manifest_value`; nullopt when the value
/// is too short or its digest does not match.
std::optional<std::string_view> manifest_record(std::string_view value);

/// The key of chunk `index` of blob `name`.
std::string chunk_key(std::string_view name, uint32_t index);

} // namespace epochrt::detail
