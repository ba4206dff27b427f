#pragma once

#include <cstdint>
#include <string>

#include <caf/expected.hpp>

#include <epochrt/messages/job_def.hpp>

namespace epochrt {

class basic_checkpoint_manager;

/// Caffe2's UploadTaskGroupBuilder: builds the task group that uploads the
/// checkpoints of an epoch once training is done. The job runner runs the
/// group on its session after the epoch loop, before the download group.
class upload_task_group_builder {
public:
  virtual ~upload_task_group_builder();

  /// The task group that uploads the checkpoints of `epoch`, which
  /// `manager` saved. Called after the last epoch, and again after a lost
  /// node was recovered from there (`max_node_failures`): the group must be
  /// safe to run twice.
  virtual caf::expected<task_group_def>
  build(int64_t epoch, const basic_checkpoint_manager& manager) = 0;
};

using UploadTaskGroupBuilder = upload_task_group_builder;

/// Uploads by copying each node's checkpoint directory of the epoch to
/// `<dir>/<node>.<epoch>`, with a task on that node (so the copy runs where
/// the checkpoint is). Uses the built-in `CopyDirectory` op.
class directory_upload_builder : public upload_task_group_builder {
public:
  explicit directory_upload_builder(std::string dir);

  caf::expected<task_group_def>
  build(int64_t epoch, const basic_checkpoint_manager& manager) override;

private:
  std::string dir_;
};

} // namespace epochrt
