#include "call_arguments.hpp"

#include <cmath>
#include <cstdint>

#include "errors.hpp"
#include "runtime.hpp"

namespace epochrt::python {

[[noreturn]] void bad_argument(const std::string& text) {
  throw error(make_error(actors_errc::invalid_argument, text),
              error_kind::bad_input);
}

std::chrono::milliseconds to_milliseconds(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 1e9)
    bad_argument(std::string{what}
                 + ": expected a number of seconds above 0, got "
                 + std::to_string(seconds));
  return std::chrono::milliseconds{
    static_cast<int64_t>(std::ceil(seconds * 1000))};
}

std::shared_ptr<const epochrt::op_registry>
registry_of(const std::shared_ptr<op_registry>& ops) {
  return ops ? ops->freeze() : runtime::ops();
}

} // namespace epochrt::python
