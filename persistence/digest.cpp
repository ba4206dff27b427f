#include <epochrt/persistence/digest.hpp>

#include <cstring>
#include <new>

#include <xxhash.h>

namespace epochrt {

uint64_t digest_bytes(const void* data, size_t size) noexcept {
  return XXH3_64bits(data, size);
}

uint64_t payload_digest(const tensor& x) noexcept {
  if (x.type != dtype::string)
    return digest_bytes(x.data.data(), x.data.size());
  payload_hasher hasher;
  for (auto& str : x.strings)
    hasher.update_string(str);
  return hasher.digest();
}

void payload_hasher::state_deleter::operator()(XXH3_state_s* x) const noexcept {
  XXH3_freeState(x);
}

payload_hasher::payload_hasher() : state_(XXH3_createState()) {
  if (!state_)
    throw std::bad_alloc{};
  XXH3_64bits_reset(state_.get());
}

payload_hasher::payload_hasher(payload_hasher&&) noexcept = default;

payload_hasher& payload_hasher::operator=(payload_hasher&&) noexcept = default;

payload_hasher::~payload_hasher() = default;

void payload_hasher::update(const void* data, size_t size) noexcept {
  XXH3_64bits_update(state_.get(), data, size);
}

void payload_hasher::update_string(std::string_view str) noexcept {
  // Length first, so that {"ab","c"} and {"a","bc"} differ.
  uint8_t length[8];
  uint64_t n = str.size();
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<uint8_t>(n >> (8 * i));
  XXH3_64bits_update(state_.get(), length, sizeof(length));
  XXH3_64bits_update(state_.get(), str.data(), str.size());
}

uint64_t payload_hasher::digest() const noexcept {
  return XXH3_64bits_digest(state_.get());
}

} // namespace epochrt
