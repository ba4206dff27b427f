#pragma once

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "test/support/temp_dir.hpp"
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt::test {

/// A fresh directory for one test case (removed with everything in it),
/// with the short spellings these suites use: `root` and `dir("name")`.
struct persistence_fixture : temp_dir {
  std::filesystem::path root = path();

  std::string operator()(const std::string& name) const {
    return sub(name);
  }
};

/// A 1-D f32 tensor of `n` values counting up from `base`.
inline tensor floats(size_t n, float base) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), base);
  return make_tensor<float>({static_cast<int64_t>(n)}, values);
}

// False for no error (CAF 0.17's category() of no error dereferences null).
inline bool has_code(const caf::error& err, persistence_errc code) {
  return err && err.category() == persistence_category
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
