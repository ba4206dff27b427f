#include "runtime.hpp"

#include <atomic>
#include <mutex>
#include <stdexcept>

namespace epochrt::python {

namespace {

std::mutex live_mtx;
// Not owning: the objects of the module own the runtime.
std::weak_ptr<runtime> live;
std::atomic<log_level> level{log_level::warn};

} // namespace

runtime::runtime(token) : sys_(configured(cfg_)) {
  // Between configure and here another thread may have changed the level.
  epochrt::set_log_level(sys_, level.load());
}

caf::actor_system_config& runtime::configured(caf::actor_system_config& cfg) {
  log_options logging;
  logging.level = level.load();
  configure(cfg, logging);
  configure_scheduler(cfg);
  return cfg;
}

std::shared_ptr<runtime> runtime::get() {
  std::lock_guard<std::mutex> guard{live_mtx};
  if (auto current = live.lock())
    return current;
  auto fresh = std::make_shared<runtime>(token{});
  live = fresh;
  return fresh;
}

std::shared_ptr<const op_registry> runtime::ops() {
  // A function-local static: made once, thread-safe, never destroyed
  // before the sessions that share it (they hold it by shared_ptr).
  static const std::shared_ptr<const op_registry> registry = [] {
    auto result = std::make_shared<op_registry>();
    if (auto err = add_builtin_ops(*result))
      throw std::logic_error("epochrt's builtin ops do not register: "
                             + coded_error_text(err));
    return result;
  }();
  return registry;
}

void runtime::set_log_level(log_level new_level) {
  level = new_level;
  std::lock_guard<std::mutex> guard{live_mtx};
  if (auto current = live.lock())
    epochrt::set_log_level(current->system(), new_level);
}

} // namespace epochrt::python
