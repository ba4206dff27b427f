#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tools/sweep/case_plan.hpp"
#include "tools/sweep/hit.hpp"
#include "tools/sweep/run_result.hpp"

namespace epochrt::cli::sweep {

/// What a case showed (docs/fault-plans.md).
enum class outcome { recovered, clear_error, wrong, hung };

/// "recovered", "clear error", "WRONG", "HUNG".
const char* outcome_name(outcome x);

/// An outcome and the note that explains it.
struct verdict {
  outcome result = outcome::recovered;
  std::string note;
};

/// The epochs committed in `dir`/cwd/ckpt.
std::set<int64_t> committed(const std::filesystem::path& dir);

/// An epoch the master loaded, or asked a remote node to load, while it
/// was not committed. The master's trace is in the order things happened:
/// its commits (commit.rename.after: the metadata file now says so) and
/// its loads interleave there, so a run that recovers on its own and
/// loads what it committed itself is judged right. Daemons load only
/// when the master asks them (load_checkpoint).
std::optional<int64_t> uncommitted_load(const std::vector<hit>& master,
                                        std::set<int64_t> committed);

/// What the runs left in their working directory `dir`/cwd besides the
/// checkpoint directory (the daemons' roots are that directory too).
std::string stray_files(const std::filesystem::path& dir);

/// The invariants every run of one case must keep.
class trial_judge {
public:
  /// `reference_out`: the reference runs' stdout; `timeout_ms`: how long a
  /// run may take.
  trial_judge(const sweep_case& c, std::string reference_out,
              int64_t timeout_ms);

  /// How run `k` broke an invariant, or nullopt when it kept them all.
  /// `injected`: the run carried the plan.
  std::optional<verdict> judge(const run_result& r, int k, bool injected) const;

  /// How run `k` broke the rule that only committed epochs are loaded: its
  /// master's `trace` against the epochs committed `before` it.
  std::optional<verdict> judge_loads(const std::vector<hit>& trace,
                                     const std::set<int64_t>& before,
                                     int k) const;

  /// In a case that loses a host: how run `k` lost more than the epoch it
  /// was in (it fell back from a committed epoch to an earlier one, which
  /// one copy of every checkpoint must prevent).
  std::optional<verdict> judge_lost_work(const run_result& r, int k) const;

private:
  // Only the plan's own crash may end a run by a signal: SIGKILL, in the
  // run that carries the plan, after the plan's line on stderr.
  bool planned_kill(const run_result& r, bool injected) const;

  bool on_master_;
  bool host_loss_;
  fault_kind kind_;
  std::string reference_out_;
  int64_t timeout_ms_;
};

} // namespace epochrt::cli::sweep
