#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/manager_protocol.hpp>

namespace epochrt {

/// Where the copies of one node's databases go, and where a restore of one
/// looks (daemon addresses, "host:port").
struct replica_assignment {
  std::vector<std::string> holders;
  std::vector<std::string> sources;
};

/// The placement of `replicas` copies of each node's databases, for
/// `nodes` (any order; the result is in the same order). Only nodes on
/// daemons (a non-empty address) get copies; a node in the manager's
/// process gets none and restores from none.
///
/// Deterministic and stable as nodes move: the nodes on daemons are taken
/// in name order, and node i's holders are the daemons of nodes i+1, i+2,
/// ... (round the list), skipping its own daemon and those already chosen,
/// so a node that moves to a new daemon changes the holders only of the
/// nodes whose holder it was. A node's sources are its holders, then every
/// other daemon of the job (a copy made under an earlier placement lies
/// there).
///
/// Errors: actors_errc::invalid_argument when `replicas` > 0 and the nodes
/// run on fewer than `replicas` + 1 daemons (a copy never goes to the
/// node's own daemon).
caf::expected<std::vector<replica_assignment>>
plan_replicas(const std::vector<node_ref>& nodes, size_t replicas);

} // namespace epochrt
