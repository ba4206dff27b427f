#pragma once

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <boost/test/unit_test.hpp>

#include "test/support/temp_dir.hpp"
#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
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

inline bool has_code(const caf::error& err, persistence_errc code) {
  return is_error(err, code);
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

/// Writes node trainer_0's checkpoint database of `epoch` at `path` with
/// `opts`: the payloads of `reused` (entries of earlier epochs) first, then
/// `blobs`.
inline caf::expected<manifest>
write_database(const std::string& path, int64_t epoch,
               const std::vector<std::pair<std::string, tensor>>& blobs,
               const std::vector<blob_entry>& reused, writer_options opts) {
  auto writer = checkpoint_writer::create(path, "trainer_0", epoch, opts);
  if (!writer)
    return std::move(writer.error());
  for (auto& entry : reused)
    if (auto err = (*writer)->reuse(entry))
      return err;
  for (auto& [name, value] : blobs)
    if (auto err = (*writer)->put(name, value))
      return err;
  return (*writer)->finish();
}

/// The entry of blob `name` in `man`; fails the test when there is none.
inline const blob_entry& entry_of(const manifest& man,
                                  const std::string& name) {
  for (auto& entry : man.blobs)
    if (entry.name == name)
      return entry;
  BOOST_FAIL("no entry " + name);
  return man.blobs.front();
}

} // namespace epochrt::test
