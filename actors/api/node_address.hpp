#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace epochrt {

/// Where a node daemon listens: a host name or IP address and a TCP port.
struct node_address {
  std::string host;
  uint16_t port = 0;

  /// "HOST:PORT"; "[V6]:PORT" for an IPv6 literal.
  std::string str() const;

  /// Parses "HOST:PORT" or "[V6]:PORT". actors_errc::invalid_argument, with
  /// what is wrong, for anything else (no port, a port above 65535, an
  /// empty host), and for port 0 unless `any_port` (a listener's "pick a
  /// free port").
  static caf::expected<node_address> parse(std::string_view text,
                                           bool any_port = false);
};

/// True for 127.0.0.0/8, ::1 and "localhost": addresses no other host can
/// reach.
bool is_loopback(const std::string& host);

} // namespace epochrt
