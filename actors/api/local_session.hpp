#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <epochrt/actors/api/session.hpp>

namespace epochrt {

class op_registry;
class workspace;

/// A session whose nodes are actors in this process, created on first use,
/// each with a workspace of its own and a persistence actor beside it.
///
/// The session owns its node actors and stops them when destroyed; it
/// borrows `sys`, which must outlive it. Thread-safe.
class local_session : public session {
public:
  local_session(caf::actor_system& sys, std::shared_ptr<const op_registry> ops,
                session_options options = {});

  ~local_session() override;

  caf::actor_system& system() override;

  caf::expected<node_handle> node(const std::string& name) override;

  /// The workspace of node `name`, created with the node; null when the
  /// name is not a valid node name. For host programs that want to inspect
  /// or seed a node's blobs directly, between groups.
  std::shared_ptr<workspace> workspace_of(const std::string& name);

private:
  struct local_node {
    node_handle handle;
    std::shared_ptr<workspace> ws;
  };

  caf::expected<local_node*> get_or_create(const std::string& name);

  caf::actor_system& sys_;
  std::shared_ptr<const op_registry> ops_;
  std::mutex mtx_;
  std::map<std::string, local_node> nodes_;
};

} // namespace epochrt
