#include "tools/network_flags.hpp"

#include <algorithm>
#include <string>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt::cli {

caf::expected<network_options> network_from_flags(int64_t connection_timeout_ms,
                                                  const tls_flags& tls) {
  if (connection_timeout_ms < 250 || connection_timeout_ms > 3600 * 1000)
    return make_error(actors_errc::invalid_argument,
                      "--connection-timeout-ms: from 250 to 3600000, got "
                        + std::to_string(connection_timeout_ms));
  network_options result;
  result.connection_timeout = std::chrono::milliseconds{connection_timeout_ms};
  result.heartbeat_interval = std::chrono::milliseconds{
    std::max<int64_t>(50, connection_timeout_ms / 5)};
  auto given = int{tls.cert.has_value()} + int{tls.key.has_value()}
    + int{tls.ca.has_value()};
  if (given == 0)
    return result;
  if (given != 3)
    return make_error(actors_errc::invalid_argument,
                      "TLS needs all of --tls-cert, --tls-key and --tls-ca");
  result.tls = tls_options{*tls.cert, *tls.key, *tls.ca};
  return result;
}

} // namespace epochrt::cli
