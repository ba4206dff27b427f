#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/persistence/metadata_handler.hpp>

namespace epochrt {

class fault_injector;

/// The default metadata handler: a file `<dir>/epochrt.metadata` in the
/// checkpoint directory, holding a CheckpointMetadata record.
///
/// Every change is written to a temporary sibling, fsynced, renamed over
/// the file and the directory fsynced, so the file always holds the old or
/// the new state, and a change has reached the disk when the call returns.
/// The file it replaces, when sound, is kept as `epochrt.metadata.prev`:
/// the previous generation. When the latest generation is damaged (its
/// digest fails, it does not decode, or it is missing beside databases),
/// every read falls back to the previous one, which lacks only the last
/// change (a job resumed from it redoes at most the epoch that change
/// committed), and the next change writes a sound latest generation again.
/// Only when both are damaged is the metadata corrupt.
/// Every call reads the file afresh, so several instances (one after the
/// other, e.g. a restarted master) see each other's commits. The file
/// carries a digest over every byte of it: a file whose digest does not
/// match, or that does not decode, is an error (persistence_errc::corrupt),
/// never taken as "no epochs". A missing file means nothing was committed
/// yet only while the directory holds no checkpoint database; beside
/// databases it is corrupt too, until reset() starts over deliberately.
///
/// Fault points (with a fault injector): each change of the file passes
/// commit.write.before (the bytes about to be written: short_write cuts
/// them, corrupt_write flips a bit, and the write reports success),
/// commit.write.after (the temporary file written and fsynced),
/// commit.rename.before and commit.rename.after (renamed and the directory
/// fsynced). Their site: no node, the epoch concerned (-1 for changes that
/// concern none) and as detail the change (record_change::what: "write",
/// "write_final", "uncommit", "report", "adopt", "reset" or "create", the
/// empty file of a fresh directory). Each read of the record (`load`,
/// `read_record`, `check_writable`), whether or not a file exists yet,
/// passes load.metadata (site: nothing). An injected io_error fails the
/// call as a real one would.
///
/// Thread safety: as metadata_handler, calls must be serialised; two
/// processes must not change the same directory's metadata at once.
class file_metadata_handler : public metadata_handler {
public:
  /// The file name used inside the checkpoint directory.
  static constexpr const char* file_name = "epochrt.metadata";

  /// The previous generation's file name.
  static constexpr const char* previous_file_name = "epochrt.metadata.prev";

  /// Keeps metadata in `dir` (created on the first change if missing).
  /// `faults`, shared with whoever else consults the same plan: the plan
  /// for the commit.* and load.metadata points; null: no faults.
  explicit file_metadata_handler(std::string dir,
                                 std::shared_ptr<fault_injector> faults
                                 = nullptr);

  /// The record as `load` reads it; nullopt when the directory has no
  /// metadata file of either generation and no checkpoint database.
  caf::expected<std::optional<checkpoint_metadata>> read_record() override;

  /// Writes `x` as the next generation (see above); the change is the
  /// detail of the commit.* fault points.
  caf::error write_record(const checkpoint_metadata& x,
                          const record_change& change) override;

  /// Also writes an empty record into a directory that has none yet, before
  /// any database: a crash before the first commit then leaves databases
  /// beside metadata, never beside none (which `load` refuses).
  caf::error check_writable() override;

  /// The full state as stored; an empty one when no file exists and the
  /// directory holds no checkpoint database. When the latest generation is
  /// damaged and the previous one is sound: the previous one, and
  /// `*fallback_reason` (when given) says what is wrong with the latest.
  /// Errors: corrupt (the file is shorter than its header, its digest does
  /// not match, it does not decode, or it is missing while a
  /// `<node>.<epoch>` database exists: such a directory must not be taken
  /// for a fresh one; and no sound previous generation), io_error.
  caf::expected<checkpoint_metadata> load(std::string* fallback_reason
                                          = nullptr) const;

  /// Replaces whatever metadata the directory holds (missing, corrupt or
  /// not) by an empty state, durably, and removes the previous generation:
  /// the deliberate way to start over in a directory whose metadata cannot
  /// be trusted (`run --from-scratch`). Databases already there count as
  /// uncommitted and get overwritten.
  caf::error reset();

  /// The bytes of the file for `x`: a header (8-byte magic, then the
  /// XXH3-64 of the magic and the record, little-endian) and the encoded
  /// record. Every byte of the file is covered by the digest or compared.
  static std::string to_file_bytes(const checkpoint_metadata& x);

  /// The record in `bytes` (as made by to_file_bytes); corrupt, naming
  /// `path`, when any byte disagrees.
  static caf::expected<checkpoint_metadata>
  from_file_bytes(const std::string& bytes, const std::string& path);

  /// The path of the metadata file.
  const std::string& file_path() const noexcept {
    return file_;
  }

private:
  // Writes `x` durably; `change` is the site of the commit.* points.
  caf::error store(const checkpoint_metadata& x, const record_change& change);

  // The latest generation, or the previous one when the latest is damaged
  // (a missing latest counts as damaged when `missing_is_damage`, and as
  // an empty state otherwise).
  caf::expected<checkpoint_metadata>
  load_state(bool missing_is_damage, std::string* fallback_reason) const;

  // The record in `path`, verified.
  caf::expected<checkpoint_metadata>
  read_generation(const std::string& path) const;

  // Links the file about to be replaced, when it is sound, to the
  // previous generation's name.
  caf::error keep_previous_generation() const;

  std::string dir_;
  std::string file_;
  std::string previous_file_;
  std::shared_ptr<fault_injector> faults_;
};

} // namespace epochrt
