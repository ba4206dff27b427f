#include "runtime.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "errors.hpp"

namespace epochrt::python {

namespace {

// epochrt::annotated_mutex comes with <epochrt/epochrt.hpp> (runtime.hpp):
// the module includes no header of a folder.
annotated_mutex live_mtx;
// Not owning: the objects of the module own the runtime.
std::weak_ptr<runtime> live EPOCHRT_GUARDED_BY(live_mtx);
std::atomic<log_level> level{log_level::warn};

bool same(const std::optional<tls_options>& x,
          const std::optional<tls_options>& y) {
  if (!x || !y)
    return x.has_value() == y.has_value();
  return x->certificate_file == y->certificate_file
    && x->key_file == y->key_file && x->ca_file == y->ca_file;
}

bool same(const network_options& x, const network_options& y) {
  return x.heartbeat_interval == y.heartbeat_interval
    && x.connection_timeout == y.connection_timeout && same(x.tls, y.tls);
}

// Checked before the system is built: configure_network leaves the
// config unchanged on a bad TLS file, and a system without its middleman
// would fail later and less clearly.
void check_network(const network_options& network) {
  if (network.tls)
    throw_if(check_tls_options(*network.tls), error_kind::bad_input);
}

} // namespace

runtime::runtime(token, network_options network)
  : network_(std::move(network)), sys_(configured(cfg_, network_)) {
  // Between configure and here another thread may have changed the level.
  epochrt::set_log_level(sys_, level.load());
}

caf::actor_system_config& runtime::configured(caf::actor_system_config& cfg,
                                              const network_options& network) {
  log_options logging;
  logging.level = level.load();
  if (auto err = configure_network(cfg, network, logging))
    throw error(err, error_kind::bad_input);
  configure_scheduler(cfg);
  return cfg;
}

std::shared_ptr<runtime> runtime::get() {
  annotated_mutex::guard guard{live_mtx};
  if (auto current = live.lock())
    return current;
  auto fresh = std::make_shared<runtime>(token{}, network_with());
  live = fresh;
  return fresh;
}

std::shared_ptr<runtime> runtime::get(const network_options& network) {
  check_network(network);
  annotated_mutex::guard guard{live_mtx};
  if (auto current = live.lock()) {
    if (same(current->network(), network))
      return current;
    throw_if(make_error(actors_errc::invalid_argument,
                        "epochrt's runtime in this process was made with "
                        "other network options (TLS files, connection "
                        "timeout): make the DistributedSession before every "
                        "other object of the module, or once they are gone"),
             error_kind::bad_input);
  }
  auto fresh = std::make_shared<runtime>(token{}, network);
  live = fresh;
  return fresh;
}

network_options
runtime::network_with(std::chrono::milliseconds connection_timeout) {
  network_options result;
  result.connection_timeout = connection_timeout;
  result.heartbeat_interval
    = std::max(std::chrono::milliseconds{50}, connection_timeout / 5);
  return result;
}

std::shared_ptr<runtime> runtime::make_private(const network_options& network) {
  check_network(network);
  return std::make_shared<runtime>(token{}, network);
}

std::shared_ptr<const epochrt::op_registry> runtime::ops() {
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
  annotated_mutex::guard guard{live_mtx};
  if (auto current = live.lock())
    epochrt::set_log_level(current->system(), new_level);
}

} // namespace epochrt::python
