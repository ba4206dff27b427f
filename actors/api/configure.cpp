#include <epochrt/actors/api/configure.hpp>

#include <algorithm>
#include <thread>

#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/messages/codec_errc.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/message_types.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// CAF's rendering of an error of our categories (caf::to_string with a
// system) is error_text's: one renderer.
caf::actor_system_config::error_renderer renderer() {
  return [](uint8_t code, caf::atom_value category, const caf::message& ctx) {
    return error_text(caf::error{code, category, ctx},
                      error_form::code_and_context);
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

void configure(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  cfg.add_error_category(codec_category, renderer());
  cfg.add_error_category(fault_category, renderer());
  cfg.add_error_category(runtime_category, renderer());
  cfg.add_error_category(persistence_category, renderer());
  cfg.add_error_category(actors_category, renderer());
}

} // namespace epochrt
