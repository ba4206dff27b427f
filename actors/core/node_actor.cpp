#include <epochrt/actors/core/node_actor.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/core/pooled_task.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/fault_injector.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
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

using clock_type = std::chrono::steady_clock;

// What one run_tasks request is waiting for. Only the node actor's thread
// touches it.
struct pending_group {
  caf::response_promise promise;
  std::string label;
  std::vector<std::vector<task_output>> outputs; // per task, in task order
  std::vector<std::vector<task_timing>> timings; // per task, in task order
  size_t remaining = 0;
  std::shared_ptr<std::atomic<bool>> cancel;
  // When its tasks have run out of time; max() for never.
  clock_type::time_point deadline = clock_type::time_point::max();
};

// What the node actor tracks across requests. Every promise it holds is
// delivered before the actor quits: a requester is never left waiting for a
// reply that cannot come (CAF 0.17 drops an undelivered promise silently).
struct node_state {
  uint64_t next_id = 0;
  // Groups whose reply is not delivered yet.
  std::map<uint64_t, std::shared_ptr<pending_group>> groups;
  // Tasks queued or running: their group's id and their index in it.
  // A task whose group already failed stays here until it has ended.
  std::map<uint64_t, std::pair<uint64_t, size_t>> tasks;
  // cancel_tasks requests waiting for `tasks` to become empty.
  std::vector<caf::response_promise> stop_waiters;
  // Requests served on the pool (fetch, put, reset).
  std::map<uint64_t, caf::response_promise> calls;
  // Every cancel flag handed to a task that may still run.
  std::vector<std::shared_ptr<std::atomic<bool>>> cancel_flags;
  // When the one timer of the node fires, if it is set. One timer for all
  // groups, armed for the earliest deadline: a timer per group would cost
  // every epoch a trip through CAF's clock thread, and keep the node's
  // timeout messages queued there long after their groups ended.
  std::optional<clock_type::time_point> timer;

  void cancel_all() {
    for (auto& flag : cancel_flags)
      flag->store(true);
  }

  void task_ended(uint64_t id) {
    tasks.erase(id);
    if (tasks.empty()) {
      cancel_flags.clear();
      for (auto& waiter : stop_waiters)
        waiter.deliver(caf::unit);
      stop_waiters.clear();
    }
  }

  // Fails the group `gid` with `err` (when it is still pending) and asks its
  // other tasks to stop at their next op.
  void fail_group(uint64_t gid, caf::error err) {
    auto i = groups.find(gid);
    if (i == groups.end())
      return;
    auto group = std::move(i->second);
    groups.erase(i);
    group->cancel->store(true);
    group->promise.deliver(std::move(err));
  }

  // The actor stops: every pending request gets an error, every task is
  // asked to stop. Tasks end on their own; what they send then is
  // dropped.
  void fail_everything(const std::string& name, const caf::error& reason) {
    cancel_all();
    auto why = "node " + name + " stopped (" + error_text(reason) + ")";
    for (auto& [gid, group] : groups)
      group->promise.deliver(make_error(actors_errc::node_lost,
                                        why + " while running tasks of the "
                                          + group->label + " group"));
    groups.clear();
    for (auto& [id, rp] : calls)
      rp.deliver(make_error(actors_errc::node_lost, why));
    calls.clear();
    for (auto& waiter : stop_waiters)
      waiter.deliver(make_error(actors_errc::node_lost, why));
    stop_waiters.clear();
  }
};

caf::behavior node_behavior(caf::event_based_actor* self, std::string name,
                            std::shared_ptr<workspace> ws,
                            std::shared_ptr<const op_registry> ops,
                            std::chrono::milliseconds task_timeout,
                            std::shared_ptr<fault_injector> faults,
                            std::shared_ptr<worker_pool> pool) {
  auto st = std::make_shared<node_state>();
  // However the actor ends, its tasks are asked to stop at their
  // next op instead of changing the workspace behind everyone's back.
  self->attach_functor([st](const caf::error&) {
    st->cancel_all();
  });
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
    auto me = caf::actor_cast<caf::actor>(self);
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
      if (msg.tasks.empty())
        return tasks_done{name, {}, {}};
      auto gid = ++st->next_id;
      auto group = std::make_shared<pending_group>();
      group->promise = self->make_response_promise();
      group->label = msg.group;
      group->outputs.resize(msg.tasks.size());
      group->timings.resize(msg.tasks.size());
      auto received = clock_type::now();
      group->remaining = msg.tasks.size();
      group->cancel = std::make_shared<std::atomic<bool>>(false);
      st->groups.emplace(gid, group);
      st->cancel_flags.push_back(group->cancel);
      auto me = caf::actor_cast<caf::actor>(self);
      for (size_t i = 0; i < msg.tasks.size(); ++i) {
        auto id = ++st->next_id;
        auto err = submit_task(*pool,
                               pooled_task{me, id, name, ws, ops, group->cancel,
                                           std::move(msg.tasks[i]), faults,
                                           msg.epoch, received});
        if (err) {
          // The tasks already started stop at their next op; the rest never
          // start.
          st->fail_group(gid, std::move(err));
          break;
        }
        st->tasks.emplace(id, std::make_pair(gid, i));
      }
      // A timeout of centuries means "never" (and would overflow the
      // clock's time points).
      constexpr auto never = std::chrono::hours(24 * 365 * 100);
      if (st->groups.count(gid) > 0 && task_timeout < never) {
        group->deadline = clock_type::now() + task_timeout;
        arm_timer(group->deadline);
      }
      return group->promise;
    },
    [=](node_fault_atom, uint8_t kind) {
      if (kind == static_cast<uint8_t>(fault_kind::kill_node)) {
        auto reason = make_error(actors_errc::node_lost,
                                 "node " + name
                                   + " was killed by the fault "
                                     "plan");
        st->fail_everything(name, reason);
        self->quit(std::move(reason));
      } else if (kind == static_cast<uint8_t>(fault_kind::freeze_node)) {
        // Frozen: nothing is answered any more, not even what is pending.
        // Messages stay in the mailbox; only an exit ends the actor.
        detail::log().warn("node {}: frozen by the fault plan", name);
        self->set_default_handler(caf::skip);
        self->become(caf::behavior{[](node_fault_atom, uint8_t) {}});
      }
    },
    [=](task_ended_atom, uint64_t id, tasks_done& done) {
      auto i = st->tasks.find(id);
      if (i == st->tasks.end())
        return;
      auto [gid, index] = i->second;
      st->task_ended(id);
      auto g = st->groups.find(gid);
      if (g == st->groups.end())
        return;
      auto group = g->second;
      group->outputs[index] = std::move(done.outputs);
      group->timings[index] = std::move(done.timings);
      if (--group->remaining == 0) {
        st->groups.erase(g);
        tasks_done result{name, {}, {}};
        for (auto& outs : group->outputs)
          for (auto& out : outs)
            result.outputs.emplace_back(std::move(out));
        for (auto& times : group->timings)
          for (auto& t : times)
            result.timings.emplace_back(std::move(t));
        group->promise.deliver(std::move(result));
      }
    },
    [=](task_ended_atom, uint64_t id, caf::error& err) {
      auto i = st->tasks.find(id);
      if (i == st->tasks.end())
        return;
      auto gid = i->second.first;
      st->task_ended(id);
      st->fail_group(gid, std::move(err));
    },
    [=](deadline_atom) {
      st->timer.reset();
      auto now = clock_type::now();
      std::vector<uint64_t> expired;
      auto next = clock_type::time_point::max();
      for (auto& [gid, group] : st->groups) {
        if (group->deadline <= now)
          expired.push_back(gid);
        else
          next = std::min(next, group->deadline);
      }
      for (auto gid : expired) {
        // A task that timed out may still run; it is cancelled and reports
        // when it stops, which nothing waits for.
        auto label = st->groups.at(gid)->label;
        st->fail_group(gid,
                       make_error(actors_errc::task_failed,
                                  "node " + name + ": the tasks of the " + label
                                    + " group did not end within "
                                    + std::to_string(task_timeout.count())
                                    + " ms"));
      }
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
    [=](cancel_tasks&) -> caf::result<caf::unit_t> {
      st->cancel_all();
      if (st->tasks.empty())
        return caf::unit;
      st->stop_waiters.push_back(self->make_response_promise());
      return st->stop_waiters.back();
    },
    [=](reset_workspace&) -> caf::result<caf::unit_t> {
      return off_scheduler("resetting the workspace of node " + name,
                           [ws]() -> caf::error {
                             ws->replace_all({});
                             return {};
                           });
    },
    [=](put_blobs& msg) -> caf::result<caf::unit_t> {
      return off_scheduler(
        "storing blobs on node " + name,
        [ws, blobs = std::move(msg.blobs)]() mutable -> caf::error {
          for (auto& blob : blobs)
            ws->set(std::move(blob.name), std::move(blob.value));
          return {};
        });
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

caf::actor spawn_node(caf::actor_system& sys, std::string name,
                      std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::chrono::milliseconds task_timeout,
                      std::shared_ptr<worker_pool> pool,
                      std::shared_ptr<fault_injector> faults) {
  return sys.spawn(node_behavior, std::move(name), std::move(ws),
                   std::move(ops), task_timeout, std::move(faults),
                   std::move(pool));
}

} // namespace epochrt
