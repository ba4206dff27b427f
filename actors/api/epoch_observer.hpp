#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <epochrt/messages/task_output.hpp>

namespace epochrt {

/// Called after every epoch with the epoch and the outputs of the epoch
/// group's tasks. Runs on the runner actor's thread: it must not block long
/// and must not call back into epochrt, except `job_runner::request_stop`,
/// which is how an observer ends a job.
///
/// The policy of every observer (this one and `job_events`): an observer
/// watches a job and never changes it. An exception it throws is logged as a
/// warning and otherwise ignored; the job goes on as if it had returned.
using epoch_observer
  = std::function<void(int64_t epoch, const std::vector<task_output>&)>;

} // namespace epochrt
