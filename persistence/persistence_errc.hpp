#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace epochrt {

/// Errors of the checkpoint store.
enum class persistence_errc : uint8_t {
  /// No database (or no blob, or no metadata) by that name.
  not_found = 1,
  /// A database without a manifest: its save never finished.
  incomplete,
  /// Stored bytes that fail a digest, do not decode, or contradict the
  /// manifest.
  corrupt,
  /// The filesystem or LevelDB failed to read or write.
  io_error,
  /// A node name, epoch or path that is not allowed (it could escape the
  /// checkpoint directory, or is malformed).
  invalid_name,
  /// A call that breaks the API's contract (a blob saved twice, a writer
  /// used after finish, an inconsistent tensor).
  invalid_argument,
  /// An epoch that the metadata does not record as committed.
  not_committed,
  /// A directory whose lock another job holds (see `dir_lock`); the
  /// context names the directory and the holder's pid.
  locked,
  /// A checkpoint directory that cannot be created or written (its
  /// metadata may be fine): a save is skipped, not failed.
  not_writable,
};

/// The category of `persistence_errc` in a `caf::error` (CAF atoms hold at
/// most 10 characters).
constexpr caf::atom_value persistence_category = caf::atom("ert_persis");

std::string to_string(persistence_errc x);

caf::error make_error(persistence_errc code, std::string context = {});

/// Is `err` the error `code` of the checkpoint store? False for no error.
bool is_error(const caf::error& err, persistence_errc code) noexcept;

} // namespace epochrt
