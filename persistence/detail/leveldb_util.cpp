#include <epochrt/persistence/detail/leveldb_util.hpp>

#include <cstdarg>

#include <epochrt/persistence/digest.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt::detail {

caf::error from_status(const leveldb::Status& st, std::string_view what) {
  auto context = std::string{what} + ": " + st.ToString();
  if (st.IsCorruption())
    return make_error(persistence_errc::corrupt, std::move(context));
  if (st.IsNotFound())
    return make_error(persistence_errc::not_found, std::move(context));
  return make_error(persistence_errc::io_error, std::move(context));
}

namespace {

constexpr size_t manifest_digest_size = 8;

} // namespace

std::string manifest_value(std::string_view record) {
  auto digest = digest_bytes(record.data(), record.size());
  std::string result;
  result.reserve(manifest_digest_size + record.size());
  for (size_t i = 0; i < manifest_digest_size; ++i)
    result += static_cast<char>((digest >> (8 * i)) & 0xff);
  result += record;
  return result;
}

std::optional<std::string_view> manifest_record(std::string_view value) {
  if (value.size() < manifest_digest_size)
    return std::nullopt;
  uint64_t stored = 0;
  for (size_t i = 0; i < manifest_digest_size; ++i)
    stored |= uint64_t{static_cast<unsigned char>(value[i])} << (8 * i);
  auto record = value.substr(manifest_digest_size);
  if (digest_bytes(record.data(), record.size()) != stored)
    return std::nullopt;
  return record;
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
