#pragma once

#include <cstdint>

#include <caf/expected.hpp>

#include "actors/network.hpp"

namespace epochrt::cli {

/// The network options of `--connection-timeout-ms MS`: heartbeats every
/// fifth of it (at least every 50 ms). An error unless 250 <= MS <= 1 h.
caf::expected<network_options>
network_from_flags(int64_t connection_timeout_ms);

} // namespace epochrt::cli
