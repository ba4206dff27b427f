#include "actors/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "actors/detail/log.hpp"

namespace epochrt {

namespace detail {

spdlog::logger& log() {
  // Function-local static: created once, thread-safely; a logger the host
  // registered under the same name wins.
  static std::shared_ptr<spdlog::logger> instance = [] {
    if (auto existing = spdlog::get("epochrt"))
      return existing;
    auto created = std::make_shared<spdlog::logger>(
      "epochrt", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    created->set_pattern("[%H:%M:%S.%e] [epochrt] [%l] %v");
    created->set_level(spdlog::level::info);
    spdlog::register_logger(created);
    return created;
  }();
  return *instance;
}

} // namespace detail

void set_log_level(log_level level) {
  auto lvl = spdlog::level::info;
  switch (level) {
    case log_level::trace:
      lvl = spdlog::level::trace;
      break;
    case log_level::debug:
      lvl = spdlog::level::debug;
      break;
    case log_level::info:
      lvl = spdlog::level::info;
      break;
    case log_level::warn:
      lvl = spdlog::level::warn;
      break;
    case log_level::error:
      lvl = spdlog::level::err;
      break;
    case log_level::off:
      lvl = spdlog::level::off;
      break;
  }
  detail::log().set_level(lvl);
}

} // namespace epochrt
