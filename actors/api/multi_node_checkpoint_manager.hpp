#pragma once

#include <epochrt/actors/api/basic_checkpoint_manager.hpp>

namespace epochrt {

/// Caffe2's MultiNodeCheckpointManager: the checkpoints of several nodes,
/// saved and loaded in parallel, each by the node's own persistence actor.
/// Its operations are those of `basic_checkpoint_manager`.
class multi_node_checkpoint_manager : public basic_checkpoint_manager {
public:
  multi_node_checkpoint_manager(caf::actor_system& sys, std::string db_prefix,
                                checkpoint_options options = {});
};

using MultiNodeCheckpointManager = multi_node_checkpoint_manager;

} // namespace epochrt
