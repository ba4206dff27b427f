#pragma once

#include <caf/error.hpp>

namespace epochrt {

class op_registry;

/// Registers epochrt's builtin ops in `registry`:
///
/// op: inputs -> outputs; arguments (* required): what
///
/// - ConstantFill: -> out; shape, value, dtype, if_missing: `shape` filled
///   with `value` (with `if_missing`, only when `out` does not exist)
/// - GivenTensorFill: -> out; values*, shape, dtype: `shape` of `values`
/// - Add, Mul: a, b -> out: elementwise; a one-element operand broadcasts
/// - Copy: x -> out: a copy
/// - Sum: x -> out: scalar sum of all elements
/// - CreateCounter: -> counter; init_count: i64 scalar `init_count`
/// - CountDown: counter -> done: Caffe2's CountDown
/// - EpochLimit: epochs -> done; limit*: counts up, done at `limit`
/// - CreateCursor: -> cursor: i64 scalar 0
/// - ReadNext: cursor, data... -> batch..., finished; batch_size, wrap:
///   the next records of every dataset
/// - GenerateLinearData: -> X, y; rows*, features*, seed, noise, weights,
///   bias: deterministic synthetic regression data
/// - LinearRegressionSGD: w, b, X, y -> w, b, loss; lr: one SGD step of MSE
/// - LinearRegressionGradient: w, b, X, y -> grad_w, grad_b, loss: the
///   gradient of the MSE, for data-parallel training
/// - SGDUpdate: param, grad -> param; lr: param - lr * grad
/// - CopyDirectory: no blobs; source*, destination*: copies a file tree on
///   the node, replacing the destination
/// - Sleep: no blobs; ms*: waits `ms` milliseconds, ending early (failing)
///   once its task is cancelled
/// - EnqueueBlobs: item blobs -> ; channel*: puts an item into a channel
/// - DequeueBlobs: -> item blobs; channel*: takes an item from a channel
/// - SafeDequeueBlobs: -> item blobs, status; channel*: takes an item, or
///   reports the channel's end in `status` and ends its step
/// - CloseBlobsQueue: no blobs; channel*: closes a channel
/// - Allreduce: X... -> Y...; collective*, op: the reduction over the
///   group's participants
/// - Broadcast: X... -> Y...; collective*, root*: the root node's blobs
/// - Allgather: X... -> Y...; collective*: every participant's blobs
///   stacked
/// - Barrier: no blobs; collective*: waits for every participant
///   (the channel and collective ops are in exchange_ops.hpp)
///
/// Each schema's `doc` has the details; docs/jobs-in-cpp.md and
/// docs/job-file.md list every argument's kind and default. CopyDirectory
/// and Sleep name no blob, so they run without the workspace lock.
///
/// A type that `registry` already has is not replaced: the result is then
/// `runtime_errc::bad_argument` naming the first such type ("cannot
/// register op 'Add': already registered"), in every build type; the other
/// builtins are registered all the same.
[[nodiscard]] caf::error add_builtin_ops(op_registry& registry);

} // namespace epochrt
