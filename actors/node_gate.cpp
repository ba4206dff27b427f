#include "actors/node_gate.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

#include "actors/actors_errc.hpp"
#include "actors/detail/log.hpp"
#include "messages/manager_protocol.hpp"
#include "messages/protocol.hpp"
#include "messages/remote_protocol.hpp"
#include "runtime/op_registry.hpp"
#include "runtime/runtime_errc.hpp"

namespace epochrt {

namespace {

caf::behavior gate_behavior(caf::event_based_actor* self,
                            node_gate_config cfg) {
  auto shared = std::make_shared<const node_gate_config>(std::move(cfg));
  // Another process that learned this actor's id could address it
  // directly: only the attached master is obeyed.
  auto refused_sender = [self, shared]() -> caf::error {
    auto& sender = self->current_sender();
    if (sender && sender->node() == shared->master)
      return {};
    detail::log().warn("node {}: refused a request from {}, which is not "
                       "its master",
                       shared->node,
                       sender ? caf::to_string(sender->node())
                              : std::string{"an anonymous sender"});
    return make_error(actors_errc::rejected,
                      "node " + shared->node
                        + " obeys only the master it is attached to");
  };
  // Checks, then hands the request on; the reply goes straight back to the
  // master.
  auto pass = [self, refused_sender](const caf::actor& dest, auto&& msg,
                                     caf::error problem) {
    // Before the promise: making it moves the sender out of the message.
    if (!problem)
      problem = refused_sender();
    auto rp = self->make_response_promise();
    if (problem) {
      rp.deliver(std::move(problem));
      return;
    }
    rp.delegate(dest, std::forward<decltype(msg)>(msg));
  };
  auto wrong_node = [shared](const std::string& node) -> caf::error {
    if (node == shared->node)
      return {};
    return make_error(actors_errc::rejected,
                      "a checkpoint request for node '" + node.substr(0, 64)
                        + "' reached node '" + shared->node + "'");
  };
  auto c = shared;
  return {
    [=](run_tasks& msg) {
      auto problem
        = check_tasks(msg, c->node, *c->ops, c->limits, c->file_root);
      if (problem)
        detail::log().warn("node {}: refused tasks: {}", c->node,
                           error_text(problem));
      pass(c->node_actor, std::move(msg), std::move(problem));
    },
    [=](fetch_blobs& msg) {
      pass(c->node_actor, std::move(msg), check_fetch(msg));
    },
    [=](put_blobs& msg) {
      auto problem = check_put(msg, c->limits);
      if (problem)
        detail::log().warn("node {}: refused blobs: {}", c->node,
                           error_text(problem));
      pass(c->node_actor, std::move(msg), std::move(problem));
    },
    [=](cancel_tasks& msg) {
      pass(c->node_actor, std::move(msg), caf::error{});
    },
    [=](reset_workspace& msg) {
      pass(c->node_actor, std::move(msg), caf::error{});
    },
    [=](save_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node));
    },
    [=](load_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node));
    },
    [=](init_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node));
    },
    [=](check_checkpoint& msg) {
      pass(c->persistence, std::move(msg), caf::error{});
    },
    [=](begin_save& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node));
    },
    [=](end_save& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node));
    },
    [=](read_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node));
    },
  };
}

} // namespace

caf::actor spawn_node_gate(caf::actor_system& sys, node_gate_config cfg) {
  return sys.spawn(gate_behavior, std::move(cfg));
}

} // namespace epochrt
