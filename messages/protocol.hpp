#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/message_fields.hpp>
#include <epochrt/messages/task_output.hpp>
#include <epochrt/messages/tensor.hpp>

// The protocol of a node: what its node actor and its persistence actor take
// (their typed handles are in node_protocols.hpp). Every request is one of
// these values; its reply is the named response type or a `caf::error`. The
// type of the request selects the handler, so no atoms are needed.

namespace epochrt {

/// A named tensor.
struct blob_value {
  std::string name;
  tensor value;
};

/// Node: run these tasks of `group` (all addressed to this node)
/// concurrently on the node's workspace. Replies `tasks_done`.
///
/// A group whose tasks use channels or collectives comes with its `plan`
/// (the same for every node of the group, and sent also to a channel's
/// node that runs no task of it) and an id for this run of the group,
/// `run`, unique among the runs of the sender: the group's channels and
/// collectives live for that run. The sender ends the run on every node
/// with `exchange_end` once the group is over.
///
/// `plan_key` (not 0 when there is a plan) is a digest of the plan. A
/// node daemon keeps the last plan of each group it was sent whole, and
/// the master's proxy of the daemon then sends the same plan again as its
/// key alone (an empty plan): the plan names every node of the group, and
/// sent with every run it cost the master n^2 bytes an epoch. A daemon
/// that does not keep the plan a key names refuses the run
/// (runtime_errc::exchange_failed); the proxy then sends the next one whole.
struct run_tasks {
  std::string group;
  int64_t epoch = 0;
  std::vector<task_def> tasks;
  uint64_t run = 0;
  exchange_plan plan = {};
  uint64_t plan_key = 0;
};

/// Node: stop every task still running (at its next op) and reply `unit`
/// once all of them have ended. Before a node's workspace is reloaded after
/// a failed epoch.
struct cancel_tasks {};

/// An op that ran for at least `slow_op_threshold_us`: the `index`-th op
/// its task ran (counting every iteration), from `offset_us` after its
/// task started, for `duration_us`.
struct op_timing {
  uint32_t index = 0;
  std::string type;
  int64_t offset_us = 0;
  int64_t duration_us = 0;
};

/// What one task of a group cost on its node, measured there: it started
/// `offset_us` after the node received the group, and ran `duration_us`.
/// Offsets, not clock readings, so that nodes in other processes and on
/// other hosts need no common clock.
struct task_timing {
  std::string node;
  std::string task;
  int64_t offset_us = 0;
  int64_t duration_us = 0;
  /// Its ops that ran at least `slow_op_threshold_us`, in order.
  std::vector<op_timing> slow_ops;
};

/// Ops shorter than this are not reported one by one (a task of a million
/// tiny ops must not make its reply a million entries long).
constexpr int64_t slow_op_threshold_us = 1000;

struct tasks_done {
  std::string node;
  std::vector<task_output> outputs;
  /// One per task that ended, in task order (of the node's tasks; of a
  /// whole group's, in node order).
  std::vector<task_timing> timings;
};

/// Node: reply `blob_values` with the named blobs of its workspace; an error
/// names a missing one.
struct fetch_blobs {
  std::vector<std::string> names;
};

struct blob_values {
  std::vector<blob_value> blobs;
};

/// Node: store these blobs in its workspace. Replies `unit`.
struct put_blobs {
  std::vector<blob_value> blobs;
};

/// Node: replies `unit` when the process that hosts it has every op in
/// `types` (the ops the job's tasks on the node call), else
/// runtime_errc::unknown_op naming the first it lacks. A job asks before
/// anything runs: ops are registered by the process that hosts a node (a
/// daemon's may lack an op the master's has).
struct check_ops {
  std::vector<std::string> types;
};

/// Persistence: list the blobs a checkpoint of this node will hold — the
/// workspace's blobs when `db` is empty, else the blobs of the checkpoint
/// at `db`. Replies `blob_names`.
struct init_checkpoint {
  std::string node;
  std::string db;
  /// Copies (`--replicas`): the daemons ("host:port") that keep a copy of
  /// every database this node saves from now on, and those that may hold
  /// one to restore a database that is missing or damaged here, in the
  /// order to try them. Empty: no copies (and every node in one process).
  std::vector<std::string> replica_holders;
  std::vector<std::string> replica_sources;
  /// With holders: this node's databases of the other committed epochs,
  /// oldest first. Each is restored here from a copy if it is missing, and
  /// copied to the holders that lack it, so that after a node moved or a
  /// holder was replaced every committed epoch has its copies again.
  std::vector<std::string> kept_dbs;
};

struct blob_names {
  std::vector<std::string> names;
};

/// Persistence: read blobs of the checkpoint `db` into the workspace, every
/// digest checked. An empty `blob_names` means every blob of the checkpoint.
/// With `allow_incomplete`, names the checkpoint lacks are skipped instead of
/// failing the load. Nothing is written to the workspace unless every blob
/// read checks out. Replies `checkpoint_stats`.
struct load_checkpoint {
  std::string node;
  int64_t epoch = 0;
  std::string db;
  std::vector<std::string> blob_names;
  bool allow_incomplete = false;
};

/// Persistence: does the checkpoint `db` exist and is it complete? With
/// `verify_data`, every digest is checked too. Replies `checkpoint_status`.
struct check_checkpoint {
  std::string db;
  bool verify_data = false;
};

struct checkpoint_status {
  bool exists = false;
  bool complete = false;
  bool intact = false; // meaningful only when verify_data was asked
  std::string problem;
};

/// Persistence: the snapshot of `epoch` is taken (the answer to
/// `begin_save`); its write goes on in the background.
struct snapshot_taken {
  int64_t epoch = -1;
};

/// Node (from the job runner): drop every blob of the workspace, before a
/// job that could not resume starts from scratch. Replies `unit`.
struct reset_workspace {
  std::string reason;
};

/// Persistence: snapshot the workspace for the checkpoint `db` of `epoch`,
/// reply `snapshot_taken` as soon as the snapshot is taken, then write it,
/// manifest last. The write's outcome is collected with `end_save`. The one
/// way to save: it lets the epoch loop go on while the checkpoint is
/// written (the snapshot is copy-on-write), and a blocking save asks for
/// the outcome at once.
///
/// Incremental unless `full`: a blob whose version the persistence actor
/// saved or loaded last, in the same directory and at an earlier epoch, is
/// not written again; its entry refers to that payload (checkpoint_writer's
/// `reuse`). With `full`, every payload is written.
///
/// `id` names the save among the manager's: the node keeps the write's
/// outcome under it and `epoch` until `end_save` asks for it (the few
/// nobody asks for, when the manager that began them is gone, are dropped
/// oldest first).
struct begin_save {
  std::string node;
  int64_t epoch = 0;
  uint64_t id = 0;
  std::string db;
  bool full = false;
};

/// Persistence: the outcome of the write started by the `begin_save` of
/// `epoch` and `id`; answered once that write is done. An error when that
/// `begin_save` failed or never came. Replies `checkpoint_stats`.
struct end_save {
  std::string node;
  int64_t epoch = 0;
  uint64_t id = 0;
};

/// Persistence: retention. Removes the node's checkpoint databases older
/// than every database in `kept` (the node's databases of the epochs still
/// committed, newest included) that no kept checkpoint refers to
/// (persistence/checkpoint_retention.hpp). With `check_only`, only checks
/// that every kept database can be read, and removes nothing. Replies
/// `pruned_checkpoints`.
struct prune_checkpoints {
  std::string node;
  std::vector<std::string> kept;
  bool check_only = false;
};

/// What `prune_checkpoints` removed, and the bytes it freed.
struct pruned_checkpoints {
  std::vector<std::string> removed;
  uint64_t bytes = 0;
};

/// Persistence: read `blob_names` from the checkpoint `db` of node `node`
/// and reply `blob_values` with their values, leaving the node's workspace
/// alone. Blobs the checkpoint lacks are left out. For bringing blobs of a
/// node's checkpoint to another process.
struct read_checkpoint {
  std::string node;
  std::string db;
  std::vector<std::string> blob_names;
};

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_NODE_MESSAGES(X)                                           \
  X(blob_value, name, value)                                               \
  X(run_tasks, group, epoch, tasks, run, plan, plan_key)                   \
  X(cancel_tasks)                                                          \
  X(task_output, task, blob, value)                                        \
  X(op_timing, index, type, offset_us, duration_us)                        \
  X(task_timing, node, task, offset_us, duration_us, slow_ops)             \
  X(tasks_done, node, outputs, timings)                                    \
  X(fetch_blobs, names)                                                    \
  X(check_ops, types)                                                      \
  X(blob_values, blobs)                                                    \
  X(put_blobs, blobs)                                                      \
  X(init_checkpoint, node, db, replica_holders, replica_sources, kept_dbs) \
  X(blob_names, names)                                                     \
  X(load_checkpoint, node, epoch, db, blob_names, allow_incomplete)        \
  X(check_checkpoint, db, verify_data)                                     \
  X(checkpoint_status, exists, complete, intact, problem)                  \
  X(snapshot_taken, epoch)                                                 \
  X(reset_workspace, reason)                                               \
  X(begin_save, node, epoch, id, db, full)                                 \
  X(end_save, node, epoch, id)                                             \
  X(prune_checkpoints, node, kept, check_only)                             \
  X(pruned_checkpoints, removed, bytes)                                    \
  X(read_checkpoint, node, db, blob_names)

EPOCHRT_NODE_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

} // namespace epochrt
