#pragma once

namespace epochrt {

enum class log_level { trace, debug, info, warn, error, off };

/// Sets the level of epochrt's logger. epochrt logs through its own spdlog
/// logger named "epochrt", to stderr, and never touches the default logger.
/// A host that wants the lines elsewhere registers its own spdlog logger
/// under that name before the first epochrt call. Thread-safe.
void set_log_level(log_level level);

} // namespace epochrt
