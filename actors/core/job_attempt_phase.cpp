#include <epochrt/actors/core/job_attempt_phase.hpp>

namespace epochrt {

std::string to_string(attempt_phase x) {
  switch (x) {
    case attempt_phase::checking_ops:
      return "checking_ops";
    case attempt_phase::finding_start:
      return "finding_start";
    case attempt_phase::resuming:
      return "resuming";
    case attempt_phase::resetting:
      return "resetting";
    case attempt_phase::init_group:
      return "init_group";
    case attempt_phase::preparing_checkpoints:
      return "preparing_checkpoints";
    case attempt_phase::epoch:
      return "epoch";
    case attempt_phase::saving:
      return "saving";
    case attempt_phase::committing:
      return "committing";
    case attempt_phase::uploading:
      return "uploading";
    case attempt_phase::download_and_exit:
      return "download_and_exit";
  }
  return "unknown phase";
}

std::string describe(attempt_phase x, int64_t epoch) {
  auto n = std::to_string(epoch);
  switch (x) {
    case attempt_phase::checking_ops:
      return "checking the ops of the job";
    case attempt_phase::finding_start:
      return "finding the epoch to resume from";
    case attempt_phase::resuming:
      return "resuming from epoch " + n;
    case attempt_phase::resetting:
      return "resetting the workspaces";
    case attempt_phase::init_group:
      return "running the init group";
    case attempt_phase::preparing_checkpoints:
      return "preparing checkpoints (epoch " + n + ")";
    case attempt_phase::epoch:
      return "running epoch " + n;
    case attempt_phase::saving:
      return "saving the checkpoint of epoch " + n;
    case attempt_phase::committing:
      return "committing the checkpoint of epoch " + n;
    case attempt_phase::uploading:
      return "uploading the checkpoints of epoch " + n;
    case attempt_phase::download_and_exit:
      return "running the download and exit groups";
  }
  return "unknown phase";
}

} // namespace epochrt
