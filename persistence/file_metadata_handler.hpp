#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "messages/checkpoint_records.hpp"
#include "persistence/metadata_handler.hpp"

namespace epochrt {

/// The default metadata handler: a file `<dir>/epochrt.metadata` in the
/// checkpoint directory, holding a CheckpointMetadata record.
///
/// Every change is written to a temporary sibling, fsynced, renamed over
/// the file and the directory fsynced, so the file always holds the old or
/// the new state, and a change has reached the disk when the call returns.
/// Every call reads the file afresh, so several instances (one after the
/// other, e.g. a restarted master) see each other's commits. A file that
/// does not decode is an error (persistence_errc::corrupt), never taken as
/// "no epochs"; a missing file means nothing was committed yet.
///
/// Thread safety: as metadata_handler, calls must be serialised; two
/// processes must not change the same directory's metadata at once.
class file_metadata_handler : public metadata_handler {
public:
  /// The file name used inside the checkpoint directory.
  static constexpr const char* file_name = "epochrt.metadata";

  /// Keeps metadata in `dir` (created on the first change if missing).
  explicit file_metadata_handler(std::string dir);

  caf::error set_params(const std::string& db_prefix,
                        const std::vector<std::string>& node_names,
                        const std::string& path_prefix) override;

  caf::expected<std::optional<int64_t>>
  last_epoch(std::optional<int64_t> user_epoch) override;

  caf::error write(int64_t epoch) override;

  caf::error uncommit(int64_t epoch) override;

  std::vector<int64_t> committed_epochs() override;

  caf::error report(const std::string& action,
                    const std::vector<checkpoint_stats>& stats) override;

  bool cp_accessible(std::optional<int64_t> epoch) override;

  caf::error mark_final(int64_t epoch) override;

  caf::error write_final(int64_t epoch) override;

  std::optional<int64_t> final_epoch() override;

  /// The full state as stored; an empty one when no file exists yet.
  caf::expected<checkpoint_metadata> load() const;

  /// The path of the metadata file.
  const std::string& file_path() const noexcept {
    return file_;
  }

private:
  caf::error store(checkpoint_metadata& x);

  std::string dir_;
  std::string file_;
  std::string db_prefix_;
  std::vector<std::string> node_names_;
};

} // namespace epochrt
