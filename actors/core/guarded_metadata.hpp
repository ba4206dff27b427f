#pragma once

#include <memory>
#include <optional>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/persistence/metadata_handler.hpp>

namespace epochrt {

/// The checkpoint manager's way to its metadata handler, which may be host
/// code: a metadata handler that passes every call on, with the same
/// contracts, and turns an exception it throws into an
/// `actors_errc::checkpoint_failed` error naming the call, instead of
/// killing the manager actor, which would leave every later checkpoint
/// request to time out. Not thread-safe: its actor owns it.
class guarded_metadata : public metadata_handler {
public:
  explicit guarded_metadata(std::shared_ptr<metadata_handler> handler);

  caf::expected<std::optional<checkpoint_metadata>> read_record() override;

  caf::error write_record(const checkpoint_metadata& x,
                          const record_change& change) override;

  caf::error check_writable() override;

private:
  std::shared_ptr<metadata_handler> handler_;
};

} // namespace epochrt
