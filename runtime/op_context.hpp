#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

/// What an op sees while it runs: its call (`def`), its inputs and outputs
/// as blobs, and its arguments.
///
/// Lifetime and locking: the task runner creates one context per op call,
/// on its own stack, holding the node's workspace (`access`) locked when
/// the call names a blob; a call that names none (Sleep, CopyDirectory)
/// gets an unlocked access and must not touch a blob. The op must not keep
/// any pointer or reference past its return.
///
/// Aliasing: an output may name the same blob as an input (Add(total, x)
/// -> total). Writing an output (`output`, `set_output`, `mutable_input`)
/// may invalidate references previously returned by `input` for the same
/// blob. Ops therefore read their inputs first and write their outputs
/// last, or compute into a local tensor and `set_output` it.
///
/// PRIVATE tasks: reads look in the task's scratch blobs first, then in the
/// workspace; a write goes to scratch unless the workspace already has the
/// blob (and scratch does not).
///
/// Waiting: an op that must wait for something outside its task (a
/// channel, a collective) starts the operation on its task's `port()`,
/// and returns `wait_for(wait)`. Its task then gives up its thread and the
/// workspace lock until the wait completes, and the op is called again,
/// with a new context whose `resumed()` is that wait: it finishes there
/// (writes its outputs from the outcome). Nothing else of the task runs
/// meanwhile; other tasks of the node do.
class op_context {
public:
  /// Task-local blobs of a PRIVATE task.
  using scratch_map = std::map<std::string, tensor, std::less<>>;

  /// What an op call tells its task's runner beyond its error, and what
  /// the runner tells the op's next call: owned by the runner.
  struct call_state {
    /// What the call waits for: set by `wait_for`.
    std::shared_ptr<exchange_wait> requested;
    /// Set by the runner for the call after the wait completed.
    std::shared_ptr<exchange_wait> resumed;
    /// Set by `end_step`.
    bool end_step = false;
  };

  /// Precondition: every input of `def` exists (the runner checks it).
  /// `scratch` is null for a GLOBAL task.
  /// `cancel`, when given, is the task's cancel flag (see `cancelled`).
  /// `port` is the task's exchange (null: channel and collective ops fail),
  /// `calls` where a call's wait and step end go (null: no op may wait or
  /// end its step).
  op_context(workspace::access& ws, scratch_map* scratch, const op_def& def,
             const std::string& node, const std::atomic<bool>* cancel = nullptr,
             task_port* port = nullptr, call_state* calls = nullptr);

  op_context(const op_context&) = delete;
  op_context& operator=(const op_context&) = delete;

  const op_def& def() const noexcept {
    return def_;
  }

  /// The name of the node the task runs on.
  const std::string& node() const noexcept {
    return node_;
  }

  size_t input_count() const noexcept {
    return def_.inputs.size();
  }

  size_t output_count() const noexcept {
    return def_.outputs.size();
  }

  /// Precondition: `i < input_count()`.
  const tensor& input(size_t i) const;

  /// The input blob `i`, writable in place (for ops such as CountDown that
  /// update an input). Clones it first when a snapshot holds it.
  tensor& mutable_input(size_t i);

  /// The output blob `i`, writable in place; created as a f32 scalar 0 when
  /// absent. Precondition: `i < output_count()`.
  tensor& output(size_t i);

  /// Replaces output blob `i` with `value`.
  void set_output(size_t i, tensor value);

  /// Whether output blob `i` exists (in the workspace, or a PRIVATE task's
  /// scratch). Precondition: `i < output_count()`.
  bool has_output(size_t i) const;

  /// Input `i` as a shared, immutable value, without a copy when it lives
  /// in the workspace (a PRIVATE task's scratch blob is copied).
  tensor_ptr share_input(size_t i) const;

  /// Replaces output blob `i` with `value`, shared with whoever else holds
  /// it (copied into a PRIVATE task's scratch).
  void set_output_shared(size_t i, tensor_ptr value);

  /// Input `i` for code that the runtime cannot watch, which may write into
  /// it whatever it was told (a Python op's arrays): see
  /// `workspace::access::expose`. A PRIVATE task's scratch blob is exposed
  /// as a copy, which `settle_input` takes back. The caller makes sure the
  /// code keeps no reference to it past the call (`disown_input`).
  std::shared_ptr<tensor> expose_input(size_t i);

  /// After the code ran: what it wrote into `exposed`, input `i` as
  /// `expose_input` returned it, becomes the input blob's value.
  void settle_input(size_t i, const std::shared_ptr<tensor>& exposed);

  /// Input `i` stops using the tensor at `exposed` when it still does (the
  /// code kept a reference to it): `workspace::access::disown`.
  void disown_input(size_t i, const tensor* exposed);

  /// The task's exchange, or null when it runs without one.
  task_port* port() const noexcept {
    return port_;
  }

  /// Suspends the op until `wait` completes (see the class comment);
  /// returns no error. Precondition: the op was not resumed from a wait,
  /// and `wait` is not null. Without a wait slot (a runner that cannot
  /// suspend), an error.
  caf::error wait_for(std::shared_ptr<exchange_wait> wait);

  /// The completed wait that this call of the op resumes after, or null on
  /// the op's first call.
  exchange_wait* resumed() const noexcept {
    return calls_ != nullptr ? calls_->resumed.get() : nullptr;
  }

  /// Ends the op's step once the op returns without an error: the ops
  /// after it in the step do not run, and the step does not iterate again
  /// (SafeDequeueBlobs at the end of its channel). No effect without a
  /// call state.
  void end_step() noexcept {
    if (calls_ != nullptr)
      calls_->end_step = true;
  }

  /// Typed arguments; `fallback` when the call does not give the argument.
  /// The registry checked their kinds before the op runs.
  int64_t int_arg(const std::string& name, int64_t fallback = 0) const;
  double number_arg(const std::string& name, double fallback = 0) const;
  bool bool_arg(const std::string& name, bool fallback = false) const;
  std::string string_arg(const std::string& name,
                         std::string fallback = {}) const;
  std::vector<int64_t> int_list_arg(const std::string& name,
                                    std::vector<int64_t> fallback = {}) const;
  std::vector<double> number_list_arg(const std::string& name,
                                      std::vector<double> fallback = {}) const;
  std::vector<std::string> string_list_arg(const std::string& name,
                                           std::vector<std::string> fallback
                                           = {}) const;

  bool has_arg(const std::string& name) const {
    return def_.args.count(name) > 0;
  }

  /// An error value for this op. The runner prefixes it with the task,
  /// step, op index and type, so `what` need not repeat them.
  caf::error fail(runtime_errc code, const std::string& what) const;

  /// True once the task was asked to stop (its group failed or timed out,
  /// or its node stopped). An op that waits or loops for long polls it and
  /// returns `fail(op_failed, "cancelled")`, so that a failed job's threads
  /// end soon instead of when the op would have.
  bool cancelled() const noexcept {
    return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed);
  }

private:
  const tensor* find(std::string_view name) const;
  // A PRIVATE task's scratch blob `name`, or null.
  const tensor* scratch_blob(std::string_view name) const;
  tensor& writable(const std::string& name);
  const tensor* arg(const std::string& name) const;

  workspace::access& ws_;
  scratch_map* scratch_;
  const op_def& def_;
  const std::string& node_;
  const std::atomic<bool>* cancel_;
  task_port* port_;
  call_state* calls_;
};

/// Element `i` of an integer, bool or floating tensor as int64 (integers
/// exactly, floats truncated). Precondition: numeric or bool tensor and
/// `i < x.element_count()`.
int64_t element_as_int(const tensor& x, size_t i) noexcept;

} // namespace epochrt
