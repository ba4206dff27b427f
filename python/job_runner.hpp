#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/epochrt.hpp>

#include "multi_node_checkpoint_manager.hpp"
#include "session.hpp"

namespace epochrt::python {

/// Python's JobRunner: an epochrt::job_runner over a copy of a job, with
/// the checkpoint manager it borrows kept alive by shared ownership.
///
/// `train` blocks for the whole job and must be called without the GIL;
/// one `train` of a runner at a time (a second one meanwhile throws
/// `error`, BadInput). It holds the manager's mutex while it runs, so a
/// Python thread's call on the manager waits for the job.
class job_runner {
public:
  job_runner(job the_job,
             std::shared_ptr<multi_node_checkpoint_manager> manager,
             std::optional<int64_t> resume_from_epoch);

  /// Runs the job on `sess`; returns the last epoch. Throws `error`:
  /// BadInput, before anything runs, when the job is invalid for the
  /// session's ops (a job built in Python is checked nowhere before);
  /// JobFailed unless the error's code says otherwise (see `classify`).
  int64_t train(session& sess);

  /// Loads only `blob_names` from the checkpoints of `epoch` of the job's
  /// nodes to checkpoint into `sess` (Caffe2's
  /// load_blobs_from_checkpoints); false when a checkpoint of that epoch
  /// does not exist. Must be called without the GIL; holds the manager's
  /// mutex. Throws `error` (BadInput without a manager).
  bool load_blobs_from_checkpoints(const std::vector<std::string>& blob_names,
                                   int64_t epoch, session& sess);

  /// Asks a running or later `train` to stop after the running epoch and
  /// its checkpoint (`job_runner::request_stop`). Safe from any thread,
  /// with or without the GIL.
  void request_stop() noexcept {
    runner_.request_stop();
  }

  const job& get_job() const noexcept {
    return runner_.get_job();
  }

  const std::shared_ptr<multi_node_checkpoint_manager>&
  checkpoint_manager() const noexcept {
    return manager_;
  }

private:
  // Declared before the runner, which borrows it.
  std::shared_ptr<multi_node_checkpoint_manager> manager_;
  epochrt::job_runner runner_;
  std::atomic<bool> training_{false};
};

} // namespace epochrt::python
