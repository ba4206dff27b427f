#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

// The data file of a checkpoint database: the payloads of its large blobs,
// kept beside LevelDB (key/value separation), which holds only the
// manifest that indexes them (blob_entry::data_epoch, data_id, offset).
//
// Layout: a 16-byte header, the magic "EPRTDAT1" then a random 64-bit id
// (little-endian), then payloads back to back. The id tells one write of a
// database from another at the same path: a manifest that refers to the
// data of an earlier epoch names its id, so a data file rewritten since (an
// epoch run again after a fall-back) is refused rather than misread.

namespace epochrt::detail {

/// The file's name inside the database directory. LevelDB ignores files
/// whose names it does not parse as its own, so it never deletes this one.
inline constexpr std::string_view data_file_name = "blobs.data";

inline constexpr size_t data_header_bytes = 16;

/// A fresh random id for a new data file.
uint64_t new_data_id();

/// The header of a data file with id `id`.
std::string data_header(uint64_t id);

/// The id in `header`, or corrupt when it is not a data file header.
caf::expected<uint64_t> parse_data_header(std::string_view header,
                                          const std::string& file);

/// The path of `db_path/blobs.data`.
std::string data_file_path(const std::string& db_path);

} // namespace epochrt::detail
