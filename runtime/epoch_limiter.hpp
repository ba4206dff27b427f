#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>

namespace epochrt {

class job;
struct job_def;
struct op_def;
struct task_def;

/// Makes `j` stop after `num_epochs` epochs (Caffe2's epoch_limiter): an
/// init task creates a counter of the epochs run at 0, an epoch task
/// counts it up with EpochLimit, whose argument `limit` is `num_epochs`,
/// and its output is a stop condition, true in the `num_epochs`-th epoch.
///
/// The tasks run on the first node of the epoch group (else the first node
/// of the job). Their blobs have reserved names, "epoch_limiter/epochs"
/// and "epoch_limiter/finished" (with a suffix "_2", "_3", ... when the job
/// already has a limiter). The counter is checkpointed with its node, so a
/// resumed job counts on from where it stopped; the limit is not, so a job
/// given a higher limit than the run that made its checkpoints trains on
/// up to the new one, and the job runner ends at once a job whose
/// committed epoch is at or past its limit.
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
std::optional<int64_t> epoch_limit(const job_def& j);

/// The node and the `finished` blob of every epoch_limiter of `j`.
std::vector<std::pair<std::string, std::string>>
epoch_limiter_outputs(const job_def& j);

/// True when argument `arg` of `op` in epoch task `task` is the limit an
/// epoch_limiter set: what a job's epoch limit changes.
bool is_epoch_limit_argument(const task_def& task, const op_def& op,
                             const std::string& arg) noexcept;

} // namespace epochrt
