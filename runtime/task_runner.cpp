#include <epochrt/runtime/task_runner.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>

#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/op_context.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

namespace {

std::string step_label(const task_def& task, size_t step_index) {
  std::string result
    = "task '" + task.name + "', step " + std::to_string(step_index);
  auto& step = task.steps[step_index];
  if (!step.name.empty())
    result += " '" + step.name + "'";
  return result;
}

std::string op_label(const task_def& task, size_t step_index, size_t op_index) {
  return step_label(task, step_index) + ", op " + std::to_string(op_index)
    + " '" + task.steps[step_index].ops[op_index].type + "'";
}

// Re-wraps `err` with `prefix`, keeping its code when it is ours.
caf::error wrap(const caf::error& err, const std::string& prefix) {
  auto code = in_category(err, runtime_category)
    ? static_cast<runtime_errc>(err.code())
    : runtime_errc::op_failed;
  return make_error(code, prefix + ": " + error_text(err));
}

// Looks a blob up the way ops see it. Precondition: `acc` is held.
const tensor* lookup(workspace::access& acc,
                     const op_context::scratch_map* scratch,
                     const std::string& name) {
  if (scratch != nullptr) {
    auto i = scratch->find(name);
    if (i != scratch->end())
      return &i->second;
  }
  return acc.find(name);
}

// Reads the stop blob of a step after an iteration.
caf::expected<bool> should_stop(const task_def& task, size_t step_index,
                                workspace& ws,
                                const op_context::scratch_map* scratch) {
  auto& name = task.steps[step_index].stop_blob;
  workspace::access acc{ws};
  auto* value = lookup(acc, scratch, name);
  if (value == nullptr)
    return make_error(runtime_errc::missing_blob,
                      step_label(task, step_index) + ": stop blob '" + name
                        + "' does not exist");
  auto result = truth_value(*value);
  if (!result)
    return wrap(result.error(),
                step_label(task, step_index) + ": stop blob '" + name + "'");
  return result;
}

} // namespace

caf::expected<bool> truth_value(const tensor& x) {
  if (x.type == dtype::string || !x.consistent() || x.element_count() != 1)
    return make_error(runtime_errc::type_mismatch,
                      std::string{"expected one numeric or bool element, "
                                  "got "}
                        + to_string(x.type) + " with "
                        + std::to_string(x.element_count()) + " elements");
  return element_as_double(x, 0) != 0;
}

// -- task_execution -----------------------------------------------------------

task_execution::task_execution(const task_def& task, workspace& ws,
                               const op_registry& registry,
                               const std::atomic<bool>* cancel,
                               before_op_hook before_op, task_port* port)
  : task_(task), ws_(ws), registry_(registry), cancel_(cancel),
    before_op_(std::move(before_op)), port_(port) {
  // nop
}

caf::error task_execution::validate() {
  // Everything first: a bad task must not half-run.
  schemas_.reserve(task_.steps.size());
  for (size_t s = 0; s < task_.steps.size(); ++s) {
    auto& step = task_.steps[s];
    if (step.num_iter < 0)
      return make_error(runtime_errc::invalid_job,
                        step_label(task_, s) + ": num_iter must be >= 0, got "
                          + std::to_string(step.num_iter));
    if (step.num_iter == 0 && step.stop_blob.empty())
      return make_error(runtime_errc::invalid_job,
                        step_label(task_, s)
                          + ": num_iter 0 (run until stopped) needs a "
                            "stop_blob");
    auto& step_schemas = schemas_.emplace_back();
    for (size_t o = 0; o < step.ops.size(); ++o) {
      if (auto err = registry_.validate(step.ops[o]))
        return wrap(err, op_label(task_, s, o));
      step_schemas.push_back(registry_.find(step.ops[o].type));
    }
  }
  return {};
}

bool task_execution::run_current_op(caf::error& err) {
  auto& op = task_.steps[step_].ops[op_];
  auto* scratch
    = task_.workspace == workspace_type::private_scratch ? &scratch_ : nullptr;
  // An op that names no blob cannot race on one: it runs unlocked, so a
  // long Sleep or CopyDirectory does not hold up the node's other tasks.
  auto acc = op.inputs.empty() && op.outputs.empty()
    ? workspace::access{ws_, std::defer_lock}
    : workspace::access{ws_};
  // An op resumed after its wait already read its inputs.
  if (calls_.resumed == nullptr)
    for (auto& name : op.inputs)
      if (lookup(acc, scratch, name) == nullptr) {
        err = make_error(runtime_errc::missing_blob,
                         op_label(task_, step_, op_) + ": input '" + name
                           + "' does not exist");
        return true;
      }
  auto& schema = *schemas_[step_][op_];
  for (;;) {
    op_context ctx{acc, scratch, op, task_.node, cancel_, port_, &calls_};
    try {
      err = schema.fn(ctx);
    } catch (const std::exception& ex) {
      err = make_error(runtime_errc::op_failed,
                       std::string{"threw an exception: "} + ex.what());
    } catch (...) {
      err = make_error(runtime_errc::op_failed, "threw an unknown exception");
    }
    calls_.resumed = nullptr;
    if (err || calls_.requested == nullptr)
      break;
    // It waits. Answered at once (a channel of this process with room, the
    // last participant of a collective), it goes on under the same lock.
    if (!calls_.requested->completed())
      return false;
    calls_.resumed = std::move(calls_.requested);
  }
  calls_.requested = nullptr;
  if (err)
    err = wrap(err, op_label(task_, step_, op_));
  return true;
}

bool task_execution::run() {
  if (ended_)
    return true;
  if (!validated_) {
    validated_ = true;
    if (auto err = validate()) {
      result_ = std::move(err);
      ended_ = true;
      return true;
    }
  }
  if (calls_.requested != nullptr) {
    // Called again after the wait of the current op completed.
    calls_.resumed = std::move(calls_.requested);
    calls_.requested = nullptr;
  }
  auto fail = [this](caf::error err) {
    result_ = std::move(err);
    ended_ = true;
    return true;
  };
  while (step_ < task_.steps.size()) {
    auto& step = task_.steps[step_];
    if (step.num_iter != 0 && iteration_ >= step.num_iter) {
      ++step_;
      iteration_ = 0;
      op_ = 0;
      continue;
    }
    if (op_ == 0 && !op_started_ && cancel_ != nullptr
        && cancel_->load(std::memory_order_relaxed))
      return fail(make_error(runtime_errc::cancelled,
                             step_label(task_, step_) + ": cancelled"));
    bool step_ended = false;
    while (op_ < step.ops.size() && !step_ended) {
      if (!op_started_) {
        if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed))
          return fail(make_error(runtime_errc::cancelled,
                                 op_label(task_, step_, op_) + ": cancelled"));
        if (before_op_)
          if (auto err = before_op_(step.ops[op_]))
            return fail(wrap(err, op_label(task_, step_, op_)));
        op_started_ = true;
      }
      caf::error err;
      if (!run_current_op(err))
        return false;
      op_started_ = false;
      if (err)
        return fail(std::move(err));
      ++op_;
      step_ended = calls_.end_step;
      calls_.end_step = false;
    }
    if (step_ended) {
      // An op ended the step (SafeDequeueBlobs at its channel's end).
      ++step_;
      iteration_ = 0;
      op_ = 0;
      continue;
    }
    op_ = 0;
    ++iteration_;
    if (!step.stop_blob.empty()) {
      auto* scratch = task_.workspace == workspace_type::private_scratch
        ? &scratch_
        : nullptr;
      auto stop = should_stop(task_, step_, ws_, scratch);
      if (!stop)
        return fail(std::move(stop.error()));
      if (*stop) {
        ++step_;
        iteration_ = 0;
      }
    }
  }
  finish();
  return true;
}

void task_execution::finish() {
  ended_ = true;
  std::vector<task_output> result;
  result.reserve(task_.outputs.size());
  workspace::access acc{ws_};
  auto* scratch
    = task_.workspace == workspace_type::private_scratch ? &scratch_ : nullptr;
  for (auto& name : task_.outputs) {
    auto* value = lookup(acc, scratch, name);
    if (value == nullptr) {
      result_ = make_error(runtime_errc::missing_blob,
                           "task '" + task_.name + "': output '" + name
                             + "' does not exist");
      return;
    }
    result.push_back(task_output{task_.name, name, *value});
  }
  result_ = std::move(result);
}

caf::expected<std::vector<task_output>>
run_task(const task_def& task, workspace& ws, const op_registry& registry,
         const std::atomic<bool>* cancel, const before_op_hook& before_op,
         task_port* port) {
  task_execution execution{task, ws, registry, cancel, before_op, port};
  // What the completing thread signals; shared, since a cancelled caller
  // may be gone by the time the wait completes.
  struct wakeup {
    annotated_mutex mtx;
    std::condition_variable_any cv;
    bool woken EPOCHRT_GUARDED_BY(mtx) = false;
  };
  while (!execution.run()) {
    auto signal = std::make_shared<wakeup>();
    auto registered = execution.pending()->on_complete([signal] {
      annotated_mutex::guard guard{signal->mtx};
      signal->woken = true;
      signal->cv.notify_all();
    });
    if (!registered)
      continue; // completed already
    annotated_mutex::guard guard{signal->mtx};
    while (!signal->woken) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed))
        return make_error(runtime_errc::op_failed,
                          "task '" + task.name + "': cancelled while waiting");
      signal->cv.wait_for(guard, std::chrono::milliseconds(10));
    }
  }
  return std::move(execution.result());
}

} // namespace epochrt
