#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include <epochrt/messages/job_def.hpp>

namespace epochrt {

class fault_injector;
class op_registry;
class workspace;

/// Tags what a task thread sends its node actor when its task has ended:
/// `(task_ended_atom, id, tasks_done)` or `(task_ended_atom, id, error)`.
/// Local only: it never crosses the wire.
using task_ended_atom = caf::atom_constant<caf::atom("taskended")>;

/// Tags what a task thread sends its node actor when the fault plan kills
/// or freezes the node at one of the task's points: `(node_fault_atom,
/// uint8_t fault_kind)`, sent before the task's own end. Local only.
using node_fault_atom = caf::atom_constant<caf::atom("ert_nfault")>;

/// Runs `task` on `ws` of node `node` on a thread of its own (so long ops
/// never hold CAF's scheduler), counted by `sys` like a detached actor (see
/// detail::start_counted_thread). When the task ends it sends `reply_to`
/// `(task_ended_atom, id, tasks_done{node, outputs})`, or the task's error
/// as `actors_errc::task_failed` naming the node. The task stops at its next
/// op once `cancel` is set.
///
/// With `faults`, the task consults the fault plan at task.start, before
/// each op (node.op) and at task.end, with `epoch` in the site; an injected
/// error fails the task, and a kill_node or freeze_node is sent to
/// `reply_to` as `node_fault_atom` before the task fails.
///
/// When the thread cannot be created, returns `actors_errc::task_failed`
/// naming the node and the task; then nothing runs and nothing is sent.
caf::error start_task(caf::actor_system& sys, caf::actor reply_to, uint64_t id,
                      std::string node, std::shared_ptr<workspace> ws,
                      std::shared_ptr<const op_registry> ops,
                      std::shared_ptr<std::atomic<bool>> cancel, task_def task,
                      std::shared_ptr<fault_injector> faults = nullptr,
                      int64_t epoch = -1);

} // namespace epochrt
