#include <epochrt/messages/job_def.hpp>

namespace epochrt {

std::string string_arg_of(const op_def& op, const std::string& name) {
  auto i = op.args.find(name);
  if (i == op.args.end() || i->second.type != dtype::string
      || i->second.strings.size() != 1)
    return {};
  return i->second.strings[0];
}

bool operator==(const op_def& x, const op_def& y) noexcept {
  return x.type == y.type && x.inputs == y.inputs && x.outputs == y.outputs
    && x.args == y.args;
}

bool operator==(const step_def& x, const step_def& y) noexcept {
  return x.name == y.name && x.ops == y.ops && x.num_iter == y.num_iter
    && x.stop_blob == y.stop_blob;
}

bool operator==(const task_def& x, const task_def& y) noexcept {
  return x.name == y.name && x.node == y.node && x.workspace == y.workspace
    && x.steps == y.steps && x.outputs == y.outputs;
}

bool operator==(const task_group_def& x, const task_group_def& y) noexcept {
  return x.tasks == y.tasks;
}

bool operator==(const channel_def& x, const channel_def& y) noexcept {
  return x.name == y.name && x.node == y.node && x.capacity == y.capacity
    && x.blobs == y.blobs;
}

bool operator==(const stop_condition& x, const stop_condition& y) noexcept {
  return x.node == y.node && x.blob == y.blob;
}

bool operator==(const job_def& x, const job_def& y) noexcept {
  return x.name == y.name && x.init_group == y.init_group
    && x.epoch_group == y.epoch_group && x.download_group == y.download_group
    && x.exit_group == y.exit_group && x.stop_conditions == y.stop_conditions
    && x.nodes_to_checkpoint == y.nodes_to_checkpoint
    && x.channels == y.channels;
}

} // namespace epochrt
