#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>

#include <epochrt/actors/core/fwd.hpp>
#include <epochrt/actors/remote/request_validation.hpp>
#include <epochrt/messages/node_protocols.hpp>

namespace epochrt {

/// What the gate of one node on a daemon guards.
struct node_gate_config {
  /// The node's name, its node actor and its persistence actor.
  std::string node;
  node_actor node_host;
  persistence_actor persistence;
  /// The only process whose requests are obeyed: the attached master.
  caf::node_id master;
  std::shared_ptr<const op_registry> ops;
  request_limits limits;
  /// Where path arguments of ops are placed (see `check_tasks`).
  std::string file_root;
  /// The daemon's fault plan: daemon.receive and daemon.send strike here.
  /// Null: none.
  std::shared_ptr<fault_injector> faults;
  /// Where the requests' checks run (never on CAF's scheduler).
  std::shared_ptr<worker_pool> pool;
};

/// Spawns the actor a master reaches one node of a daemon through. It
/// answers a request only from `cfg.master`, checks it (request_validation
/// .hpp), and hands it to the node actor (tasks, fetch, put, reset) or the
/// persistence actor (checkpoint requests), which reply to the master
/// directly. Anything else, or anything that fails a check, gets an
/// actors_errc::rejected reply, and nothing runs.
///
/// Tasks are checked on the worker pool (path arguments are placed
/// under the root through the filesystem, and schema checks are host code),
/// never on CAF's scheduler; a `cancel_tasks` fails the tasks still being
/// checked, so that they never start after it.
///
/// A request is obeyed once: a copy under a request id the gate has seen
/// from the same sender (a duplicated or retransmitted message) is
/// ignored, unanswered — the first copy's reply answers it. When the gate
/// stops, for whatever reason, it stops the node and persistence actors
/// with the same reason.
///
/// Faults of `cfg.faults` (docs/fault-plans.md): daemon.receive strikes as
/// each request of the master arrives, daemon.send before each reply the
/// node or persistence actor gave goes back (detail: the request's type;
/// epoch: the request's when it has one):
///
/// - delay: the request is handled, or the reply sent, `ms` later (a
///   timer);
/// - duplicate: the request arrives twice (the copy is ignored, as above);
///   the reply is sent twice (the master ignores the second);
/// - drop: the message is lost; as a TCP stream loses a message only when
///   it breaks, the gate then stops, with the injected error, once the
///   master's connection would have been found silent (the middleman's
///   connection timeout): the master sees its node lost and may reattach;
/// - partition: every message of the node either way is lost for `ms`,
///   with the same end as a drop;
/// - kill_node: the daemon process dies (SIGKILL), as docs/fault-plans.md
///   says a node in a daemon does; a line on stderr names the fault;
/// - freeze_node: the daemon process stops (SIGSTOP) for good, as a frozen
///   host: its heartbeats stop, so the master loses the node after its
///   connection timeout. Whoever runs the daemon must kill it.
caf::actor spawn_node_gate(caf::actor_system& sys, node_gate_config cfg);

} // namespace epochrt
