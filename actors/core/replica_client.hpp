#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/messages/replica_protocol.hpp>

// The persistence actor's side of copies between daemons (messages/
// replica_protocol.hpp): it pushes the databases its node writes to the
// replica stores of other daemons, and pulls one back from them when its
// own is missing or damaged. Every call blocks on the network and the
// disk: for the persistence actor's own thread (a detached actor), never a
// scheduler thread.

namespace epochrt {

class fault_injector;

/// How a node's persistence actor reaches the replica store of the daemon
/// at "host:port": blocking, with the daemon's secret or TLS, over a
/// connection of the daemon's own, kept for the next call unless
/// `reconnect` (a request over it failed). Given by the daemon
/// (replica_links).
using store_finder = std::function<caf::expected<caf::actor>(
  const std::string& address, bool reconnect)>;

/// Where the bytes of one file of a restore go, piece by piece, in order.
using piece_sink = std::function<caf::error(const char* data, size_t size)>;

/// How copies' bytes travel on copy streams
/// (actors/remote/copy_stream_receiver.hpp) instead of CAF messages. Given
/// by a daemon whose copies can go on streams (no TLS); empty otherwise.
struct copy_stream_ends {
  /// Sends the files of one database (the directory `local_db`, as
  /// `listing` names them) to the daemon at `address` on a stream
  /// presenting `token`, and returns once that daemon made the copy
  /// durable; `sent` grows by the bytes sent.
  std::function<caf::error(const std::string& address,
                           const std::vector<char>& token,
                           const std::string& local_db,
                           const database_listing& listing, uint64_t& sent)>
    send;
  /// Receives the file of `bytes` bytes that the daemon at `address`
  /// opened for `token`, each piece to `sink`, and returns that daemon's
  /// XXH3-64 of all of it; `received` grows by the bytes received.
  std::function<caf::expected<uint64_t>(
    const std::string& address, const std::vector<char>& token, uint64_t bytes,
    const piece_sink& sink, uint64_t& received)>
    fetch;
};

/// Where a database named as the master names it lives on this daemon
/// (resolve_under its checkpoint root).
using place_function
  = std::function<caf::expected<std::string>(const std::string& db)>;

/// What a push or a pull moved.
struct copy_outcome {
  uint64_t bytes = 0;     // bytes sent or received
  uint64_t databases = 0; // databases sent or received (held ones skipped)
};

/// Bytes a transfer sends per message, and messages in flight at once.
constexpr size_t copy_piece_bytes = size_t{4} << 20;
constexpr size_t copy_window = 12;

/// Pushes node `node`'s database `db` of `epoch` (named as the master names
/// it; `place` finds it here) to `store`, with every earlier database of
/// the node whose data file it refers to, oldest first: each the store does
/// not hold already, file by file, with the digest of every file. Returns
/// once the store made the copy durable. The bytes go on a copy stream to
/// `address` (the store's daemon) when `streams` are given and the store
/// takes streams, else (and when the stream is refused before it began,
/// actors_errc::unreachable) in copy_data messages. Errors: the persistence
/// layer's for the local files, the store's refusal or failure, and
/// caf::sec::request_timeout when one step took longer than `timeout`.
/// `files_at`: as for list_for_copy (the database `db` itself read from its
/// writer's sealed partial directory, while the writer makes it durable).
caf::expected<copy_outcome>
push_copy(caf::actor_system& sys, const caf::actor& store,
          const std::string& node, const std::string& db, int64_t epoch,
          const place_function& place, std::chrono::milliseconds timeout,
          const std::string& address = {}, const copy_stream_ends& streams = {},
          const std::string& files_at = {});

/// Pulls node `node`'s database `db` of `epoch` from `store` into this
/// daemon, with every earlier database it refers to: all of them, since a
/// restore also repairs a payload damaged here. Each is swapped in whole,
/// once every file's digest checked. `faults`: the copy.* points. Errors
/// as for push_copy; persistence_errc::not_found when the store does not
/// hold it. Each file comes on a copy stream from `address` (the store's
/// daemon) when `streams` are given and the store takes streams, else (and
/// when the stream is refused before it began) in copy_piece messages.
caf::expected<copy_outcome>
pull_copy(caf::actor_system& sys, const caf::actor& store,
          const std::string& node, const std::string& db, int64_t epoch,
          const place_function& place, std::chrono::milliseconds timeout,
          fault_injector* faults, const std::string& address = {},
          const copy_stream_ends& streams = {});

} // namespace epochrt
