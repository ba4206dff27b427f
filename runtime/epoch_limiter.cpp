#include <epochrt/runtime/epoch_limiter.hpp>

#include <string>

#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/op_context.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// What epoch_limiter names its tasks and its op's argument, and
// epoch_limit reads back.
constexpr const char* init_task = "epoch_limiter/init";
constexpr const char* count_task = "epoch_limiter/count";
constexpr const char* limit_arg = "limit";

bool has_task(const task_group_def& group, const std::string& name) {
  for (auto& task : group.tasks)
    if (task.name == name)
      return true;
  return false;
}

bool starts_with(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}

} // namespace

caf::error epoch_limiter(job& j, int64_t num_epochs) {
  if (num_epochs < 1)
    return make_error(runtime_errc::bad_argument,
                      "epoch_limiter: num_epochs must be at least 1, got "
                        + std::to_string(num_epochs));
  std::string node;
  if (!j.epoch_group().tasks.empty()) {
    node = j.epoch_group().tasks.front().node;
  } else {
    auto all = j.nodes();
    if (all.empty())
      return make_error(runtime_errc::invalid_job,
                        "epoch_limiter: the job has no task, so no node to "
                        "count epochs on");
    node = all.front();
  }
  // A unique suffix when the job already has a limiter.
  std::string suffix;
  for (int n = 2; has_task(j.init_group(), init_task + suffix); ++n)
    suffix = "_" + std::to_string(n);
  auto counter = "epoch_limiter/epochs" + suffix;
  auto finished = "epoch_limiter/finished" + suffix;
  j.add_task(j.init_group(),
             make_task(init_task + suffix, node,
                       {make_op("CreateCounter", {}, {counter})}));
  j.add_task(
    j.epoch_group(),
    make_task(count_task + suffix, node,
              {make_op("EpochLimit", {counter}, {finished},
                       {{limit_arg, make_scalar<int64_t>(num_epochs)}})},
              {finished}));
  j.add_stop_condition(node, finished);
  return caf::none;
}

bool is_epoch_limit_argument(const task_def& task, const op_def& op,
                             const std::string& arg) noexcept {
  return starts_with(task.name, count_task) && op.type == "EpochLimit"
    && arg == limit_arg;
}

std::optional<int64_t> epoch_limit(const job_def& j) {
  std::optional<int64_t> limit;
  for (auto& task : j.epoch_group.tasks) {
    if (!starts_with(task.name, count_task))
      continue;
    for (auto& step : task.steps)
      for (auto& op : step.ops) {
        auto count = op.args.find(limit_arg);
        if (op.type != "EpochLimit" || count == op.args.end()
            || count->second.type == dtype::string
            || count->second.element_count() != 1)
          continue;
        auto n = element_as_int(count->second, 0);
        if (!limit || n < *limit)
          limit = n;
      }
  }
  return limit;
}

std::vector<std::pair<std::string, std::string>>
epoch_limiter_outputs(const job_def& j) {
  std::vector<std::pair<std::string, std::string>> result;
  for (auto& task : j.epoch_group.tasks)
    if (starts_with(task.name, count_task) && !task.outputs.empty())
      result.emplace_back(task.node, task.outputs.front());
  return result;
}

std::optional<int64_t> epoch_limit(const job& j) {
  return epoch_limit(j.def());
}

} // namespace epochrt
