#pragma once

#include <functional>
#include <string_view>

#include <caf/fwd.hpp>

namespace epochrt {

enum class log_level { trace, debug, info, warn, error, off };

/// Where the log lines of one actor system go. Each actor system has a
/// logger of its own, made by `configure` (or `configure_network`) from
/// these options; epochrt never touches spdlog's registry or default logger.
struct log_options {
  /// Lines below this level are not formatted. Default: info.
  log_level level = log_level::info;
  /// Receives every line at or above `level`: its level and its text,
  /// with control characters already escaped (names and errors in a line
  /// come from job files and peers). Called from any thread of the actor
  /// system, concurrently, and from host threads inside epochrt calls: it
  /// must be thread-safe and must not call epochrt. Exceptions it throws
  /// are swallowed. Empty (the default): stderr, as
  /// "[HH:MM:SS.mmm] [epochrt] [level] text".
  std::function<void(log_level, std::string_view)> sink;
};

/// Sets the level of `sys`'s logger. Thread-safe; takes effect for lines
/// logged after it returns.
void set_log_level(caf::actor_system& sys, log_level level);

} // namespace epochrt
