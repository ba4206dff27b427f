#include "test/support/temp_dir.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <stdlib.h>

namespace epochrt::test {

temp_dir::temp_dir() {
  auto pattern
    = (std::filesystem::temp_directory_path() / "epochrt-test-XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  // mkdtemp picks a name no one else has and creates it atomically.
  if (::mkdtemp(buf.data()) == nullptr)
    throw std::runtime_error(std::string{"mkdtemp: "} + std::strerror(errno));
  path_ = buf.data();
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string temp_dir::sub(const std::string& name) const {
  return (path_ / name).string();
}

} // namespace epochrt::test
