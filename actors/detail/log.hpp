#pragma once

#include <spdlog/spdlog.h>

#include <caf/fwd.hpp>

namespace epochrt {

struct log_options;

} // namespace epochrt

namespace epochrt::detail {

/// The logger of `sys`, which `configure` attached to the config `sys` was
/// built from. A system built from a config that `configure` never saw
/// (a bug of the host: its message types are missing too) logs to stderr
/// at info. Thread-safe.
spdlog::logger& log(const caf::actor_system& sys);

/// Gives `cfg` a logger made from `options`, replacing one given before:
/// `configure`'s part.
void attach_logger(caf::actor_system_config& cfg, const log_options& options);

} // namespace epochrt::detail
