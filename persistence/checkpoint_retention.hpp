#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

namespace epochrt {

class fault_injector;

/// What `remove_old_databases` did.
struct retention_report {
  /// Databases removed, oldest first.
  std::vector<std::string> removed;
  /// Databases older than every kept one that stay, because a kept
  /// checkpoint still refers to payloads in their data files.
  std::vector<std::string> referenced;
  /// Bytes freed.
  uint64_t bytes = 0;
};

/// Which committed epochs retention keeps and drops (`plan_retention`).
struct retention_plan {
  std::vector<int64_t> dropped; // ascending; to be uncommitted, then removed
  std::vector<int64_t> kept;    // ascending; empty when nothing is committed
};

/// Of `committed` (any order; duplicates ignored): keeps the last
/// `keep_last` epochs up to `upto` and every epoch after `upto` (left by an
/// earlier run that went further, never to be preferred to the epochs just
/// saved), and drops the rest. Keeps everything when `keep_last` is 0.
retention_plan plan_retention(std::vector<int64_t> committed, size_t keep_last,
                              int64_t upto = INT64_MAX);

/// Options of `remove_old_databases`.
struct retention_options {
  /// Consulted at gc.remove.before/after around each removal, with `node`
  /// and the removed epoch as the site and its path as the detail.
  /// Borrowed: it must outlive the call. Null: no faults.
  fault_injector* faults = nullptr;
  std::string_view node;
  /// Only check that every kept database can be read (its manifest); remove
  /// nothing. The report lists nothing then.
  bool check_only = false;
  /// A kept database that cannot be found (no directory, or no CURRENT
  /// file in it: checkpoint_reader::open's not_found) refers to nothing,
  /// and a directory that is not there holds nothing to remove: for a
  /// daemon's copies of another node's databases, which need not include
  /// every kept one. A kept database that is there but damaged still
  /// stops the removal.
  bool kept_may_be_missing = false;
};

/// Removes the databases of one node's checkpoints older than all of
/// `kept`, the paths of the node's databases of the epochs to keep
/// (db_name: `<prefix><node>.<epoch>`; at least one, all of one directory
/// and prefix), except those whose data files a kept checkpoint refers to
/// (incremental checkpoints). Never touches a database of an epoch at or
/// after the oldest kept one, nor anything not named like the node's
/// databases (a writer's `.partial` or a copy's `.copying` directory: the
/// next writer or copy of that path removes it).
///
/// Crash-safe: each database is first renamed to `<db>.deleting` (one
/// atomic step, with the directory fsynced), then removed; leftovers of an
/// interrupted removal are removed by the next call. Call it only after the
/// epochs it drops are no longer committed, so that a crash in between
/// leaves no committed epoch without its database.
///
/// When a kept database cannot be read, nothing is removed: its references
/// are unknown. Errors: invalid_argument (no kept path, or paths that do
/// not end in an epoch), corrupt/incomplete/not_found (a kept database),
/// io_error. Blocks on disk I/O.
caf::expected<retention_report>
remove_old_databases(const std::vector<std::string>& kept,
                     retention_options opts = {});

} // namespace epochrt
