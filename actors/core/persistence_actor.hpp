#pragma once

#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include <epochrt/actors/core/replica_client.hpp>
#include <epochrt/messages/node_protocols.hpp>

namespace epochrt {

class fault_injector;

class workspace;

/// Spawns the persistence actor of node `node`, on a thread of its own since
/// all it does is blocking disk I/O. It reads and writes the checkpoints of
/// `ws` — a workspace it shares with the node actor in the same process — so
/// that blob data never travels to be saved. It answers `begin_save` and
/// `end_save` (the one way to save), `load_checkpoint`, `init_checkpoint`,
/// `check_checkpoint`, `read_checkpoint` and `prune_checkpoints`, and refuses
/// requests addressed to another node.
///
/// Saves are incremental: the actor remembers the payloads of the last
/// checkpoint it saved or fully loaded, with the workspace versions of
/// their blobs, and a later save into the same directory refers to the
/// payload of every blob still at that version instead of writing it again
/// (unless the request says `full`).
///
/// With a non-empty `checkpoint_root` every database path it is sent is
/// placed under that root (`resolve_under`): a node daemon's checkpoints
/// never leave its root, whatever path the master sends. Empty: paths are
/// used as given, for a process that trusts its own checkpoint manager.
///
/// Copies (`--replicas`), on a daemon: `init_checkpoint` names the daemons
/// that keep copies of this node's databases and those that may hold one.
/// Each database saved from then on is pushed to every holder's replica
/// store (replica_client.hpp) before the save answers, so that its epoch
/// commits only once the copies are durable; a load or an init that finds
/// its database missing, incomplete or damaged pulls it (and the databases
/// it refers to) from the first holder that has it intact and tries again;
/// retention removes the holders' copies with the node's own databases,
/// and those an earlier placement left on the other sources.
/// `find_store` reaches other daemons' stores; null (a node in the master's
/// process): an init that names holders fails. `streams` move copies'
/// bytes on streams of their own; empty: in CAF messages.
///
/// Returns an invalid handle when the actor's thread cannot be created
/// (detail::spawn_detached); nothing is left running then.
persistence_actor spawn_persistence(caf::actor_system& sys, std::string node,
                                    std::shared_ptr<workspace> ws,
                                    std::string checkpoint_root = {},
                                    std::shared_ptr<fault_injector> faults
                                    = nullptr,
                                    store_finder find_store = nullptr,
                                    copy_stream_ends streams = {});

} // namespace epochrt
