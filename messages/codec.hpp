#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace epochrt {

// Converts the records epochrt keeps on disk to and from the bytes of their
// Cap'n Proto structs in schema/epochrt.capnp (flat array encoding,
// unpacked). Messages between actors do not pass through here: CAF
// serializes them by their `inspect`.
//
// `encode<T>` and `decode<T>` exist for: blob_entry, manifest, blob_chunk,
// checkpoint_stats, checkpoint_metadata (messages/checkpoint_records.hpp).
//
// `decode` never throws: malformed bytes (Cap'n Proto exceptions) and values
// that break a type's invariants come back as a `codec_errc` error. Input
// need not be word-aligned. Both functions are thread-safe.

template <class T>
std::string encode(const T& value);

template <class T>
caf::expected<T> decode(std::string_view bytes);

} // namespace epochrt
