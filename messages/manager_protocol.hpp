#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/message_fields.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

// Requests to the job runner actor and to the checkpoint manager actor, which
// fans them out to the persistence actors of the nodes it manages and gathers
// the results. An epoch of -1 means "none" where a field says so.

namespace epochrt {

/// A node as the checkpoint manager sees it: its name, the persistence
/// actor that reads and writes its checkpoints, and the address of the
/// daemon it runs on ("host:port"; empty in the manager's process), which
/// decides where copies of its checkpoints go.
struct node_ref {
  std::string name;
  persistence_actor persistence;
  std::string address;
};

/// Set the nodes and where their checkpoints go (Caffe2's set_params),
/// and, when `job_definition` is not empty, the job they are of: every
/// commit records it, and the checkpoints another definition committed are
/// refused (actors_errc::job_changed) unless `allow_job_change`. Replies
/// `unit`.
struct ckpt_set_params {
  std::vector<std::string> node_names;
  std::string path_prefix;
  std::string job_definition;
  bool allow_job_change = false;
};

/// Bind the managed nodes to their persistence actors and list the blobs
/// each checkpoint will hold — from the workspaces, or from the checkpoints
/// of `retrieve_from_epoch` when it is not -1. Replies `ckpt_result`.
struct ckpt_init {
  std::vector<node_ref> nodes;
  int64_t retrieve_from_epoch = -1;
  std::string path_prefix;
};

/// Save every node's checkpoint of `epoch` and wait for every write. Does
/// not commit the epoch: `ckpt_write_metadata` does (Caffe2's split). The
/// job runner uses `ckpt_save_async`. Replies `ckpt_result`.
struct ckpt_save {
  int64_t epoch = 0;
};

/// Load the checkpoints of `epoch` into the nodes' workspaces: every blob,
/// or with `partial` only `blob_names` that a checkpoint has. Replies
/// `ckpt_result`.
struct ckpt_load {
  int64_t epoch = 0;
  std::string path_prefix;
  std::vector<std::string> blob_names;
  bool partial = false;
};

/// Do all nodes' checkpoints of `epoch` exist and are complete (and, with
/// `verify_data`, intact)? Replies `checkpoint_status`.
struct ckpt_exists {
  int64_t epoch = 0;
  bool verify_data = false;
};

/// Check every node's checkpoint of `epoch` wherever a copy of it may lie:
/// on the node's own daemon (or this process's disk) and on every other
/// daemon of the bound nodes, reading every payload. Read-only: nothing is
/// restored or repaired. Replies `database_checks`.
struct ckpt_verify_copies {
  int64_t epoch = 0;
};

/// What a check found of one node's database at one place.
struct database_check {
  std::string node;
  /// The daemon it lies on ("host:port"); empty: the manager's process.
  std::string daemon;
  /// The node's own database; false: a copy another daemon holds.
  bool own = false;
  checkpoint_status status;
};

/// The answer to `ckpt_verify_copies`: for each node in the bound order,
/// its own database first, then each other daemon in the nodes' order.
struct database_checks {
  std::vector<database_check> checks;
};

/// Retention by hand: keep the last `keep_last` (at least 1) committed
/// epochs, uncommit the others and remove their databases and copies, as
/// after a commit with `checkpoint_policy::keep_last`, but with every
/// failure an error. Replies `retention_result`.
struct ckpt_retain {
  uint64_t keep_last = 0;
};

/// What retention kept and removed.
struct retention_result {
  /// The committed epochs kept, ascending; empty when none is committed.
  std::vector<int64_t> kept;
  /// The databases removed, each by its path where it lay.
  std::vector<std::string> removed;
  uint64_t bytes = 0;
};

/// The epoch to resume from: `user_epoch` if committed (an error otherwise),
/// else the newest committed epoch below `before_epoch` (or the newest of all
/// when it is -1), else -1. Replies `resume_point`.
///
/// With copies on (`checkpoint_policy::replicas`) and a checkpoint
/// directory that holds no record at all (a master on a new host), the
/// newest record the daemons of `nodes` keep is adopted first (empty: the
/// nodes of the last `ckpt_init`).
struct ckpt_resume_epoch {
  int64_t user_epoch = -1;
  int64_t before_epoch = -1;
  std::vector<node_ref> nodes;
};

/// Where a job resumes: the committed `epoch`, or -1 to start from scratch.
struct resume_point {
  int64_t epoch = -1;
  /// True when the job had already ended after `epoch` (see
  /// metadata_handler): only the groups after the epoch loop remain.
  bool final = false;
};

/// Record `epoch` as committed. Replies `unit`.
struct ckpt_write_metadata {
  int64_t epoch = 0;
};

/// Hand the stats of the last save or load to the metadata handler under
/// `action`. Replies `ckpt_result` with those stats, one entry per node.
struct ckpt_report {
  std::string action;
};

/// Is the checkpoint directory writable (epoch -1), or is `epoch`
/// committed? Replies `bool`.
struct ckpt_accessible {
  int64_t epoch = -1;
};

/// Job runner: run the whole job, from `resume_from_epoch` (an error when it
/// is not committed), or -1: from the newest committed epoch whose
/// checkpoints load (older ones tried in turn), else from scratch. Replies
/// `job_result`.
struct run_job {
  int64_t resume_from_epoch = -1;
};

/// Job attempt: run the job once, from its resume point to the end of its
/// exit group, as `run_job` says; with `reset_workspaces`, every workspace
/// is emptied before a start from scratch (nodes may hold the state of an
/// attempt that failed). Replies `job_result`.
struct run_attempt {
  int64_t resume_from_epoch = -1;
  bool reset_workspaces = false;
};

/// The end of a job (or of an attempt): the last epoch that ran.
struct job_result {
  int64_t last_epoch = -1;
};

/// Checkpoint manager: like `ckpt_save` with commit, but replies `unit` as
/// soon as every node took its snapshot; the commit follows when every
/// write is done (a failed write is logged, never committed).
struct ckpt_save_async {
  int64_t epoch = 0;
  bool final = false;
};

/// Checkpoint manager: reply `unit` once every commit started by
/// `ckpt_save_async` has finished, one way or the other. With `last_epoch`
/// >= 0, the reply is instead the `node_lost` error that kept that epoch
/// from being committed, if a lost node did (not any other failed write):
/// the job cannot end without its last checkpoint while it can recover.
struct ckpt_flush {
  int64_t last_epoch = -1;
};

/// Read `blob_names` from every node's checkpoint of `epoch` and reply
/// `blob_values` with all of them, for a workspace outside the nodes (the
/// master's). A blob that two nodes' checkpoints both hold is an error;
/// blobs no checkpoint holds are left out.
struct ckpt_read {
  int64_t epoch = 0;
  std::vector<std::string> blob_names;
};

struct ckpt_result {
  std::vector<checkpoint_stats> stats;
  std::vector<std::string> node_names;
  std::vector<std::vector<std::string>> blob_lists; // per node, for init
};

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_MANAGER_MESSAGES(X)                           \
  X(node_ref, name, persistence, address)                     \
  X(ckpt_set_params, node_names, path_prefix, job_definition, \
    allow_job_change)                                         \
  X(ckpt_init, nodes, retrieve_from_epoch, path_prefix)       \
  X(ckpt_save, epoch)                                         \
  X(ckpt_load, epoch, path_prefix, blob_names, partial)       \
  X(ckpt_retain, keep_last)                                   \
  X(retention_result, kept, removed, bytes)                   \
  X(ckpt_verify_copies, epoch)                                \
  X(database_check, node, daemon, own, status)                \
  X(database_checks, checks)                                  \
  X(ckpt_exists, epoch, verify_data)                          \
  X(ckpt_resume_epoch, user_epoch, before_epoch, nodes)       \
  X(ckpt_write_metadata, epoch)                               \
  X(ckpt_report, action)                                      \
  X(ckpt_accessible, epoch)                                   \
  X(resume_point, epoch, final)                               \
  X(run_job, resume_from_epoch)                               \
  X(run_attempt, resume_from_epoch, reset_workspaces)         \
  X(job_result, last_epoch)                                   \
  X(ckpt_save_async, epoch, final)                            \
  X(ckpt_flush, last_epoch)                                   \
  X(ckpt_read, epoch, blob_names)                             \
  X(ckpt_result, stats, node_names, blob_lists)

EPOCHRT_MANAGER_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

} // namespace epochrt
