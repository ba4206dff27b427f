#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

class fault_injector;

/// Options of `checkpoint_reader::open`.
struct reader_options {
  /// The fault plan consulted at load.open (each open) and load.chunk (each
  /// chunk read; detail: the blob's name). Borrowed: it must outlive the
  /// reader. Null: no faults, and each point costs a null test.
  fault_injector* faults = nullptr;
  /// The node and epoch the points report as their site. Borrowed for the
  /// call to `open` only. Unset (empty, negative): taken from the
  /// database's name (`<node>.<epoch>`), else from its manifest.
  std::string_view node;
  int64_t epoch = -1;
};

/// Reads a checkpoint database written by checkpoint_writer (see there for
/// the key layout), checking every digest.
///
/// Reading leaves every byte of the database directory as it was: LevelDB
/// 1.23 has no read-only open (DB::Open replays the log, may write a new
/// table or manifest and deletes files it considers obsolete), so the
/// reader opens a private view instead: a temporary directory ($TMPDIR)
/// with hard links to the table files, which LevelDB never modifies, and
/// copies of CURRENT, the manifest and the logs (table files are copied
/// too where hard links fail, e.g. across filesystems). The view is removed
/// when the reader is destroyed. The last batch, kept only in the log until
/// the next open, is seen through the view's copy of the log.
///
/// Thread safety: none; one thread uses a reader at a time. Several readers
/// may open the same database at once, each on its own view.
/// All calls block on disk I/O: never call them on a CAF scheduler thread.
class checkpoint_reader {
public:
  /// Opens the database at `path`. Errors: not_found (no database there),
  /// incomplete (no manifest: the save never finished), corrupt (the
  /// manifest or LevelDB's own structures do not check out), io_error.
  /// An injected io_error at load.open fails the open as a real one would.
  static caf::expected<std::unique_ptr<checkpoint_reader>>
  open(std::string path, reader_options opts = {});

  ~checkpoint_reader();

  checkpoint_reader(const checkpoint_reader&) = delete;
  checkpoint_reader& operator=(const checkpoint_reader&) = delete;

  /// The manifest of the database.
  const manifest& get_manifest() const noexcept;

  /// The blob named `blob_name`, its payload copied once from LevelDB into
  /// the tensor. Errors: not_found (not in the manifest), corrupt (a chunk
  /// missing, undecodable, of another blob, with a bad digest, or a payload
  /// whose digest, size or shape disagrees with the manifest), io_error;
  /// an injected io_error at load.chunk.
  caf::expected<tensor> read(std::string_view blob_name);

  /// The blobs named, in that order, as `read` would give them one by one,
  /// or the first error. Payloads in data files are read by two threads
  /// when there is enough of them (the thread is made and joined within
  /// the call; without one, this thread reads them all); the checks, fault
  /// points and opens still happen in manifest order on this thread.
  caf::expected<std::vector<tensor>>
  read_all(const std::vector<std::string>& blob_names);

  /// Reads every blob and checks every digest; the first problem found.
  caf::error verify();

  /// The path given to `open`.
  const std::string& path() const noexcept;

private:
  struct impl;
  explicit checkpoint_reader(std::unique_ptr<impl> ptr);
  std::unique_ptr<impl> impl_;
};

} // namespace epochrt
