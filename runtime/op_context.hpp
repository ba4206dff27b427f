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
class op_context {
public:
  /// Task-local blobs of a PRIVATE task.
  using scratch_map = std::map<std::string, tensor, std::less<>>;

  /// Precondition: every input of `def` exists (the runner checks it).
  /// `scratch` is null for a GLOBAL task.
  /// `cancel`, when given, is the task's cancel flag (see `cancelled`).
  op_context(workspace::access& ws, scratch_map* scratch, const op_def& def,
             const std::string& node,
             const std::atomic<bool>* cancel = nullptr);

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
  tensor& writable(const std::string& name);
  const tensor* arg(const std::string& name) const;

  workspace::access& ws_;
  scratch_map* scratch_;
  const op_def& def_;
  const std::string& node_;
  const std::atomic<bool>* cancel_;
};

/// Element `i` of an integer, bool or floating tensor as int64 (integers
/// exactly, floats truncated). Precondition: numeric or bool tensor and
/// `i < x.element_count()`.
int64_t element_as_int(const tensor& x, size_t i) noexcept;

} // namespace epochrt
