#pragma once

// What the users of child processes read back: the files a child wrote.

#include <string>

namespace epochrt::process {

/// The content of the file at `path`; empty when it cannot be read.
std::string read_text(const std::string& path);

/// The last `lines` lines of the file at `path`, each indented by two
/// spaces and ended by a newline; empty when it cannot be read.
std::string tail_of(const std::string& path, int lines);

} // namespace epochrt::process
