#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include <epochrt/actors/api/network.hpp>

namespace epochrt::cli {

/// `--tls-cert FILE --tls-key FILE --tls-ca FILE`: all three, or none.
struct tls_flags {
  std::optional<std::string> cert;
  std::optional<std::string> key;
  std::optional<std::string> ca;
};

/// The network options of `--connection-timeout-ms MS` (heartbeats every
/// fifth of it, at least every 50 ms) and of the TLS flags. An error unless
/// 250 <= MS <= 1 h, or when only some of the TLS flags are given. The
/// files themselves are checked by configure_network.
caf::expected<network_options> network_from_flags(int64_t connection_timeout_ms,
                                                  const tls_flags& tls = {});

} // namespace epochrt::cli
