#pragma once

#include <memory>
#include <optional>
#include <string>

#include <caf/expected.hpp>

namespace epochrt {
class fault_injector;
} // namespace epochrt

namespace epochrt::cli {

/// The injector for `--fault-plan PLAN` and `--fault-trace FILE`: null when
/// neither is given. Errors (one line, naming the file): an unreadable or
/// invalid plan, a trace file that cannot be opened.
caf::expected<std::shared_ptr<fault_injector>>
make_fault_injector(const std::optional<std::string>& plan_path,
                    const std::optional<std::string>& trace_path);

/// `epochrt faults list`: every injection point, one per line, with what it
/// is and the faults it takes. Returns the exit code.
int faults_list();

} // namespace epochrt::cli
