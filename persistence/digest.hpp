#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <epochrt/messages/tensor.hpp>

struct XXH3_state_s;

namespace epochrt {

/// XXH3-64 of a byte range: the digest of a numeric payload or chunk.
uint64_t digest_bytes(const void* data, size_t size) noexcept;

/// The digest stored in manifests (blob_entry::digest) for `x`'s payload:
/// XXH3-64 of its data bytes for numeric tensors; for strings, of each
/// string as an 8-byte little-endian length followed by its bytes.
uint64_t payload_digest(const tensor& x) noexcept;

/// Computes a digest over pieces, equal to the one-shot digest of their
/// concatenation (strings: as defined for `payload_digest`). Not
/// thread-safe; movable, not copyable.
class payload_hasher {
public:
  payload_hasher();
  payload_hasher(payload_hasher&&) noexcept;
  payload_hasher& operator=(payload_hasher&&) noexcept;
  ~payload_hasher();

  /// Appends raw bytes.
  void update(const void* data, size_t size) noexcept;

  /// Appends one string element: its length, then its bytes.
  void update_string(std::string_view str) noexcept;

  /// The digest of everything appended so far.
  uint64_t digest() const noexcept;

private:
  struct state_deleter {
    void operator()(XXH3_state_s* x) const noexcept;
  };
  std::unique_ptr<XXH3_state_s, state_deleter> state_;
};

} // namespace epochrt
