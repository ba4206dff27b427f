#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>

#include "actors/request_validation.hpp"

namespace epochrt {

class op_registry;

/// What the gate of one node on a daemon guards.
struct node_gate_config {
  /// The node's name, its node actor and its persistence actor.
  std::string node;
  caf::actor node_actor;
  caf::actor persistence;
  /// The only process whose requests are obeyed: the attached master.
  caf::node_id master;
  std::shared_ptr<const op_registry> ops;
  request_limits limits;
  /// Where path arguments of ops are placed (see `check_tasks`).
  std::string file_root;
};

/// Spawns the actor a master reaches one node of a daemon through. It
/// answers a request only from `cfg.master`, checks it (request_validation
/// .hpp), and hands it to the node actor (tasks, fetch, put, reset) or the
/// persistence actor (checkpoint requests), which reply to the master
/// directly. Anything else, or anything that fails a check, gets an
/// actors_errc::rejected reply, and nothing runs.
///
/// Tasks are checked on a thread of their own (path arguments are placed
/// under the root through the filesystem, and schema checks are host code),
/// never on CAF's scheduler; a `cancel_tasks` fails the tasks still being
/// checked, so that they never start after it.
caf::actor spawn_node_gate(caf::actor_system& sys, node_gate_config cfg);

} // namespace epochrt
