#include <epochrt/actors/api/upload_task_group_builder.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/basic_checkpoint_manager.hpp>

namespace epochrt {

upload_task_group_builder::~upload_task_group_builder() {
  // nop
}

directory_upload_builder::directory_upload_builder(std::string dir)
  : dir_(std::move(dir)) {
  // nop
}

caf::expected<task_group_def>
directory_upload_builder::build(int64_t epoch,
                                const basic_checkpoint_manager& manager) {
  if (manager.nodes().empty())
    return make_error(actors_errc::not_initialized,
                      "nothing to upload: the checkpoint manager has no nodes");
  task_group_def group;
  for (auto& node : manager.nodes()) {
    op_def copy;
    copy.type = "CopyDirectory";
    copy.args["source"]
      = make_string_tensor({}, {manager.get_ckpt_db_name(node, epoch)});
    copy.args["destination"] = make_string_tensor(
      {}, {dir_ + "/" + node + "." + std::to_string(epoch)});
    task_def task;
    task.name = "upload/" + node;
    task.node = node;
    task.steps.push_back(step_def{"upload", {std::move(copy)}, 1, {}});
    group.tasks.push_back(std::move(task));
  }
  return group;
}

} // namespace epochrt
