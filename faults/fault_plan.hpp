#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/faults/fault_point.hpp>

// Fault plans: which faults strike where and when. The JSON format (also
// in docs/fault-plans.md):
//
//   {
//     "seed": 7,                          // optional, default 0
//     "faults": [                         // required
//       {"point": "save.rename.before",   // required: `epochrt faults list`
//        "fault": "crash",                // required: a fault_kind name
//        "node": "trainer_0",             // optional: only at this node
//        "epoch": 2,                      // optional: only in this epoch
//        "detail": "run_tasks",           // optional: message/op/group
//        "hit": 1,                        // optional: the n-th matching hit
//        "probability": 0.5,              // optional, default 1
//        "count": 1,                      // optional: times it may strike,
//                                         //   default 1, 0 = no limit
//        "error": "ENOSPC",               // io_error only: default EIO
//        "ms": 200}                       // delay, partition: required
//     ]
//   }
//
// Errors are one line, like those of job files: "<source>: faults[1].fault:
// unknown fault 'crsh' (expected one of crash, io_error, ...)".

namespace epochrt {

/// When and how one fault strikes. A hit of `point` matches the rule when
/// it agrees with every filter that is set; `hit`, `probability` and
/// `count` then decide whether the fault strikes.
struct fault_rule {
  fault_point point = fault_point::save_open;
  fault_kind kind = fault_kind::crash;
  std::optional<std::string> node;
  std::optional<int64_t> epoch;
  std::optional<std::string> detail;
  /// Strike at the n-th matching hit (1-based) only; 0: any matching hit.
  uint64_t hit = 0;
  double probability = 1.0;
  /// At most this many strikes; 0: no limit.
  uint64_t count = 1;
  /// io_error: the errno to fail with.
  int error = 0;
  /// delay and partition: how long, in milliseconds.
  uint64_t ms = 0;
};

struct fault_plan {
  /// Seeds the draws of rules with a probability (each rule its own stream).
  uint64_t seed = 0;
  std::vector<fault_rule> faults;
};

/// Largest fault plan file `load_fault_plan` reads: 16 MiB.
constexpr uint64_t max_fault_plan_bytes = uint64_t{16} << 20;

/// Parses and checks a fault plan's text; `source_name` prefixes every
/// error. Errors: fault_errc::invalid_plan.
caf::expected<fault_plan> parse_fault_plan(std::string_view text,
                                           const std::string& source_name);

/// Reads `path` (a regular file of at most max_fault_plan_bytes) and parses
/// it. Errors: fault_errc::unreadable_plan, fault_errc::invalid_plan.
caf::expected<fault_plan> load_fault_plan(const std::string& path);

/// The plan as JSON that parse_fault_plan reads back to an equal plan.
std::string to_json(const fault_plan& plan);

/// The errno for a name ("EIO", "ENOSPC", "EACCES", ...), or 0.
int errno_from_name(std::string_view name) noexcept;

/// "EIO" for EIO, ...; the number otherwise.
std::string errno_name(int code);

} // namespace epochrt
