#include <epochrt/actors/core/group_runner_actor.hpp>

#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// A node's error other than a timeout or a node that is down (the gather
// makes those node_lost, naming node, group and epoch). A lost remote
// node's proxy names the node and its address; the group and epoch are
// known here only. Other errors of the actors layer (a failed task) pass
// as they are; anything else means the node cannot be relied on.
caf::error node_failure(const detail::gather_site& site,
                        const std::string& node, caf::error err) {
  if (is_node_lost(err))
    return make_error(actors_errc::node_lost,
                      site.where(node) + ": " + error_text(err));
  if (err.category() == actors_category)
    return err;
  return make_error(actors_errc::node_lost,
                    site.where(node) + ": " + error_text(err));
}

group_runner_actor::behavior_type
group_runner_behavior(group_runner_actor::pointer self,
                      std::map<std::string, caf::actor> nodes,
                      std::chrono::milliseconds timeout) {
  return {
    [=](run_tasks& msg) -> caf::result<tasks_done> {
      // Tasks by node, nodes in order of first use.
      std::vector<detail::gather_target<caf::actor>> targets;
      std::map<std::string, std::vector<task_def>> by_node;
      for (auto& task : msg.tasks) {
        auto node = nodes.find(task.node);
        if (node == nodes.end()) {
          self->quit();
          return make_error(actors_errc::unknown_node,
                            "task '" + task.name + "' of the " + msg.group
                              + " group names unknown node '" + task.node
                              + "'");
        }
        auto& list = by_node[task.node];
        if (list.empty())
          targets.push_back({node->first, node->second});
        list.push_back(std::move(task));
      }
      if (targets.empty()) {
        self->quit();
        return tasks_done{};
      }
      auto rp = self->make_response_promise<tasks_done>();
      detail::gather_options opts;
      opts.site = {msg.group + " group", msg.epoch};
      // The first failure fails the group: the runner quits as soon as
      // its reply is out, which drops the replies still due, and the nodes
      // stop the group's other tasks (their timeout, or a cancel_tasks).
      opts.policy = detail::gather_policy::fail_fast;
      opts.timeout = timeout;
      // A node actor that ends without replying (it was stopped, or died)
      // fails the group at once instead of leaving it waiting until the
      // timeout.
      opts.monitor = true;
      auto site = opts.site;
      auto gathered = detail::gather<tasks_done>(
        self, targets, std::move(opts),
        [&msg, &by_node](const detail::gather_target<caf::actor>& target) {
          return run_tasks{msg.group, msg.epoch,
                           std::move(by_node[target.node])};
        },
        [site](const std::string& node, caf::error err) {
          return node_failure(site, node, std::move(err));
        },
        [self, rp](caf::expected<std::vector<tasks_done>> done) mutable {
          if (!done) {
            rp.deliver(std::move(done.error()));
          } else {
            tasks_done result;
            for (auto& part : *done)
              for (auto& out : part.outputs)
                result.outputs.emplace_back(std::move(out));
            for (auto& part : *done)
              for (auto& t : part.timings)
                result.timings.emplace_back(std::move(t));
            rp.deliver(std::move(result));
          }
          self->quit();
        });
      self->set_down_handler([gathered](caf::down_msg& down) {
        gathered->node_down(down.source);
      });
      return rp;
    },
  };
}

} // namespace

group_runner_actor spawn_group_runner(caf::actor_system& sys,
                                      std::map<std::string, caf::actor> nodes,
                                      std::chrono::milliseconds timeout) {
  return sys.spawn(group_runner_behavior, std::move(nodes), timeout);
}

} // namespace epochrt
