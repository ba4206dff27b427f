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
// What is left after the whole blocks goes in blocks of this size, which
// are vectorised as whole ones are (see below); only the last few elements
// are folded one at a time. A share of a chunk rarely is whole blocks.
constexpr size_t small_block_elements = 256;

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
// contract of reduce_into) and, for all but the last few elements, a count
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

// One pass over the block for up to four sources at a time: every pass
// reads and writes `out` once, so folding the sources in fewer passes
// moves fewer bytes. The operations are applied in the same order as one
// source at a time would, so the bits are the same.

// out[i] = (x[i] op y[i]) op z[i] ..., for the first two to four sources.
template <class T, reduce_op Op, class Count>
void combine_into(T* __restrict out, const T* __restrict x,
                  const T* __restrict y, Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, x[i], y[i]);
}

template <class T, reduce_op Op, class Count>
void combine_into(T* __restrict out, const T* __restrict x,
                  const T* __restrict y, const T* __restrict z,
                  Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, combine(Op, x[i], y[i]), z[i]);
}

template <class T, reduce_op Op, class Count>
void combine_into(T* __restrict out, const T* __restrict x,
                  const T* __restrict y, const T* __restrict z,
                  const T* __restrict w, Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, combine(Op, combine(Op, x[i], y[i]), z[i]), w[i]);
}

// out[i] = (out[i] op x[i]) op y[i] ..., for one to three more sources.
template <class T, reduce_op Op, class Count>
void fold_into(T* __restrict out, const T* __restrict x, Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, out[i], x[i]);
}

template <class T, reduce_op Op, class Count>
void fold_into(T* __restrict out, const T* __restrict x, const T* __restrict y,
               Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, combine(Op, out[i], x[i]), y[i]);
}

template <class T, reduce_op Op, class Count>
void fold_into(T* __restrict out, const T* __restrict x, const T* __restrict y,
               const T* __restrict z, Count count) noexcept {
  for (size_t i = 0; i < count; ++i)
    out[i] = combine(Op, combine(Op, combine(Op, out[i], x[i]), y[i]), z[i]);
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
  auto* o = out + begin;
  auto n = sources.size();
  size_t s = 0;
  switch (n) {
    case 1:
      std::memcpy(o, at(0), count * sizeof(T));
      s = 1;
      break;
    case 2:
      combine_into<T, Op>(o, at(0), at(1), count);
      s = 2;
      break;
    case 3:
      combine_into<T, Op>(o, at(0), at(1), at(2), count);
      s = 3;
      break;
    default:
      combine_into<T, Op>(o, at(0), at(1), at(2), at(3), count);
      s = 4;
      break;
  }
  for (; s + 3 <= n; s += 3)
    fold_into<T, Op>(o, at(s), at(s + 1), at(s + 2), count);
  if (n - s == 2)
    fold_into<T, Op>(o, at(s), at(s + 1), count);
  else if (n - s == 1)
    fold_into<T, Op>(o, at(s), count);
  if constexpr (Op == reduce_op::mean)
    divide(out + begin, sources.size(), count);
}

template <class T, reduce_op Op>
void fold_blocks(const std::vector<const void*>& sources, void* out,
                 size_t count) {
  auto* result = static_cast<T*>(out);
  using whole_block = std::integral_constant<size_t, block_elements>;
  using small_block = std::integral_constant<size_t, small_block_elements>;
  size_t b = 0;
  for (; b + block_elements <= count; b += block_elements)
    fold_block<T, Op>(sources, result, b, whole_block{});
  for (; b + small_block_elements <= count; b += small_block_elements)
    fold_block<T, Op>(sources, result, b, small_block{});
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
