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

namespace {

// Names the codes of this category for error_text's code_and_context form.
// Here, beside make_error: a program that can make such an error links
// this registration.
[[maybe_unused]] const bool names_registered
  = register_error_category(codec_category, [](uint8_t code) {
      return to_string(static_cast<codec_errc>(code));
    });

} // namespace

} // namespace epochrt
