#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/error.hpp>

namespace epochrt {

class job;
struct op_def;
struct task_def;

/// Makes `j` stop after `num_epochs` epochs (Caffe2's epoch_limiter): an
/// init task creates a counter at `num_epochs - 1`, an epoch task counts it
/// down with CountDown, and its output is a stop condition, true in the
/// `num_epochs`-th epoch.
///
/// The tasks run on the first node of the epoch group (else the first node
/// of the job). Their blobs have reserved names, "epoch_limiter/counter"
/// and "epoch_limiter/finished" (with a suffix "_2", "_3", ... when the job
/// already has a limiter); the counter is in the init group's node, so it is
/// checkpointed with it and a resumed job counts on from where it stopped.
///
/// Fails with `bad_argument` when `num_epochs < 1` and with `invalid_job`
/// when the job has no task (so no node to count on). The job is unchanged
/// on failure.
caf::error epoch_limiter(job& j, int64_t num_epochs);

/// The number of epochs after which the limiters `epoch_limiter` added to
/// `j` stop it (the smallest, when it has several); none when it has none.
/// Read from the limiters' own tasks, so it holds for a job built in code
/// as for one loaded from a file.
std::optional<int64_t> epoch_limit(const job& j);

/// True when argument `arg` of `op` in init task `task` is the count an
/// epoch_limiter starts from: what a job's epoch limit changes.
bool is_epoch_limit_argument(const task_def& task, const op_def& op,
                             const std::string& arg) noexcept;

} // namespace epochrt
