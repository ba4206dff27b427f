#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/writer_options.hpp>

namespace epochrt {

/// Writes the checkpoint database of one node at one epoch: a LevelDB
/// database directory at `path`.
///
/// Everything goes to a sibling directory `<path>.partial` first. `finish`
/// writes the manifest last, closes the database, fsyncs its files, then
/// swaps it in for `path` atomically (an old database at `path` is replaced
/// and deleted) and fsyncs the parent directory. So `path` always holds
/// either the old checkpoint or the complete new one. A writer destroyed
/// without a successful `finish` removes its partial directory and leaves
/// `path` untouched. `seal` and `sync` are finish's first two steps, for a
/// caller that reads the sealed files (a copy to another host) while they
/// are made durable.
///
/// Layout: the database holds the manifest and the inline blobs; large
/// numeric payloads go to the data file `<path>/blobs.data` beside it
/// (detail/data_file.hpp), written in large sequential writes and synced
/// with one fdatasync. Keys:
///   "manifest"    -> XXH3-64 of the Manifest record (8 bytes, little-endian),
///                    then the record (detail::manifest_value)
///   "c/" <blob name> "\0" <chunk index, 4 bytes big-endian> -> BlobChunk
/// Blob names cannot hold a NUL, so keys never collide, and the chunks of a
/// blob are adjacent and in order. An inline blob always has at least one
/// chunk (possibly empty). Numeric payloads are split into chunks of at
/// most `writer_options::chunk_bytes`; string tensors into chunks of whole
/// strings of about that size. Each chunk carries the XXH3-64 digest of its
/// own bytes (digest.hpp), each manifest entry that of the whole payload,
/// wherever it lives.
///
/// Incremental checkpoints: `reuse` lists a blob whose payload an earlier
/// epoch's database of the same node already holds, without writing it.
/// The manifest entry then names that epoch, its data file's id and the
/// offset; readers follow it there.
///
/// Fault points (with `writer_options::faults`; site: the node and epoch):
/// save.open in `create`; save.batch.before/after around each chunk batch;
/// save.manifest.before/after around the manifest batch; save.fsync.after
/// once the closed database's files are fsynced;
/// save.rename.before/after around the swap into `path`;
/// save.dirsync.before/after around the fsync of its directory. An injected
/// io_error fails the call as a real one would (the partial directory is
/// removed); short_write and corrupt_write damage what the step writes and
/// report success, as a bad disk would: the reader finds the damage. The
/// damage is detail/disk_damage's, which a writer without a plan never
/// enters.
///
/// Thread safety: none; one thread uses a writer at a time. Only one writer
/// per `path` may exist at a time (they would share `<path>.partial`).
/// All calls block on disk I/O: never call them on a CAF scheduler thread.
class checkpoint_writer {
public:
  /// Starts a checkpoint of `node` at `epoch`, to become the database at
  /// `path`. Creates missing parent directories and removes a stale
  /// `<path>.partial`. Errors: invalid_name (bad node name or negative
  /// epoch), io_error.
  static caf::expected<std::unique_ptr<checkpoint_writer>>
  create(std::string path, std::string node, int64_t epoch,
         writer_options opts = {});

  ~checkpoint_writer();

  checkpoint_writer(const checkpoint_writer&) = delete;
  checkpoint_writer& operator=(const checkpoint_writer&) = delete;

  /// Adds blob `blob_name` with the contents of `value`. Borrows `value`
  /// for the call only. Errors: invalid_name (not a valid blob name),
  /// invalid_argument (a name put twice, an inconsistent tensor, a writer
  /// that finished or failed), io_error. After an error the writer is
  /// failed: only destroying it is left.
  caf::error put(std::string_view blob_name, const tensor& value);

  /// How much `reuse` checks of the payload it refers to.
  enum class reuse_check {
    /// Its data file still exists with its id and holds its range, and the
    /// range still has the entry's digest (the payload is read once).
    digest,
    /// Only the data file, its id and its range: for a payload the caller
    /// has checked before (read back, or loaded) since its file was written.
    location,
  };

  /// Lists blob `earlier.name` with the payload that `earlier` (an entry of
  /// an earlier epoch's manifest of this node, in the same directory)
  /// points to, without writing it again, once `check` passed: a payload
  /// damaged on disk is never passed on to later epochs. Errors:
  /// invalid_argument (an inline entry, one of this or a later epoch, a
  /// name put twice, a finished writer: the writer is failed then);
  /// not_found (the earlier data is gone, rewritten or damaged: the writer
  /// stays usable, so that the caller can `put` the blob instead), io_error.
  caf::error reuse(const blob_entry& earlier,
                   reuse_check check = reuse_check::digest);

  /// Writes the manifest and closes the database; returns the manifest
  /// written. The database is then complete at `partial_path()`, not yet
  /// durable, and none of its files changes until `finish` swaps them into
  /// place: another thread may read them meanwhile, and must be done before
  /// `finish` is called. Nothing can be added afterwards. Errors:
  /// invalid_argument (sealed already, finished or failed), io_error; the
  /// writer is failed after an error.
  caf::expected<manifest> seal();

  /// Seals the database if it is not sealed yet, then makes its files
  /// durable where they are (save.fsync.after). Nothing is published: only
  /// `finish` does that. Errors: as `seal`'s, and io_error.
  caf::error sync();

  /// Seals and syncs the database if that is not done yet, then publishes
  /// it at `path`; returns the manifest written. The writer is done
  /// afterwards, whatever the result.
  caf::expected<manifest> finish();

  /// Where the database is written until `finish` publishes it:
  /// `<path>.partial`.
  const std::string& partial_path() const noexcept;

  /// Microseconds spent making the checkpoint durable: the data file's
  /// fdatasync, the fsyncs of the database's files and of its directory.
  /// For a save's statistics.
  int64_t sync_micros() const noexcept;

  /// The path the database will have once finished.
  const std::string& path() const noexcept;

private:
  struct impl;
  explicit checkpoint_writer(std::unique_ptr<impl> ptr);
  std::unique_ptr<impl> impl_;
};

} // namespace epochrt
