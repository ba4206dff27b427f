#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/task_output.hpp>

namespace epochrt {

// What a job attempt (job_attempt_actor) reads off its job and an epoch's
// outputs: pure functions, no actor, no I/O.

/// "node:blob=values" for the small outputs of an epoch's tasks (numeric,
/// at most 8 elements), each with a leading space: the progress line of an
/// epoch.
std::string describe_outputs(const task_group_def& group,
                             const std::vector<task_output>& outputs);

/// Whether a stop condition of `job` holds: the blob it names, an output
/// of an epoch task on its node, is non-zero. actors_errc::invalid_argument
/// when a condition's blob is not among `outputs`.
caf::expected<bool> should_stop(const job_def& job,
                                const std::vector<task_output>& outputs);

/// The op types each node's tasks call, over every group of `job`.
std::map<std::string, std::set<std::string>>
op_types_by_node(const job_def& job);

} // namespace epochrt
