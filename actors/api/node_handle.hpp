#pragma once

#include <string>

#include <caf/actor.hpp>

namespace epochrt {

/// How a session reaches one node: the node actor that hosts its workspace
/// and task actors, and the persistence actor that writes its checkpoints
/// where the node runs.
struct node_handle {
  std::string name;
  caf::actor node;
  caf::actor persistence;
};

} // namespace epochrt
