#pragma once

#include <map>
#include <memory>
#include <string>

#include <epochrt/actors/api/session.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

namespace epochrt {

class exchange_hub;
class op_registry;
class worker_pool;
class workspace;

/// A session whose nodes are actors in this process, created on first use,
/// each with a workspace of its own and a persistence actor beside it.
///
/// The session owns its node actors and its worker pool (see
/// `session_options::worker_threads`) and stops them when destroyed,
/// waiting for the tasks still running to see their cancellation; it
/// borrows `sys`, which must outlive it. When the pool's threads cannot be
/// created, every `node()` returns that error (`start_error()`). Thread-safe.
class local_session : public session {
public:
  local_session(caf::actor_system& sys, std::shared_ptr<const op_registry> ops,
                session_options options = {});

  ~local_session() override;

  caf::actor_system& system() override;

  caf::expected<node_handle> node(const std::string& name) override;

  std::shared_ptr<const op_registry> ops() const override {
    return ops_;
  }

  /// The workspace of node `name`, created with the node; null when the
  /// name is not a valid node name. For host programs that want to inspect
  /// or seed a node's blobs directly, between groups.
  std::shared_ptr<workspace> workspace_of(const std::string& name);

  /// Why the session cannot run anything (its worker pool could not be
  /// started), or no error.
  const caf::error& start_error() const noexcept {
    return start_error_;
  }

private:
  // Relays the exchange messages of its daemons through this session's
  // exchange.
  friend class distributed_session;

  // A node's handle and workspace (defined in local_session.cpp).
  struct local_node;

  caf::expected<local_node*> get_or_create(const std::string& name);

  caf::actor_system& sys_;
  std::shared_ptr<const op_registry> ops_;
  // Shared with the node actors, which may outlive the session by a few
  // messages: a stopped pool refuses their work instead of vanishing.
  std::shared_ptr<worker_pool> pool_;
  // The channels and collectives of the session's nodes.
  std::shared_ptr<exchange_hub> hub_;
  caf::error start_error_;
  annotated_mutex mtx_;
  std::map<std::string, std::unique_ptr<local_node>>
    nodes_ EPOCHRT_GUARDED_BY(mtx_);
};

} // namespace epochrt
