#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace epochrt {

/// Errors of fault plans and of the faults they inject.
enum class fault_errc : uint8_t {
  /// A fault plan that is not valid JSON or breaks the format of
  /// docs/fault-plans.md; the context names the file and the field.
  invalid_plan = 1,
  /// A fault plan file that cannot be read.
  unreadable_plan,
  /// An operation failed because a fault plan said so (an injected I/O
  /// error, a killed or partitioned node). The context names the point.
  injected,
};

/// The category of `fault_errc` in a `caf::error`.
constexpr caf::atom_value fault_category = caf::atom("ert_fault");

std::string to_string(fault_errc x);

caf::error make_error(fault_errc code, std::string context = {});

/// Whether `err` is the error `code` (false for no error).
bool is_error(const caf::error& err, fault_errc code) noexcept;

} // namespace epochrt
