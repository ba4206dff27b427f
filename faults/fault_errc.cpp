#include <epochrt/faults/fault_errc.hpp>

#include <caf/make_message.hpp>

#include <epochrt/messages/error_text.hpp>

namespace epochrt {

std::string to_string(fault_errc x) {
  switch (x) {
    case fault_errc::invalid_plan:
      return "invalid_plan";
    case fault_errc::unreadable_plan:
      return "unreadable_plan";
    case fault_errc::injected:
      return "injected";
  }
  return "unknown";
}

caf::error make_error(fault_errc code, std::string context) {
  return caf::error{static_cast<uint8_t>(code), fault_category,
                    caf::make_message(std::move(context))};
}

namespace {

// Names the codes of this category for error_text's code_and_context form.
// Here, beside make_error: a program that can make such an error links
// this registration.
[[maybe_unused]] const bool names_registered
  = register_error_category(fault_category, [](uint8_t code) {
      return to_string(static_cast<fault_errc>(code));
    });

} // namespace

} // namespace epochrt
