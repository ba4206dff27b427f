#pragma once

// LevelDB glue shared by the reader and writer. Internal to persistence/:
// the only place besides their .cpp files that includes LevelDB headers.

#include <cstdint>
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
//   "manifest"                        -> Manifest (written last)
//   "c/" <blob name> "\0" <index:u32 big-endian> -> BlobChunk
// Blob names never hold a NUL (messages/names.hpp), so the NUL ends the
// name unambiguously and the chunks of one blob sort together, in order.
inline constexpr std::string_view manifest_key = "manifest";

/// The key of chunk `index` of blob `name`.
std::string chunk_key(std::string_view name, uint32_t index);

} // namespace epochrt::detail
