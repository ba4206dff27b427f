#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace epochrt {

class copy_stream_receiver;
class fault_injector;

/// Spawns a daemon's replica store (messages/replica_protocol.hpp), on a
/// thread of its own since all it does is disk I/O. It keeps the copies
/// other daemons push of their nodes' databases under `root`, at the paths
/// the master names them by (placed as the persistence actors place
/// theirs, so a copy lies where the node's own database would), and serves
/// every database under `root` to a daemon that restores one. It only
/// answers requests, never waits for another actor, so that two daemons
/// copying to each other cannot wait on each other.
///
/// A copy is written beside its place and swapped in whole once every
/// file's digest checked (database_copy); an offer of a database it holds
/// already (same data file, same manifest) gets ticket 0. Transfers and
/// reads not used for 10 minutes are dropped at the next request; at most
/// 64 of each are open, the oldest dropped first. Every name is checked:
/// node names as names.hpp says, files as plain names, paths placed under
/// `root`. Faults: the copy.* points of `faults` (null: none).
///
/// `streams`: where a copy whose offer asks for a stream waits for it (its
/// ticket then holds the stream's token). Null: every copy's bytes come as
/// copy_data.
caf::actor spawn_replica_store(caf::actor_system& sys, std::string root,
                               std::shared_ptr<fault_injector> faults,
                               std::shared_ptr<copy_stream_receiver> streams
                               = nullptr);

} // namespace epochrt
