#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include <epochrt/epochrt.hpp>

#include "events_slot.hpp"
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
  /// `upload`: None, or a Python object whose `build(epoch,
  /// checkpoint_manager)` returns the TaskGroup that uploads the
  /// checkpoints of `epoch` (or None: nothing to upload), called with the
  /// GIL once the epochs are done (Caffe2's UploadTaskGroupBuilder). Its
  /// exception fails the job. Must be constructed with the GIL.
  job_runner(job the_job,
             std::shared_ptr<multi_node_checkpoint_manager> manager,
             std::optional<int64_t> resume_from_epoch,
             pybind11::object upload = pybind11::none(),
             bool allow_job_change = false,
             std::optional<double> stop_grace_seconds = std::nullopt);

  ~job_runner();

  /// What one `train` reports as it runs: every stats line (the lines of
  /// `epochrt run --stats-json`) to the file `stats_json`, and each epoch's
  /// line, with the epoch group's outputs, to `on_epoch`. Made and
  /// destroyed with the GIL.
  struct epoch_watch {
    pybind11::object on_epoch = pybind11::none();
    std::optional<std::string> stats_json;
    /// Epoch task outputs that go into the lines as metrics.
    std::vector<std::string> metrics;
  };

  /// Runs the job on `sess`; returns the last epoch. With `watch`, reports
  /// as it says: `on_epoch(record)` is called on this thread, with the GIL,
  /// once the epoch's figures are in (after its commit, with checkpoints),
  /// `record` being the stats line as a dict plus "outputs": {task: {blob:
  /// array}}; an exception it raises stops the job after the running
  /// epoch and is raised by train. Throws `error`:
  /// BadInput, before anything runs, when the job is invalid for the
  /// session's ops (a job built in Python is checked nowhere before);
  /// JobFailed unless the error's code says otherwise (see `classify`).
  /// On the main thread, Ctrl-C (SIGINT) requests a stop after the running
  /// epoch and its checkpoint, a second one a stop at once; the call then
  /// raises KeyboardInterrupt.
  int64_t train(session& sess, const epoch_watch* watch = nullptr);

  /// Loads only `blob_names` from the checkpoints of `epoch` of the job's
  /// nodes to checkpoint into `sess` (Caffe2's
  /// load_blobs_from_checkpoints); false when a checkpoint of that epoch
  /// does not exist. Must be called without the GIL; holds the manager's
  /// mutex. Throws `error` (BadInput without a manager).
  bool load_blobs_from_checkpoints(const std::vector<std::string>& blob_names,
                                   int64_t epoch, session& sess);

  /// Saves and commits the checkpoints of `epoch` of the job's nodes to
  /// checkpoint (Caffe2's save_checkpoints): a directory that cannot be
  /// written is a warning in the log, as in Caffe2. Must be called without
  /// the GIL; holds the manager's mutex. Throws `error` (BadInput without
  /// a manager, or for a directory another job holds).
  void save_checkpoints(int64_t epoch, session& sess);

  const pybind11::object& upload_builder() const noexcept {
    return *upload_object_;
  }

  /// Asks a running or later `train` to stop after the running epoch and
  /// its checkpoint (`job_runner::request_stop`). Safe from any thread,
  /// with or without the GIL.
  void request_stop() noexcept {
    runner_.request_stop();
  }

  /// Asks a running or later `train` to stop at once, cancelling the
  /// running group (`job_runner::request_stop_now`).
  void request_stop_now() noexcept {
    runner_.request_stop_now();
  }

  const job& get_job() const noexcept {
    return runner_.get_job();
  }

  const std::shared_ptr<multi_node_checkpoint_manager>&
  checkpoint_manager() const noexcept {
    return manager_;
  }

private:
  // runner_.train on a thread of its own while this one, without the GIL,
  // polls Python's signal handlers: the first Ctrl-C requests a stop
  // after the running epoch, the second a stop at once; either raises
  // KeyboardInterrupt once the job has stopped.
  caf::expected<int64_t>
  train_watching_signals(session& sess, const pybind11::object* on_epoch);

  // With the GIL: hands every finished epoch's record to `on_epoch`; false,
  // with the Python error set, when it raised.
  bool deliver_reports(const pybind11::object& on_epoch);

  // The lines of the running train's stats writer and the epochs' outputs,
  // from the runner's and the manager's threads to the thread of train.
  struct epoch_reports {
    annotated_mutex mtx;
    // Wakes train's thread: a line came, or the job ended (`done`).
    std::condition_variable_any cv;
    bool done EPOCHRT_GUARDED_BY(mtx) = false;
    std::deque<std::string> lines EPOCHRT_GUARDED_BY(mtx);
    std::map<int64_t, std::vector<task_output>> outputs EPOCHRT_GUARDED_BY(mtx);
    bool keep_outputs EPOCHRT_GUARDED_BY(mtx) = false;
    // The running train's writer, told each epoch's outputs (metrics).
    std::shared_ptr<stats_json_writer> writer EPOCHRT_GUARDED_BY(mtx);
  };

  // A Python warning when the checkpoint of `epoch`, the last, is not
  // committed. Called without the GIL.
  void warn_if_uncommitted(int64_t epoch);

  // Declared before the runner, which borrows them.
  std::shared_ptr<multi_node_checkpoint_manager> manager_;
  std::shared_ptr<epoch_reports> reports_ = std::make_shared<epoch_reports>();
  std::shared_ptr<events_slot> events_ = std::make_shared<events_slot>();
  // The Python builder, kept alive here (destroyed with the GIL), and the
  // adapter the C++ runner calls.
  std::unique_ptr<pybind11::object> upload_object_;
  std::unique_ptr<epochrt::upload_task_group_builder> upload_;
  epochrt::job_runner runner_;
  std::atomic<bool> training_{false};
};

} // namespace epochrt::python
