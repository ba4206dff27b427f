#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace epochrt {

/// Errors of the actors layer: running jobs and coordinating checkpoints.
enum class actors_errc : uint8_t {
  /// A task group names a node the session does not have.
  unknown_node = 1,
  /// A node stopped answering or its actor went down mid-request.
  node_lost,
  /// A task of a group failed; the context names the node and the task.
  task_failed,
  /// A checkpoint operation failed on at least one node.
  checkpoint_failed,
  /// The checkpoint manager was used before `init` bound it to nodes.
  not_initialized,
  /// A call's arguments contradict each other or the manager's state.
  invalid_argument,
  /// The job runner was asked for a checkpoint operation without a manager.
  no_checkpoint_manager,
  /// A node daemon and a master could not prove to each other that they
  /// share a secret (wrong secret, or only one side has one).
  auth_failed,
  /// A node daemon refused a request: a bad name, an oversized tensor, an
  /// unknown op, a sender that is not its master, or it serves another one.
  rejected,
  /// No node daemon answers at a node's address.
  unreachable,
  /// The job stopped because `job_runner::request_stop` asked it to; the
  /// last committed epoch is where a rerun resumes.
  stopped,
  /// The checkpoints a job would resume were committed by another
  /// definition of the job (runtime/job_definition.hpp); the context names
  /// the first difference.
  job_changed,
  /// A node's tasks of a group stopped because the group was cancelled,
  /// with no failure of their own: a group's error only when no node
  /// reports the failure that cancelled it.
  task_cancelled,
};

constexpr caf::atom_value actors_category = caf::atom("ert_actors");

std::string to_string(actors_errc x);

caf::error make_error(actors_errc code, std::string context = {});

/// Is `err` the error `code` of the actors layer? False for no error.
bool is_error(const caf::error& err, actors_errc code) noexcept;

/// Was a node lost (`actors_errc::node_lost`): the error a job may recover
/// from by restarting from its last committed epoch.
inline bool is_node_lost(const caf::error& err) noexcept {
  return is_error(err, actors_errc::node_lost);
}

/// The node a `node_lost` error says was lost: every such error's text
/// starts with "node <name>" naming it, whichever node noticed. Empty for
/// any other error.
std::string lost_node(const caf::error& err);

} // namespace epochrt
