#include <epochrt/actors/detail/counted_thread.hpp>

#include <string>
#include <system_error>
#include <thread>

#include <caf/actor_registry.hpp>
#include <caf/actor_system.hpp>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt::detail {

caf::error start_counted_thread(caf::actor_system& sys, const std::string& what,
                                std::function<void()> work) {
  auto& registry = sys.registry();
  registry.inc_running();
  try {
    std::thread{[&registry, fn = std::move(work)]() mutable {
      try {
        fn();
      } catch (...) {
        // Nothing to report to: `work` owns its own error reporting.
      }
      // Everything `work` holds (actor handles, shared state) goes before
      // the system may shut down.
      fn = nullptr;
      registry.dec_running();
    }}.detach();
  } catch (const std::system_error& ex) {
    registry.dec_running();
    return make_error(actors_errc::task_failed,
                      "cannot start a thread for " + what + ": " + ex.what());
  }
  return {};
}

} // namespace epochrt::detail
