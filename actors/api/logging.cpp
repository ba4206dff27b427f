#include <epochrt/actors/api/logging.hpp>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/printable.hpp>

namespace epochrt {

namespace detail {

namespace {

// Escapes each message before `inner` formats it: log lines carry names
// and errors that peers, job files and host ops chose, which must not
// reach a terminal as control characters. A logger the host registers
// under "epochrt" formats as it likes.
class escaping_formatter final : public spdlog::formatter {
public:
  explicit escaping_formatter(std::unique_ptr<spdlog::formatter> inner)
    : inner_(std::move(inner)) {
    // nop
  }

  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    auto escaped
      = printable(std::string_view{msg.payload.data(), msg.payload.size()});
    auto copy = msg;
    copy.payload = spdlog::string_view_t{escaped.data(), escaped.size()};
    inner_->format(copy, dest);
    // The colour sink reads from `msg` where the level's colour goes.
    msg.color_range_start = copy.color_range_start;
    msg.color_range_end = copy.color_range_end;
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<escaping_formatter>(inner_->clone());
  }

private:
  std::unique_ptr<spdlog::formatter> inner_;
};

} // namespace

spdlog::logger& log() {
  // Function-local static: created once, thread-safely; a logger the host
  // registered under the same name wins.
  static std::shared_ptr<spdlog::logger> instance = [] {
    if (auto existing = spdlog::get("epochrt"))
      return existing;
    auto created = std::make_shared<spdlog::logger>(
      "epochrt", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    created->set_formatter(std::make_unique<escaping_formatter>(
      std::make_unique<spdlog::pattern_formatter>(
        "[%H:%M:%S.%e] [epochrt] [%l] %v")));
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
