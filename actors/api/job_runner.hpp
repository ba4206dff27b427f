#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/actors/api/epoch_observer.hpp>
#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/runtime/job.hpp>

namespace epochrt {

class basic_checkpoint_manager;
class session;
class upload_task_group_builder;
class workspace;

/// Options of a job runner.
struct job_runner_options {
  /// Called after every epoch with the outputs of the epoch group's tasks.
  /// See `epoch_observer` for the thread it runs on.
  epoch_observer on_epoch;
  /// How many lost nodes the job survives, wherever the loss happens: init,
  /// an epoch, a checkpoint's save or commit (the last one's included), the
  /// upload, download or exit group. After a loss it asks the session to
  /// replace the lost nodes (`session::recover_lost_nodes`), reloads the
  /// last committed epoch on every node (or starts from scratch when none
  /// is committed), and goes on from there: the remaining epochs, then the
  /// upload, download and exit groups again, on the reloaded state. The
  /// result is that of an uninterrupted run. Every recovery counts. Default:
  /// 0, the first loss fails the job.
  int max_node_failures = 0;
  /// Told what the job does and what it costs: groups, epochs, snapshots,
  /// loads, lost nodes, recoveries (see `job_events` for the threads it is
  /// called on). Give the same observer to the checkpoint manager
  /// (`checkpoint_options::events`) for the writes and commits. Null: none.
  std::shared_ptr<job_events> events;
  /// Whether the job may resume checkpoints that another definition of it
  /// committed (runtime/job_definition.hpp: its groups, ops, arguments and
  /// the code versions of its ops, not its name or its epoch limit).
  /// Default: false, such a resume fails with actors_errc::job_changed
  /// naming the first difference, before anything runs.
  bool allow_job_change = false;
  /// How long the group running when `request_stop` is called may still
  /// run: one that has not ended by then (its tasks wait forever in a
  /// channel, or compute for longer) is cancelled as by
  /// `request_stop_now`. Default: 1 minute.
  std::chrono::milliseconds stop_grace{std::chrono::minutes(1)};
};

/// Caffe2's JobRunner: runs a job on a session with checkpoints at epoch
/// boundaries, through a job runner actor.
///
/// With a checkpoint manager, checkpoints are taken after init and after
/// every epoch, and the job resumes from `resume_from_epoch` — or, when none
/// is given, from the last committed epoch whose checkpoints can be loaded
/// (earlier committed epochs are tried when the newest cannot). Borrows the
/// manager and the upload builder: both must outlive the runner.
class job_runner {
public:
  explicit job_runner(job the_job, basic_checkpoint_manager* manager = nullptr,
                      std::optional<int64_t> resume_from_epoch = {},
                      upload_task_group_builder* upload = nullptr,
                      job_runner_options options = {});

  /// Runs the job to its end — init or resume, the epochs, the upload, the
  /// download group and the exit group — blocking the calling thread; the
  /// job runner actor does the work (actors/core/job_runner_actor.hpp).
  /// Returns the last epoch; the manager then lists the blobs of the last
  /// committed epoch's checkpoints (`blob_list`). Errors:
  /// - persistence_errc::not_committed: `resume_from_epoch` is not a
  ///   committed epoch (nothing runs); persistence_errc::corrupt: the
  ///   checkpoint metadata cannot be trusted (nothing runs);
  ///   persistence_errc::locked: another job holds the checkpoint
  ///   directory (nothing runs; see `basic_checkpoint_manager`);
  /// - actors_errc::no_checkpoint_manager: `resume_from_epoch` without a
  ///   manager; actors_errc::invalid_argument: a job whose epoch loop could
  ///   never end, or a stop condition no epoch task outputs;
  /// - actors_errc::task_failed (and runtime_errc codes it wraps): a task
  ///   failed; actors_errc::unknown_node: a group names a node the session
  ///   lacks;
  /// - actors_errc::node_lost: a node was lost more often than
  ///   `max_node_failures` allows, or its recovery failed (the text names
  ///   the node, what the job was doing and the epoch);
  /// - actors_errc::checkpoint_failed: the checkpoint to resume from, asked
  ///   for by `resume_from_epoch`, cannot be loaded;
  /// - actors_errc::stopped: `request_stop` was called;
  /// - actors_errc::job_changed: the checkpoints were committed by another
  ///   definition of the job (nothing runs; see
  ///   `job_runner_options::allow_job_change`).
  /// A failed save is a warning, not an error: the job goes on.
  /// Thread-safety: one `train` of a runner at a time; the session is used
  /// from this thread and from the runner's own thread (session.hpp).
  caf::expected<int64_t> train(session& sess);

  /// Asks `train` to stop the job gracefully: the epoch running now runs to
  /// its end and is saved, every checkpoint begun is committed, and `train`
  /// returns `actors_errc::stopped` without starting another epoch or the
  /// upload, download and exit groups. A rerun resumes from the last
  /// committed epoch and ends with the result of an uninterrupted run. When
  /// no epoch runs yet (init, a resume's load) that part ends first; asked
  /// before `train`, `train` returns `stopped` at once. The request stays:
  /// every later `train` of this runner returns `stopped` too.
  ///
  /// Safe from any thread and from a signal handler: it only stores to a
  /// lock-free atomic. The library installs no signal handler itself; a
  /// host program calls this from its own.
  void request_stop() noexcept;

  /// True once `request_stop` was called.
  bool stop_requested() const noexcept;

  /// Asks `train` to stop at once (a second Ctrl-C): the group running now
  /// is cancelled on every node within a bounded time -- its tasks stop at
  /// their next op, and waits in channels and collectives end -- and
  /// `train` returns `actors_errc::stopped`. The running epoch is not
  /// committed, and a checkpoint still being written may not be either; a
  /// rerun resumes from the last committed epoch. Implies `request_stop`.
  /// Safe from any thread and from a signal handler.
  void request_stop_now() noexcept;

  /// Loads only `blob_names` from the checkpoints of `epoch` of every node
  /// to checkpoint. persistence_errc::not_found, with nothing loaded, when a
  /// checkpoint of that epoch does not exist; incomplete when one's save
  /// never finished.
  caf::error
  load_blobs_from_checkpoints(const std::vector<std::string>& blob_names,
                              int64_t epoch, session& sess);

  /// Brings `blob_names` from the checkpoints of `epoch` of every node to
  /// checkpoint — wherever those nodes run — into `into`, a workspace of
  /// this process. Errors as the overload above.
  caf::error
  load_blobs_from_checkpoints(const std::vector<std::string>& blob_names,
                              int64_t epoch, session& sess, workspace& into);

  /// Saves and commits the checkpoints of `epoch`. A checkpoint directory
  /// that cannot be written is logged as a warning and returns no error;
  /// one another job holds is persistence_errc::locked.
  caf::error save_checkpoints(int64_t epoch, session& sess);

  const job& get_job() const noexcept {
    return job_;
  }

private:
  // After a job that ran: binds the manager to the job's nodes to
  // checkpoint with the blobs of the last committed epoch, as Caffe2's
  // manager knows them after its init task (`blob_list`). A failure is a
  // warning in the log: the job's result stands.
  void list_checkpointed_blobs(session& sess);

  job job_;
  basic_checkpoint_manager* manager_;
  std::optional<int64_t> resume_from_epoch_;
  upload_task_group_builder* upload_;
  job_runner_options options_;
  // Shared with the runner actors: set by request_stop, read by them at
  // every epoch boundary.
  std::shared_ptr<std::atomic<bool>> stop_;
  // Set by request_stop_now, read by the attempt while a group runs.
  std::shared_ptr<std::atomic<bool>> stop_now_;
};

using JobRunner = job_runner;

} // namespace epochrt
