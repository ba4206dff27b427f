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

/// `path` placed under `root` as if `root` were the file system's root: an
/// absolute path loses its leading '/' ("/ckpt/n1.3" -> "<root>/ckpt/n1.3"),
/// then `resolve_inside` applies, so ".." and symlinks still cannot leave
/// `root`. How a node daemon maps the checkpoint paths a master sends: the
/// same job writes to the same place under every daemon's root, and no path
/// reaches outside it.
caf::expected<std::string> resolve_under(const std::string& root,
                                         const std::string& path);

} // namespace epochrt
