#include "test/support/damaged_database.hpp"

#include <fstream>

namespace epochrt::test {

void corrupt_database(const std::filesystem::path& db) {
  for (auto& entry : std::filesystem::directory_iterator(db)) {
    auto ext = entry.path().extension().string();
    if (ext != ".ldb" && ext != ".log")
      continue;
    auto size = std::filesystem::file_size(entry.path());
    if (size < 16)
      continue;
    std::fstream f{entry.path(),
                   std::ios::in | std::ios::out | std::ios::binary};
    for (auto pos : {size / 3, size / 2, (2 * size) / 3}) {
      f.seekg(static_cast<std::streamoff>(pos));
      char c = 0;
      f.read(&c, 1);
      f.seekp(static_cast<std::streamoff>(pos));
      c = static_cast<char>(~c);
      f.write(&c, 1);
    }
  }
}

} // namespace epochrt::test
