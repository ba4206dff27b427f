#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

#include <epochrt/faults/fault_injector.hpp>

namespace leveldb {
class WriteBatch;
} // namespace leveldb

namespace epochrt::detail {

/// The disk under the store's writers as a fault plan has it: at each
/// save.*, commit.* or copy.* point it says what the disk does there. A delay
/// sleeps; an io_error is returned as the step's error, the writer failing
/// as after a real one; a short_write or corrupt_write damages what the step
/// writes, and the step goes on and reports success, as a bad disk would
/// (the reader finds the damage). Which byte or bit: drawn from the strike,
/// so a plan damages the same place on every run.
///
/// A writer holds one only when it has a fault plan. Without one it holds
/// none, and its steps never enter this code: each point is a null test in
/// the writer. Not thread-safe: one writer's thread uses it.
class disk_damage {
public:
  /// The points of the writes of `node`'s data at `epoch` (node empty, epoch
  /// -1: not known there), with `detail` as the site's detail. `faults` must
  /// outlive this object.
  disk_damage(fault_injector& faults, std::string node, int64_t epoch,
              std::string detail = {});

  /// A point where the step writes nothing the disk could damage.
  caf::error at(fault_point point);

  /// A point before `batch` is written: a damage cuts or flips its values
  /// (taken end to end; keys are left, see the .cpp).
  caf::error before_batch(fault_point point, leveldb::WriteBatch& batch);

  /// A point before `bytes` are written as a whole file: a damage cuts or
  /// flips them.
  caf::error before_bytes(fault_point point, std::string& bytes);

  /// A point before a payload is written to a data file; a damage it
  /// strikes is done by the `payload_written` that follows.
  caf::error before_payload(fault_point point);

  /// After the payload at [offset, offset + size) of `fd` (the file at
  /// `file`) was written: the damage struck by `before_payload`, if any.
  /// Errors: io_error when the damage itself cannot be done.
  caf::error payload_written(int fd, uint64_t offset, uint64_t size,
                             const std::string& file);

  /// A point after the files of the closed database in `dir` were synced: a
  /// damage cuts or flips one of its .log, .ldb or data files on disk.
  /// Errors: io_error when the directory cannot be listed or the damage
  /// cannot be done.
  caf::error after_sync(fault_point point, const std::string& dir);

private:
  // Strikes `point`: carries out a delay, returns an io_error, and keeps any
  // other kind in `action_` for the caller.
  caf::error strike(fault_point point);

  fault_injector& faults_;
  std::string node_;
  int64_t epoch_;
  std::string detail_;
  fault_action action_;
};

} // namespace epochrt::detail
