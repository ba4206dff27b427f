#include <epochrt/runtime/job_definition.hpp>

#include <nlohmann/json.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/op_registry.hpp>

namespace epochrt {

namespace {

using json = nlohmann::json; // objects keep their keys sorted: canonical

// An argument as a job file writes it: the values, with the type named
// unless it is the i64 or string a bare integer or text is.
json argument(const tensor& x) {
  std::string text;
  if (x.type == dtype::string) {
    for (size_t i = 0; i < x.strings.size(); ++i)
      text += (i > 0 ? "," : "") + json(x.strings[i]).dump();
  } else {
    text = format_values(x);
  }
  if (!x.shape.empty())
    text = "[" + text + "]";
  if (x.type != dtype::i64 && x.type != dtype::string)
    text = std::string{to_string(x.type)} + " " + text;
  return text;
}

json task_json(const task_def& task, bool in_epoch) {
  json steps = json::array();
  for (auto& step : task.steps) {
    json ops = json::array();
    for (auto& op : step.ops) {
      json args = json::object();
      for (auto& [name, value] : op.args)
        args[name] = in_epoch && is_epoch_limit_argument(task, op, name)
          ? json("(the epoch limit)")
          : argument(value);
      ops.push_back({{"type", op.type},
                     {"inputs", op.inputs},
                     {"outputs", op.outputs},
                     {"args", args}});
    }
    steps.push_back({{"name", step.name},
                     {"num_iter", step.num_iter},
                     {"stop_blob", step.stop_blob},
                     {"ops", ops}});
  }
  return {{"name", task.name},
          {"node", task.node},
          {"workspace",
           task.workspace == workspace_type::global ? "global" : "private"},
          {"outputs", task.outputs},
          {"steps", steps}};
}

json group_json(const task_group_def& group, bool in_epoch = false) {
  json result = json::array();
  for (auto& task : group.tasks)
    result.push_back(task_json(task, in_epoch));
  return result;
}

std::string leaf_text(const json* x) {
  if (x == nullptr)
    return "(none)";
  if (x->is_string())
    return x->get<std::string>();
  return x->dump();
}

// The first difference below `path`, depth first in key and index order.
std::string difference(const json* x, const json* y, const std::string& path) {
  auto same_kind = x != nullptr && y != nullptr && x->type() == y->type();
  if (same_kind && x->is_object()) {
    std::vector<std::string> keys;
    for (auto& [key, value] : x->items())
      keys.push_back(key);
    for (auto& [key, value] : y->items())
      if (!x->contains(key))
        keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    for (auto& key : keys) {
      auto xi = x->find(key);
      auto yi = y->find(key);
      auto found = difference(xi == x->end() ? nullptr : &*xi,
                              yi == y->end() ? nullptr : &*yi,
                              path.empty() ? key : path + "." + key);
      if (!found.empty())
        return found;
    }
    return {};
  }
  if (same_kind && x->is_array()) {
    for (size_t i = 0; i < std::max(x->size(), y->size()); ++i) {
      auto found = difference(i < x->size() ? &(*x)[i] : nullptr,
                              i < y->size() ? &(*y)[i] : nullptr,
                              path + "[" + std::to_string(i) + "]");
      if (!found.empty())
        return found;
    }
    return {};
  }
  if (x != nullptr && y != nullptr && *x == *y)
    return {};
  return (path.empty() ? std::string{"(the job)"} : path) + ": " + leaf_text(x)
    + " -> " + leaf_text(y);
}

} // namespace

std::string job_definition(const job& j, const op_registry* ops) {
  json stops = json::array();
  for (auto& stop : j.stop_conditions())
    stops.push_back({{"node", stop.node}, {"blob", stop.blob}});
  json channels = json::array();
  for (auto& channel : j.channels())
    channels.push_back({{"name", channel.name},
                        {"node", channel.node},
                        {"capacity", channel.capacity},
                        {"blobs", channel.blobs}});
  json result{{"init", group_json(j.init_group())},
              {"epoch", group_json(j.epoch_group(), true)},
              {"download", group_json(j.download_group())},
              {"exit", group_json(j.exit_group())},
              {"stop_conditions", stops},
              {"nodes_to_checkpoint", j.nodes_to_checkpoint()},
              {"channels", channels}};
  // Only ops whose code can change apart from the program's: a job of
  // builtins keeps the text it had before code versions were recorded.
  if (ops != nullptr) {
    json code = json::object();
    for (auto* group : {&j.init_group(), &j.epoch_group(), &j.download_group(),
                        &j.exit_group()})
      for (auto& task : group->tasks)
        for (auto& step : task.steps)
          for (auto& op : step.ops)
            if (auto version = ops->code_version(op.type); !version.empty())
              code[op.type] = version;
    if (!code.empty())
      result["op_code"] = std::move(code);
  }
  return result.dump();
}

std::string first_difference(const std::string& recorded,
                             const std::string& current) {
  if (recorded == current)
    return {};
  auto x = json::parse(recorded, nullptr, false);
  auto y = json::parse(current, nullptr, false);
  if (x.is_discarded() || y.is_discarded())
    return "(the job): recorded definition unreadable";
  auto found = difference(&x, &y, "");
  // Equal trees in different texts: not made by job_definition.
  return found.empty() ? "(the job): recorded definition not canonical" : found;
}

} // namespace epochrt
