#pragma once

#include <filesystem>
#include <string>

#include "tools/sweep/case_plan.hpp"
#include "tools/sweep/sweep_processes.hpp"
#include "tools/sweep/trial_judge.hpp"
#include "tools/sweep_command.hpp"

namespace epochrt::cli::sweep {

/// Runs case `c` in `work`/case-N (docs/fault-plans.md): the job under the
/// case's one-rule plan (given to the master, or to the daemon the hit was
/// in), then the same command, fault-free, until it ends; judges every run
/// and, at the end, the checkpoints. `reference_out`: the reference runs'
/// stdout. The outcome, with a note that explains it.
outcome run_trial(const sweep_case& c, const std::filesystem::path& work,
                  const sweep_options& opts, const std::string& reference_out,
                  sweep_processes& procs, std::string& note);

} // namespace epochrt::cli::sweep
