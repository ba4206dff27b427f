#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <epochrt/faults/fault_point.hpp>

namespace epochrt::cli::sweep {

/// Where a hit was made: the master (the `epochrt run` process) or the
/// daemon of a node the sweep started (named after the node).
inline const std::string master_process = "master";

/// One line of a trace (fault_injector::trace_to), with the run it came
/// from: 1 for the run from scratch, 2 for the rerun that resumes the
/// finished job (the loading points are reached only there).
struct hit {
  int phase = 1;
  std::string process;
  fault_point point = fault_point::save_open;
  std::string node;
  int64_t epoch = -1;
  std::string detail;
  uint64_t n = 0;
};

/// The hits of the trace file at `path`, made by `process` in run `phase`;
/// lines that are not hits are skipped, a missing file has none.
std::vector<hit> read_trace(const std::filesystem::path& path, int phase,
                            const std::string& process);

} // namespace epochrt::cli::sweep
