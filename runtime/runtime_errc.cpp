#include <epochrt/runtime/runtime_errc.hpp>

#include <caf/make_message.hpp>

#include <epochrt/messages/error_text.hpp>

namespace epochrt {

std::string to_string(runtime_errc x) {
  switch (x) {
    case runtime_errc::unknown_op:
      return "unknown_op";
    case runtime_errc::bad_argument:
      return "bad_argument";
    case runtime_errc::missing_blob:
      return "missing_blob";
    case runtime_errc::type_mismatch:
      return "type_mismatch";
    case runtime_errc::shape_mismatch:
      return "shape_mismatch";
    case runtime_errc::invalid_job:
      return "invalid_job";
    case runtime_errc::unreadable_file:
      return "unreadable_file";
    case runtime_errc::op_failed:
      return "op_failed";
    case runtime_errc::peer_lost:
      return "peer_lost";
    case runtime_errc::exchange_failed:
      return "exchange_failed";
    case runtime_errc::cancelled:
      return "cancelled";
  }
  return "unknown";
}

caf::error make_error(runtime_errc code, std::string context) {
  return caf::error{static_cast<uint8_t>(code), runtime_category,
                    caf::make_message(std::move(context))};
}

bool is_error(const caf::error& err, runtime_errc code) noexcept {
  return in_category(err, runtime_category)
    && err.code() == static_cast<uint8_t>(code);
}

} // namespace epochrt
