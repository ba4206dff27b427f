#pragma once

#include <filesystem>
#include <string>

namespace epochrt::test {

/// A fresh directory `<temp>/epochrt-cli-XXXXXX`, removed with everything
/// in it when destroyed.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::filesystem::path& path() const noexcept {
    return path_;
  }

  std::string str() const {
    return path_.string();
  }

  /// `<dir>/<name>` as a string, for command lines.
  std::string sub(const std::string& name) const;

private:
  std::filesystem::path path_;
};

} // namespace epochrt::test
