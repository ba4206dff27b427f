#include <epochrt/actors/api/local_session.hpp>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/actors/core/persistence_actor.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/worker_pool.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

struct local_session::local_node {
  node_handle handle;
  std::shared_ptr<workspace> ws;
};

local_session::local_session(caf::actor_system& sys,
                             std::shared_ptr<const op_registry> ops,
                             session_options options)
  : session(options), sys_(sys), ops_(std::move(ops)) {
  auto pool = worker_pool::make({options.worker_threads});
  if (pool)
    pool_ = std::move(*pool);
  else
    start_error_ = std::move(pool.error());
  exchange_hub_options hub_options;
  hub_options.silence_limit = options.connection_timeout;
  hub_ = exchange_hub::make(sys, pool_, hub_options);
}

local_session::~local_session() {
  // A thread of its nodes asleep on an injected delay would hold up their
  // end, and the actor system's.
  if (auto& faults = options().faults)
    faults->interrupt_delays();
  for (auto& [name, node] : nodes_) {
    caf::anon_send_exit(node->handle.node, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(node->handle.persistence,
                        caf::exit_reason::user_shutdown);
  }
  // Waiting tasks are woken (and fail); queued tasks are dropped (each
  // reports its end to a node actor that is going); running ones end at
  // their next op once their node has seen its exit.
  hub_->shutdown();
  if (pool_)
    pool_->stop();
}

caf::actor_system& local_session::system() {
  return sys_;
}

caf::expected<local_session::local_node*>
local_session::get_or_create(const std::string& name) {
  auto problem = node_name_problem(name);
  if (!problem.empty())
    return make_error(actors_errc::unknown_node,
                      "invalid node name '" + name + "': " + problem);
  if (start_error_)
    return start_error_;
  annotated_mutex::guard guard{mtx_};
  auto i = nodes_.find(name);
  if (i == nodes_.end()) {
    auto created = std::make_unique<local_node>();
    created->ws = std::make_shared<workspace>();
    created->handle.name = name;
    created->handle.persistence
      = spawn_persistence(sys_, name, created->ws, {}, options().faults);
    if (!created->handle.persistence)
      return make_error(actors_errc::node_lost,
                        "node " + name
                          + " could not be started: no thread for its "
                            "persistence actor (out of memory or threads)");
    created->handle.node
      = spawn_node(sys_, name, created->ws, ops_, options().group_timeout,
                   pool_, options().faults, hub_);
    created->handle.exchange = hub_->endpoint();
    i = nodes_.emplace(name, std::move(created)).first;
  }
  return i->second.get();
}

caf::expected<node_handle> local_session::node(const std::string& name) {
  auto found = get_or_create(name);
  if (!found)
    return std::move(found.error());
  return (*found)->handle;
}

std::shared_ptr<workspace>
local_session::workspace_of(const std::string& name) {
  auto found = get_or_create(name);
  return found ? (*found)->ws : nullptr;
}

} // namespace epochrt
