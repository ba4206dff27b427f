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

/// The directory that holds `path` ("." for a bare name).
std::string parent_dir(const std::string& path);

/// fsyncs a file or directory.
caf::error fsync_path(const std::string& path);

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
caf::error replace_path(const std::string& from, const std::string& to);

/// Writes `bytes` to `path` durably: a temporary sibling is written and
/// fsynced, renamed over `path`, and the directory fsynced. Readers see the
/// old or the new contents, never a mix.
caf::error write_file_durably(const std::string& path, std::string_view bytes);

/// The contents of `path`; persistence_errc::not_found when it does not
/// exist.
caf::expected<std::string> read_file(const std::string& path);

} // namespace epochrt::detail
