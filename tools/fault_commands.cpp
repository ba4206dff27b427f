#include "tools/fault_commands.hpp"

#include <algorithm>
#include <iostream>

#include "tools/cli_output.hpp"
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>

namespace epochrt::cli {

caf::expected<std::shared_ptr<fault_injector>>
make_fault_injector(const std::optional<std::string>& plan_path,
                    const std::optional<std::string>& trace_path) {
  if (!plan_path && !trace_path)
    return std::shared_ptr<fault_injector>{};
  fault_plan plan;
  if (plan_path) {
    auto loaded = load_fault_plan(*plan_path);
    if (!loaded)
      return std::move(loaded.error());
    plan = std::move(*loaded);
  }
  auto result = std::make_shared<fault_injector>(std::move(plan));
  if (trace_path)
    if (auto err = result->trace_to(*trace_path))
      return err;
  return result;
}

int faults_list() {
  size_t width = 0;
  for (auto& x : fault_points())
    width = std::max(width, x.name.size());
  for (auto& x : fault_points()) {
    std::string kinds;
    for (size_t i = 1; i < fault_kind_count; ++i) {
      auto kind = static_cast<fault_kind>(i);
      if (x.kinds & kind_bit(kind))
        kinds
          += (kinds.empty() ? "" : ",") + std::string{fault_kind_name(kind)};
    }
    std::cout << x.name << std::string(width + 2 - x.name.size(), ' ') << x.what
              << " [" << kinds << "]\n";
  }
  return exit_ok;
}

} // namespace epochrt::cli
