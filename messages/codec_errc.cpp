#include <epochrt/messages/codec_errc.hpp>

#include <caf/make_message.hpp>

#include <epochrt/messages/error_text.hpp>

namespace epochrt {

std::string to_string(codec_errc x) {
  switch (x) {
    case codec_errc::malformed:
      return "malformed";
    case codec_errc::invalid_value:
      return "invalid_value";
  }
  return "unknown";
}

caf::error make_error(codec_errc code, std::string context) {
  return caf::error{static_cast<uint8_t>(code), codec_category,
                    caf::make_message(std::move(context))};
}

bool is_error(const caf::error& err, codec_errc code) noexcept {
  return in_category(err, codec_category)
    && err.code() == static_cast<uint8_t>(code);
}

} // namespace epochrt
