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

// The kernels below take restrict pointers (`out` aliases no source: the
// contract of reduce_into) and, for every block but the last, a count
// known at compile time: both are needed for the compiler to vectorise
// them at -O2, which makes a reduction run at memory speed instead of a
// fraction of it.

template <class T>
T combine(reduce_op op, T x, T y) noexcept {
  switch (op) {
    case reduce_op::sum:
    case reduce_op::mean:
      return add(x, y);
    case reduce_op::min:
      return y < x ? y : x;
    case reduce_op::max:
      return x < y ? y : x;
  }
  return x;
}

// out[i] = x[i] op y[i]: one pass over the first two sources.
template <class T, reduce_op Op, class Count>
void combine_into(T* __restrict out, const T* __restrict x,
                  const T* __restrict y, Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, x[i], y[i]);
}

// out[i] = out[i] op x[i].
template <class T, reduce_op Op, class Count>
void fold_into(T* __restrict out, const T* __restrict x, Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, out[i], x[i]);
}

template <class T, class Count>
void divide(T* __restrict out, size_t sources, Count count) noexcept {
  if constexpr (std::is_integral_v<T>) {
    auto n = static_cast<int64_t>(sources);
    for (size_t i = 0; i < count; ++i)
      out[i] = static_cast<T>(static_cast<int64_t>(out[i]) / n);
  } else {
    auto n = static_cast<T>(sources);
    for (size_t i = 0; i < count; ++i)
      out[i] = out[i] / n;
  }
}

// Elements [begin, begin + count) of every source into `out`. `Count` is
// either size_t or a std::integral_constant (a whole block).
template <class T, reduce_op Op, class Count>
void fold_block(const std::vector<const void*>& sources, T* out, size_t begin,
                Count count) {
  auto at = [&](size_t s) {
    return static_cast<const T*>(sources[s]) + begin;
  };
  if (sources.size() == 1) {
    std::memcpy(out + begin, at(0), count * sizeof(T));
  } else {
    combine_into<T, Op>(out + begin, at(0), at(1), count);
    for (size_t s = 2; s < sources.size(); ++s)
      fold_into<T, Op>(out + begin, at(s), count);
  }
  if constexpr (Op == reduce_op::mean)
    divide(out + begin, sources.size(), count);
}

template <class T, reduce_op Op>
void fold_blocks(const std::vector<const void*>& sources, void* out,
                 size_t count) {
  auto* result = static_cast<T*>(out);
  using whole_block = std::integral_constant<size_t, block_elements>;
  size_t b = 0;
  for (; b + block_elements <= count; b += block_elements)
    fold_block<T, Op>(sources, result, b, whole_block{});
  if (b < count)
    fold_block<T, Op>(sources, result, b, count - b);
}

template <class T>
void fold(reduce_op op, const std::vector<const void*>& sources, void* out,
          size_t count) {
  switch (op) {
    case reduce_op::sum:
      fold_blocks<T, reduce_op::sum>(sources, out, count);
      break;
    case reduce_op::mean:
      fold_blocks<T, reduce_op::mean>(sources, out, count);
      break;
    case reduce_op::min:
      fold_blocks<T, reduce_op::min>(sources, out, count);
      break;
    case reduce_op::max:
      fold_blocks<T, reduce_op::max>(sources, out, count);
      break;
  }
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
