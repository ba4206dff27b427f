#include <epochrt/actors/api/node_address.hpp>

#include <arpa/inet.h>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt {

std::string node_address::str() const {
  if (host.find(':') != std::string::npos)
    return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

caf::expected<node_address> node_address::parse(std::string_view text,
                                                bool any_port) {
  auto bad = [&](const std::string& why) {
    return make_error(actors_errc::invalid_argument,
                      "'" + std::string{text} + "' is not HOST:PORT: " + why);
  };
  node_address result;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size()
        || text[close + 1] != ':')
      return bad("an IPv6 address is written [ADDRESS]:PORT");
    result.host = std::string{text.substr(1, close - 1)};
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return bad("no port");
    result.host = std::string{text.substr(0, colon)};
    port_text = text.substr(colon + 1);
    if (result.host.find(':') != std::string::npos)
      return bad("write an IPv6 address as [ADDRESS]:PORT");
  }
  if (result.host.empty())
    return bad("no host");
  if (port_text.empty() || port_text.size() > 5)
    return bad("the port is a number from 1 to 65535");
  uint32_t port = 0;
  for (auto c : port_text) {
    if (c < '0' || c > '9')
      return bad("the port is a number from 1 to 65535");
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if ((port == 0 && !any_port) || port > 65535)
    return bad("the port is a number from 1 to 65535");
  result.port = static_cast<uint16_t>(port);
  return result;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost")
    return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

} // namespace epochrt
