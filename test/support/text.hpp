#pragma once

#include <string>

namespace epochrt::test {

/// True when `part` occurs in `text`: what a test asks of an error message
/// or a command's output.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace epochrt::test
