#include <epochrt/actors/core/group_runner_actor.hpp>

#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/sec.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

struct pending_nodes {
  caf::response_promise promise;
  std::vector<std::vector<task_output>> outputs; // per node, in node order
  size_t remaining = 0;
  bool finished = false;
  std::vector<bool> answered; // per node: its reply (or error) arrived
};

caf::error node_failure(const std::string& node, const std::string& group,
                        int64_t epoch, const caf::error& err) {
  auto where = "node " + node + " (" + group + " group, epoch "
    + std::to_string(epoch) + ")";
  // A lost remote node's proxy names the node and its address; the epoch
  // is known here only.
  if (is_node_lost(err))
    return make_error(actors_errc::node_lost, where + ": " + error_text(err));
  if (err.category() == actors_category)
    return err;
  if (err == caf::sec::request_timeout)
    return make_error(actors_errc::node_lost,
                      where + " did not answer in time");
  if (err == caf::sec::request_receiver_down)
    return make_error(actors_errc::node_lost, where + " is down");
  return make_error(actors_errc::node_lost, where + ": " + error_text(err));
}

caf::behavior group_runner_behavior(caf::event_based_actor* self,
                                    std::map<std::string, caf::actor> nodes,
                                    std::chrono::milliseconds timeout) {
  return {
    [=](run_tasks& msg) -> caf::result<tasks_done> {
      // Tasks by node, nodes in order of first use.
      std::vector<std::string> order;
      std::map<std::string, std::vector<task_def>> by_node;
      for (auto& task : msg.tasks) {
        if (nodes.count(task.node) == 0) {
          self->quit();
          return make_error(actors_errc::unknown_node,
                            "task '" + task.name + "' of the " + msg.group
                              + " group names unknown node '" + task.node
                              + "'");
        }
        auto& list = by_node[task.node];
        if (list.empty())
          order.push_back(task.node);
        list.push_back(std::move(task));
      }
      if (order.empty()) {
        self->quit();
        return tasks_done{};
      }
      auto state = std::make_shared<pending_nodes>();
      state->promise = self->make_response_promise();
      state->outputs.resize(order.size());
      state->remaining = order.size();
      state->answered.resize(order.size());
      // The runner quits as soon as its reply is out, which drops the
      // replies still due: nothing keeps it alive after the group failed.
      auto fail = [self, state](caf::error err) {
        if (state->finished)
          return;
        state->finished = true;
        state->promise.deliver(std::move(err));
        self->quit();
      };
      // A node actor that ends without replying (it was stopped, or died)
      // fails the group at once instead of leaving it waiting until the
      // timeout.
      self->set_down_handler([=, order = order, group = msg.group,
                              epoch = msg.epoch](caf::down_msg& down) {
        for (size_t i = 0; i < order.size(); ++i)
          if (!state->answered[i]
              && nodes.at(order[i]).address() == down.source)
            fail(node_failure(order[i], group, epoch,
                              caf::sec::request_receiver_down));
      });
      for (size_t i = 0; i < order.size(); ++i) {
        auto& node = order[i];
        self->monitor(nodes.at(node));
        run_tasks part{msg.group, msg.epoch, std::move(by_node[node])};
        self->request(nodes.at(node), timeout, std::move(part))
          .then(
            [self, state, i](tasks_done& done) {
              state->answered[i] = true;
              if (state->finished)
                return;
              state->outputs[i] = std::move(done.outputs);
              if (--state->remaining == 0) {
                state->finished = true;
                tasks_done result;
                for (auto& outs : state->outputs)
                  for (auto& out : outs)
                    result.outputs.emplace_back(std::move(out));
                state->promise.deliver(std::move(result));
                self->quit();
              }
            },
            [state, fail, i, node, group = msg.group,
             epoch = msg.epoch](caf::error& err) {
              state->answered[i] = true;
              fail(node_failure(node, group, epoch, err));
            });
      }
      return state->promise;
    },
  };
}

} // namespace

caf::actor spawn_group_runner(caf::actor_system& sys,
                              std::map<std::string, caf::actor> nodes,
                              std::chrono::milliseconds timeout) {
  return sys.spawn(group_runner_behavior, std::move(nodes), timeout);
}

} // namespace epochrt
