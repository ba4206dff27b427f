#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <epochrt/epochrt.hpp>

#include "op_registry.hpp"

namespace epochrt::python {

// What the bindings (bind_*.cpp, module.cpp) make of their calls'
// arguments. Each throws `error` of kind bad_input (BadInput in Python)
// for an argument it refuses.

/// Throws BadInput (invalid_argument) with `text`.
[[noreturn]] void bad_argument(const std::string& text);

/// `seconds` as milliseconds, rounded up; BadInput starting with `what`
/// unless it is a finite number above 0 and at most 1e9.
std::chrono::milliseconds to_milliseconds(double seconds, const char* what);

/// The registry a job or a session uses: `ops`, complete from now on, or
/// epochrt's builtins.
std::shared_ptr<const epochrt::op_registry>
registry_of(const std::shared_ptr<op_registry>& ops);

} // namespace epochrt::python
