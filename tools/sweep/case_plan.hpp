#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/sweep/hit.hpp"
#include "tools/sweep_command.hpp"
#include <epochrt/faults/fault_plan.hpp>

namespace epochrt::cli::sweep {

/// One run of the job under a one-rule plan: `rule` strikes at `where`.
struct sweep_case {
  /// Its number, from 1, in the order the job reaches the hits.
  size_t index = 0;
  // The hit's place in the reference runs' traces: cases are listed in
  // the order the job reaches them.
  size_t order = 0;
  hit where;
  fault_rule rule;
  /// A lost host: `rule` is a crash of a daemon the sweep runs, and the
  /// sweep then deletes that daemon's checkpoint root, as if its machine
  /// were gone; the runs have one copy of every checkpoint and a spare
  /// daemon the node moves to (sweep_processes).
  bool host_loss = false;
};

/// What the report calls a case's fault: the rule's kind, or "host_loss".
std::string fault_label(const sweep_case& c);

/// The cases a sweep runs, and how many there were to choose from.
struct case_plan {
  std::vector<sweep_case> cases;
  size_t total = 0;
};

/// The cases of the hits the reference runs reached (docs/fault-plans.md):
/// every fault kind `opts` asks for that applies at each hit, or a seeded
/// sample of at most opts.max_runs that keeps every kind, in the order the
/// job reaches them.
case_plan plan_cases(const std::vector<hit>& hits, const sweep_options& opts);

} // namespace epochrt::cli::sweep
