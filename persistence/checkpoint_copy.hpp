#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/persistence/digest.hpp>

// Copies of checkpoint databases, byte for byte, as another host keeps them
// (`--replicas`): what the sending and the receiving end of a copy do on
// disk. Moving the bytes between the two is the caller's.
//
// A copy is of whole databases: every file of the directory, as it is on
// disk, so that the copy opens as the original does. An incremental
// database refers to the data files of earlier epochs' databases of its
// node beside it (blob_entry::data_epoch, data_id), so a copy of it that
// can be loaded needs those too: `list_for_copy` names them, the receiver
// skips those it already holds (`holds_database`) and copies the others
// into the same directory, each with its own `database_copy`, the earlier
// ones first, each under its own `db_name` path.
//
// All calls block on disk I/O: never call them on a CAF scheduler thread.

namespace epochrt {

class fault_injector;

// database_file and database_listing, what a copy sends ahead of the
// bytes, are in messages/replica_protocol.hpp. A listing's manifest_digest
// is set for the database a copy is of (0 for the earlier ones it refers
// to, which a data file's id tells apart).

/// What a copy of the checkpoint database at `db`, of `epoch`, needs: the
/// databases of the earlier epochs whose data files its manifest refers to
/// (ascending epoch, each once), then `db` itself (last). Opens `db` with
/// checkpoint_reader (the manifest is checked, no payload is read); of an
/// earlier database only the data file's header is read: a copy of it
/// serves for its payloads.
///
/// `files_at`, when not empty, is where the files of `db` itself are read
/// instead: the partial directory of its writer, sealed and not yet
/// published (checkpoint_writer::seal). The databases it refers to are
/// found beside `db` all the same.
///
/// Errors: not_found (no database at `db`), incomplete (it has no
/// manifest), corrupt (its manifest does not check out or is of another
/// epoch; a database it refers to is missing, or its data file is not the
/// one referred to: rewritten since), io_error.
caf::expected<std::vector<database_listing>>
list_for_copy(const std::string& db, int64_t epoch,
              const std::string& files_at = {});

/// Whether the database at `db` (a local path) already is the one that
/// `listing` describes, so that a copy can skip it (an incremental copy
/// sends only what the receiver lacks): its manifest opens (and is of
/// `listing.epoch`, when not negative), its data file's header carries
/// `listing.data_id` (no data file when 0), its manifest has
/// `listing.manifest_digest` (when not 0), and every listed file exists
/// with its size. A data file's id is random per write and a manifest
/// holds every payload's digest and the time it was written, so a database
/// of the same epoch written again is told apart. Never fails: false when
/// in doubt.
bool holds_database(const std::string& db, const database_listing& listing);

/// Reads one file of a database sequentially, in pieces of the caller's
/// size, and keeps the XXH3-64 (payload_hasher) of all bytes read so far:
/// the digest `database_copy::finish` checks at the other end.
///
/// Thread safety: none; one thread uses a reader at a time. Movable.
class database_file_reader {
public:
  /// Opens `file_name` inside the database directory `db`. Errors:
  /// invalid_name (`file_name` is not a plain file name: empty, ".", "..",
  /// or holding a '/' or NUL), not_found (no such file), io_error.
  static caf::expected<database_file_reader> open(const std::string& db,
                                                  std::string_view file_name);

  database_file_reader(database_file_reader&& other) noexcept;
  database_file_reader& operator=(database_file_reader&& other) noexcept;
  ~database_file_reader();

  /// Reads the next piece of at most `max_bytes` into `out`, resized to
  /// what was read: fewer only at the end of the file, empty past it.
  /// Errors: invalid_argument (`max_bytes` 0), io_error.
  caf::error read(size_t max_bytes, std::vector<char>& out);

  /// XXH3-64 of the bytes read so far.
  uint64_t digest() const noexcept;

  /// How many bytes were read so far.
  uint64_t bytes_read() const noexcept;

private:
  database_file_reader(int fd, std::string path);

  int fd_;
  std::string path_;
  uint64_t offset_ = 0;
  payload_hasher hasher_;
};

/// Options of `database_copy::create`.
struct copy_options {
  /// Consulted at copy.write (each `append`) and copy.rename.before/after
  /// (around the swap into place), with `node` and `epoch` as the site:
  /// those of the database copied.
  /// Borrowed: it must outlive the copy. Null: no faults, and each point
  /// costs a null test.
  fault_injector* faults = nullptr;
  std::string node;
  int64_t epoch = -1;
};

/// Receives a copy of one database, to become the database at `path`.
///
/// The files go to a sibling directory `<path>.copying` first, each
/// written with the bytes `append` is given for it, in order. `finish`
/// reads every file back and checks its size and its XXH3-64 against the
/// sender's (the digest is of the bytes as they are in the file, so damage
/// done in transit or while writing is found now, not at the first load on
/// this host, which may come only after the original was lost), fsyncs
/// the files and the directory, swaps it in for `path` atomically (an
/// older database at `path` is replaced and removed, as checkpoint_writer
/// does) and fsyncs the parent directory. So `path` always holds either
/// what it held before or the complete copy. A copy destroyed without a
/// successful `finish` removes `<path>.copying` and leaves `path`
/// untouched, except after a failure past the swap (an injected one at
/// copy.rename.after, or the fsync of the parent): the copy is in place
/// then, and the older database gone.
///
/// Fault points (with `copy_options::faults`): copy.write before each
/// append's write: io_error fails the append, short_write and
/// corrupt_write damage the bytes written (detail/disk_damage, as at a
/// data file's payload) and report success: `finish` finds the damage.
/// copy.rename.before/after around the swap into `path`.
///
/// Thread safety: none; one thread uses a copy at a time. Only one copy or
/// checkpoint_writer per `path` may exist at a time, and nothing may open
/// the database at `path` while `finish` replaces it.
class database_copy {
public:
  /// Starts the copy of the database `listing` describes, to become the
  /// database at `path`. Removes a stale `<path>.copying`, creates missing
  /// parent directories, and creates every listed file empty (a file of
  /// size 0 needs no `append`). Errors: invalid_name (an empty path, a
  /// listed name that is not a plain file name), invalid_argument (a name
  /// listed twice), io_error.
  static caf::expected<std::unique_ptr<database_copy>>
  create(std::string path, database_listing listing, copy_options opts = {});

  ~database_copy();

  database_copy(const database_copy&) = delete;
  database_copy& operator=(const database_copy&) = delete;

  /// Appends `size` bytes at `data` to the listed file `file_name`. Borrows
  /// `data` for the call only; the bytes go to the file as they are, with
  /// no copy. Errors: invalid_argument (a file not listed, more bytes than
  /// its listed size, a copy that finished or failed), io_error. After an
  /// error the copy is failed: only destroying it is left.
  caf::error append(std::string_view file_name, const char* data, size_t size);

  /// Checks the files against their listed sizes and `digests` (one per
  /// listed file, in the listing's order) and publishes the database at
  /// `path`. Errors: invalid_argument (a wrong number of digests, a copy
  /// that finished or failed), corrupt (a file that is short, or fails its
  /// digest: the message names it; `path` is untouched), io_error. The copy
  /// is done afterwards, whatever the result.
  caf::error finish(const std::vector<uint64_t>& digests);

  /// Microseconds `finish` spent making the copy durable: the fsyncs of the
  /// files, of their directory and of its parent. For a copy's statistics.
  int64_t sync_micros() const noexcept;

  /// The path the database will have once finished.
  const std::string& path() const noexcept;

  /// The files the copy receives, with their sizes.
  const database_listing& listing() const noexcept;

private:
  struct impl;
  explicit database_copy(std::unique_ptr<impl> ptr);
  std::unique_ptr<impl> impl_;
};

} // namespace epochrt
