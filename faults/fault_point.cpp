#include <epochrt/faults/fault_point.hpp>

#include <array>

namespace epochrt {

namespace {

constexpr std::array<std::string_view, fault_kind_count> kind_names{
  "none", "crash",     "io_error",  "short_write", "corrupt_write", "delay",
  "drop", "duplicate", "partition", "kill_node",   "freeze_node"};

constexpr uint32_t any_place
  = kind_bit(fault_kind::crash) | kind_bit(fault_kind::delay);
constexpr uint32_t failing = any_place | kind_bit(fault_kind::io_error);
constexpr uint32_t writing = failing | kind_bit(fault_kind::short_write)
  | kind_bit(fault_kind::corrupt_write);
constexpr uint32_t on_node = failing | kind_bit(fault_kind::kill_node)
  | kind_bit(fault_kind::freeze_node);
constexpr uint32_t messaging = any_place | kind_bit(fault_kind::drop)
  | kind_bit(fault_kind::duplicate) | kind_bit(fault_kind::partition)
  | kind_bit(fault_kind::kill_node) | kind_bit(fault_kind::freeze_node);

} // namespace

std::string_view fault_kind_name(fault_kind x) noexcept {
  auto i = static_cast<size_t>(x);
  return i < kind_names.size() ? kind_names[i] : "unknown";
}

std::optional<fault_kind> fault_kind_from_name(std::string_view name) noexcept {
  for (size_t i = 1; i < kind_names.size(); ++i)
    if (kind_names[i] == name)
      return static_cast<fault_kind>(i);
  return std::nullopt;
}

const std::vector<fault_point_info>& fault_points() {
  using p = fault_point;
  static const std::vector<fault_point_info> points{
    {p::save_open, "save.open",
     "before a node's checkpoint database is created (as <db>.partial)",
     failing},
    {p::save_batch_before, "save.batch.before",
     "before a batch of blob chunks is written to the database", writing},
    {p::save_batch_after, "save.batch.after",
     "after a batch of blob chunks was written", failing},
    {p::save_manifest_before, "save.manifest.before",
     "before the manifest is written, as the last batch", writing},
    {p::save_manifest_after, "save.manifest.after",
     "after the manifest batch was written", failing},
    {p::save_fsync_after, "save.fsync.after",
     "after the closed database's files were fsynced", writing},
    {p::save_rename_before, "save.rename.before",
     "before the finished database is renamed into place", failing},
    {p::save_rename_after, "save.rename.after",
     "after the rename into place, before the directory's fsync", failing},
    {p::save_dirsync_before, "save.dirsync.before",
     "before the checkpoint directory is fsynced", failing},
    {p::save_dirsync_after, "save.dirsync.after",
     "after the checkpoint directory was fsynced: the database is durable",
     failing},
    {p::commit_write_before, "commit.write.before",
     "before the new metadata file is written (as a temporary file)", writing,
     false, true},
    {p::commit_write_after, "commit.write.after",
     "after the temporary metadata file was written and fsynced", failing,
     false, true},
    {p::commit_rename_before, "commit.rename.before",
     "before the metadata file is renamed into place", failing, false, true},
    {p::commit_rename_after, "commit.rename.after",
     "after the rename and the directory's fsync: the epoch is committed",
     failing, false, true},
    {p::load_metadata, "load.metadata", "each read of the metadata file",
     failing, false, false},
    {p::load_open, "load.open", "each open of a checkpoint database", failing},
    {p::load_chunk, "load.chunk",
     "each chunk or data-file payload read from a checkpoint database",
     failing},
    {p::gc_remove_before, "gc.remove.before",
     "before retention removes an old epoch's database (detail: its path)",
     failing},
    {p::gc_remove_after, "gc.remove.after",
     "after an old epoch's database was removed for good", failing},
    {p::copy_write, "copy.write",
     "before each piece of a database copied from another host is written",
     writing},
    {p::copy_rename_before, "copy.rename.before",
     "before the checked copy of a database is renamed into place", failing},
    {p::copy_rename_after, "copy.rename.after",
     "after the copy's rename into place, before the directory's fsync",
     failing},
    {p::job_group_start, "job.group.start",
     "before the job runner runs a group (detail: init, epoch, download, "
     "exit)",
     failing, false, true},
    {p::job_group_end, "job.group.end", "after a group ran on every node",
     failing, false, true},
    {p::job_epoch_start, "job.epoch.start", "before an epoch starts", failing,
     false, true},
    {p::job_epoch_end, "job.epoch.end",
     "after an epoch ran and its checkpoint was begun (every node took its "
     "snapshot)",
     failing, false, true},
    {p::job_stop_check, "job.stop_check",
     "before the stop conditions are checked after an epoch", failing, false,
     true},
    {p::node_op, "node.op", "before a node runs an op (detail: the op type)",
     on_node},
    {p::node_snapshot, "node.snapshot",
     "before a node's blobs are taken for a checkpoint", failing},
    {p::task_start, "task.start", "before a task starts on its node", on_node},
    {p::task_end, "task.end", "after a task ended on its node", on_node},
    {p::remote_attach, "remote.attach",
     "master: before it attaches a node on a daemon", failing, true, false},
    {p::remote_send, "remote.send",
     "master: before a request is sent to a remote node (detail: the "
     "message)",
     messaging},
    {p::remote_receive, "remote.receive",
     "master: when a remote node's reply arrives (detail: the message)",
     messaging},
    {p::remote_heartbeat, "remote.heartbeat",
     "daemon: each heartbeat from its master's connection", messaging, false,
     false},
    {p::daemon_receive, "daemon.receive",
     "daemon: when a request of its master arrives (detail: the message)",
     messaging},
    {p::daemon_send, "daemon.send",
     "daemon: before a reply is sent to its master (detail: the message)",
     messaging},
    {p::channel_put, "channel.put",
     "before a task's item leaves for its channel (detail: the channel)",
     messaging},
    {p::channel_take, "channel.take",
     "before a task's take leaves for its channel (detail: the channel)",
     messaging},
    {p::channel_close, "channel.close",
     "before a task's close leaves for its channel (detail: the channel)",
     messaging},
    {p::collective_send, "collective.send",
     "before a task's blobs leave for a collective call (detail: the "
     "collective)",
     messaging},
    {p::collective_receive, "collective.receive",
     "when a collective call's results reach a task (detail: the "
     "collective)",
     messaging},
  };
  return points;
}

const fault_point_info& info(fault_point x) {
  return fault_points()[static_cast<size_t>(x)];
}

std::optional<fault_point> fault_point_from_name(std::string_view name) {
  for (auto& x : fault_points())
    if (x.name == name)
      return x.point;
  return std::nullopt;
}

} // namespace epochrt
