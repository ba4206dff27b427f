#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/persistence/metadata_handler.hpp>

namespace epochrt {

/// The one path by which a job's commit record is read and changed: each
/// change reads the record from its metadata handler, applies one pure
/// change (persistence/commit_record.hpp) and writes the result back in one
/// `write_record`, so that a change is all or nothing whatever the handler.
/// Every record it writes carries the parameters set here (the checkpoint
/// directory, the nodes and the job's definition, each when set).
///
/// Reads treat "no record" as an empty record: nothing committed. Errors
/// are the handler's, unchanged; a change that is not needed (uncommitting
/// an epoch that is not committed) writes nothing.
///
/// Thread safety: none; one owner (the checkpoint manager actor) calls it.
class record_keeper {
public:
  /// Reads and writes through `handler`, which must not be null.
  explicit record_keeper(std::shared_ptr<metadata_handler> handler);

  /// The checkpoint directory and the nodes checkpointed, written with
  /// every change from now on.
  void set_params(std::string db_prefix, std::vector<std::string> node_names);

  /// The definition of the job (runtime/job_definition.hpp), written with
  /// every change from now on, so that a run of another job can refuse to
  /// resume these epochs.
  void set_job_definition(std::string definition);

  /// The record as the handler has it; nullopt when it has none.
  caf::expected<std::optional<checkpoint_metadata>> read();

  /// The epoch to resume from (commit_record.hpp's resume_epoch).
  caf::expected<std::optional<int64_t>>
  resume_epoch(std::optional<int64_t> user_epoch);

  /// The committed epochs, ascending.
  caf::expected<std::vector<int64_t>> committed_epochs();

  /// The epoch after which the job stopped, while it is still committed.
  caf::expected<std::optional<int64_t>> final_epoch();

  /// Commits `epoch` (as the job's last when `final`).
  caf::error commit(int64_t epoch, bool final = false);

  /// Commits the save of `epoch` with every node's stats, in one write.
  caf::error commit_save(int64_t epoch, bool final,
                         std::vector<checkpoint_stats> stats);

  /// Forgets `epoch`: called before its checkpoint is overwritten, so that
  /// a crash during the overwrite never leaves a committed epoch with a
  /// half-written database. Writes nothing when it is not committed.
  caf::error uncommit(int64_t epoch);

  /// Records `stats` as the outcome of `action` ("save", ...). The stats
  /// of an action named "...load..." are not written: a load leaves the
  /// commit record as it found it.
  caf::error report(const std::string& action,
                    std::vector<checkpoint_stats> stats);

  /// Makes `x`, a copy a node daemon kept, the record: a master on a new
  /// host resumes where the lost one committed.
  /// persistence_errc::invalid_argument when the job definition set here
  /// differs from the one `x` records.
  caf::error adopt(const checkpoint_metadata& x);

  /// As metadata_handler::check_writable.
  caf::error check_writable();

private:
  using pure_change
    = std::function<caf::expected<checkpoint_metadata>(checkpoint_metadata)>;

  // Reads the record, applies `apply` and writes the result.
  caf::error change(record_change what, const pure_change& apply);

  // The record, or an empty one when the handler has none.
  caf::expected<checkpoint_metadata> current();

  // Writes `x` with the parameters set here.
  caf::error write(checkpoint_metadata x, const record_change& what);

  std::shared_ptr<metadata_handler> handler_;
  std::string db_prefix_;
  std::vector<std::string> node_names_;
  std::string job_definition_;
};

} // namespace epochrt
