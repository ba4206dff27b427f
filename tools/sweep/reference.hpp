#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tools/sweep/hit.hpp"
#include "tools/sweep/sweep_processes.hpp"

namespace epochrt::cli::sweep {

/// The reference runs of a sweep in `work`/reference: the job fault-free
/// from scratch, then once more over its finished checkpoint directory
/// (the loading points are reached only there). Both must print the same
/// result, kept as `reference_out`; every hit of the master and the daemons
/// is added to `hits`. Prints "reference: ..." and returns exit_ok, or
/// prints what went wrong and returns exit_failure.
int run_reference(const std::filesystem::path& work, sweep_processes& procs,
                  std::string& reference_out, std::vector<hit>& hits);

} // namespace epochrt::cli::sweep
