#pragma once

#include <string>

#include <caf/actor.hpp>

#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/messages/node_protocols.hpp>

namespace epochrt {

/// How a session reaches one node: the node actor that hosts its workspace
/// and runs its tasks, the persistence actor that writes its checkpoints
/// where the node runs, and the endpoint of the exchange of the process
/// that hosts it, where other nodes' tasks reach its channels and
/// collectives. For a node on a daemon the first two are the same proxy
/// (remote_node_actor.hpp), and `relay` is the session's own exchange,
/// which passes exchange messages between daemons until they are connected
/// to each other; null for a node in the session's process. `address` is
/// where the session reached the node's daemon (empty for a node in the
/// session's process): where the other daemons connect to it.
struct node_handle {
  std::string name;
  node_actor node;
  persistence_actor persistence;
  caf::actor exchange;
  caf::actor relay;
  node_address address;
};

/// Where the node's daemon is, as "host:port"; empty for a node in the
/// session's process.
inline std::string daemon_address(const node_handle& handle) {
  return handle.address.host.empty() ? std::string{} : handle.address.str();
}

} // namespace epochrt
