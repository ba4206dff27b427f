#include <epochrt/actors/api/logging.hpp>

#include <algorithm>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/thread_hook.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/printable.hpp>

namespace epochrt {

namespace {

spdlog::level::level_enum spdlog_level(log_level level) {
  switch (level) {
    case log_level::trace:
      return spdlog::level::trace;
    case log_level::debug:
      return spdlog::level::debug;
    case log_level::info:
      return spdlog::level::info;
    case log_level::warn:
      return spdlog::level::warn;
    case log_level::error:
      return spdlog::level::err;
    case log_level::off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

log_level our_level(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return log_level::trace;
    case spdlog::level::debug:
      return log_level::debug;
    case spdlog::level::info:
      return log_level::info;
    case spdlog::level::warn:
      return log_level::warn;
    case spdlog::level::err:
    case spdlog::level::critical:
      return log_level::error;
    default:
      return log_level::off;
  }
}

std::string escaped(const spdlog::details::log_msg& msg) {
  return printable(std::string_view{msg.payload.data(), msg.payload.size()});
}

// Escapes each message before `inner` formats it: log lines carry names
// and errors that peers, job files and host ops chose, which must not
// reach a terminal as control characters.
class escaping_formatter final : public spdlog::formatter {
public:
  explicit escaping_formatter(std::unique_ptr<spdlog::formatter> inner)
    : inner_(std::move(inner)) {
    // nop
  }

  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    auto text = escaped(msg);
    auto copy = msg;
    copy.payload = spdlog::string_view_t{text.data(), text.size()};
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

// Hands each line to the host's function. No lock of its own: the
// function is thread-safe by contract (log_options::sink).
class host_sink final
  : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
  explicit host_sink(std::function<void(log_level, std::string_view)> fn)
    : fn_(std::move(fn)) {
    // nop
  }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    try {
      fn_(our_level(msg.level), escaped(msg));
    } catch (...) {
      // A host's sink must not take a log line's caller down with it.
    }
  }

  void flush_() override {
    // nop
  }

private:
  std::function<void(log_level, std::string_view)> fn_;
};

std::shared_ptr<spdlog::logger> stderr_logger() {
  auto result = std::make_shared<spdlog::logger>(
    "epochrt", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  result->set_formatter(std::make_unique<escaping_formatter>(
    std::make_unique<spdlog::pattern_formatter>(
      "[%H:%M:%S.%e] [epochrt] [%l] %v")));
  return result;
}

// Carries an actor system's logger in its config. CAF 0.17 lets a library
// attach objects to an actor_system_config only as thread hooks, and every
// actor reaches its system's config; so the hook is where `detail::log`
// finds the logger, without a global registry. As a hook proper, it
// flushes the logger when one of the system's threads ends.
class logger_hook final : public caf::thread_hook {
public:
  explicit logger_hook(std::shared_ptr<spdlog::logger> logger)
    : logger_(std::move(logger)) {
    // nop
  }

  spdlog::logger& logger() const noexcept {
    return *logger_;
  }

  void init(caf::actor_system&) override {
    // nop
  }

  void thread_started() override {
    // nop
  }

  void thread_terminates() override {
    logger_->flush();
  }

private:
  std::shared_ptr<spdlog::logger> logger_;
};

} // namespace

namespace detail {

void attach_logger(caf::actor_system_config& cfg, const log_options& options) {
  auto logger = options.sink ? std::make_shared<spdlog::logger>(
                  "epochrt", std::make_shared<host_sink>(options.sink))
                             : stderr_logger();
  logger->set_level(spdlog_level(options.level));
  auto& hooks = cfg.thread_hooks_;
  hooks.erase(std::remove_if(hooks.begin(), hooks.end(),
                             [](const auto& hook) {
                               return dynamic_cast<logger_hook*>(hook.get())
                                 != nullptr;
                             }),
              hooks.end());
  cfg.add_thread_hook<logger_hook>(std::move(logger));
}

spdlog::logger& log(const caf::actor_system& sys) {
  for (auto& hook : sys.config().thread_hooks_)
    if (auto found = dynamic_cast<const logger_hook*>(hook.get()))
      return found->logger();
  // Only a system whose config configure() never saw gets here.
  static auto fallback = stderr_logger();
  return *fallback;
}

} // namespace detail

void set_log_level(caf::actor_system& sys, log_level level) {
  detail::log(sys).set_level(spdlog_level(level));
}

} // namespace epochrt
