#include "actors/node_gate.hpp"

#include <atomic>
#include <map>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>

#include "actors/actors_errc.hpp"
#include "actors/detail/counted_thread.hpp"
#include "actors/detail/log.hpp"
#include "messages/manager_protocol.hpp"
#include "messages/protocol.hpp"
#include "messages/remote_protocol.hpp"
#include "runtime/op_registry.hpp"
#include "runtime/runtime_errc.hpp"

namespace epochrt {

namespace {

// The tasks of a run_tasks request have been checked on their thread.
using tasks_checked_atom = caf::atom_constant<caf::atom("taskscheck")>;

// One run_tasks request whose tasks are being checked. The checking thread
// fills in `tasks` (path arguments rewritten) and `problem`, then sets
// `done`. A peer can send the gate a message of the same shape as the
// thread's: only `done` makes the result count.
struct task_check {
  run_tasks tasks;
  caf::error problem;
  std::atomic<bool> done{false};
};

struct pending_check {
  caf::response_promise promise;
  std::shared_ptr<task_check> check;
};

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
  // Tasks are checked on a thread of their own: placing path arguments
  // under the root asks the filesystem, and the schema checks are host
  // code; neither may hold a scheduler thread. Every promise here is
  // delivered before the gate quits.
  auto checks = std::make_shared<std::map<uint64_t, pending_check>>();
  auto next_id = std::make_shared<uint64_t>(0);
  self->set_exit_handler([self, checks, c](caf::exit_msg& msg) {
    if (!msg.reason)
      return;
    for (auto& [id, check] : *checks)
      check.promise.deliver(
        make_error(actors_errc::node_lost, "node " + c->node + " stopped"));
    checks->clear();
    self->quit(std::move(msg.reason));
  });
  return {
    [=](run_tasks& msg) {
      // Before the promise: making it moves the sender out of the message.
      auto refused = refused_sender();
      auto rp = self->make_response_promise();
      if (refused) {
        rp.deliver(std::move(refused));
        return;
      }
      auto id = ++*next_id;
      auto check = std::make_shared<task_check>();
      check->tasks = std::move(msg);
      auto me = caf::actor_cast<caf::actor>(self);
      auto err = detail::start_counted_thread(
        self->system(), "checking the tasks of node " + c->node,
        [me, id, check, c] {
          check->problem = check_tasks(check->tasks, c->node, *c->ops,
                                       c->limits, c->file_root);
          check->done.store(true, std::memory_order_release);
          caf::anon_send(me, tasks_checked_atom::value, id);
        });
      if (err) {
        rp.deliver(std::move(err));
        return;
      }
      checks->emplace(id, pending_check{rp, std::move(check)});
    },
    [=](tasks_checked_atom, uint64_t id) {
      auto i = checks->find(id);
      if (i == checks->end()
          || !i->second.check->done.load(std::memory_order_acquire))
        return;
      auto pending = std::move(i->second);
      checks->erase(i);
      auto& check = *pending.check;
      if (check.problem) {
        detail::log().warn("node {}: refused tasks: {}", c->node,
                           error_text(check.problem));
        pending.promise.deliver(std::move(check.problem));
        return;
      }
      pending.promise.delegate(c->node_actor, std::move(check.tasks));
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
      // Tasks still being checked were sent before the cancel: they must
      // not start after it.
      auto refused = refused_sender();
      if (!refused) {
        for (auto& [id, pending] : *checks)
          pending.promise.deliver(make_error(
            actors_errc::task_failed,
            "node " + c->node + ": cancelled before its tasks started"));
        checks->clear();
      }
      pass(c->node_actor, std::move(msg), std::move(refused));
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
