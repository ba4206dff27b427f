#pragma once

#include <string>
#include <string_view>

namespace epochrt {

/// True for a node name that is safe to use as a file name component in a
/// checkpoint directory: 1 to 128 characters of [A-Za-z0-9_.-], not starting
/// with '.' or '-'. So "/" and ".." are never accepted.
bool valid_node_name(std::string_view name) noexcept;

/// True for a blob or task name: 1 to 256 printable ASCII characters, no
/// whitespace and no control characters.
bool valid_blob_name(std::string_view name) noexcept;

/// What is wrong with `name` as a blob name, naming it (made printable),
/// or empty when it is valid: the one text for a bad blob name wherever
/// one enters (a put, a job, the checkpoint writer).
std::string blob_name_problem(std::string_view name);

/// Why `name` is not a valid node name, or empty when it is.
std::string node_name_problem(std::string_view name);

} // namespace epochrt
