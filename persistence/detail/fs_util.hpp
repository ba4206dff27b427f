#pragma once

// Filesystem helpers of the checkpoint store. Internal to persistence/.
// Every function reports failure as persistence_errc::io_error (or
// not_found where stated) and never throws.

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace epochrt::detail {

/// "<what>: <strerror(err)>".
std::string errno_text(std::string_view what, int err);

/// persistence_errc::io_error with `errno_text(what, err)`.
caf::error io_error(std::string_view what, int err);

/// The directory that holds `path` ("." for a bare name).
std::string parent_dir(const std::string& path);

/// Creates the directory that holds `path`, and its missing parents.
caf::error create_parent_dirs(const std::string& path);

/// fsyncs a file or directory.
caf::error fsync_path(const std::string& path);

/// Reads up to `size` bytes at `offset` into `into`, across short reads and
/// EINTR; fewer only at the end of the file. The bytes read, or an
/// io_error naming `file`.
caf::expected<size_t> pread_full(int fd, char* into, size_t size,
                                 uint64_t offset, const std::string& file);

/// Writes all of `size` bytes at `offset`, across short writes and EINTR.
/// Errors: io_error naming `file`.
caf::error pwrite_all(int fd, const char* bytes, size_t size, uint64_t offset,
                      const std::string& file);

/// How many bytes written in sequence start_writeback lets pile up before
/// it hands them to the disk.
constexpr uint64_t writeback_bytes = uint64_t{8} << 20;

/// Starts the disk writing bytes [`from`, `end`) of `fd`, without waiting
/// for it, once they are at least writeback_bytes; `from` moves to `end`
/// then. For a file written in sequence and fsynced at the end: the disk
/// writes while the rest is still coming, and the fsync waits for the tail
/// only. Best effort: the fsync is what makes the bytes durable.
void start_writeback(int fd, uint64_t& from, uint64_t end) noexcept;

/// fsyncs every regular file directly inside `dir`, then `dir`.
caf::error fsync_dir_files(const std::string& dir);

/// Removes `path` and everything below it; success when it does not exist.
caf::error remove_tree(const std::string& path);

/// Sum of the sizes of the regular files below `dir` (0 when unreadable).
uint64_t tree_bytes(const std::string& dir) noexcept;

/// Moves `from` to `to` atomically, replacing whatever is at `to` (a
/// directory too), then removes the replaced entry and fsyncs the parent
/// of `to`. Uses renameat2(RENAME_EXCHANGE) where the filesystem supports
/// it; elsewhere the old entry is renamed aside to `<to>.old` first, so a
/// crash in between leaves it there rather than nowhere.
/// `swap_into_place`, `fsync_path(parent_dir(to))`, then removing the
/// replaced entry.
caf::error replace_path(const std::string& from, const std::string& to);

/// The first step of `replace_path`: the move, without the fsync of the
/// parent and without removing the replaced entry. Returns where the
/// replaced entry is now (`from` after an exchange, `<to>.old` after a
/// rename aside), for the caller to remove once the parent is fsynced;
/// empty when nothing was at `to`. On failure `to` is as it was.
caf::expected<std::string> swap_into_place(const std::string& from,
                                           const std::string& to);

/// Writes `bytes` to `path` durably: a temporary sibling is written and
/// fsynced, renamed over `path`, and the directory fsynced. Readers see the
/// old or the new contents, never a mix.
/// `write_synced_file(temp_path_of(path), ...)`, then `rename_durably`.
caf::error write_file_durably(const std::string& path, std::string_view bytes);

/// The temporary sibling `write_file_durably` writes first: `<path>.tmp`.
std::string temp_path_of(const std::string& path);

/// Creates or truncates `path`, writes `bytes` and fsyncs it; removes the
/// file again when any step fails.
caf::error write_synced_file(const std::string& path, std::string_view bytes);

/// Renames `from` over `to` and fsyncs the directory of `to`; removes
/// `from` when the rename fails.
caf::error rename_durably(const std::string& from, const std::string& to);

/// The contents of `path`; persistence_errc::not_found when it does not
/// exist.
caf::expected<std::string> read_file(const std::string& path);

} // namespace epochrt::detail
