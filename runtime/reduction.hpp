#pragma once

#include <cstddef>
#include <vector>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

/// Whether an all-reduce can reduce elements of `type`: the numeric ones
/// (f32, f64, i32, i64, u8), not bool or string.
bool reducible(dtype type) noexcept;

/// Reduces `count` elements of `sources` (arrays of `type`, one per
/// participant, in participant order) into `out`: out[i] = ((s0[i] op
/// s1[i]) op s2[i]) ..., always folded left to right, so that the bits
/// depend on the order of `sources` only, never on how a blob is split
/// into pieces. `mean` is the sum divided by the number of sources (for
/// integers, rounded toward zero). Integer sums wrap around.
///
/// Preconditions: `reducible(type)`, at least one source, `out` aliases no
/// source.
void reduce_into(reduce_op op, dtype type,
                 const std::vector<const void*>& sources, void* out,
                 size_t count);

} // namespace epochrt
