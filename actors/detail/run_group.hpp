#pragma once

// Internal to actors/: one task group run across its nodes from inside an
// actor, on the shared gather. The group runner actor is this for a
// blocking caller; the job runner calls it directly for every group of a
// job, so that an epoch costs no actor spawned and no request in between.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt::detail {

/// The nodes of a job by name.
using node_map = std::map<std::string, node_actor>;

/// A group's gather in flight; null when the group settled at once.
using group_gather = std::shared_ptr<gather_state<tasks_done>>;

/// A node's error other than a timeout or a node that is down (the gather
/// makes those node_lost, naming node, group and epoch). A lost remote
/// node's proxy names the node and its address; the group and epoch are
/// known here only. Other errors of the actors layer (a failed task) pass
/// as they are; anything else means the node cannot be relied on.
inline caf::error group_node_failure(const gather_site& site,
                                     const std::string& node, caf::error err) {
  if (err.category() == actors_category && !is_node_lost(err))
    return err;
  return make_error(actors_errc::node_lost,
                    site.where(node) + ": " + error_text(err));
}

/// Sends every node of `nodes` named by a task of `msg` its own tasks at
/// once, and runs `done` once, in `self`, with one `tasks_done` (empty node
/// name) holding every output and task timing in node order, or with the
/// group's failure: `actors_errc::unknown_node` for a task naming a node
/// missing from `nodes` (nothing is sent then), the first node's error
/// (fail fast: later answers are dropped, and the nodes stop the group's
/// other tasks on their own timeout or a cancel_tasks), or
/// `actors_errc::node_lost` naming node, group and epoch for a node that
/// does not answer within `timeout` or goes down.
///
/// With `monitor_nodes`, the nodes are monitored while the group runs;
/// without, the caller must monitor them itself. Either way the caller's
/// down handler must pass every down message of a node to `node_down` of
/// the returned gather (null when `done` already ran). Must run in the
/// actor `self`.
template <class Self>
group_gather run_group(Self* self, const node_map& nodes,
                       std::chrono::milliseconds timeout, run_tasks msg,
                       bool monitor_nodes,
                       std::function<void(caf::expected<tasks_done>)> done) {
  // Tasks by node, nodes in order of first use. A linear search: a group
  // names few nodes, and a map would cost allocations on every epoch.
  std::vector<gather_target<node_actor>> targets;
  std::vector<std::vector<task_def>> lists;
  for (auto& task : msg.tasks) {
    auto node = nodes.find(task.node);
    if (node == nodes.end()) {
      done(make_error(actors_errc::unknown_node,
                      "task '" + task.name + "' of the " + msg.group
                        + " group names unknown node '" + task.node + "'"));
      return nullptr;
    }
    size_t i = 0;
    while (i < targets.size() && targets[i].node != node->first)
      ++i;
    if (i == targets.size()) {
      targets.push_back({node->first, node->second});
      lists.emplace_back();
    }
    lists[i].push_back(std::move(task));
  }
  if (targets.empty()) {
    done(tasks_done{});
    return nullptr;
  }
  gather_options opts;
  opts.site = {msg.group + " group", msg.epoch};
  opts.policy = gather_policy::fail_fast;
  opts.timeout = timeout;
  // A node actor that ends without replying (it was stopped, or died)
  // fails the group at once instead of leaving it waiting until the
  // timeout. A caller that monitors the nodes for longer than a group
  // (the job runner, for its job) saves a monitor per node per group.
  opts.monitor = monitor_nodes;
  opts.caller_monitors = !monitor_nodes;
  auto site = opts.site;
  auto gathered = gather<tasks_done>(
    self, targets, std::move(opts),
    // Called in target order: the i-th call is for lists[i].
    [&msg, &lists, next = size_t{0}](const gather_target<node_actor>&) mutable {
      return run_tasks{msg.group, msg.epoch, std::move(lists[next++])};
    },
    [site](const std::string& node, caf::error err) {
      return group_node_failure(site, node, std::move(err));
    },
    [done = std::move(done)](caf::expected<std::vector<tasks_done>> parts) {
      if (!parts) {
        done(std::move(parts.error()));
        return;
      }
      tasks_done result;
      size_t outputs = 0;
      size_t timings = 0;
      for (auto& part : *parts) {
        outputs += part.outputs.size();
        timings += part.timings.size();
      }
      result.outputs.reserve(outputs);
      result.timings.reserve(timings);
      for (auto& part : *parts) {
        for (auto& out : part.outputs)
          result.outputs.emplace_back(std::move(out));
        for (auto& t : part.timings)
          result.timings.emplace_back(std::move(t));
      }
      done(std::move(result));
    });
  if (gathered->finished())
    return nullptr;
  return gathered;
}

} // namespace epochrt::detail
