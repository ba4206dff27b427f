#pragma once

// Internal to actors/: what a group with channels or collectives needs
// besides its nodes.

#include <chrono>
#include <map>
#include <string>

#include <caf/actor.hpp>

#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/messages/exchange_protocol.hpp>

namespace epochrt::detail {

/// Where each node of a job exchanges: the endpoint of the exchange of the
/// process that hosts it (node_handle::exchange), and the address of its
/// daemon.
using exchange_directory = std::map<std::string, exchange_peer>;

inline exchange_peer directory_entry(const node_handle& handle) {
  return exchange_peer{handle.name, handle.exchange, handle.address.host,
                       handle.address.port};
}

/// What run_group needs for a group with channels or collectives.
struct exchange_setup {
  exchange_directory directory;
  /// The exchange that passes messages between daemons (node_handle::
  /// relay), or null when no node of the group is on a daemon.
  caf::actor relay;
  /// Longest a node may take to end a run (exchange_end).
  std::chrono::milliseconds end_timeout{std::chrono::minutes(1)};
};

} // namespace epochrt::detail
