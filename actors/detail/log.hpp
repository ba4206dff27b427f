#pragma once

#include <spdlog/spdlog.h>

namespace epochrt::detail {

/// epochrt's logger: the one registered under "epochrt", created on first use
/// (stderr) when the host registered none.
spdlog::logger& log();

} // namespace epochrt::detail
