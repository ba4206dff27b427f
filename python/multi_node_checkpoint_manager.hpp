#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/epochrt.hpp>

#include "runtime.hpp"
#include "session.hpp"

namespace epochrt::python {

/// Python's MultiNodeCheckpointManager: an
/// epochrt::multi_node_checkpoint_manager in the module's runtime, whose
/// calls raise instead of returning errors.
///
/// Every call must be made without the GIL: the C++ manager serves one
/// thread at a time, so every call, and a job runner's `train` through
/// `lock`, takes the manager's mutex (Python threads may share a manager),
/// and may wait there for a whole job. The destructor releases the GIL
/// itself when it holds it.
class multi_node_checkpoint_manager {
public:
  multi_node_checkpoint_manager(std::string db_prefix,
                                checkpoint_options options);

  ~multi_node_checkpoint_manager();

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

  const std::string& db_prefix() const noexcept {
    return manager_->db_prefix();
  }

  /// The C++ manager, for a job runner, which must hold `lock()` while it
  /// uses it.
  epochrt::multi_node_checkpoint_manager& get() noexcept {
    return *manager_;
  }

  /// Throws `error` (BadInput) on the thread of a Python op, where
  /// waiting for a job would wait forever.
  std::unique_lock<std::mutex> lock();

private:
  std::shared_ptr<runtime> runtime_;
  std::mutex mtx_;
  std::unique_ptr<epochrt::multi_node_checkpoint_manager> manager_;
};

} // namespace epochrt::python
