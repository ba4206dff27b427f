#include <epochrt/actors/core/job_attempt_rules.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

std::string describe_outputs(const task_group_def& group,
                             const std::vector<task_output>& outputs) {
  std::string text;
  for (auto& out : outputs) {
    if (out.value.type == dtype::string || out.value.element_count() > 8)
      continue;
    text += ' ';
    for (auto& task : group.tasks)
      if (task.name == out.task) {
        text += task.node;
        text += ':';
        break;
      }
    text += out.blob;
    text += '=';
    text += format_values(out.value);
  }
  return text;
}

// Stop conditions are outputs of epoch tasks on the condition's node.
caf::expected<bool> should_stop(const job_def& job,
                                const std::vector<task_output>& outputs) {
  for (auto& cond : job.stop_conditions) {
    const task_output* found = nullptr;
    for (auto& out : outputs) {
      if (out.blob != cond.blob)
        continue;
      for (auto& task : job.epoch_group.tasks)
        if (task.name == out.task && task.node == cond.node)
          found = &out;
    }
    if (found == nullptr)
      return make_error(actors_errc::invalid_argument,
                        "stop condition " + cond.node + ":" + cond.blob
                          + " is not an output of any epoch task");
    auto& value = found->value;
    if (value.type != dtype::string && value.element_count() > 0
        && element_as_double(value, 0) != 0.0)
      return true;
  }
  return false;
}

std::map<std::string, std::set<std::string>>
op_types_by_node(const job_def& job) {
  std::map<std::string, std::set<std::string>> result;
  for (auto* group : {&job.init_group, &job.epoch_group, &job.download_group,
                      &job.exit_group})
    for (auto& task : group->tasks)
      for (auto& step : task.steps)
        for (auto& op : step.ops)
          result[task.node].insert(op.type);
  return result;
}

} // namespace epochrt
