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
  if (!nodes.empty() && nodes != std::vector<std::string>{node_name_})
    return make_error(actors_errc::invalid_argument,
                      "a CheckpointManager manages one node (" + node_name_
                        + "); use a MultiNodeCheckpointManager for several");
  return basic_checkpoint_manager::init(sess, {node_name_}, retrieve_from_epoch,
                                        std::move(path_prefix));
}

caf::expected<bool> checkpoint_manager::load_blobs_from_checkpoint(
  session& sess, const std::vector<std::string>& blob_names, int64_t epoch) {
  return load_blobs_locally(sess, {node_name_}, blob_names, epoch);
}

} // namespace epochrt
