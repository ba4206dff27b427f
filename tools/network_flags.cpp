#include "tools/network_flags.hpp"

#include <algorithm>
#include <string>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/secret_file.hpp>
#include <epochrt/messages/error_text.hpp>

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

caf::expected<std::map<std::string, node_address>>
nodes_from_flags(const std::vector<std::string>& texts,
                 const std::vector<std::string>& nodes,
                 const std::string& owner) {
  std::map<std::string, node_address> result;
  auto bad = [](const std::string& text, const std::string& why) {
    return make_error(actors_errc::invalid_argument,
                      "--node " + text + ": " + why);
  };
  for (auto& text : texts) {
    auto eq = text.find('=');
    if (eq == std::string::npos)
      return bad(text, "expected NAME=HOST:PORT");
    auto name = text.substr(0, eq);
    if (std::find(nodes.begin(), nodes.end(), name) == nodes.end())
      return bad(text, owner + " has no node '" + name + "'");
    auto address = node_address::parse(std::string_view{text}.substr(eq + 1));
    if (!address)
      return bad(text, error_text(address.error()));
    if (!result.emplace(name, std::move(*address)).second)
      return bad(text, "node '" + name + "' is placed twice");
  }
  return result;
}

caf::expected<std::optional<std::string>>
secret_from_flag(const std::optional<std::string>& file) {
  if (!file)
    return std::optional<std::string>{};
  auto secret = read_secret_file(*file);
  if (!secret)
    return std::move(secret.error());
  return std::optional<std::string>{std::move(*secret)};
}

} // namespace epochrt::cli
