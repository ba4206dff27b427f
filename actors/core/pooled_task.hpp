#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/replies_to.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_actor.hpp>

#include <epochrt/actors/core/fwd.hpp>
#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt {

/// Tags what a pooled task sends its node actor when the fault plan kills
/// or freezes the node at one of the task's points: `(node_fault_atom,
/// uint8_t fault_kind)`. The task then ends without settling its group:
/// the node does (node_lost when killed, nothing at all when frozen).
/// Local only: it never crosses the wire.
using node_fault_atom = caf::atom_constant<caf::atom("ert_nfault")>;

/// Tags what the last task of a node to end sends its node actor while a
/// cancel_tasks waits for the node's tasks to end: `(tasks_idle_atom)`.
/// Local only.
using tasks_idle_atom = caf::atom_constant<caf::atom("ert_tidle")>;

/// What a node's tasks tell their node actor: the part of the node's
/// interface that only its tasks use.
using node_task_events
  = caf::typed_actor<caf::reacts_to<node_fault_atom, uint8_t>,
                     caf::reacts_to<tasks_idle_atom>>;

/// What a node actor and its tasks on the pool share: how many of the
/// tasks are queued or running, whether the node waits for that count to
/// reach zero (cancel_tasks), and whether a fault plan killed or froze the
/// node. Once it did, the tasks answer no group any more: the node answers
/// them (node_lost when killed; nothing while frozen, node_lost once it
/// exits). Thread-safe.
class node_tasks {
public:
  /// A task was queued.
  void add() noexcept {
    running_.fetch_add(1);
  }

  /// A task ended (ran, or was dropped unrun). Tells `node` when it was
  /// the last and the node waits.
  void remove(const node_task_events& node);

  /// The node waits for every task to end; true when none runs now, and
  /// it need not wait (it then does not).
  bool wait_for_idle() noexcept;

  /// The node heard that no task runs; true when that still holds (it
  /// stops waiting then).
  bool idle_confirmed() noexcept;

  /// A fault plan killed or froze the node: set by the task that met the
  /// fault before the node hears of it, and by the node when it does.
  void set_faulted() noexcept {
    faulted_.store(true);
  }

  /// Whether the tasks must leave their groups to the node. A task that
  /// read false answers as if it had ended before the fault.
  bool faulted() const noexcept {
    return faulted_.load();
  }

private:
  std::atomic<size_t> running_{0};
  std::atomic<bool> waiting_{false};
  std::atomic<bool> faulted_{false};
};

/// One run_tasks request as a node runs it: shared by the node actor and
/// the group's tasks on the worker pool. Exactly one reply is sent to the
/// requester, by whichever settles the group first: its last task to
/// succeed (with every task's outputs and timing, in task order), its first
/// task to fail, or the node actor (a timeout, a kill, a stop). A task
/// sends the reply itself, from its pool thread: an epoch's answer does not
/// wait for the node actor to be scheduled again.
///
/// Thread-safe: `settle` may race with the tasks' ends. Once settled, the
/// group holds no reference to the node or the requester any more: the
/// node keeps its groups, and a group that held its node would keep the
/// node alive.
class task_group_run {
public:
  using clock_type = std::chrono::steady_clock;

  /// For the request that `promise` answers, made by the node actor
  /// `node` (the sender of the reply), named `node_name`, of `tasks`
  /// tasks, received at `received`.
  task_group_run(caf::strong_actor_ptr node, std::string node_name,
                 caf::response_promise promise, std::string label, size_t tasks,
                 int64_t epoch, clock_type::time_point received);

  /// Task `index` ended with `outputs`; the last to end replies. Should
  /// that reply fail to be built (no memory), the group is answered with
  /// the error instead.
  void task_succeeded(size_t index, std::vector<task_output> outputs,
                      task_timing timing);

  /// Replies `err` and asks the group's other tasks to stop at their next
  /// op, unless the group is already settled. Returns whether it replied.
  bool settle(caf::error err);

  /// A task ended because the group was cancelled (`err`, its text): the
  /// group replies it only if every task has ended and nothing settled the
  /// group before, so that the failure that cancelled the group is its
  /// error, whichever task reports first.
  void task_cancelled(caf::error err);

  bool settled() const noexcept {
    return settled_.load();
  }

  const std::string& node_name() const noexcept {
    return node_name_;
  }

  const std::string& label() const noexcept {
    return label_;
  }

  int64_t epoch() const noexcept {
    return epoch_;
  }

  clock_type::time_point received() const noexcept {
    return received_;
  }

  /// Polled by the group's tasks before every op.
  const std::atomic<bool>* cancel_flag() const noexcept {
    return &cancel_;
  }

  /// Asks the group's tasks to stop at their next op, and ends their waits
  /// in channels and collectives (`on_cancel`, once).
  void cancel();

  /// What `cancel` also does, the first time: ends the waits of the
  /// group's tasks. Set by the node before its tasks are queued.
  std::function<void()> on_cancel;

  /// When its tasks have run out of time; max() for never. Node actor only.
  clock_type::time_point deadline = clock_type::time_point::max();

  /// The group's run in its exchange (0: none). Node actor only.
  uint64_t run = 0;

private:
  bool claim() noexcept {
    return !settled_.exchange(true);
  }

  void reply(caf::message msg);

  // The last task to end, when one was cancelled: replies the first
  // cancellation, unless the group is settled.
  void reply_cancelled();

  caf::strong_actor_ptr node_;
  std::string node_name_;
  caf::response_promise promise_;
  std::string label_;
  int64_t epoch_;
  clock_type::time_point received_;
  // Per task, in task order; each written by its task only, before that
  // task counts itself out of `remaining_`. The outputs of a group of one
  // task (the common case) go to `single_`, which saves an allocation.
  std::vector<task_output> single_;
  std::vector<std::vector<task_output>> outputs_;
  std::vector<task_timing> timings_;
  std::atomic<size_t> remaining_;
  std::atomic<bool> settled_{false};
  std::atomic<bool> cancel_{false};
  annotated_mutex cancelled_mtx_;
  caf::error cancelled_ EPOCHRT_GUARDED_BY(cancelled_mtx_);
  std::atomic<bool> any_cancelled_{false};
};

/// What one task of a node needs to run.
struct pooled_task {
  std::shared_ptr<task_group_run> group;
  /// The task's place in its group.
  size_t index = 0;
  /// The node actor, for a fault plan's kill or freeze and for `tasks`.
  node_task_events node;
  std::shared_ptr<node_tasks> tasks;
  std::shared_ptr<workspace> ws;
  std::shared_ptr<const op_registry> ops;
  task_def task;
  /// Consulted at task.start, before each op (node.op) and at task.end,
  /// with the group's epoch in the site, and by the task's channel and
  /// collective ops. Null: no plan.
  std::shared_ptr<fault_injector> faults;
  /// The process's exchange, for a group with channels or collectives, and
  /// the group's run there; null: the group uses none.
  std::shared_ptr<exchange_hub> hub;
  uint64_t run = 0;
};

/// Queues `task` on `pool`: long ops never hold CAF's scheduler, and no
/// thread is created for it. A task that waits in a channel or collective
/// op gives its thread back, and is queued again once the wait is over:
/// waiting tasks never hold up the pool (so the pool cannot deadlock
/// however many tasks wait, and for whatever). When the task ends it reports to
/// its group (see task_group_run): its outputs and timing — when it started
/// after its group was received, how long it ran, and which of its ops ran for
/// `slow_op_threshold_us` or longer —, or its error as
/// `actors_errc::task_failed` naming the node. A task that the pool drops
/// unrun (the pool was stopped) fails its group too. Either way it counts
/// itself out of `task.tasks`, which it was counted into here.
///
/// With a fault plan, an injected error fails the task; a kill_node or
/// freeze_node marks the node's tasks faulted, is sent to the node actor
/// as `node_fault_atom`, and the task ends without settling its group. No
/// task of a faulted node settles a group.
///
/// Returns `actors_errc::task_failed` naming the node and the task when the
/// pool takes no more work; nothing is queued, counted or sent then.
caf::error submit_task(const std::shared_ptr<worker_pool>& pool,
                       pooled_task task);

} // namespace epochrt
