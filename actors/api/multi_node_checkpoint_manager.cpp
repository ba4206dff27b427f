#include <epochrt/actors/api/multi_node_checkpoint_manager.hpp>

namespace epochrt {

multi_node_checkpoint_manager::multi_node_checkpoint_manager(
  caf::actor_system& sys, std::string db_prefix, checkpoint_options options)
  : basic_checkpoint_manager(sys, std::move(db_prefix), std::move(options)) {
  // nop
}

} // namespace epochrt
