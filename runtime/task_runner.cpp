#include <epochrt/runtime/task_runner.hpp>

#include <exception>
#include <string>

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
  auto code = err.category() == runtime_category
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

caf::error run_op(const task_def& task, size_t step_index, size_t op_index,
                  workspace& ws, const op_schema& schema,
                  op_context::scratch_map* scratch,
                  const std::atomic<bool>* cancel) {
  auto& op = task.steps[step_index].ops[op_index];
  // An op that names no blob cannot race on one: it runs unlocked, so a
  // long Sleep or CopyDirectory does not hold up the node's other tasks.
  auto acc = op.inputs.empty() && op.outputs.empty()
    ? workspace::access{ws, std::defer_lock}
    : workspace::access{ws};
  for (auto& name : op.inputs)
    if (lookup(acc, scratch, name) == nullptr)
      return make_error(runtime_errc::missing_blob,
                        op_label(task, step_index, op_index) + ": input '"
                          + name + "' does not exist");
  op_context ctx{acc, scratch, op, task.node, cancel};
  caf::error err;
  try {
    err = schema.fn(ctx);
  } catch (const std::exception& ex) {
    err = make_error(runtime_errc::op_failed,
                     std::string{"threw an exception: "} + ex.what());
  } catch (...) {
    err = make_error(runtime_errc::op_failed, "threw an unknown exception");
  }
  if (err)
    return wrap(err, op_label(task, step_index, op_index));
  return caf::none;
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

caf::expected<std::vector<task_output>>
run_task(const task_def& task, workspace& ws, const op_registry& registry,
         const std::atomic<bool>* cancel, const before_op_hook& before_op) {
  // Validate everything first: a bad task must not half-run.
  std::vector<std::vector<const op_schema*>> schemas;
  schemas.reserve(task.steps.size());
  for (size_t s = 0; s < task.steps.size(); ++s) {
    auto& step = task.steps[s];
    if (step.num_iter < 0)
      return make_error(runtime_errc::invalid_job,
                        step_label(task, s) + ": num_iter must be >= 0, got "
                          + std::to_string(step.num_iter));
    if (step.num_iter == 0 && step.stop_blob.empty())
      return make_error(runtime_errc::invalid_job,
                        step_label(task, s)
                          + ": num_iter 0 (run until stopped) needs a "
                            "stop_blob");
    auto& step_schemas = schemas.emplace_back();
    for (size_t o = 0; o < step.ops.size(); ++o) {
      if (auto err = registry.validate(step.ops[o]))
        return wrap(err, op_label(task, s, o));
      step_schemas.push_back(registry.find(step.ops[o].type));
    }
  }
  op_context::scratch_map scratch_blobs;
  auto* scratch = task.workspace == workspace_type::private_scratch
    ? &scratch_blobs
    : nullptr;
  for (size_t s = 0; s < task.steps.size(); ++s) {
    auto& step = task.steps[s];
    for (int64_t iter = 0; step.num_iter == 0 || iter < step.num_iter; ++iter) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed))
        return make_error(runtime_errc::op_failed,
                          step_label(task, s) + ": cancelled");
      for (size_t o = 0; o < step.ops.size(); ++o) {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed))
          return make_error(runtime_errc::op_failed,
                            op_label(task, s, o) + ": cancelled");
        if (before_op)
          if (auto err = before_op(step.ops[o]))
            return wrap(err, op_label(task, s, o));
        if (auto err = run_op(task, s, o, ws, *schemas[s][o], scratch, cancel))
          return err;
      }
      if (!step.stop_blob.empty()) {
        auto stop = should_stop(task, s, ws, scratch);
        if (!stop)
          return std::move(stop.error());
        if (*stop)
          break;
      }
    }
  }
  std::vector<task_output> result;
  result.reserve(task.outputs.size());
  workspace::access acc{ws};
  for (auto& name : task.outputs) {
    auto* value = lookup(acc, scratch, name);
    if (value == nullptr)
      return make_error(runtime_errc::missing_blob,
                        "task '" + task.name + "': output '" + name
                          + "' does not exist");
    result.push_back(task_output{task.name, name, *value});
  }
  return result;
}

} // namespace epochrt
