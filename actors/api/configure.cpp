#include <epochrt/actors/api/configure.hpp>

#include <algorithm>
#include <thread>

#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/messages/codec_errc.hpp>
#include <epochrt/messages/fault_errc.hpp>
#include <epochrt/messages/message_types.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

std::string context_text(const caf::message& ctx) {
  if (ctx.match_elements<std::string>())
    return ctx.get_as<std::string>(0);
  return ctx.empty() ? std::string{} : caf::to_string(ctx);
}

template <class Enum>
std::string render(uint8_t code, const caf::message& ctx) {
  auto text = to_string(static_cast<Enum>(code));
  auto detail = context_text(ctx);
  if (!detail.empty()) {
    text += ": ";
    text += detail;
  }
  return text;
}

template <class Enum>
caf::actor_system_config::error_renderer renderer() {
  return [](uint8_t code, caf::atom_value, const caf::message& ctx) {
    return render<Enum>(code, ctx);
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

std::string describe_error(const caf::error& err) {
  if (!err)
    return {};
  std::string text;
  auto cat = err.category();
  if (cat == codec_category)
    text = render<codec_errc>(err.code(), err.context());
  else if (cat == fault_category)
    text = render<fault_errc>(err.code(), err.context());
  else if (cat == runtime_category)
    text = render<runtime_errc>(err.code(), err.context());
  else if (cat == persistence_category)
    text = render<persistence_errc>(err.code(), err.context());
  else if (cat == actors_category)
    text = render<actors_errc>(err.code(), err.context());
  else if (cat == caf::atom("system"))
    text = render<caf::sec>(err.code(), err.context());
  else
    text = caf::to_string(err);
  return text;
}

void configure(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  cfg.add_error_category(codec_category, renderer<codec_errc>());
  cfg.add_error_category(fault_category, renderer<fault_errc>());
  cfg.add_error_category(runtime_category, renderer<runtime_errc>());
  cfg.add_error_category(persistence_category, renderer<persistence_errc>());
  cfg.add_error_category(actors_category, renderer<actors_errc>());
}

} // namespace epochrt
