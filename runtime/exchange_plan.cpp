#include <epochrt/runtime/exchange_plan.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/exchange_ops.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

caf::error invalid(const std::string& path, const std::string& what) {
  return make_error(runtime_errc::invalid_job, path + ": " + what);
}

void add_unique(std::vector<task_ref>& xs, const task_ref& x) {
  if (std::find(xs.begin(), xs.end(), x) == xs.end())
    xs.push_back(x);
}

// One collective as the group's ops declare it, before its participants
// are sorted; `path` is where it was first seen.
struct collective_seen {
  collective_plan plan;
  std::string path;
};

caf::error add_collective(std::map<std::string, collective_seen>& seen,
                          const std::string& path, const task_def& task,
                          const op_def& op, collective_kind kind) {
  auto name = string_arg_of(op, "collective");
  if (!valid_blob_name(name))
    return invalid(path + ".args.collective",
                   "invalid collective name '" + name
                     + "' (1 to 256 printable characters, no spaces)");
  collective_plan plan;
  plan.name = name;
  plan.kind = kind;
  if (kind == collective_kind::all_reduce)
    plan.op
      = reduce_op_from_name(string_arg_of(op, "op")).value_or(reduce_op::sum);
  if (kind == collective_kind::broadcast)
    plan.root = string_arg_of(op, "root");
  auto [i, added] = seen.emplace(name, collective_seen{plan, path});
  auto& known = i->second.plan;
  if (!added) {
    auto first = " (as at " + i->second.path + ")";
    if (known.kind != kind)
      return invalid(path,
                     "collective '" + name + "' is " + describe_one(known.kind)
                       + first + ", not " + describe_one(kind));
    if (known.op != plan.op)
      return invalid(path + ".args.op",
                     "collective '" + name + "' reduces by "
                       + to_string(known.op) + first + ", not by "
                       + to_string(plan.op));
    if (known.root != plan.root)
      return invalid(path + ".args.root",
                     "collective '" + name + "' has root " + known.root + first
                       + ", not " + plan.root);
  }
  add_unique(known.participants, task_ref{task.node, task.name});
  return {};
}

} // namespace

caf::error check_channels(const std::vector<channel_def>& channels,
                          const std::string& path) {
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < channels.size(); ++i) {
    auto& ch = channels[i];
    auto at = path + "[" + std::to_string(i) + "]";
    if (!valid_blob_name(ch.name))
      return invalid(at + ".name",
                     "invalid channel name '" + ch.name
                       + "' (1 to 256 printable characters, no spaces)");
    if (auto [pos, added] = names.emplace(ch.name, i); !added)
      return invalid(at + ".name",
                     "duplicate channel name '" + ch.name + "' (also " + path
                       + "[" + std::to_string(pos->second) + "])");
    if (auto problem = node_name_problem(ch.node); !problem.empty())
      return invalid(at + ".node",
                     "invalid node name '" + ch.node + "': " + problem);
    if (ch.capacity < 1 || ch.capacity > max_channel_capacity)
      return invalid(at + ".capacity",
                     "expected 1 to " + std::to_string(max_channel_capacity)
                       + ", got " + std::to_string(ch.capacity));
    if (ch.blobs.empty())
      return invalid(at + ".blobs", "an item needs at least one blob");
    std::set<std::string> blobs;
    for (size_t b = 0; b < ch.blobs.size(); ++b) {
      auto blob_path = at + ".blobs[" + std::to_string(b) + "]";
      if (!valid_blob_name(ch.blobs[b]))
        return invalid(blob_path,
                       "invalid blob name '" + ch.blobs[b]
                         + "' (1 to 256 printable characters, "
                           "no spaces)");
      if (!blobs.insert(ch.blobs[b]).second)
        return invalid(blob_path, "duplicate blob '" + ch.blobs[b] + "'");
    }
  }
  return {};
}

caf::expected<exchange_plan>
make_exchange_plan(const task_group_def& group,
                   const std::vector<channel_def>& channels,
                   const std::string& tasks_path) {
  exchange_plan result;
  std::map<std::string, collective_seen> collectives;
  // Channels by name, in order of first use.
  std::map<std::string, size_t> used;
  for (size_t t = 0; t < group.tasks.size(); ++t) {
    auto& task = group.tasks[t];
    for (size_t s = 0; s < task.steps.size(); ++s) {
      auto& ops = task.steps[s].ops;
      for (size_t o = 0; o < ops.size(); ++o) {
        auto& op = ops[o];
        // Built only when needed: most ops of a group are neither, and
        // this runs for every run of a group.
        auto path = [&] {
          return tasks_path + "[" + std::to_string(t) + "].steps["
            + std::to_string(s) + "].ops[" + std::to_string(o) + "]";
        };
        if (auto kind = collective_kind_of(op.type)) {
          if (auto err = add_collective(collectives, path(), task, op, *kind))
            return err;
          continue;
        }
        auto use = channel_use_of(op.type);
        if (use == channel_use::none)
          continue;
        auto name = string_arg_of(op, "channel");
        auto decl = std::find_if(channels.begin(), channels.end(),
                                 [&](const channel_def& ch) {
                                   return ch.name == name;
                                 });
        if (decl == channels.end())
          return invalid(path() + ".args.channel",
                         "unknown channel '" + name
                           + "' (the job declares no channel of that name)");
        size_t blobs = use == channel_use::put ? op.inputs.size()
          : use == channel_use::take
          ? op.outputs.size() - (op.type == exchange_ops::safe_dequeue ? 1 : 0)
          : decl->blobs.size();
        if (blobs != decl->blobs.size())
          return invalid(path(),
                         "an item of channel '" + name + "' has "
                           + std::to_string(decl->blobs.size())
                           + " blobs, the op "
                           + (use == channel_use::put ? "puts " : "takes ")
                           + std::to_string(blobs));
        auto [pos, added] = used.emplace(name, result.channels.size());
        if (added)
          result.channels.push_back(channel_plan{*decl, {}, {}});
        auto& plan = result.channels[pos->second];
        if (use == channel_use::take)
          add_unique(plan.takers, task_ref{task.node, task.name});
        else
          add_unique(plan.putters, task_ref{task.node, task.name});
      }
    }
  }
  for (auto& plan : result.channels) {
    bool closed = false;
    // The tasks that put (not those that only close), for the error.
    std::vector<task_ref> putting;
    for (auto& task : group.tasks)
      for (auto& step : task.steps)
        for (auto& op : step.ops)
          if (string_arg_of(op, "channel") == plan.channel.name) {
            closed = closed || op.type == exchange_ops::close;
            if (op.type == exchange_ops::enqueue)
              add_unique(putting, task_ref{task.node, task.name});
          }
    if (!closed)
      return invalid(tasks_path,
                     "channel '" + plan.channel.name
                       + "' is used but no task of the group closes it "
                         "(CloseBlobsQueue): a channel must be closed and "
                         "empty when its group ends");
    if (!putting.empty() && plan.takers.empty())
      return invalid(tasks_path,
                     "tasks " + tasks_text(putting) + " put into channel '"
                       + plan.channel.name
                       + "' but no task of the group takes from "
                         "it");
  }
  for (auto& [name, seen] : collectives) {
    auto plan = std::move(seen.plan);
    std::sort(plan.participants.begin(), plan.participants.end());
    if (plan.kind == collective_kind::broadcast) {
      auto at_root
        = std::count_if(plan.participants.begin(), plan.participants.end(),
                        [&](const task_ref& x) {
                          return x.node == plan.root;
                        });
      if (at_root != 1)
        return invalid(
          seen.path + ".args.root",
          "broadcast '" + name + "' has root " + plan.root + ", where "
            + (at_root == 0 ? std::string{"none"} : std::to_string(at_root))
            + " of its participants run (it takes one): "
            + tasks_text(plan.participants));
    }
    result.collectives.push_back(std::move(plan));
  }
  return result;
}

std::vector<std::string> channel_only_nodes(const exchange_plan& plan,
                                            const task_group_def& group) {
  std::vector<std::string> result;
  for (auto& ch : plan.channels) {
    auto& node = ch.channel.node;
    bool runs_task = std::any_of(group.tasks.begin(), group.tasks.end(),
                                 [&](const task_def& t) {
                                   return t.node == node;
                                 });
    if (!runs_task
        && std::find(result.begin(), result.end(), node) == result.end())
      result.push_back(node);
  }
  return result;
}

} // namespace epochrt
