#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/messages/annotated_mutex.hpp>

namespace epochrt {

/// A daemon's connections to the replica stores of other daemons
/// (replica_store_actor.hpp), which its nodes' persistence actors push
/// copies to and restore from: one per address, opened on first use as a
/// master connects to a daemon (TLS, or the admission handshake with the
/// daemon's secret, which the daemons of a job share), and kept.
///
/// Thread safety: `store_at` and `open_stream` may be called from any thread
/// outside CAF's scheduler; they block while a connection is opened.
class replica_links {
public:
  /// Borrows `sys`, which must outlive the links. `timeout` bounds each
  /// connection attempt.
  replica_links(caf::actor_system& sys, std::optional<std::string> secret,
                std::chrono::milliseconds timeout);

  /// The replica store of the daemon at `address` ("host:port"), over the
  /// connection kept from an earlier call unless `reconnect` (a request
  /// over it failed: the daemon may have been restarted there). Errors:
  /// actors_errc::invalid_argument (not an address), actors_errc::
  /// unreachable (no daemon answers there, or it has no store).
  caf::expected<caf::actor> store_at(const std::string& address,
                                     bool reconnect = false);

  /// A connection to the daemon at `address`, admitted with the secret as
  /// a copy stream (copy_stream_receiver.hpp); the caller owns the socket.
  /// Without TLS only. Errors: as connect_admitted's.
  caf::expected<int> open_stream(const std::string& address);

private:
  caf::actor_system& sys_;
  std::optional<std::string> secret_;
  std::chrono::milliseconds timeout_;
  annotated_mutex mtx_;
  std::map<std::string, caf::actor> stores_ EPOCHRT_GUARDED_BY(mtx_);
};

} // namespace epochrt
