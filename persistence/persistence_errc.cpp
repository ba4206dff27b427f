#include <epochrt/persistence/persistence_errc.hpp>

#include <epochrt/messages/error_text.hpp>

#include <caf/make_message.hpp>

namespace epochrt {

std::string to_string(persistence_errc x) {
  switch (x) {
    case persistence_errc::not_found:
      return "not_found";
    case persistence_errc::incomplete:
      return "incomplete";
    case persistence_errc::corrupt:
      return "corrupt";
    case persistence_errc::io_error:
      return "io_error";
    case persistence_errc::invalid_name:
      return "invalid_name";
    case persistence_errc::invalid_argument:
      return "invalid_argument";
    case persistence_errc::not_committed:
      return "not_committed";
    case persistence_errc::locked:
      return "locked";
    case persistence_errc::not_writable:
      return "not_writable";
  }
  return "unknown";
}

caf::error make_error(persistence_errc code, std::string context) {
  return caf::error{static_cast<uint8_t>(code), persistence_category,
                    caf::make_message(std::move(context))};
}

bool is_error(const caf::error& err, persistence_errc code) noexcept {
  return in_category(err, persistence_category)
    && err.code() == static_cast<uint8_t>(code);
}

} // namespace epochrt
