#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>

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

/// The secret of `--secret-file FILE`: none without the flag, an error
/// (read_secret_file's) when the file cannot serve as one.
caf::expected<std::optional<std::string>>
secret_from_flag(const std::optional<std::string>& file);

/// The `--node NAME=HOST:PORT` arguments `texts`: each names one of
/// `nodes` once (`owner` says whose nodes they are in an error, e.g. "the
/// job"). An error naming the first bad argument.
caf::expected<std::map<std::string, node_address>>
nodes_from_flags(const std::vector<std::string>& texts,
                 const std::vector<std::string>& nodes,
                 const std::string& owner);

} // namespace epochrt::cli
