#include <epochrt/actors/core/node_actor.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/pooled_task.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

namespace {

// What work on the pool sends back: `(ws_done_atom, id, reply)`, the reply
// being blob_values, `true` for a unit reply, or an error. Local only.
using ws_done_atom = caf::atom_constant<caf::atom("wsdone")>;

// The earliest deadline of the groups has come: the node's one timer.
using deadline_atom = caf::atom_constant<caf::atom("deadline")>;

// The node's interface, and what it sends itself or hears from its tasks
// and the work it put on the pool. Others hold the narrow `node_actor`.
using node_self_actor = node_actor::extend_with<node_task_events>::extend<
  caf::reacts_to<ws_done_atom, uint64_t, blob_values>,
  caf::reacts_to<ws_done_atom, uint64_t, bool>,
  caf::reacts_to<ws_done_atom, uint64_t, caf::error>,
  caf::reacts_to<deadline_atom>>;

using clock_type = std::chrono::steady_clock;

// What the node actor tracks across requests. Every reply it owes is sent
// before the actor quits: a requester is never left waiting for a reply
// that cannot come (CAF 0.17 drops an undelivered promise silently).
struct node_state {
  uint64_t next_id = 0;
  // Groups not known to be settled, oldest first. Their tasks settle them
  // from the pool; the node settles those that time out, and all of them
  // when it stops.
  std::vector<std::shared_ptr<task_group_run>> groups;
  // The node's tasks queued or running, for cancel_tasks.
  std::shared_ptr<node_tasks> tasks = std::make_shared<node_tasks>();
  // cancel_tasks requests waiting for the node's tasks to end.
  std::vector<caf::response_promise> stop_waiters;
  // Requests served on the pool (fetch, put, reset).
  std::map<uint64_t, caf::response_promise> calls;
  // When the one timer of the node fires, if it is set. One timer for all
  // groups, armed for the earliest deadline: a timer per group would cost
  // every epoch a trip through CAF's clock thread, and keep the node's
  // timeout messages queued there long after their groups ended.
  std::optional<clock_type::time_point> timer;

  // Drops the groups already settled: their replies are out, and the tasks
  // of a failed one were asked to stop when it failed.
  void prune() {
    groups.erase(std::remove_if(groups.begin(), groups.end(),
                                [](const auto& group) {
                                  return group->settled();
                                }),
                 groups.end());
  }

  void cancel_all() {
    for (auto& group : groups)
      group->cancel();
  }

  // The node's tasks have all ended: the cancel_tasks requests are done.
  void tasks_idle() {
    for (auto& waiter : stop_waiters)
      waiter.deliver(caf::unit);
    stop_waiters.clear();
  }

  // The process's exchange, for groups with channels or collectives.
  std::shared_ptr<exchange_hub> hub;

  // The actor stops: every pending request gets an error, and the tasks
  // of every group are asked to stop (settle cancels them). Tasks end on
  // their own; their groups are settled by then, so they send nothing.
  // What waits for the node in channels and collectives learns it is gone.
  void fail_everything(const std::string& name, const caf::error& reason) {
    auto why = "node " + name + " stopped";
    if (reason)
      why += " (" + error_text(reason) + ")";
    if (hub)
      hub->node_lost(name, reason ? error_text(reason) : "it stopped");
    for (auto& group : groups)
      group->settle(make_error(actors_errc::node_lost,
                               why + " while running tasks of the "
                                 + group->label() + " group"));
    groups.clear();
    for (auto& [id, rp] : calls)
      rp.deliver(make_error(actors_errc::node_lost, why));
    calls.clear();
    for (auto& waiter : stop_waiters)
      waiter.deliver(make_error(actors_errc::node_lost, why));
    stop_waiters.clear();
  }
};

node_self_actor::behavior_type
node_behavior(node_self_actor::pointer self, std::string name,
              std::shared_ptr<workspace> ws,
              std::shared_ptr<const op_registry> ops,
              std::chrono::milliseconds task_timeout,
              std::shared_ptr<fault_injector> faults,
              std::shared_ptr<worker_pool> pool,
              std::shared_ptr<exchange_hub> hub) {
  auto st = std::make_shared<node_state>();
  st->hub = std::move(hub);
  // However the actor ends (exit_reason::kill skips every handler), its
  // tasks are asked to stop at their next op instead of changing the
  // workspace behind everyone's back, and every request it still holds is
  // answered. That also lets go of its groups, which hold the actor itself
  // until they are settled.
  self->attach_functor([st, name](const caf::error& reason) {
    st->fail_everything(name, reason);
  });
  // Where it can, the node answers before it quits: CAF sends the down
  // messages of its monitors before the functor above runs, and a requester
  // that monitors the node (the job runner) would otherwise learn only that
  // it is down, not why.
  self->set_exit_handler([self, st, name](caf::exit_msg& msg) {
    if (!msg.reason)
      return; // CAF's default: a normal exit of a linked actor is ignored
    st->fail_everything(name, msg.reason);
    self->quit(std::move(msg.reason));
  });
  // Runs `work` (returning caf::expected<T>, or caf::error for a unit
  // reply) on the worker pool: the workspace's lock is held by tasks for a
  // whole op, and a scheduler thread must never wait for it.
  auto off_scheduler = [self, st, pool](const std::string& what, auto work) {
    auto id = ++st->next_id;
    auto rp = self->make_response_promise();
    auto me = caf::actor_cast<node_self_actor>(self);
    auto queued = pool->submit([me, id, work = std::move(work)]() mutable {
      auto result = work();
      if constexpr (std::is_same_v<decltype(result), caf::error>) {
        if (result)
          caf::anon_send(me, ws_done_atom::value, id, std::move(result));
        else
          caf::anon_send(me, ws_done_atom::value, id, true);
      } else if (!result) {
        caf::anon_send(me, ws_done_atom::value, id, std::move(result.error()));
      } else {
        caf::anon_send(me, ws_done_atom::value, id, std::move(*result));
      }
    });
    if (!queued)
      rp.deliver(make_error(actors_errc::node_lost,
                            "node stopped: no worker for " + what));
    else
      st->calls.emplace(id, rp);
    return rp;
  };
  // Arms the node's timer for `deadline` unless it fires before then.
  auto arm_timer = [self, st](clock_type::time_point deadline) {
    if (st->timer && *st->timer <= deadline)
      return;
    st->timer = deadline;
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - clock_type::now())
      + std::chrono::milliseconds(1);
    self->delayed_send(self, wait, deadline_atom::value);
  };
  auto deliver_call = [st](uint64_t id, auto&& reply) {
    auto i = st->calls.find(id);
    if (i == st->calls.end())
      return;
    auto rp = std::move(i->second);
    st->calls.erase(i);
    rp.deliver(std::forward<decltype(reply)>(reply));
  };
  return {
    [=](run_tasks& msg) -> caf::result<tasks_done> {
      std::shared_ptr<exchange_hub> hub;
      if (!msg.plan.empty()) {
        if (!st->hub)
          return make_error(actors_errc::task_failed,
                            "node " + name
                              + ": the group uses channels or collectives, "
                                "which this node's session does not have");
        if (auto err = st->hub->begin(msg.run, name, msg.plan))
          return make_error(actors_errc::task_failed,
                            "node " + name + ": " + error_text(err));
        hub = st->hub;
      }
      if (msg.tasks.empty())
        return tasks_done{name, {}, {}};
      st->prune();
      auto group = std::make_shared<task_group_run>(
        caf::actor_cast<caf::strong_actor_ptr>(self), name,
        self->make_response_promise(), std::move(msg.group), msg.tasks.size(),
        msg.epoch, clock_type::now());
      group->run = msg.run;
      if (hub)
        group->on_cancel = [hub, run = msg.run, name] {
          hub->cancel(run, name,
                      make_error(runtime_errc::cancelled,
                                 "cancelled: its group failed or timed out"));
        };
      st->groups.push_back(group);
      auto me = caf::actor_cast<node_task_events>(self);
      for (size_t i = 0; i < msg.tasks.size(); ++i) {
        auto err = submit_task(pool,
                               pooled_task{group, i, me, st->tasks, ws, ops,
                                           std::move(msg.tasks[i]), faults, hub,
                                           msg.run});
        if (err) {
          // The tasks already started stop at their next op; the rest
          // never start.
          group->settle(std::move(err));
          break;
        }
      }
      if (!group->settled() && task_timeout < detail::never) {
        group->deadline = clock_type::now() + task_timeout;
        arm_timer(group->deadline);
      }
      // The group's tasks reply (task_group_run), or the node does when
      // the group times out or the node stops.
      return caf::delegated<tasks_done>{};
    },
    [=](node_fault_atom, uint8_t kind) {
      if (kind == static_cast<uint8_t>(fault_kind::kill_node)) {
        auto reason = make_error(actors_errc::node_lost,
                                 "node " + name
                                   + " was killed by the fault "
                                     "plan");
        // The node's tasks answer nothing from here on (the task that met
        // the fault marked them already; a kill sent otherwise did not).
        st->tasks->set_faulted();
        st->fail_everything(name, reason); // before the down messages
        self->quit(std::move(reason));
      } else if (kind == static_cast<uint8_t>(fault_kind::freeze_node)) {
        // Frozen: nothing is answered any more, not even what is pending,
        // until an exit (which answers node_lost). Messages stay in the
        // mailbox; only an exit ends the actor. Its tasks answer nothing
        // either: its groups stay pending with it.
        st->tasks->set_faulted();
        detail::log(self->system())
          .warn("node {}: frozen by the fault plan", name);
        if (st->hub)
          st->hub->node_frozen(name);
        self->set_default_handler(caf::skip);
        self->become(node_self_actor::behavior_type{
          node_self_actor::behavior_type::unsafe_init{},
          caf::behavior{[](node_fault_atom, uint8_t) {}}});
      }
    },
    [=](tasks_idle_atom) {
      if (!st->stop_waiters.empty() && st->tasks->idle_confirmed())
        st->tasks_idle();
    },
    [=](deadline_atom) {
      st->timer.reset();
      auto now = clock_type::now();
      auto next = clock_type::time_point::max();
      for (auto& group : st->groups) {
        if (group->settled())
          continue;
        if (group->deadline > now) {
          next = std::min(next, group->deadline);
          continue;
        }
        // A task that timed out may still run; it is cancelled, and it
        // answers nothing when it stops (the group is settled).
        group->settle(
          make_error(actors_errc::task_failed,
                     "node " + name + ": the tasks of the " + group->label()
                       + " group did not end within "
                       + std::to_string(task_timeout.count()) + " ms"));
      }
      st->prune();
      if (next != clock_type::time_point::max())
        arm_timer(next);
    },
    [=](fetch_blobs& msg) -> caf::result<blob_values> {
      return off_scheduler(
        "fetching blobs of node " + name,
        [ws, name,
         names = std::move(msg.names)]() -> caf::expected<blob_values> {
          blob_values result;
          for (auto& blob : names) {
            auto value = ws->get(blob);
            if (!value)
              return make_error(runtime_errc::missing_blob,
                                "node " + name + " has no blob '" + blob + "'");
            result.blobs.push_back(blob_value{blob, *value});
          }
          return result;
        });
    },
    [=](exchange_end& msg) -> caf::result<exchange_report> {
      if (!st->hub)
        return exchange_report{};
      if (msg.abort)
        for (auto& group : st->groups)
          if (group->run == msg.run)
            group->cancel();
      return st->hub->end(msg.run, name, msg.abort);
    },
    [=](cancel_tasks&) -> caf::result<void> {
      st->cancel_all();
      if (st->hub)
        st->hub->cancel_node(name,
                             make_error(runtime_errc::cancelled,
                                        "cancelled: the node's tasks "
                                        "are being stopped"));
      if (st->tasks->wait_for_idle())
        return caf::unit;
      st->stop_waiters.push_back(self->make_response_promise());
      return st->stop_waiters.back();
    },
    [=](reset_workspace&) -> caf::result<void> {
      return off_scheduler("resetting the workspace of node " + name,
                           [ws]() -> caf::error {
                             ws->replace_all({});
                             return {};
                           });
    },
    [=](put_blobs& msg) -> caf::result<void> {
      // A name no checkpoint could hold would fail every save of the node.
      for (auto& blob : msg.blobs)
        if (auto problem = blob_name_problem(blob.name); !problem.empty())
          return make_error(runtime_errc::bad_argument,
                            "node " + name + ": " + problem);
      return off_scheduler(
        "storing blobs on node " + name,
        [ws, blobs = std::move(msg.blobs)]() mutable -> caf::error {
          for (auto& blob : blobs)
            ws->set(std::move(blob.name), std::move(blob.value));
          return {};
        });
    },
    [=](check_ops& msg) -> caf::result<void> {
      for (auto& type : msg.types)
        if (ops->find(type) == nullptr)
          return make_error(runtime_errc::unknown_op,
                            "node " + name + " has no op '" + type
                              + "' where it runs: the process that hosts it "
                                "must register every op its tasks call");
      return caf::unit;
    },
    [=](ws_done_atom, uint64_t id, blob_values& values) {
      deliver_call(id, std::move(values));
    },
    [=](ws_done_atom, uint64_t id, bool) {
      deliver_call(id, caf::unit);
    },
    [=](ws_done_atom, uint64_t id, caf::error& err) {
      deliver_call(id, std::move(err));
    },
  };
}

} // namespace

node_actor spawn_node(caf::actor_system& sys, std::string name,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::chrono::milliseconds task_timeout,
                      std::shared_ptr<worker_pool> pool,
                      std::shared_ptr<fault_injector> faults,
                      std::shared_ptr<exchange_hub> hub) {
  return sys.spawn(node_behavior, std::move(name), std::move(ws),
                   std::move(ops), task_timeout, std::move(faults),
                   std::move(pool), std::move(hub));
}

} // namespace epochrt
