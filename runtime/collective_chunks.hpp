#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace epochrt {

/// The elements of a blob of `shape`. Precondition: no dimension is
/// negative and the product fits (collective_run checks both before).
inline uint64_t element_count_of(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (auto d : shape)
    count *= static_cast<uint64_t>(d);
  return count;
}

/// Chunk `j` of `n` of `count` elements: [first, last). The chunks of a
/// blob are a function of its element count and `n` only, so every
/// process cuts a blob the same way.
inline std::pair<size_t, size_t> chunk_range(size_t count, size_t j, size_t n) {
  return {count * j / n, count * (j + 1) / n};
}

} // namespace epochrt
