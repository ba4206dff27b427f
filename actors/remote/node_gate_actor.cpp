#include <epochrt/actors/remote/node_gate_actor.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/epoch_of.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>

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

// A fault's timer fired: run the deferred action with this key.
using gate_deferred_atom = caf::atom_constant<caf::atom("ert_gdefer")>;

// Request ids remembered per gate, to obey each once: far more than a
// master ever has in flight to one node.
constexpr size_t remembered_requests = 4096;

// A request: its sender's actor id and its request id.
using request_key = std::pair<caf::actor_id, uint64_t>;

template <class T>
struct reply_of {
  using type = T;
};

// What the gate keeps for obeying each request once and for its faults.
struct gate_state {
  std::set<request_key> seen;
  std::deque<request_key> seen_order;
  // Requests put back in the mailbox after an injected delay: admitted
  // without another strike.
  std::set<request_key> delayed;
  fault_injector* faults = nullptr;
  std::chrono::milliseconds silence_limit{5000};
  std::chrono::steady_clock::time_point partitioned_until;
  bool lost = false;
  uint64_t next_deferred = 0;
  std::map<uint64_t, std::function<void()>> deferred;
  // By group, the last plan sent whole and its key (run_tasks::plan_key).
  // One per group name the master ran here: a job has a handful, and the
  // gate lives as long as the master's connection. Never evicted, so that
  // the master's proxy knows what is kept without being told.
  std::map<std::string, std::pair<uint64_t, exchange_plan>> plans;
};

// Keeps the plan of `msg`, or puts the kept one back where only its key
// came. An error when the key names no plan kept here: the master's proxy
// forgets what it thought kept, and sends the next run's plan whole.
caf::error keep_or_restore_plan(gate_state& g, run_tasks& msg) {
  if (msg.plan_key == 0)
    return {};
  if (!msg.plan.empty()) {
    g.plans[msg.group] = {msg.plan_key, msg.plan};
    return {};
  }
  auto i = g.plans.find(msg.group);
  if (i == g.plans.end() || i->second.first != msg.plan_key)
    return make_error(runtime_errc::exchange_failed,
                      "the plan of the " + msg.group
                        + " group is not kept on this daemon (it is sent "
                          "whole with the next run)");
  msg.plan = i->second.second;
  return {};
}

// False when `key` was seen before; remembers it otherwise.
bool remember(gate_state& g, const request_key& key) {
  if (!g.seen.insert(key).second)
    return false;
  g.seen_order.push_back(key);
  if (g.seen_order.size() > remembered_requests) {
    g.seen.erase(g.seen_order.front());
    g.seen_order.pop_front();
  }
  return true;
}

void defer(caf::event_based_actor* self, gate_state& g,
           std::chrono::milliseconds delay, std::function<void()> fn) {
  auto key = g.next_deferred++;
  g.deferred.emplace(key, std::move(fn));
  self->delayed_send(self, delay, gate_deferred_atom::value, key);
}

// Carries out `action`, a fault that takes a message at `point` away (any
// kind but delay and duplicate).
void take_away(caf::event_based_actor* self, gate_state& g,
               const std::string& node, fault_point point,
               const fault_site& site, const fault_action& action) {
  auto err = injected_error(point, site, action);
  auto why = error_text(err);
  switch (action.kind) {
    case fault_kind::kill_node:
      kill_process(why);
    case fault_kind::freeze_node:
      // The whole process, as a frozen host: no heartbeat leaves it.
      freeze_process(why);
      return;
    case fault_kind::partition:
      g.partitioned_until = std::chrono::steady_clock::now()
        + std::chrono::milliseconds{action.ms};
      break;
    default:
      break;
  }
  // A lost message means a broken stream: the master's connection to this
  // node ends when CAF would have found it silent.
  if (g.lost)
    return;
  g.lost = true;
  detail::log(self->system())
    .warn("node {}: {}; the node stops in {} ms", node, why,
          g.silence_limit.count());
  defer(self, g, g.silence_limit, [self, err] {
    self->send_exit(self, err);
  });
}

bool cut_off(const gate_state& g) {
  return g.partitioned_until > std::chrono::steady_clock::now();
}

caf::behavior gate_behavior(caf::event_based_actor* self,
                            node_gate_config cfg) {
  auto shared = std::make_shared<const node_gate_config>(std::move(cfg));
  auto g = std::make_shared<gate_state>();
  g->faults = shared->faults.get();
  // What CAF waits before it declares a silent connection lost.
  auto limit
    = caf::get_or(self->system().config(), "middleman.connection-timeout",
                  caf::timespan{std::chrono::seconds(5)});
  if (limit.count() > 0)
    g->silence_limit
      = std::chrono::duration_cast<std::chrono::milliseconds>(limit);
  // A request of the master arrives: false when it must not be handled
  // (a copy of one obeyed already, or a fault took it), and then it gets
  // no reply from here.
  auto admit = [self, shared, g](std::string_view type, int64_t epoch) -> bool {
    auto* elem = self->current_mailbox_element();
    if (elem == nullptr || !elem->sender || !elem->mid.is_request()
        || elem->sender->node() != shared->master)
      return true; // Refused, or not a request: the handler says so.
    auto mid = elem->mid;
    request_key key{elem->sender->id(), mid.request_id().integer_value()};
    if (g->delayed.erase(key) > 0)
      return true;
    if (!remember(*g, key)) {
      detail::log(self->system())
        .warn("node {}: ignored a second copy of a {} request", shared->node,
              type);
      self->make_response_promise();
      return false;
    }
    if (g->faults == nullptr)
      return true;
    fault_site site{shared->node, epoch, type};
    if (cut_off(*g)) {
      self->make_response_promise();
      return false;
    }
    auto action = strike(g->faults, fault_point::daemon_receive, site);
    switch (action.kind) {
      case fault_kind::none:
        return true;
      case fault_kind::duplicate:
        // The copy comes after this one and is ignored as a copy.
        self->enqueue(caf::make_mailbox_element(
                        elem->sender, mid, {}, elem->copy_content_to_message()),
                      self->context());
        return true;
      case fault_kind::delay:
        g->delayed.insert(key);
        self->clock().schedule_message(
          self->clock().now() + std::chrono::milliseconds{action.ms},
          caf::actor_cast<caf::strong_actor_ptr>(self),
          caf::make_mailbox_element(elem->sender, mid, {},
                                    elem->copy_content_to_message()));
        self->make_response_promise();
        return false;
      default:
        self->make_response_promise();
        take_away(self, *g, shared->node, fault_point::daemon_receive, site,
                  action);
        return false;
    }
  };
  // A reply of the node or persistence actor leaves for the master.
  auto depart
    = [self, shared, g](caf::response_promise rp, std::string_view type,
                        int64_t epoch, auto reply) {
        fault_site site{shared->node, epoch, type};
        if (cut_off(*g))
          return;
        auto action = strike(g->faults, fault_point::daemon_send, site);
        switch (action.kind) {
          case fault_kind::none:
            rp.deliver(std::move(reply));
            return;
          case fault_kind::duplicate: {
            auto first = rp;
            first.deliver(reply);
            rp.deliver(std::move(reply));
            return;
          }
          case fault_kind::delay:
            defer(self, *g, std::chrono::milliseconds{action.ms},
                  [rp, reply]() mutable {
                    rp.deliver(std::move(reply));
                  });
            return;
          default:
            take_away(self, *g, shared->node, fault_point::daemon_send, site,
                      action);
        }
      };
  // Hands `msg` to `dest` with `rp` to answer: the reply goes straight to
  // the master, unless daemon.send may strike it.
  auto relay = [self, g, depart](const auto& dest, auto&& msg,
                                 caf::response_promise rp,
                                 std::string_view type, auto tag) {
    using reply_type = typename decltype(tag)::type;
    if (g->faults == nullptr || !g->faults->armed(fault_point::daemon_send)) {
      rp.delegate(dest, std::forward<decltype(msg)>(msg));
      return;
    }
    auto epoch = detail::epoch_of(msg);
    auto on_error = [rp, type, epoch, depart](caf::error& err) mutable {
      depart(std::move(rp), type, epoch, std::move(err));
    };
    if constexpr (std::is_same_v<reply_type, void>) {
      self->request(dest, caf::infinite, std::forward<decltype(msg)>(msg))
        .then(
          [rp, type, epoch, depart]() mutable {
            depart(std::move(rp), type, epoch, caf::make_message());
          },
          on_error);
    } else {
      self->request(dest, caf::infinite, std::forward<decltype(msg)>(msg))
        .then(
          [rp, type, epoch, depart](reply_type& reply) mutable {
            depart(std::move(rp), type, epoch,
                   caf::make_message(std::move(reply)));
          },
          on_error);
    }
  };
  // Another process that learned this actor's id could address it
  // directly: only the attached master is obeyed.
  auto refused_sender = [self, shared]() -> caf::error {
    auto& sender = self->current_sender();
    if (sender && sender->node() == shared->master)
      return {};
    detail::log(self->system())
      .warn("node {}: refused a request from {}, which is not "
            "its master",
            shared->node,
            sender ? caf::to_string(sender->node())
                   : std::string{"an anonymous sender"});
    return make_error(actors_errc::rejected,
                      "node " + shared->node
                        + " obeys only the master it is attached to");
  };
  // As `pass`, for a request admitted already.
  auto pass_admitted = [self, refused_sender,
                        relay](const auto& dest, auto&& msg, caf::error problem,
                               std::string_view type, auto tag) {
    // Before the promise: making it moves the sender out of the message.
    if (!problem)
      problem = refused_sender();
    auto rp = self->make_response_promise();
    if (problem) {
      rp.deliver(std::move(problem));
      return;
    }
    relay(dest, std::forward<decltype(msg)>(msg), std::move(rp), type, tag);
  };
  // Admits, checks, then hands the request on; the reply goes back to the
  // master (through `relay`).
  auto pass
    = [admit, pass_admitted](const auto& dest, auto&& msg, caf::error problem,
                             std::string_view type, auto tag) {
        if (admit(type, detail::epoch_of(msg)))
          pass_admitted(dest, std::forward<decltype(msg)>(msg),
                        std::move(problem), type, tag);
      };
  auto wrong_node = [shared](const std::string& node) -> caf::error {
    if (node == shared->node)
      return {};
    return make_error(actors_errc::rejected,
                      "a checkpoint request for node '" + node.substr(0, 64)
                        + "' reached node '" + shared->node + "'");
  };
  auto c = shared;
  // Tasks are checked on the worker pool: placing path arguments
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
    // The node is gone with its gate, whoever stopped it (the daemon, the
    // master's kill_node, a lost message).
    self->send_exit(c->node_host, msg.reason);
    self->send_exit(c->persistence, msg.reason);
    self->quit(std::move(msg.reason));
  });
  return {
    [=](gate_deferred_atom, uint64_t key) {
      auto i = g->deferred.find(key);
      if (i == g->deferred.end())
        return;
      auto fn = std::move(i->second);
      g->deferred.erase(i);
      fn();
    },
    [=](run_tasks& msg) {
      if (!admit("run_tasks", msg.epoch))
        return;
      // Before the promise: making it moves the sender out of the message.
      auto refused = refused_sender();
      auto rp = self->make_response_promise();
      if (refused) {
        rp.deliver(std::move(refused));
        return;
      }
      if (auto err = keep_or_restore_plan(*g, msg)) {
        rp.deliver(std::move(err));
        return;
      }
      auto id = ++*next_id;
      auto check = std::make_shared<task_check>();
      check->tasks = std::move(msg);
      auto me = caf::actor_cast<caf::actor>(self);
      auto queued = c->pool->submit([me, id, check, c] {
        check->problem = check_tasks(check->tasks, c->node, *c->ops, c->limits,
                                     c->file_root);
        check->done.store(true, std::memory_order_release);
        caf::anon_send(me, tasks_checked_atom::value, id);
      });
      if (!queued) {
        rp.deliver(
          make_error(actors_errc::node_lost, "node " + c->node + " stopped"));
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
        detail::log(self->system())
          .warn("node {}: refused tasks: {}", c->node,
                error_text(check.problem));
        pending.promise.deliver(std::move(check.problem));
        return;
      }
      relay(c->node_host, std::move(check.tasks), std::move(pending.promise),
            "run_tasks", reply_of<tasks_done>{});
    },
    [=](exchange_end& msg) {
      pass(c->node_host, std::move(msg), caf::error{}, "exchange_end",
           reply_of<exchange_report>{});
    },
    [=](fetch_blobs& msg) {
      pass(c->node_host, std::move(msg), check_fetch(msg), "fetch_blobs",
           reply_of<blob_values>{});
    },
    [=](put_blobs& msg) {
      auto problem = check_put(msg, c->limits);
      if (problem)
        detail::log(self->system())
          .warn("node {}: refused blobs: {}", c->node, error_text(problem));
      pass(c->node_host, std::move(msg), std::move(problem), "put_blobs",
           reply_of<void>{});
    },
    [=](cancel_tasks& msg) {
      if (!admit("cancel_tasks", -1))
        return;
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
      pass_admitted(c->node_host, std::move(msg), std::move(refused),
                    "cancel_tasks", reply_of<void>{});
    },
    [=](reset_workspace& msg) {
      pass(c->node_host, std::move(msg), caf::error{}, "reset_workspace",
           reply_of<void>{});
    },
    [=](check_ops& msg) {
      auto problem = check_op_types(msg);
      pass(c->node_host, std::move(msg), std::move(problem), "check_ops",
           reply_of<void>{});
    },
    [=](load_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node),
           "load_checkpoint", reply_of<checkpoint_stats>{});
    },
    [=](init_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node),
           "init_checkpoint", reply_of<blob_names>{});
    },
    [=](check_checkpoint& msg) {
      pass(c->persistence, std::move(msg), caf::error{}, "check_checkpoint",
           reply_of<checkpoint_status>{});
    },
    [=](begin_save& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node), "begin_save",
           reply_of<snapshot_taken>{});
    },
    [=](end_save& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node), "end_save",
           reply_of<checkpoint_stats>{});
    },
    [=](read_checkpoint& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node),
           "read_checkpoint", reply_of<blob_values>{});
    },
    [=](prune_checkpoints& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node),
           "prune_checkpoints", reply_of<pruned_checkpoints>{});
    },
    [=](keep_commit_record& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node),
           "keep_commit_record", reply_of<void>{});
    },
    [=](fetch_commit_record& msg) {
      pass(c->persistence, std::move(msg), wrong_node(msg.node),
           "fetch_commit_record", reply_of<checkpoint_metadata>{});
    },
  };
}

} // namespace

caf::actor spawn_node_gate(caf::actor_system& sys, node_gate_config cfg) {
  return sys.spawn(gate_behavior, std::move(cfg));
}

} // namespace epochrt
