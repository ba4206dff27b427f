#pragma once

// Internal to actors/: one task group run across its nodes from inside an
// actor, on the shared gather. start_group_run (core/group_run.hpp) is this for
// a blocking caller; the job runner calls it directly for every group of a job,
// so that an epoch costs no actor spawned and no request in between.

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/exchange_setup.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt::detail {

/// The nodes of a job by name.
using node_map = std::map<std::string, node_actor>;

/// A fresh id for a group run: random, so that runs of different runners
/// sharing one exchange (two sessions on one daemon, or one after another)
/// never meet.
inline uint64_t new_run_id() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  uint64_t result = 0;
  while (result == 0)
    result = engine();
  return result;
}

/// The error of a channel that a run of `group` left not empty or not
/// closed, or none.
inline caf::error leftover_channels(const gather_site& site,
                                    const std::vector<exchange_report>& xs) {
  for (auto& report : xs)
    for (auto& ch : report.channels) {
      if (ch.items > 0)
        return make_error(
          actors_errc::task_failed,
          "channel '" + ch.channel + "' on node " + ch.node + " still holds "
            + std::to_string(ch.items) + (ch.items == 1 ? " item" : " items")
            + " at the end of the " + site.what
            + (site.epoch >= 0 ? " (epoch " + std::to_string(site.epoch) + ")"
                               : std::string{})
            + ": every channel must be empty when its group "
              "ends (nothing is dropped)");
      if (!ch.closed)
        return make_error(actors_errc::task_failed,
                          "channel '" + ch.channel + "' on node " + ch.node
                            + " was not closed by the end of the " + site.what
                            + (site.epoch >= 0
                                 ? " (epoch " + std::to_string(site.epoch) + ")"
                                 : std::string{})
                            + ": every channel must be closed when its group "
                              "ends (CloseBlobsQueue)");
    }
  return {};
}

/// What `node` does in the channels and collectives of `plan`, for an
/// error that says the node was lost: "all-reduce 'grads', channel 'batches'
/// (its host)". Empty when it does nothing there.
inline std::string exchange_roles(const exchange_plan& plan,
                                  const std::string& node) {
  std::string result;
  auto add = [&](const std::string& what) {
    result += (result.empty() ? "" : ", ") + what;
  };
  auto on_node = [&](const std::vector<task_ref>& tasks) {
    return std::any_of(tasks.begin(), tasks.end(), [&](const task_ref& t) {
      return t.node == node;
    });
  };
  for (auto& c : plan.collectives)
    if (on_node(c.participants))
      add(std::string{describe(c.kind)} + " '" + c.name + "'");
  for (auto& ch : plan.channels) {
    std::string how;
    if (ch.channel.node == node)
      how = "its host";
    else if (on_node(ch.putters))
      how = on_node(ch.takers) ? "puts and takes" : "puts";
    else if (on_node(ch.takers))
      how = "takes";
    if (!how.empty())
      add("channel '" + ch.channel.name + "' (" + how + ")");
  }
  return result;
}

/// `err` (a group's failure) with what the lost node did in the channels and
/// collectives of `plan`, so that the error names what waited for it.
inline caf::error with_exchange_roles(caf::error err,
                                      const exchange_plan& plan) {
  if (!is_node_lost(err))
    return err;
  auto text = error_text(err);
  auto lost = lost_node(err);
  std::string roles;
  for (auto& peer : plan.peers)
    if (peer.node == lost) {
      roles = exchange_roles(plan, peer.node);
      if (!roles.empty())
        return make_error(actors_errc::node_lost,
                          text + "; the group's tasks " + "waited for node "
                            + peer.node + " in " + roles);
    }
  return err;
}

/// A digest of `plan` (its handles included), never 0; 0 when it cannot be
/// serialized, and the plan then goes whole with every run. A daemon that
/// keeps a group's plan under this key is sent the key alone
/// (run_tasks::plan_key). Costs one serialization of the plan a run.
inline uint64_t plan_key_of(caf::actor_system& sys, const exchange_plan& plan) {
  std::vector<char> bytes;
  caf::binary_serializer sink{sys, bytes};
  if (auto err = sink(const_cast<exchange_plan&>(plan)))
    return 0;
  auto key = std::hash<std::string_view>{}({bytes.data(), bytes.size()});
  return key == 0 ? 1 : key;
}

/// A group's gather in flight; null when the group settled at once.
using group_gather = std::shared_ptr<gather_state<tasks_done>>;

/// A node's error other than a timeout or a node that is down (the gather
/// makes those node_lost, naming node, group and epoch). A lost remote
/// node's proxy names the node and its address; the group and epoch are
/// known here only. Other errors of the actors layer (a failed task) pass
/// as they are; anything else means the node cannot be relied on.
inline caf::error group_node_failure(const gather_site& site,
                                     const std::string& node, caf::error err) {
  if (in_category(err, actors_category) && !is_node_lost(err))
    return err;
  // Another node was lost, and this one waited for it: the lost one is
  // named first, with the group and epoch.
  if (auto lost = lost_node(err); !lost.empty() && lost != node) {
    auto text = error_text(err);
    auto prefix = "node " + lost + ": ";
    if (text.compare(0, prefix.size(), prefix) == 0)
      text = text.substr(prefix.size());
    return make_error(actors_errc::node_lost, site.where(lost) + ": " + text);
  }
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
/// A group whose `msg.plan` is not empty (channels, collectives) runs as
/// one run of a fresh id: every node of the group, and every channel's
/// node that runs no task of it, gets the plan with the peers of `setup`'s
/// directory (unknown_node when one is missing, or `setup` is null). Once
/// the group succeeded, each ends the run (`exchange_end`), and a channel
/// left with items or not closed fails the group (task_failed, naming the
/// channel, its node and the count). A group that failed ends its run on
/// every node as aborted, which stops what still waits there.
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
                       std::function<void(caf::expected<tasks_done>)> done,
                       const exchange_setup* setup = nullptr) {
  // Tasks by node, nodes in order of first use. A linear search: a group
  // names few nodes, and a map would cost allocations on every epoch.
  std::vector<gather_target<node_actor>> targets;
  std::vector<std::vector<task_def>> lists;
  auto target_of = [&](const std::string& name) -> std::optional<size_t> {
    auto node = nodes.find(name);
    if (node == nodes.end())
      return std::nullopt;
    size_t i = 0;
    while (i < targets.size() && targets[i].node != node->first)
      ++i;
    if (i == targets.size()) {
      targets.push_back({node->first, node->second});
      lists.emplace_back();
    }
    return i;
  };
  for (auto& task : msg.tasks) {
    auto i = target_of(task.node);
    if (!i) {
      done(make_error(actors_errc::unknown_node,
                      "task '" + task.name + "' of the " + msg.group
                        + " group names unknown node '" + task.node + "'"));
      return nullptr;
    }
    lists[*i].push_back(std::move(task));
  }
  bool exchanging = !msg.plan.empty();
  if (exchanging) {
    for (auto& ch : msg.plan.channels)
      if (!target_of(ch.channel.node)) {
        done(make_error(actors_errc::unknown_node,
                        "channel '" + ch.channel.name + "' of the " + msg.group
                          + " group names unknown node '" + ch.channel.node
                          + "'"));
        return nullptr;
      }
    msg.plan.peers.clear();
    for (auto& target : targets) {
      auto i = setup != nullptr ? setup->directory.find(target.node)
                                : exchange_directory::const_iterator{};
      if (setup == nullptr || i == setup->directory.end()
          || !i->second.endpoint) {
        done(make_error(actors_errc::unknown_node,
                        "the " + msg.group
                          + " group uses channels or collectives, and node '"
                          + target.node + "' has no exchange in this session"));
        return nullptr;
      }
      msg.plan.peers.push_back(i->second);
    }
    msg.plan.relay = setup->relay;
    msg.run = new_run_id();
    msg.plan_key = plan_key_of(self->system(), msg.plan);
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
  if (exchanging) {
    // The run ends on every node; a success is one only once every
    // channel is found closed and empty.
    done = [self, run = msg.run, ends = targets, site,
            end_timeout = setup->end_timeout,
            plan = std::make_shared<const exchange_plan>(msg.plan),
            done = std::move(done)](caf::expected<tasks_done> result) mutable {
      if (!result) {
        for (auto& target : ends)
          caf::anon_send(target.handle, exchange_end{run, true});
        done(with_exchange_roles(std::move(result.error()), *plan));
        return;
      }
      gather_options end_opts;
      end_opts.site = {site.what + " end", site.epoch};
      end_opts.policy = gather_policy::settle_all;
      end_opts.timeout = end_timeout;
      gather<exchange_report>(
        self, ends, std::move(end_opts),
        [run](const gather_target<node_actor>&) {
          return exchange_end{run, false};
        },
        [site](const std::string& node, caf::error err) {
          return group_node_failure(site, node, std::move(err));
        },
        [site, done = std::move(done), result = std::move(*result)](
          caf::expected<std::vector<exchange_report>> reports) mutable {
          if (!reports) {
            done(std::move(reports.error()));
            return;
          }
          if (auto err = leftover_channels(site, *reports)) {
            done(std::move(err));
            return;
          }
          done(std::move(result));
        });
    };
  }
  auto gathered = gather<tasks_done>(
    self, targets, std::move(opts),
    // Called in target order: the i-th call is for lists[i].
    [&msg, &lists, next = size_t{0}](const gather_target<node_actor>&) mutable {
      auto& tasks = lists[next++];
      return run_tasks{msg.group, msg.epoch, std::move(tasks),
                       msg.run,   msg.plan,  msg.plan_key};
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
