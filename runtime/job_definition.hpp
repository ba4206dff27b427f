#pragma once

#include <string>

namespace epochrt {

class job;
class op_registry;

/// What a job computes, as canonical JSON text: its init, epoch, download
/// and exit groups (every task's node, workspace, outputs and steps, every
/// op's type, inputs, outputs and arguments), its stop conditions, the
/// nodes it checkpoints and its channels, and, given the registry `ops`,
/// the code version of every op it calls that has one
/// (op_registry::code_version: Python ops). Not its name, and not the limit
/// an epoch_limiter sets, so that a job can be trained for longer and
/// resume its own checkpoints. Jobs that compute the same give the same
/// text, byte for byte; the checkpoint metadata records it with every
/// commit (checkpoint_metadata::job_definition). Thread-safe.
std::string job_definition(const job& j, const op_registry* ops = nullptr);

/// Where two texts made by `job_definition` first differ, as a path and
/// both values: "init[0].steps[0].ops[1].args.value: 1 -> 7" (`recorded`,
/// then `current`; "(none)" for a part one side lacks). Empty when they are
/// equal. A `recorded` that is not such a text differs at its root.
std::string first_difference(const std::string& recorded,
                             const std::string& current);

} // namespace epochrt
