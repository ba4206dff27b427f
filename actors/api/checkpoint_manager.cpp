#include <epochrt/actors/api/checkpoint_manager.hpp>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt {

checkpoint_manager::checkpoint_manager(caf::actor_system& sys,
                                       std::string db_prefix,
                                       std::string node_name,
                                       checkpoint_options options)
  : basic_checkpoint_manager(sys, std::move(db_prefix), std::move(options)),
    node_name_(std::move(node_name)) {
  // nop
}

caf::error checkpoint_manager::init(session& sess,
                                    const std::vector<std::string>& nodes,
                                    std::optional<int64_t> retrieve_from_epoch,
                                    std::string path_prefix) {
  // Other nodes are refused by check_nodes, in the base's init.
  return basic_checkpoint_manager::init(
    sess, nodes.empty() ? std::vector<std::string>{node_name_} : nodes,
    retrieve_from_epoch, std::move(path_prefix));
}

caf::error
checkpoint_manager::check_nodes(const std::vector<std::string>& nodes) const {
  if (nodes.empty() || nodes == std::vector<std::string>{node_name_})
    return {};
  // Saving other nodes under this manager would checkpoint what a host did
  // not ask for, and Caffe2's CheckpointManager refuses it too.
  std::string prefix = "a CheckpointManager (checkpoint_manager) of node '"
    + node_name_ + "' cannot checkpoint ";
  if (nodes.size() == 1)
    return make_error(actors_errc::invalid_argument,
                      prefix + "node '" + nodes[0]
                        + "': it checkpoints its own node only; use a "
                          "MultiNodeCheckpointManager "
                          "(multi_node_checkpoint_manager), or a "
                          "CheckpointManager of that node");
  std::string listed;
  for (auto& node : nodes)
    listed += (listed.empty() ? "" : ", ") + node;
  return make_error(actors_errc::invalid_argument,
                    prefix + std::to_string(nodes.size()) + " nodes (" + listed
                      + "): it checkpoints one node only; use a "
                        "MultiNodeCheckpointManager "
                        "(multi_node_checkpoint_manager) for several");
}

caf::error checkpoint_manager::load_blobs_from_checkpoint(
  session& sess, const std::vector<std::string>& blob_names, int64_t epoch) {
  return load_blobs_locally(sess, {node_name_}, blob_names, epoch);
}

} // namespace epochrt
