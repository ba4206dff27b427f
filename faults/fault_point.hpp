#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace epochrt {

/// What a fault does when it strikes. Which kinds a point accepts is in its
/// `fault_point_info::kinds`; a plan that asks for another is invalid.
enum class fault_kind : uint8_t {
  none = 0,
  /// The process dies at once, as by SIGKILL: no destructors, no flush.
  crash,
  /// The operation at the point fails with `fault_rule::error` (an errno).
  io_error,
  /// Bytes about to be written lose their tail; the write reports success.
  short_write,
  /// Bytes about to be written get one bit flipped; the write reports
  /// success.
  corrupt_write,
  /// The operation waits `fault_rule::ms` milliseconds first.
  delay,
  /// The message is not delivered.
  drop,
  /// The message is delivered twice.
  duplicate,
  /// No message passes between the node and its master for
  /// `fault_rule::ms` milliseconds (each is dropped).
  partition,
  /// The node's actor stops (in a daemon: the daemon process dies).
  kill_node,
  /// The node stops answering anything, for good.
  freeze_node,
};

constexpr size_t fault_kind_count = 11;

/// The name of `x` in fault plans ("crash", "io_error", ...).
std::string_view fault_kind_name(fault_kind x) noexcept;

std::optional<fault_kind> fault_kind_from_name(std::string_view name) noexcept;

/// A bit per fault_kind.
constexpr uint32_t kind_bit(fault_kind x) noexcept {
  return uint32_t{1} << static_cast<unsigned>(x);
}

/// The named places where a fault plan can strike. The list, with a line
/// about each, is `fault_points()` and `epochrt faults list`.
enum class fault_point : uint8_t {
  // Writing one node's checkpoint database (persistence/checkpoint_writer).
  save_open,
  save_batch_before,
  save_batch_after,
  save_manifest_before,
  save_manifest_after,
  save_fsync_after,
  save_rename_before,
  save_rename_after,
  save_dirsync_before,
  save_dirsync_after,
  // Committing an epoch: the metadata file (file_metadata_handler).
  commit_write_before,
  commit_write_after,
  commit_rename_before,
  commit_rename_after,
  // Loading.
  load_metadata,
  load_open,
  load_chunk,
  // Retention: removing the databases of old epochs (checkpoint_retention).
  gc_remove_before,
  gc_remove_after,
  // Receiving a copy of a database from another host (persistence/
  // checkpoint_copy).
  copy_write,
  copy_rename_before,
  copy_rename_after,
  // The job runner.
  job_group_start,
  job_group_end,
  job_epoch_start,
  job_epoch_end,
  job_stop_check,
  // Node actors and their tasks.
  node_op,
  node_snapshot,
  task_start,
  task_end,
  // The remote path between a master and its node daemons.
  remote_attach,
  remote_send,
  remote_receive,
  remote_heartbeat,
  daemon_receive,
  daemon_send,
  // Channels and collectives: a task's operations (actors/core/
  // exchange_port).
  channel_put,
  channel_take,
  channel_close,
  collective_send,
  collective_receive,
};

constexpr size_t fault_point_count
  = static_cast<size_t>(fault_point::collective_receive) + 1;

/// One injection point: its name in plans, what it is, and the fault kinds
/// it accepts.
struct fault_point_info {
  fault_point point;
  std::string_view name;
  std::string_view what;
  uint32_t kinds;
  /// Whether its hits name a node, and an epoch: a rule may filter on
  /// them only then (it could never match otherwise).
  bool has_node = true;
  bool has_epoch = true;
};

/// Every point, in the order of the enum.
const std::vector<fault_point_info>& fault_points();

const fault_point_info& info(fault_point x);

std::optional<fault_point> fault_point_from_name(std::string_view name);

} // namespace epochrt
