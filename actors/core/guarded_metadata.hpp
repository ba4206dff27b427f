#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/persistence/metadata_handler.hpp>

namespace epochrt {

/// The checkpoint manager's way to its metadata handler, which may be host
/// code: every call of `metadata_handler` (same names, same contracts)
/// goes through here, so that an exception it throws comes back as an
/// `actors_errc::checkpoint_failed` error naming the call, instead of
/// killing the manager actor, which would leave every later checkpoint
/// request to time out. Not thread-safe: its actor owns it.
class guarded_metadata {
public:
  explicit guarded_metadata(std::shared_ptr<metadata_handler> handler);

  caf::error set_params(const std::string& db_prefix,
                        const std::vector<std::string>& node_names,
                        const std::string& path_prefix);
  caf::error set_job_definition(const std::string& definition);
  caf::expected<std::optional<int64_t>>
  last_epoch(std::optional<int64_t> user_epoch);
  caf::error write(int64_t epoch);
  caf::error commit(int64_t epoch, bool final,
                    const std::vector<checkpoint_stats>& stats);
  caf::error uncommit(int64_t epoch);
  caf::expected<std::vector<int64_t>> committed_epochs();
  caf::expected<std::optional<int64_t>> final_epoch();
  caf::error report(const std::string& action,
                    const std::vector<checkpoint_stats>& stats);
  caf::expected<std::optional<checkpoint_metadata>> record();
  caf::error adopt_record(const checkpoint_metadata& x);
  caf::error check_writable();

private:
  std::shared_ptr<metadata_handler> handler_;
};

} // namespace epochrt
