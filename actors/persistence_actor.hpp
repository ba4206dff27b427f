#pragma once

#include <memory>
#include <string>

#include <caf/fwd.hpp>

namespace epochrt {

class workspace;

/// Spawns the persistence actor of node `node`, on a thread of its own since
/// all it does is blocking disk I/O. It reads and writes the checkpoints of
/// `ws` — a workspace it shares with the node actor in the same process — so
/// that blob data never travels to be saved. It answers `save_checkpoint`,
/// `load_checkpoint`, `init_checkpoint` and `check_checkpoint`, and refuses
/// requests addressed to another node.
caf::actor spawn_persistence(caf::actor_system& sys, std::string node,
                             std::shared_ptr<workspace> ws);

} // namespace epochrt
