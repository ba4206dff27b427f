#pragma once

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace epochrt::test {

/// True when `part` occurs in `text`: what a test asks of an error message
/// or a command's output.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The contents of the file at `path`; empty when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// The value of the first "KEY=..." line of a command's output, or
/// "<missing>".
inline std::string value_of(const std::string& out, const std::string& key) {
  std::istringstream in{out};
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + "=", 0) == 0)
      return line.substr(key.size() + 1);
  return "<missing>";
}

} // namespace epochrt::test
