#pragma once

#include <cstdint>
#include <string>

namespace epochrt {

/// The phases of one attempt at a job (job_attempt_actor), in the order
/// they run, each with the function of job_attempt_actor.cpp that enters
/// it. An attempt runs
///
///   checking_ops -> finding_start -> resuming | [resetting ->] init_group
///   init_group -> preparing_checkpoints (the save of epoch 0) -> epoch 1
///   resuming -> epoch N+1, or committing when the job had ended
///   epoch N -> saving N -> epoch N+1, or committing after the last epoch
///   committing -> uploading -> download_and_exit -> (the reply)
///
/// and a stop on request goes from any epoch to committing, then replies.
/// Without a checkpoint manager, finding_start, preparing_checkpoints,
/// saving, committing and uploading are passed over.
enum class attempt_phase : uint8_t {
  checking_ops,          // start: every node has the ops its tasks call
  finding_start,         // find_start: the epoch to resume from, if any
  resuming,              // resume_from: the manager loads that epoch
  resetting,             // reset_then_start_from_scratch
  init_group,            // start_from_scratch
  preparing_checkpoints, // start_from_scratch: ckpt_init, then epoch 0
  epoch,                 // run_epoch: the epoch group, observer, stop check
  saving,                // save: every node's snapshot of the epoch
  committing,            // after_flush: every write begun has ended
  uploading,             // upload_then, run_upload
  download_and_exit,     // run_download_and_exit
};

/// The phase's name, as above.
std::string to_string(attempt_phase x);

/// What the attempt was doing in `x` at `epoch`, for a person to read in
/// an error ("saving the checkpoint of epoch 3").
std::string describe(attempt_phase x, int64_t epoch);

} // namespace epochrt
