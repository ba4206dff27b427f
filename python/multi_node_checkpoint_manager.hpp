#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/epochrt.hpp>

#include "events_slot.hpp"
#include "runtime.hpp"
#include "session.hpp"

namespace epochrt::python {

/// Python's MultiNodeCheckpointManager: an
/// epochrt::multi_node_checkpoint_manager in the module's runtime (or, made
/// by `checkpoint_manager`, an epochrt::checkpoint_manager), whose calls
/// raise instead of returning errors.
///
/// Every call must be made without the GIL: the C++ manager serves one
/// thread at a time, so every call, and a job runner's `train` through
/// `lock`, takes the manager's mutex (Python threads may share a manager),
/// and may wait there for a whole job. The destructor releases the GIL
/// itself when it holds it.
///
/// While Python code runs on a job runner's behalf with the runner's lock
/// held (`runner_scope`: an upload builder's `build`, an `on_epoch`
/// callback), that thread may ask the queries (`get_ckpt_db_name`,
/// `blob_list`, `db_prefix`, `nodes`); every other call raises BadInput
/// there instead of waiting for the lock forever.
class multi_node_checkpoint_manager {
public:
  multi_node_checkpoint_manager(std::string db_prefix,
                                checkpoint_options options);

  virtual ~multi_node_checkpoint_manager();

  multi_node_checkpoint_manager(const multi_node_checkpoint_manager&) = delete;
  multi_node_checkpoint_manager& operator=(const multi_node_checkpoint_manager&)
    = delete;

  /// Throws `error` unless `sess` lives in this manager's runtime (a
  /// session and a manager made while no other object of the module was
  /// alive may be in two), so that nothing mixes two actor systems.
  void check_same_runtime(const session& sess) const;

  void init(session& sess, const std::vector<std::string>& nodes,
            std::optional<int64_t> retrieve_from_epoch,
            std::string path_prefix);

  void load(int64_t epoch, std::string path_prefix);

  void save(int64_t epoch);

  void write_checkpoint_metadata(int64_t epoch);

  std::optional<int64_t>
  get_resume_from_epoch_id(std::optional<int64_t> user_epoch);

  bool cp_accessible(std::optional<int64_t> epoch);

  bool check_db_exists(int64_t epoch);

  std::string get_ckpt_db_name(const std::string& node, int64_t epoch);

  std::vector<std::string> blob_list(const std::string& node);

  /// Caffe2's load_blobs_locally: `blob_names` of every node's checkpoint
  /// of `epoch`, binding the manager to `nodes` first when no `init` did;
  /// false when a checkpoint of that epoch does not exist.
  bool load_blobs_locally(const std::vector<std::string>& nodes,
                          const std::vector<std::string>& blob_names,
                          int64_t epoch, session& sess);

  void set_params(const std::vector<std::string>& nodes,
                  std::string path_prefix);

  /// The stats of the last save or load, reported under `action`.
  std::vector<checkpoint_stats>
  report_checkpoint_stats(const std::string& action);

  std::vector<std::string> nodes();

  const std::string& db_prefix() const noexcept {
    return manager_->db_prefix();
  }

  /// Where the manager's writes and commits are told (a job runner's
  /// `train` sets the observer for its job).
  events_slot& events() noexcept {
    return *events_;
  }

  /// The C++ manager, for a job runner, which must hold `lock()` while it
  /// uses it.
  basic_checkpoint_manager& get() noexcept {
    return *manager_;
  }

  /// Throws `error` (BadInput) on the thread of a Python op, where
  /// waiting for a job would wait forever, and within an upload builder's
  /// call for this manager (see above).
  std::unique_lock<std::mutex> lock();

  /// Marks the calling thread as running `who` (e.g.
  /// "UploadTaskGroupBuilder.build") for a job runner that holds the lock
  /// of `manager`, for the scope's lifetime.
  class runner_scope {
  public:
    runner_scope(const multi_node_checkpoint_manager* manager, const char* who);
    ~runner_scope();

    runner_scope(const runner_scope&) = delete;
    runner_scope& operator=(const runner_scope&) = delete;

  private:
    const multi_node_checkpoint_manager* previous_;
    const char* previous_who_;
  };

protected:
  /// For a subclass that makes another kind of C++ manager.
  explicit multi_node_checkpoint_manager(
    std::function<std::unique_ptr<basic_checkpoint_manager>(
      caf::actor_system&, std::shared_ptr<job_events>)>
      make);

  // A query's lock: none within an upload builder's call for this manager,
  // whose runner holds the lock on the builder's behalf.
  std::unique_lock<std::mutex> query_lock();

  std::shared_ptr<runtime> runtime_;
  std::mutex mtx_;
  std::shared_ptr<events_slot> events_ = std::make_shared<events_slot>();
  std::unique_ptr<basic_checkpoint_manager> manager_;
};

/// Python's CheckpointManager: Caffe2's manager of one node's checkpoints
/// (epochrt::checkpoint_manager), which refuses any other node.
class checkpoint_manager : public multi_node_checkpoint_manager {
public:
  checkpoint_manager(std::string db_prefix, std::string node_name,
                     checkpoint_options options);

  const std::string& node_name() const noexcept {
    return node_name_;
  }

  /// `blob_names` of the node's checkpoint of `epoch` (Caffe2's
  /// load_blobs_from_checkpoint); false when it does not exist.
  bool load_blobs_from_checkpoint(const std::vector<std::string>& blob_names,
                                  int64_t epoch, session& sess);

private:
  std::string node_name_;
};

} // namespace epochrt::python
