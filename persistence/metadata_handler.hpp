#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt {

/// Where the committed epochs of a job and its checkpoint stats are kept
/// (Caffe2's MetadataHandler). file_metadata_handler is the durable default;
/// a host program can implement this interface to keep them elsewhere (a
/// database, a coordination service).
///
/// An epoch is committed when every node's checkpoint of it is complete and
/// `write(epoch)` has returned: resume only ever uses committed epochs.
///
/// Thread safety: implementations need not be thread-safe. The checkpoint
/// manager that owns a handler serialises its calls (one at a time, from
/// one actor); a handler shared by several managers must be made safe by
/// whoever shares it. Calls may block on I/O.
class metadata_handler {
public:
  virtual ~metadata_handler() = default;

  /// Tells the handler which job it serves: the checkpoint directory
  /// (`db_prefix`), the nodes checkpointed, and the optional path prefix
  /// that replaces `db_prefix/` in database names.
  virtual caf::error set_params(const std::string& db_prefix,
                                const std::vector<std::string>& node_names,
                                const std::string& path_prefix)
    = 0;

  /// Tells the handler the definition of the job whose epochs it records
  /// (runtime/job_definition.hpp), to keep with every commit so that a run
  /// of another job can refuse to resume them. The default keeps nothing.
  virtual caf::error set_job_definition(const std::string& definition) {
    (void)definition;
    return {};
  }

  /// With `user_epoch`: that epoch if it is committed, else a
  /// persistence_errc::not_committed error that names the committed epochs.
  /// Without: the last committed epoch, or nullopt when none is. An error
  /// also when the metadata cannot be read (corrupt, io_error): never
  /// "nothing committed" for metadata that is merely unreadable.
  virtual caf::expected<std::optional<int64_t>>
  last_epoch(std::optional<int64_t> user_epoch) = 0;

  /// Records `epoch` as committed, durably, before returning.
  virtual caf::error write(int64_t epoch) = 0;

  /// Forgets `epoch`, durably, before returning. Called before the
  /// checkpoint of an epoch is overwritten, so that a crash during the
  /// overwrite never leaves a committed epoch with a half-written database.
  virtual caf::error uncommit(int64_t epoch) = 0;

  /// The committed epochs, ascending (empty when none). An error when the
  /// metadata cannot be trusted (corrupt, missing while checkpoint databases
  /// exist, io_error): never "nothing committed" for unreadable metadata.
  virtual caf::expected<std::vector<int64_t>> committed_epochs() = 0;

  /// Records the outcome of an action ("save", "load", ...) and its per-node
  /// stats.
  virtual caf::error
  report(const std::string& action, const std::vector<checkpoint_stats>& stats)
    = 0;

  /// None when checkpoints can be written here: the checkpoint directory
  /// exists or can be created, can be written, and holds metadata that can
  /// be trusted. persistence_errc::not_writable (saying why) when the
  /// directory cannot be created or written; corrupt or io_error when the
  /// metadata cannot be read or trusted. Called before every save (Caffe2's
  /// `cp_accessible()`; whether an epoch is committed is
  /// `committed_epochs`).
  virtual caf::error check_writable() = 0;

  /// Records, durably, that the job stopped after committed `epoch`: a job
  /// resumed from it runs no further epoch, so rerunning a finished job (or
  /// one killed after its last checkpoint) gives the same result. The
  /// default keeps nothing, which resumes as Caffe2 did: one more epoch.
  virtual caf::error mark_final(int64_t epoch) {
    (void)epoch;
    return {};
  }

  /// Commits `epoch` and records it as final in one durable step, so that a
  /// crash cannot leave it committed but not final. The default calls
  /// `write` and then `mark_final`.
  virtual caf::error write_final(int64_t epoch) {
    if (auto err = write(epoch))
      return err;
    return mark_final(epoch);
  }

  /// Commits the save of `epoch` with its per-node stats (as `write`, or
  /// `write_final` when `final`, and `report("checkpoint_save", stats)`),
  /// in one durable write where the handler can: the checkpoint manager
  /// commits through this call. The stats are informational and best
  /// effort: the default calls `write` (or `write_final`), then `report`,
  /// returns the commit's error only, and leaves a commit in place whatever
  /// `report` returns or throws. A handler that overrides `write`,
  /// `write_final` or `report` to change what a commit does must override
  /// this too when its base class implements it without them (as
  /// file_metadata_handler does).
  virtual caf::error commit(int64_t epoch, bool final,
                            const std::vector<checkpoint_stats>& stats) {
    if (auto err = final ? write_final(epoch) : write(epoch))
      return err;
    try {
      (void)report("checkpoint_save", stats);
    } catch (...) {
      // Best effort, as documented: the epoch is committed.
    }
    return {};
  }

  /// The epoch recorded by `mark_final`, while it is still committed; an
  /// error when the metadata cannot be read or trusted.
  virtual caf::expected<std::optional<int64_t>> final_epoch() {
    return std::optional<int64_t>{};
  }

  /// The whole record, for node daemons to keep a copy of (`--replicas`:
  /// a master host lost with its disk loses no commit); nullopt when there
  /// is none yet (a directory never written, where `adopt_record` may
  /// place a copy). An error when it cannot be read or trusted. The
  /// default has no record to give.
  virtual caf::expected<std::optional<checkpoint_metadata>> record() const {
    return std::optional<checkpoint_metadata>{};
  }

  /// Makes `x`, a copy a node daemon kept, this handler's record, durably:
  /// a master on a new host resumes where the lost one committed. Errors:
  /// persistence_errc::invalid_argument when the job definition set here
  /// differs from the one `x` records; the default cannot adopt one.
  virtual caf::error adopt_record(const checkpoint_metadata& x) {
    (void)x;
    return make_error(persistence_errc::invalid_argument,
                      "this metadata handler cannot adopt a commit record");
  }
};

} // namespace epochrt
