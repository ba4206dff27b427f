#pragma once

#include <epochrt/actors/api/basic_checkpoint_manager.hpp>

namespace epochrt {

/// Caffe2's CheckpointManager: the checkpoints of one node. Every operation
/// given other nodes — `init`, `load_blobs_locally`, and a job runner whose
/// job checkpoints several nodes or another one — fails with
/// actors_errc::invalid_argument pointing to multi_node_checkpoint_manager,
/// instead of checkpointing nodes that are not the manager's.
class checkpoint_manager : public basic_checkpoint_manager {
public:
  checkpoint_manager(caf::actor_system& sys, std::string db_prefix,
                     std::string node_name, checkpoint_options options = {});

  const std::string& node_name() const noexcept {
    return node_name_;
  }

  /// Binds the manager to its node. `nodes`, when given, must be exactly
  /// the manager's node.
  caf::error init(session& sess, const std::vector<std::string>& nodes = {},
                  std::optional<int64_t> retrieve_from_epoch = {},
                  std::string path_prefix = {});

  /// Blobs listed by the last `init`.
  std::vector<std::string> blob_list() const {
    return basic_checkpoint_manager::blob_list(node_name_);
  }

  /// Loads only `blob_names` from the checkpoint of `epoch`, skipping names
  /// it lacks. persistence_errc::not_found, with nothing loaded, when the
  /// checkpoint does not exist; incomplete when its save never finished.
  caf::error load_blobs_from_checkpoint(
    session& sess, const std::vector<std::string>& blob_names, int64_t epoch);

protected:
  /// Refuses any list but this manager's node; an empty one means it.
  caf::error check_nodes(const std::vector<std::string>& nodes) const override;

private:
  std::string node_name_;
};

using CheckpointManager = checkpoint_manager;

} // namespace epochrt
