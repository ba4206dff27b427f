#include <epochrt/runtime/epoch_limiter.hpp>

#include <string>

#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// What epoch_limiter names its tasks and its counter's argument, and
// epoch_limit reads back.
constexpr const char* init_task = "epoch_limiter/init";
constexpr const char* init_count = "init_count";

bool has_task(const task_group_def& group, const std::string& name) {
  for (auto& task : group.tasks)
    if (task.name == name)
      return true;
  return false;
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
  auto counter = "epoch_limiter/counter" + suffix;
  auto finished = "epoch_limiter/finished" + suffix;
  j.add_task(
    j.init_group(),
    make_task(init_task + suffix, node,
              {make_op("CreateCounter", {}, {counter},
                       {{init_count, make_scalar<int64_t>(num_epochs - 1)}})}));
  j.add_task(j.epoch_group(),
             make_task("epoch_limiter/countdown" + suffix, node,
                       {make_op("CountDown", {counter}, {finished})},
                       {finished}));
  j.add_stop_condition(node, finished);
  return caf::none;
}

bool is_epoch_limit_argument(const task_def& task, const op_def& op,
                             const std::string& arg) noexcept {
  return task.name.rfind(init_task, 0) == 0 && op.type == "CreateCounter"
    && arg == init_count;
}

std::optional<int64_t> epoch_limit(const job& j) {
  std::optional<int64_t> limit;
  for (auto& task : j.init_group().tasks) {
    if (task.name.rfind(init_task, 0) != 0)
      continue;
    for (auto& step : task.steps)
      for (auto& op : step.ops) {
        auto count = op.args.find(init_count);
        if (op.type != "CreateCounter" || count == op.args.end()
            || count->second.type == dtype::string
            || count->second.element_count() != 1)
          continue;
        auto n = static_cast<int64_t>(element_as_double(count->second, 0)) + 1;
        if (!limit || n < *limit)
          limit = n;
      }
  }
  return limit;
}

} // namespace epochrt
