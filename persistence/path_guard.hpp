#pragma once

#include <string>

#include <caf/expected.hpp>

namespace epochrt {

/// `path` (relative paths taken relative to `root`), lexically normalised,
/// when it stays inside `root` (or is `root`); persistence_errc::invalid_name
/// when it is empty, when ".." takes it out, or when following the symlinks
/// that exist (weakly_canonical) takes it out. For a peer-supplied path
/// that must not escape the checkpoint directory. Note that a symlink
/// created after the check is not caught: the directory must not be
/// writable by whoever supplies the path.
caf::expected<std::string> resolve_inside(const std::string& root,
                                          const std::string& path);

} // namespace epochrt
