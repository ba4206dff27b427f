#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/session.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

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
  /// Daemons that stand by for lost hosts: a remote node that does not come
  /// back at its address within `reconnect_timeout` moves to the first
  /// spare that answers, which is then no longer a spare. With checkpoint
  /// copies (checkpoint_options::replicas) the moved node restores its last
  /// committed checkpoint from a copy; without, from nothing. Default: none.
  std::vector<node_address> spares;
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
  /// backoff for at most `reconnect_timeout` per node; a node that does not
  /// come back moves to a spare (see distributed_session_options::spares).
  /// Errors: actors_errc::node_lost when a node is neither back nor moved
  /// (no spare left, or none answered), naming the node, its address and
  /// each spare tried; auth_failed or rejected when its daemon refuses us.
  caf::error recover_lost_nodes() override;

  /// Where `name` runs now ("host:port"), which a move to a spare changes;
  /// empty for a node in this process.
  std::string address_of(const std::string& name) const override;

  /// The ops of the master's nodes; a daemon's are its own (the job runner
  /// checks that it has every op a task calls).
  std::shared_ptr<const op_registry> ops() const override {
    return local_.ops();
  }

  /// Connects every remote node now, so that a wrong address or secret is
  /// reported before anything runs — as is a worker pool for the local
  /// nodes that could not be started. The first error.
  caf::error connect_all();

  /// True when `name` runs on a daemon.
  bool is_remote(const std::string& name) const;

private:
  caf::expected<node_handle> connect(const std::string& name)
    EPOCHRT_REQUIRES(mtx_);
  caf::expected<node_handle>
  connect(const std::string& name, const node_address& address)
    EPOCHRT_REQUIRES(mtx_);
  // Reconnects lost node `name` to its address, or else moves it to a
  // spare.
  caf::error bring_back(const std::string& name) EPOCHRT_REQUIRES(mtx_);
  caf::error move_to_spare(const std::string& name, caf::error why_not_back)
    EPOCHRT_REQUIRES(mtx_);

  caf::actor_system& sys_;
  local_session local_;
  // A move to a spare changes addresses_ and the spares in options_.
  std::map<std::string, node_address> addresses_ EPOCHRT_GUARDED_BY(mtx_);
  distributed_session_options options_ EPOCHRT_GUARDED_BY(mtx_);
  mutable annotated_mutex mtx_;
  std::map<std::string, std::unique_ptr<remote_node>>
    connected_ EPOCHRT_GUARDED_BY(mtx_);
  /// What a fault plan did to each node's link, across reconnections.
  std::map<std::string, std::shared_ptr<remote_link_faults>>
    links_ EPOCHRT_GUARDED_BY(mtx_);
};

} // namespace epochrt
