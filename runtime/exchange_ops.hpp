#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <caf/error.hpp>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>

// The builtin ops that pass blobs between tasks, named as in Caffe2:
//
// - EnqueueBlobs: item blobs -> ; channel*: puts one item into the
//   channel, waiting while it is full
// - DequeueBlobs: -> item blobs; channel*: takes the oldest item, waiting
//   while the channel is empty; fails once it is closed and empty
// - SafeDequeueBlobs: -> item blobs, status; channel*: as DequeueBlobs,
//   but once the channel is closed and empty it sets `status` (bool) to
//   true, leaves the item blobs alone and ends its step at once (the ops
//   after it in the step do not run again), as Caffe2's pipes stop
// - CloseBlobsQueue: no blobs; channel*: closes the channel
// - Allreduce: X... -> Y...; collective*, op ("sum", "mean", "min",
//   "max"): Y = the reduction of every participant's X, in participant
//   order
// - Broadcast: X... -> Y...; collective*, root*: Y = the root node's X
// - Allgather: X... -> Y...; collective*: Y = every participant's X
//   stacked along a new first dimension, in participant order
// - Barrier: no blobs; collective*: waits until every participant came
//
// A task waiting in one of them holds no thread (see task_execution).
// Channels are declared by the job (`channel_def`); a collective is every
// task of a group with an op naming it.

namespace epochrt {

class op_registry;

namespace exchange_ops {

inline constexpr std::string_view enqueue = "EnqueueBlobs";
inline constexpr std::string_view dequeue = "DequeueBlobs";
inline constexpr std::string_view safe_dequeue = "SafeDequeueBlobs";
inline constexpr std::string_view close = "CloseBlobsQueue";
inline constexpr std::string_view all_reduce = "Allreduce";
inline constexpr std::string_view broadcast = "Broadcast";
inline constexpr std::string_view all_gather = "Allgather";
inline constexpr std::string_view barrier = "Barrier";

} // namespace exchange_ops

/// How an op uses a channel.
enum class channel_use : uint8_t { none, put, take, close };

/// The channel use of an op type (EnqueueBlobs: put, ...).
channel_use channel_use_of(std::string_view op_type) noexcept;

/// The collective kind of an op type (Allreduce: all_reduce, ...), or none.
std::optional<collective_kind>
collective_kind_of(std::string_view op_type) noexcept;

/// Registers the ops above in `registry` (add_builtin_ops does). The first
/// error, as op_registry::add gives it, when a type is taken.
caf::error add_exchange_ops(op_registry& registry);

} // namespace epochrt
