#include <epochrt/actors/remote/admission_middleman_actor.hpp>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/sec.hpp>

#include <epochrt/actors/remote/admission_protocol.hpp>
#include <epochrt/actors/remote/bounded_scribe.hpp>

namespace epochrt::detail {

admission_middleman_actor::admission_middleman_actor(caf::actor_config& cfg,
                                                     caf::actor basp_broker,
                                                     admission_options settings)
  : middleman_actor_impl(cfg, std::move(basp_broker)),
    settings_(std::move(settings)) {
  // nop
}

const char* admission_middleman_actor::name() const {
  return "epochrt_admission_middleman_actor";
}

caf::io::network::default_multiplexer*
admission_middleman_actor::multiplexer() {
  return dynamic_cast<caf::io::network::default_multiplexer*>(
    &system().middleman().backend());
}

caf::expected<caf::io::scribe_ptr>
admission_middleman_actor::connect(const std::string& host, uint16_t port) {
  auto* mx = multiplexer();
  if (mx == nullptr)
    return make_error(caf::sec::runtime_error,
                      "admission needs CAF's default network backend");
  auto fd = connect_admitted(host, port, settings_.secret, settings_.timeout);
  if (!fd)
    return std::move(fd.error());
  return caf::io::scribe_ptr{
    caf::make_counted<bounded_scribe>(*mx, *fd, settings_.max_message_bytes)};
}

caf::expected<caf::io::doorman_ptr>
admission_middleman_actor::open(uint16_t port, const char* addr, bool reuse) {
  auto* mx = multiplexer();
  if (mx == nullptr)
    return make_error(caf::sec::runtime_error,
                      "admission needs CAF's default network backend");
  return admission_doorman::open(*mx, addr != nullptr ? addr : "", port, reuse,
                                 settings_);
}

} // namespace epochrt::detail
