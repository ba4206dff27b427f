#include <epochrt/runtime/job.hpp>

#include <algorithm>
#include <cassert>
#include <set>

#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/exchange_plan.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

struct group_ref {
  const char* name;      // "epoch"
  const char* def_field; // "epoch_group"
  const task_group_def* group;
};

std::vector<group_ref> groups_of(const job_def& def) {
  return {{"init", "init_group", &def.init_group},
          {"epoch", "epoch_group", &def.epoch_group},
          {"download", "download_group", &def.download_group},
          {"exit", "exit_group", &def.exit_group}};
}

void append_unique(std::vector<std::string>& xs, const std::string& x) {
  if (std::find(xs.begin(), xs.end(), x) == xs.end())
    xs.push_back(x);
}

std::vector<std::string> nodes_of(const task_group_def& group) {
  std::vector<std::string> result;
  for (auto& task : group.tasks)
    append_unique(result, task.node);
  return result;
}

std::string generated_name(const char* group, const task_def& task,
                           size_t index) {
  return std::string{group} + "/" + task.node + "/" + std::to_string(index);
}

caf::error invalid(const std::string& path, const std::string& what) {
  return make_error(runtime_errc::invalid_job, path + ": " + what);
}

caf::error check_blob_name(const std::string& path, const std::string& name) {
  if (auto problem = blob_name_problem(name); !problem.empty())
    return invalid(path, problem);
  return caf::none;
}

caf::error check_blob_names(const std::string& path,
                            const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (auto err
        = check_blob_name(path + "[" + std::to_string(i) + "]", names[i]))
      return err;
  return caf::none;
}

caf::error check_op(const std::string& path, const op_def& op,
                    const op_registry& registry) {
  if (auto problem = registry.check(op)) {
    auto text = problem->what;
    if (problem->field.compare(0, 5, "args.") == 0
        && text.compare(0, 8, "expected") == 0)
      text = "arg '" + problem->field.substr(5) + "': " + text;
    return make_error(problem->code, path + ": " + text);
  }
  if (auto err = check_blob_names(path + ".inputs", op.inputs))
    return err;
  return check_blob_names(path + ".outputs", op.outputs);
}

caf::error check_task(const std::string& path, const task_def& task,
                      const op_registry& registry) {
  if (task.name.empty())
    return invalid(path + ".name",
                   "a task needs a name (job::add_task and "
                   "job::name_tasks generate one)");
  if (!valid_blob_name(task.name))
    return invalid(path + ".name",
                   "invalid task name '" + task.name
                     + "' (1 to 256 printable characters, "
                       "no spaces)");
  auto problem = node_name_problem(task.node);
  if (!problem.empty())
    return invalid(path + ".node",
                   "invalid node name '" + task.node + "': " + problem);
  for (size_t s = 0; s < task.steps.size(); ++s) {
    auto& step = task.steps[s];
    auto step_path = path + ".steps[" + std::to_string(s) + "]";
    if (step.num_iter < 0)
      return invalid(step_path + ".num_iter",
                     "expected an integer >= 0, got "
                       + std::to_string(step.num_iter));
    if (step.num_iter == 0 && step.stop_blob.empty())
      return invalid(step_path + ".num_iter",
                     "0 (run until stopped) needs a stop_blob");
    if (!step.stop_blob.empty())
      if (auto err = check_blob_name(step_path + ".stop_blob", step.stop_blob))
        return err;
    for (size_t o = 0; o < step.ops.size(); ++o)
      if (auto err = check_op(step_path + ".ops[" + std::to_string(o) + "]",
                              step.ops[o], registry))
        return err;
  }
  return check_blob_names(path + ".outputs", task.outputs);
}

} // namespace

job::job(std::string name) {
  def_.name = std::move(name);
}

job job::from_def(job_def def) {
  job result{std::string{}};
  result.def_ = std::move(def);
  result.name_tasks();
  return result;
}

void job::add_task(task_group_def& group, task_def task) {
  const char* name = nullptr;
  for (auto& ref : groups_of(def_))
    if (ref.group == &group)
      name = ref.name;
  assert(name != nullptr); // precondition: one of our groups
  if (task.name.empty() && name != nullptr)
    task.name = generated_name(name, task, group.tasks.size());
  group.tasks.push_back(std::move(task));
}

void job::name_tasks() {
  std::pair<const char*, task_group_def*> groups[]
    = {{"init", &def_.init_group},
       {"epoch", &def_.epoch_group},
       {"download", &def_.download_group},
       {"exit", &def_.exit_group}};
  for (auto& [name, group] : groups)
    for (size_t i = 0; i < group->tasks.size(); ++i)
      if (group->tasks[i].name.empty())
        group->tasks[i].name = generated_name(name, group->tasks[i], i);
}

void job::add_stop_condition(std::string node, std::string blob) {
  bool found = false;
  for (auto& task : def_.epoch_group.tasks)
    if (task.node == node
        && std::find(task.outputs.begin(), task.outputs.end(), blob)
          != task.outputs.end())
      found = true;
  if (!found) {
    task_def task;
    task.node = node;
    task.outputs.push_back(blob);
    add_task(def_.epoch_group, std::move(task));
  }
  def_.stop_conditions.push_back(
    stop_condition{std::move(node), std::move(blob)});
}

void job::add_channel(channel_def channel) {
  def_.channels.push_back(std::move(channel));
}

void job::set_nodes_to_checkpoint(std::vector<std::string> nodes) {
  def_.nodes_to_checkpoint = std::move(nodes);
}

std::vector<std::string> job::nodes_to_checkpoint() const {
  if (!def_.nodes_to_checkpoint.empty())
    return def_.nodes_to_checkpoint;
  return nodes_of(def_.init_group);
}

std::vector<std::string> job::nodes() const {
  std::vector<std::string> result;
  for (auto& ref : groups_of(def_))
    for (auto& task : ref.group->tasks)
      append_unique(result, task.node);
  for (auto& channel : def_.channels)
    append_unique(result, channel.node);
  return result;
}

caf::error job::validate(const op_registry& registry, path_style style) const {
  if (!valid_blob_name(def_.name))
    return invalid("name",
                   "invalid job name '" + def_.name
                     + "' (1 to 256 printable characters, no "
                       "spaces)");
  for (auto& ref : groups_of(def_)) {
    std::map<std::string, size_t> seen;
    auto& tasks = ref.group->tasks;
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto index = "[" + std::to_string(i) + "]";
      auto path = style == path_style::file
        ? std::string{ref.name} + index
        : std::string{ref.def_field} + ".tasks" + index;
      if (auto err = check_task(path, tasks[i], registry))
        return err;
      auto [pos, added] = seen.emplace(tasks[i].name, i);
      if (!added)
        return invalid(path + ".name",
                       "duplicate task name '" + tasks[i].name + "' (also task "
                         + std::to_string(pos->second) + " of the " + ref.name
                         + " group)");
    }
  }
  if (auto err = check_channels(def_.channels))
    return err;
  for (auto& ref : groups_of(def_)) {
    auto path = style == path_style::file
      ? std::string{ref.name}
      : std::string{ref.def_field} + ".tasks";
    if (auto plan = make_exchange_plan(*ref.group, def_.channels, path); !plan)
      return std::move(plan.error());
  }
  auto all_nodes = nodes();
  auto used = [&](const std::string& node) {
    return std::find(all_nodes.begin(), all_nodes.end(), node)
      != all_nodes.end();
  };
  for (size_t i = 0; i < def_.stop_conditions.size(); ++i) {
    auto& cond = def_.stop_conditions[i];
    auto path = "stop_conditions[" + std::to_string(i) + "]";
    if (!used(cond.node))
      return invalid(path + ".node",
                     "node '" + cond.node + "' runs no task of the job");
    bool found = false;
    for (auto& task : def_.epoch_group.tasks)
      if (task.node == cond.node
          && std::find(task.outputs.begin(), task.outputs.end(), cond.blob)
            != task.outputs.end())
        found = true;
    if (!found)
      return invalid(path + ".blob",
                     "blob '" + cond.blob
                       + "' is not an output of any epoch task on node '"
                       + cond.node + "'");
  }
  if (def_.epoch_group.tasks.empty())
    return invalid("epoch",
                   "the epoch group has no task: a job runs at least one "
                   "epoch, and its stop conditions are outputs of epoch "
                   "tasks");
  if (def_.stop_conditions.empty())
    return invalid("stop_conditions",
                   "the epoch group has tasks but no stop condition, so it "
                   "would never end (add a stop condition or an epoch "
                   "limit)");
  for (size_t i = 0; i < def_.nodes_to_checkpoint.size(); ++i) {
    auto& node = def_.nodes_to_checkpoint[i];
    if (!used(node))
      return invalid("nodes_to_checkpoint[" + std::to_string(i) + "]",
                     "node '" + node + "' runs no task of the job");
  }
  return caf::none;
}

task_def make_task(std::string name, std::string node, std::vector<op_def> ops,
                   std::vector<std::string> outputs, workspace_type workspace) {
  task_def result;
  result.name = std::move(name);
  result.node = std::move(node);
  result.workspace = workspace;
  if (!ops.empty()) {
    step_def step;
    step.ops = std::move(ops);
    result.steps.push_back(std::move(step));
  }
  result.outputs = std::move(outputs);
  return result;
}

op_def make_op(std::string type, std::vector<std::string> inputs,
               std::vector<std::string> outputs,
               std::map<std::string, tensor> args) {
  return op_def{std::move(type), std::move(inputs), std::move(outputs),
                std::move(args)};
}

void add_task(task_group_def& group, task_def task) {
  group.tasks.push_back(std::move(task));
}

} // namespace epochrt
