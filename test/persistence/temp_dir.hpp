#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <unistd.h>

#include "persistence/persistence_errc.hpp"

namespace epochrt::test {

/// A fresh directory under the system's temp directory, removed with
/// everything in it when the fixture ends.
struct temp_dir {
  std::filesystem::path root;

  temp_dir() {
    static std::atomic<int> counter{0};
    auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    root = std::filesystem::temp_directory_path()
      / ("epochrt-persistence-" + std::to_string(::getpid()) + "-"
         + std::to_string(stamp) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(root);
  }

  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }

  std::string operator()(const std::string& name) const {
    return (root / name).string();
  }
};

inline bool has_code(const caf::error& err, persistence_errc code) {
  return err.category() == persistence_category
    && err.code() == static_cast<uint8_t>(code);
}

template <class T>
bool has_code(const caf::expected<T>& x, persistence_errc code) {
  return !x && has_code(x.error(), code);
}

template <class T>
std::string describe(const caf::expected<T>& x) {
  return x ? std::string{"ok"} : caf::to_string(x.error());
}

inline std::string describe(const caf::error& x) {
  return x ? caf::to_string(x) : std::string{"ok"};
}

} // namespace epochrt::test
