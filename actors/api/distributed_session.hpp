#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/session.hpp>

namespace epochrt {

class op_registry;
struct remote_link_faults;
struct remote_node;

/// Options of a distributed session. The defaults suit a job on one
/// network; every wait is bounded.
struct distributed_session_options {
  /// Per-request time limits (see session_options).
  session_options timeouts;
  /// The secret shared with the daemons; none when they have none.
  std::optional<std::string> secret;
  /// Longest the connection to a daemon, and each step of the handshake
  /// after it, may take. Default: 10 s.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
  /// How long `recover_lost_nodes` keeps trying to reach one lost node's
  /// address (the daemon may be restarting). Default: 30 s.
  std::chrono::milliseconds reconnect_timeout{std::chrono::seconds(30)};
  /// First and longest pause between two reconnection attempts; the pause
  /// doubles from the first to the longest. Defaults: 100 ms and 2 s.
  std::chrono::milliseconds reconnect_backoff_min{100};
  std::chrono::milliseconds reconnect_backoff_max{std::chrono::seconds(2)};
};

/// A session whose nodes run where the job's data and disks are: the nodes
/// named in `remote` on node daemons (`epochrt node`, node_server) at those
/// addresses, reached through CAF's middleman; every other node in this
/// process, as in local_session. A remote node is connected and attached on
/// first use; it writes its checkpoints under its daemon's checkpoint root.
///
/// Borrows `sys`, which must outlive the session and have been configured
/// with `configure_network`. The session owns its proxies and local nodes
/// and releases them (the daemons drop their nodes) when destroyed.
/// Thread-safe.
class distributed_session : public session {
public:
  distributed_session(caf::actor_system& sys,
                      std::shared_ptr<const op_registry> ops,
                      std::map<std::string, node_address> remote,
                      distributed_session_options options = {});

  ~distributed_session() override;

  caf::actor_system& system() override;

  /// A remote node is connected on first use: actors_errc::unreachable,
  /// auth_failed or rejected when that fails.
  caf::expected<node_handle> node(const std::string& name) override;

  /// Reconnects every lost remote node to its address, retrying with
  /// backoff for at most `reconnect_timeout` per node. The first error when
  /// a node cannot be reached again.
  caf::error recover_lost_nodes() override;

  /// Connects every remote node now, so that a wrong address or secret is
  /// reported before anything runs — as is a worker pool for the local
  /// nodes that could not be started. The first error.
  caf::error connect_all();

  /// True when `name` runs on a daemon.
  bool is_remote(const std::string& name) const;

private:
  caf::expected<node_handle> connect(const std::string& name);

  caf::actor_system& sys_;
  local_session local_;
  std::map<std::string, node_address> addresses_;
  distributed_session_options options_;
  std::mutex mtx_;
  std::map<std::string, std::unique_ptr<remote_node>> connected_;
  /// What a fault plan did to each node's link, across reconnections.
  std::map<std::string, std::shared_ptr<remote_link_faults>> links_;
};

} // namespace epochrt
