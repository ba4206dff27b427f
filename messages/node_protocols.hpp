#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>

// The typed interfaces of the two actors that stand for one node: the node
// actor, which hosts its workspace and runs its tasks, and the persistence
// actor, which writes and reads its checkpoints where the node runs. On a
// node daemon the master holds one proxy that takes both (a
// `node_and_persistence_actor`). The other actors' interfaces are in
// actor_protocols.hpp; these are apart because a `node_ref` of the manager
// protocol carries a persistence handle.
//
// A request answered with nothing is a `reacts_to`: its reply handler takes
// no argument.

namespace epochrt {

/// The node actor (actors/core/node_actor.hpp).
using node_actor
  = caf::typed_actor<caf::replies_to<run_tasks>::with<tasks_done>,
                     caf::replies_to<exchange_end>::with<exchange_report>,
                     caf::replies_to<fetch_blobs>::with<blob_values>,
                     caf::reacts_to<put_blobs>, caf::reacts_to<cancel_tasks>,
                     caf::reacts_to<reset_workspace>,
                     caf::reacts_to<check_ops>>;

/// The persistence actor (actors/core/persistence_actor.hpp).
using persistence_actor = caf::typed_actor<
  caf::replies_to<load_checkpoint>::with<checkpoint_stats>,
  caf::replies_to<init_checkpoint>::with<blob_names>,
  caf::replies_to<check_checkpoint>::with<checkpoint_status>,
  caf::replies_to<read_checkpoint>::with<blob_values>,
  caf::replies_to<begin_save>::with<snapshot_taken>,
  caf::replies_to<end_save>::with<checkpoint_stats>,
  caf::replies_to<prune_checkpoints>::with<pruned_checkpoints>,
  caf::reacts_to<keep_commit_record>,
  caf::replies_to<fetch_commit_record>::with<checkpoint_metadata>>;

/// Both at once: what the master holds for a node on a daemon
/// (actors/remote/remote_node_actor.hpp). It converts to either.
using node_and_persistence_actor = node_actor::extend_with<persistence_actor>;

} // namespace epochrt
