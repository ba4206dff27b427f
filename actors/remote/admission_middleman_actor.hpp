#pragma once

#include <cstdint>
#include <string>

#include <caf/io/middleman_actor_impl.hpp>

#include <epochrt/actors/remote/admission_doorman.hpp>

namespace epochrt::detail {

/// CAF's middleman actor, with every connection it opens or accepts passing
/// epochrt's admission handshake (admission_protocol.hpp) on the raw socket
/// before CAF's BASP broker sees it: `open` (publish) listens through an
/// admission_doorman, `connect` (remote_actor) runs the master's side of the
/// handshake. Everything else is CAF's.
///
/// Detached: `connect` blocks for up to `settings.timeout`.
class admission_middleman_actor final : public caf::io::middleman_actor_impl {
public:
  admission_middleman_actor(caf::actor_config& cfg, caf::actor basp_broker,
                            admission_options settings);

  const char* name() const override;

protected:
  caf::expected<caf::io::scribe_ptr> connect(const std::string& host,
                                             uint16_t port) override;

  caf::expected<caf::io::doorman_ptr> open(uint16_t port, const char* addr,
                                           bool reuse) override;

private:
  caf::io::network::default_multiplexer* multiplexer();

  admission_options settings_;
};

} // namespace epochrt::detail
