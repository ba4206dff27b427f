#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {

/// Which change of the commit record a `write_record` makes: for logs and
/// fault points (their detail), never for what is written.
struct record_change {
  /// "write" (a commit), "write_final" (a commit of the job's last epoch),
  /// "uncommit", "report" (stats), "adopt" (a copy a node daemon kept),
  /// "create" or "reset".
  std::string what;
  /// The epoch concerned; -1 when none is.
  int64_t epoch = -1;
};

/// Where the commit record of a job's checkpoints is kept (Caffe2's
/// MetadataHandler): the committed epochs, the final one, the last stats
/// and the job's definition, as one `checkpoint_metadata`.
/// file_metadata_handler is the durable default; a host program can
/// implement this interface to keep the record elsewhere (a database, a
/// coordination service).
///
/// A handler reads and writes the whole record, nothing else: every
/// change (commit, uncommit, final, stats) is a pure function of the record
/// (persistence/commit_record.hpp) that the checkpoint manager applies
/// between a `read_record` and a `write_record` (record_keeper). An epoch
/// is committed once a `write_record` whose record lists it has returned:
/// resume only ever uses committed epochs.
///
/// Thread safety: implementations need not be thread-safe. The checkpoint
/// manager that owns a handler serialises its calls (one at a time, from
/// one actor); a handler shared by several managers must be made safe by
/// whoever shares it. Calls may block on I/O. An exception a call throws
/// fails the checkpoint request that made it, never the manager.
class metadata_handler {
public:
  virtual ~metadata_handler() = default;

  /// The record; nullopt when none was ever written here (a fresh place).
  /// An error when it cannot be read or trusted (persistence_errc::corrupt,
  /// io_error): never nullopt for a record that is merely unreadable, which
  /// would restart a job from scratch over its checkpoints.
  virtual caf::expected<std::optional<checkpoint_metadata>> read_record() = 0;

  /// Replaces the record with `x`, atomically and durably before it
  /// returns: after a crash at any moment, `read_record` gives the old
  /// record or `x`, never a mix of them. `change` says which change `x`
  /// makes.
  virtual caf::error
  write_record(const checkpoint_metadata& x, const record_change& change)
    = 0;

  /// None when the record, and checkpoints beside it, can be written here:
  /// for a directory, it exists or can be created, can be written, and
  /// holds a record that can be trusted. persistence_errc::not_writable
  /// (saying why) when the place cannot be created or written; corrupt or
  /// io_error when the record cannot be read or trusted. Called before
  /// every save (Caffe2's `cp_accessible()`).
  virtual caf::error check_writable() = 0;
};

} // namespace epochrt
