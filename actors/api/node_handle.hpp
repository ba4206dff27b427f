#pragma once

#include <string>

#include <epochrt/messages/node_protocols.hpp>

namespace epochrt {

/// How a session reaches one node: the node actor that hosts its workspace
/// and runs its tasks, and the persistence actor that writes its
/// checkpoints where the node runs. For a node on a daemon both are the
/// same proxy (remote_node_actor.hpp).
struct node_handle {
  std::string name;
  node_actor node;
  persistence_actor persistence;
};

} // namespace epochrt
