#include <epochrt/persistence/detail/data_file.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>

#include <unistd.h>

#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt::detail {

namespace {

constexpr std::string_view magic = "EPRTDAT1";

} // namespace

uint64_t new_data_id() {
  // Not a secret, only unlikely to repeat: two writes of one path must not
  // share an id. random_device reads the kernel's entropy on Linux; should
  // it fail (it throws), the clock, a counter and the pid still differ.
  uint64_t id = 0;
  try {
    std::random_device rd;
    id = (uint64_t{rd()} << 32) ^ uint64_t { rd() };
  } catch (const std::exception&) {
    static std::atomic<uint64_t> counter{0};
    auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    id = static_cast<uint64_t>(now) * 0x9e3779b97f4a7c15ULL ^ (++counter << 48)
      ^ static_cast<uint64_t>(::getpid());
  }
  return id != 0 ? id : 1; // 0 is never a valid id
}

std::string data_header(uint64_t id) {
  std::string result{magic};
  for (int i = 0; i < 8; ++i)
    result.push_back(static_cast<char>((id >> (8 * i)) & 0xff));
  return result;
}

caf::expected<uint64_t> parse_data_header(std::string_view header,
                                          const std::string& file) {
  if (header.size() != data_header_bytes || header.substr(0, 8) != magic)
    return make_error(persistence_errc::corrupt,
                      file + " is not a checkpoint data file");
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i)
    id |= uint64_t{static_cast<unsigned char>(header[8 + i])} << (8 * i);
  if (id == 0)
    return make_error(persistence_errc::corrupt, file + " has id 0");
  return id;
}

std::string data_file_path(const std::string& db_path) {
  return db_path + "/" + std::string{data_file_name};
}

} // namespace epochrt::detail
