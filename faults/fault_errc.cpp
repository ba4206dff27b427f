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

bool is_error(const caf::error& err, fault_errc code) noexcept {
  return in_category(err, fault_category)
    && err.code() == static_cast<uint8_t>(code);
}

} // namespace epochrt
