#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>

#include <epochrt/messages/job_def.hpp>

namespace epochrt {

class fault_injector;
class op_registry;
class worker_pool;
class workspace;

/// Tags what a pooled task sends its node actor when it has ended:
/// `(task_ended_atom, id, tasks_done)` or `(task_ended_atom, id, error)`.
/// Local only: it never crosses the wire.
using task_ended_atom = caf::atom_constant<caf::atom("taskended")>;

/// Tags what a pooled task sends its node actor when the fault plan kills
/// or freezes the node at one of the task's points: `(node_fault_atom,
/// uint8_t fault_kind)`, sent before the task's own end. Local only.
using node_fault_atom = caf::atom_constant<caf::atom("ert_nfault")>;

/// What one task of a node needs to run.
struct pooled_task {
  /// Where the end of the task is sent, under `id`.
  caf::actor reply_to;
  uint64_t id = 0;
  std::string node;
  std::shared_ptr<workspace> ws;
  std::shared_ptr<const op_registry> ops;
  /// Polled before every op; once set, the task stops at its next op.
  std::shared_ptr<std::atomic<bool>> cancel;
  task_def task;
  /// Consulted at task.start, before each op (node.op) and at task.end,
  /// with `epoch` in the site. Null: no plan.
  std::shared_ptr<fault_injector> faults;
  int64_t epoch = -1;
  /// When the node received the task's group: its timing counts from here.
  std::chrono::steady_clock::time_point received;
};

/// Queues `task` on `pool`: long ops never hold CAF's scheduler, and no
/// thread is created for it. When the task ends, `reply_to` receives
/// `(task_ended_atom, id, tasks_done{node, outputs, {timing}})` — the
/// timing says when the task started after `received`, how long it ran,
/// and which of its ops ran for `slow_op_threshold_us` or longer —, or the
/// task's error as
/// `actors_errc::task_failed` naming the node. It receives exactly one of
/// these, whatever happens: a task that the pool drops unrun (the pool was
/// stopped) ends with an error too.
///
/// With a fault plan, an injected error fails the task, and a kill_node or
/// freeze_node is sent to `reply_to` as `node_fault_atom` before the task
/// fails.
///
/// Returns `actors_errc::task_failed` naming the node and the task when the
/// pool takes no more work; nothing is queued or sent then.
caf::error submit_task(worker_pool& pool, pooled_task task);

} // namespace epochrt
