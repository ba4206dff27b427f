#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/op_context.hpp>

namespace epochrt {

class op_registry;
struct op_schema;
class workspace;

/// Called before every op runs (after the cancellation check), with the
/// op; an error it returns fails the task as the op's own error would. The
/// fault plan's node.op point sits there. Not called again when an op that
/// waited resumes.
using before_op_hook = std::function<caf::error(const op_def&)>;

/// One task run on a workspace, op by op, that can give up its thread
/// while an op waits for other tasks (a channel, a collective) and go on
/// from that op later, on any thread.
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
/// An op that names no blob (Sleep, CopyDirectory, Barrier) runs without
/// the lock and must not touch any blob. An op that waits
/// (op_context::wait_for) holds neither the lock nor a thread while it
/// waits.
///
/// PRIVATE tasks keep blobs they create that `ws` does not have in a
/// scratch map that lives as long as the execution; reads look there first.
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
/// (`op_context::cancelled`): a long one (Sleep) ends early. A wait is not
/// ended by it: whoever cancels must also complete the task's waits.
///
/// Not thread-safe: one thread at a time calls `run`. `task`, `ws`,
/// `registry`, `port` and `cancel` must outlive the execution.
class task_execution {
public:
  task_execution(const task_def& task, workspace& ws,
                 const op_registry& registry,
                 const std::atomic<bool>* cancel = nullptr,
                 before_op_hook before_op = {}, task_port* port = nullptr);

  task_execution(const task_execution&) = delete;
  task_execution& operator=(const task_execution&) = delete;

  /// Runs the task from where it stands until it ends — true: `result()`
  /// holds its outputs (one `task_output` per name in `task.outputs`, in
  /// that order, valued after the last step) or its error — or until an op
  /// waits — false: `pending()` is the wait. Call `run` again once that
  /// wait has completed; the op that waited is called again first.
  bool run();

  /// What the task waits for after `run` returned false.
  const std::shared_ptr<exchange_wait>& pending() const noexcept {
    return calls_.requested;
  }

  /// The end of the task after `run` returned true.
  caf::expected<std::vector<task_output>>& result() noexcept {
    return result_;
  }

private:
  caf::error validate();
  // Runs the current op; false when it waits.
  bool run_current_op(caf::error& err);
  caf::error finish_step_iteration(bool& step_done);
  void finish();

  const task_def& task_;
  workspace& ws_;
  const op_registry& registry_;
  const std::atomic<bool>* cancel_;
  before_op_hook before_op_;
  task_port* port_;
  bool validated_ = false;
  bool ended_ = false;
  std::vector<std::vector<const op_schema*>> schemas_;
  op_context::scratch_map scratch_;
  // Where the task stands: step, iteration of the step, op of the step, and
  // whether that op has started (its hook ran; it may be waiting).
  size_t step_ = 0;
  int64_t iteration_ = 0;
  size_t op_ = 0;
  bool op_started_ = false;
  op_context::call_state calls_;
  caf::expected<std::vector<task_output>> result_{std::vector<task_output>{}};
};

/// Runs one task to completion on the calling thread (a task_execution run
/// to its end) and returns its outputs or error, as task_execution says.
/// An op that waits blocks the calling thread until its wait completes (or
/// `cancel` is set, which then fails the task).
caf::expected<std::vector<task_output>>
run_task(const task_def& task, workspace& ws, const op_registry& registry,
         const std::atomic<bool>* cancel = nullptr,
         const before_op_hook& before_op = {}, task_port* port = nullptr);

/// The truth of a stop blob or stop condition: a single-element numeric or
/// bool tensor (of any shape holding one element) that is not
/// zero. Fails with `type_mismatch` for strings and tensors of more or
/// fewer than one element.
caf::expected<bool> truth_value(const tensor& x);

} // namespace epochrt
