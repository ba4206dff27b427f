#include "persistence/detail/leveldb_util.hpp"

#include <cstdarg>

#include "persistence/persistence_errc.hpp"

namespace epochrt::detail {

caf::error from_status(const leveldb::Status& st, std::string_view what) {
  auto context = std::string{what} + ": " + st.ToString();
  if (st.IsCorruption())
    return make_error(persistence_errc::corrupt, std::move(context));
  if (st.IsNotFound())
    return make_error(persistence_errc::not_found, std::move(context));
  return make_error(persistence_errc::io_error, std::move(context));
}

std::string chunk_key(std::string_view name, uint32_t index) {
  std::string key;
  key.reserve(2 + name.size() + 1 + 4);
  key += "c/";
  key += name;
  key += '\0';
  for (int shift = 24; shift >= 0; shift -= 8)
    key += static_cast<char>((index >> shift) & 0xff);
  return key;
}

namespace {

class silent_logger : public leveldb::Logger {
public:
  void Logv(const char*, va_list) override {
    // Checkpoints are inspected by read-only tools: log nothing.
  }
};

} // namespace

leveldb::Logger* silent_info_log() {
  static silent_logger instance;
  return &instance;
}

} // namespace epochrt::detail
