#include <epochrt/actors/api/configure.hpp>

#include <algorithm>
#include <thread>

#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>

#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/message_types.hpp>

namespace epochrt {

namespace {

// CAF's rendering of an error of our categories (caf::to_string with a
// system) is coded_error_text's: one renderer.
caf::actor_system_config::error_renderer renderer() {
  return [](uint8_t code, caf::atom_value category, const caf::message& ctx) {
    return coded_error_text(caf::error{code, category, ctx});
  };
}

} // namespace

void configure_scheduler(caf::actor_system_config& cfg, size_t threads) {
  if (threads == 0)
    threads = std::max<size_t>(2, std::thread::hardware_concurrency());
  cfg.set("scheduler.max-threads", threads);
  // Straight from CAF's short spin to a sleep that an enqueue ends (see the
  // header): no 50 µs polling naps in between.
  cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
}

void configure(caf::actor_system_config& cfg, const log_options& logging) {
  add_message_types(cfg);
  detail::attach_logger(cfg, logging);
  for (auto category : detail::epochrt_error_categories())
    cfg.add_error_category(category, renderer());
}

} // namespace epochrt
