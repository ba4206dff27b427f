#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include <epochrt/messages/actor_protocols.hpp>

namespace epochrt {

class job_events;
class metadata_handler;

/// How a checkpoint manager actor saves and keeps checkpoints.
struct checkpoint_policy {
  /// Longest one node may take for one checkpoint operation.
  std::chrono::milliseconds timeout = std::chrono::hours(1);
  /// Every save of an epoch divisible by `full_every` writes every payload;
  /// others are incremental (begin_save). 0: incremental always; 1:
  /// full always.
  int64_t full_every = 0;
  /// After each commit, epochs older than the last `keep_last` committed
  /// ones are uncommitted and their databases removed, except payloads a
  /// kept checkpoint refers to. 0: every checkpoint is kept.
  size_t keep_last = 0;
  /// Told of each node's write and of each commit. Null: nobody.
  std::shared_ptr<job_events> events;
  /// Copies of every database of a node on a daemon, each on this many
  /// other daemons (replica_plan.hpp); an epoch commits once they are
  /// durable too. 0: none.
  size_t replicas = 0;
};

/// Spawns the checkpoint manager actor of the checkpoints under `db_prefix`.
///
/// It answers the `ckpt_*` requests of messages/manager_protocol.hpp by
/// fanning them out to the persistence actors of its nodes (bound by
/// `ckpt_init`), waiting at most `policy.timeout` for the whole fan-out (one
/// timer, detail::gather) and for every node's answer, and gathering
/// the results and per-node stats. A save commits its epoch in `metadata` only
/// after every node's save succeeded. It runs on a thread of its own because
/// the metadata handler does blocking I/O; `metadata` is used by this actor
/// only, one call at a time. An invalid handle when its thread cannot be
/// created (detail::spawn_detached): every request to it then fails.
checkpoint_manager_actor
spawn_checkpoint_manager(caf::actor_system& sys, std::string db_prefix,
                         std::shared_ptr<metadata_handler> metadata,
                         checkpoint_policy policy);

} // namespace epochrt
