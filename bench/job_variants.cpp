#include "bench/job_variants.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <epochrt/runtime/job.hpp>

namespace epochrt::bench {

namespace {

bool produces(const task_def& task, const std::string& blob) {
  for (auto& step : task.steps)
    for (auto& op : step.ops)
      if (std::find(op.outputs.begin(), op.outputs.end(), blob)
          != op.outputs.end())
        return true;
  return false;
}

bool has_collective(const task_def& task) {
  for (auto& step : task.steps)
    for (auto& op : step.ops)
      if (is_collective(op))
        return true;
  return false;
}

} // namespace

bool is_collective(const op_def& op) {
  return op.type == "Allreduce" || op.type == "Broadcast"
    || op.type == "Allgather" || op.type == "Barrier";
}

job_def without_collectives(const job_def& def, bool global_epoch) {
  auto result = def;
  for (auto& task : result.epoch_group.tasks) {
    if (global_epoch)
      task.workspace = workspace_type::global;
    for (auto& step : task.steps) {
      std::vector<op_def> ops;
      for (auto& op : step.ops) {
        if (!is_collective(op)) {
          ops.push_back(op);
          continue;
        }
        // One output per input (Allreduce, Broadcast); Allgather and
        // Barrier differ, but a pair-wise copy still leaves every output
        // defined for the ops after it.
        auto n = std::min(op.inputs.size(), op.outputs.size());
        for (size_t i = 0; i < n; ++i)
          if (op.inputs[i] != op.outputs[i])
            ops.push_back(make_op("Copy", {op.inputs[i]}, {op.outputs[i]}));
      }
      step.ops = std::move(ops);
    }
  }
  return result;
}

std::vector<collective_input> collective_inputs(const job_def& def) {
  std::vector<collective_input> result;
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& task : def.epoch_group.tasks)
    for (auto& step : task.steps)
      for (auto& op : step.ops)
        if (is_collective(op))
          for (auto& blob : op.inputs)
            if (seen.emplace(task.node, blob).second)
              result.push_back(collective_input{task.node, blob});
  return result;
}

job_def collectives_only(const job_def& def,
                         const std::vector<typed_input>& inputs) {
  auto result = def;
  for (auto& task : result.epoch_group.tasks) {
    if (!has_collective(task))
      continue;
    std::vector<step_def> steps;
    for (auto& step : task.steps) {
      std::vector<op_def> ops;
      for (auto& op : step.ops)
        if (is_collective(op))
          ops.push_back(op);
      if (!step.stop_blob.empty() && ops.size() != step.ops.size())
        throw std::runtime_error("step '" + step.name + "' of task '"
                                 + task.name
                                 + "' ends on a stop blob: its collectives "
                                   "alone would not iterate as it does");
      if (ops.empty())
        continue;
      step.ops = std::move(ops);
      steps.push_back(std::move(step));
    }
    task.steps = std::move(steps);
    std::vector<std::string> outputs;
    for (auto& out : task.outputs)
      if (produces(task, out))
        outputs.push_back(out);
    task.outputs = std::move(outputs);
  }
  std::map<std::string, std::vector<op_def>> fills;
  for (auto& in : inputs) {
    // ConstantFill takes `[]` for a scalar.
    auto rank = static_cast<int64_t>(in.shape.size());
    fills[in.where.node].push_back(
      make_op("ConstantFill", {}, {in.where.blob},
              {{"shape", make_tensor<int64_t>({rank}, in.shape)},
               {"value", make_scalar<double>(1.0)},
               {"dtype", make_string_tensor({}, {to_string(in.type)})}}));
  }
  for (auto& [node, ops] : fills)
    result.init_group.tasks.push_back(
      make_task("bench_fill_" + node, node, std::move(ops)));
  return result;
}

} // namespace epochrt::bench
