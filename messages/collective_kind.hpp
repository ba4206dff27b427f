#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace epochrt {

/// What a collective does.
enum class collective_kind : uint8_t {
  /// Every participant gets the elementwise reduction of every
  /// participant's blobs (Caffe2's Allreduce).
  all_reduce,
  /// Every participant gets the root's blobs (Caffe2's Broadcast).
  broadcast,
  /// Every participant gets every participant's blob, stacked in
  /// participant order along a new first dimension (Caffe2's Allgather).
  all_gather,
  /// Every participant waits until all have arrived (Caffe2's Barrier).
  barrier,
};

/// "all-reduce", "broadcast", "all-gather", "barrier": what errors call it.
const char* describe(collective_kind x) noexcept;

/// The same with its article: "an all-reduce", "a broadcast".
std::string describe_one(collective_kind x);

/// The reduction of an all-reduce.
enum class reduce_op : uint8_t { sum, mean, min, max };

/// "sum", "mean", "min", "max": the names job files use.
const char* to_string(reduce_op x) noexcept;

std::optional<reduce_op> reduce_op_from_name(std::string_view name) noexcept;

} // namespace epochrt
