#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "tools/sweep/case_plan.hpp"
#include "tools/sweep/trial_judge.hpp"

namespace epochrt::cli::sweep {

/// What a sweep prints on stdout once its reference runs are done: the
/// count of cases, a table with a row per case, and the closing lines
/// (docs/fault-plans.md). Keeps the plan of each wrong or hung case in
/// `work`/failures, and removes the directories of the other cases.
class sweep_report {
public:
  /// `temporary`: the work directory is the sweep's own, removed when no
  /// case failed (so not worth naming then).
  sweep_report(std::filesystem::path work, bool temporary);

  /// "cases: N of M", and the seed when they were sampled.
  void cases(const case_plan& plan, uint64_t seed);

  /// The table's header line.
  void header();

  /// The row of case `c`, which ended with `result`.
  void row(const sweep_case& c, outcome result, const std::string& note);

  /// The closing lines, "sweep: N runs, N recovered, ..." last. exit_ok
  /// when no case was wrong or hung, else exit_failure.
  int finish();

private:
  // Writes failures/case-K.json (the plan) and case-K.txt (what went wrong,
  // which process the plan is for).
  void keep_failure(const sweep_case& c, const std::string& note);

  std::filesystem::path work_;
  bool temporary_;
  size_t runs_ = 0;
  std::map<outcome, int> counts_;
  int failures_kept_ = 0;
};

} // namespace epochrt::cli::sweep
