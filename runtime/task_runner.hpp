#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

class op_registry;
class workspace;

/// Runs one task to completion on the calling thread and returns its
/// outputs (one `task_output` per name in `task.outputs`, in that order,
/// valued after the last step).
///
/// Steps run in order. A step runs its ops `num_iter` times; when it has a
/// `stop_blob`, it also ends after any iteration in which that blob is a
/// true (non-zero) single element, and with `num_iter == 0` it runs until
/// then. Every op of the task is validated against `registry` before the
/// first one runs.
///
/// Concurrency: an op that names a blob (an input or an output) runs while
/// holding `ws` locked (and only that op), so tasks on one workspace may run
/// on several threads at once: they interleave at op granularity and never
/// race. Such an op blocks the node's other tasks for as long as it runs.
/// An op that names no blob (Sleep, CopyDirectory) runs without the lock
/// and must not touch any blob: waiting or copying files never holds up
/// the node's other tasks.
///
/// PRIVATE tasks keep blobs they create that `ws` does not have in a
/// scratch map that dies with the call; reads look there first.
///
/// Errors: `invalid_job` (bad step), the registry's error for an invalid
/// op, `missing_blob` (absent input, stop blob or output), an op's own
/// error, `op_failed` for an op that threw or for cancellation. The context
/// names the task, the step, the op's index and type, then the cause:
/// "task 'read', step 0 'main', op 2 'Add': shapes [3] and [4] differ ...".
/// Blobs the task wrote before an error stay written.
///
/// `cancel`, when given, is polled before every op: once it is true, the
/// task stops with `op_failed` ("cancelled"). Ops see it too
/// (`op_context::cancelled`): a long one (Sleep) ends early. It must
/// outlive the call.
///
/// `before_op`, when given, is called before every op runs (after the
/// cancellation check), with the op; an error it returns fails the task as
/// the op's own error would. The fault plan's node.op point sits there.
using before_op_hook = std::function<caf::error(const op_def&)>;

caf::expected<std::vector<task_output>>
run_task(const task_def& task, workspace& ws, const op_registry& registry,
         const std::atomic<bool>* cancel = nullptr,
         const before_op_hook& before_op = {});

/// The truth of a stop blob or stop condition: a single-element numeric or
/// bool tensor (of any shape holding one element) that is not
/// zero. Fails with `type_mismatch` for strings and tensors of more or
/// fewer than one element.
caf::expected<bool> truth_value(const tensor& x);

} // namespace epochrt
