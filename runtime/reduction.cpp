#include <epochrt/runtime/reduction.hpp>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace epochrt {

namespace {

// Elements reduced at a time: the partial result stays in the cache while
// every source is folded into it.
constexpr size_t block_elements = 4096;

template <class T>
T add(T x, T y) noexcept {
  if constexpr (std::is_integral_v<T>) {
    // Wraps around instead of overflowing (undefined for signed types).
    using unsigned_type = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<unsigned_type>(x)
                          + static_cast<unsigned_type>(y));
  } else {
    return x + y;
  }
}

template <class T>
void fold_block(reduce_op op, const std::vector<const void*>& sources, T* out,
                size_t begin, size_t end) {
  auto* first = static_cast<const T*>(sources[0]);
  std::memcpy(out + begin, first + begin, (end - begin) * sizeof(T));
  for (size_t s = 1; s < sources.size(); ++s) {
    auto* x = static_cast<const T*>(sources[s]);
    switch (op) {
      case reduce_op::sum:
      case reduce_op::mean:
        for (size_t i = begin; i < end; ++i)
          out[i] = add(out[i], x[i]);
        break;
      case reduce_op::min:
        for (size_t i = begin; i < end; ++i)
          out[i] = x[i] < out[i] ? x[i] : out[i];
        break;
      case reduce_op::max:
        for (size_t i = begin; i < end; ++i)
          out[i] = out[i] < x[i] ? x[i] : out[i];
        break;
    }
  }
  if (op == reduce_op::mean) {
    if constexpr (std::is_integral_v<T>) {
      auto n = static_cast<int64_t>(sources.size());
      for (size_t i = begin; i < end; ++i)
        out[i] = static_cast<T>(static_cast<int64_t>(out[i]) / n);
    } else {
      auto n = static_cast<T>(sources.size());
      for (size_t i = begin; i < end; ++i)
        out[i] = out[i] / n;
    }
  }
}

template <class T>
void fold(reduce_op op, const std::vector<const void*>& sources, void* out,
          size_t count) {
  auto* result = static_cast<T*>(out);
  for (size_t b = 0; b < count; b += block_elements)
    fold_block<T>(op, sources, result, b, std::min(count, b + block_elements));
}

} // namespace

bool reducible(dtype type) noexcept {
  switch (type) {
    case dtype::f32:
    case dtype::f64:
    case dtype::i32:
    case dtype::i64:
    case dtype::u8:
      return true;
    default:
      return false;
  }
}

void reduce_into(reduce_op op, dtype type,
                 const std::vector<const void*>& sources, void* out,
                 size_t count) {
  assert(!sources.empty());
  switch (type) {
    case dtype::f32:
      fold<float>(op, sources, out, count);
      break;
    case dtype::f64:
      fold<double>(op, sources, out, count);
      break;
    case dtype::i32:
      fold<int32_t>(op, sources, out, count);
      break;
    case dtype::i64:
      fold<int64_t>(op, sources, out, count);
      break;
    case dtype::u8:
      fold<uint8_t>(op, sources, out, count);
      break;
    default:
      assert(false); // precondition: reducible(type)
  }
}

} // namespace epochrt
