#pragma once

#include <string>

#include <caf/expected.hpp>

namespace epochrt {

/// Bytes a shared secret must have at least.
constexpr size_t min_secret_size = 16;

/// The shared secret of a master and its node daemons, read from `path`:
/// the file's bytes without trailing line breaks. actors_errc::
/// invalid_argument when the file cannot be read, when it is readable or
/// writable by anyone but its owner (chmod 600 it), or when the secret has
/// fewer than `min_secret_size` bytes.
caf::expected<std::string> read_secret_file(const std::string& path);

} // namespace epochrt
