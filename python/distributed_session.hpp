#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/epochrt.hpp>

#include "session.hpp"

namespace epochrt::python {

/// Python's DistributedSession: an epochrt::distributed_session whose
/// nodes named in `remote` run on node daemons (`epochrt node`,
/// `epochrt.serve_node`) at those addresses, and every other node in this
/// process, with the ops of `ops` (a daemon runs its own registry's ops:
/// the ops it was started with). The runtime is the module's, made with
/// `network` (see `runtime::get`). The GIL and threads: see `session`.
class distributed_session : public session {
public:
  /// Connects every remote node before returning, so that a wrong
  /// address, secret or certificate is reported here. Throws `error`:
  /// BadInput for a bad option or a runtime alive with other network
  /// options; Error (code unreachable, auth_failed, rejected) when a
  /// daemon cannot be reached or refuses us. Must be called without the
  /// GIL.
  distributed_session(std::map<std::string, node_address> remote,
                      std::shared_ptr<const epochrt::op_registry> ops,
                      const network_options& network,
                      distributed_session_options options);

  /// Where `node` runs now ("host:port"); empty for a node in this
  /// process.
  std::string address_of(const std::string& node) const;

private:
  epochrt::distributed_session& typed() const noexcept;
};

} // namespace epochrt::python
