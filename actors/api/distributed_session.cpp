#include <epochrt/actors/api/distributed_session.hpp>

#include <algorithm>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/remote/remote_node_actor.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

distributed_session::distributed_session(
  caf::actor_system& sys, std::shared_ptr<const op_registry> ops,
  std::map<std::string, node_address> remote,
  distributed_session_options options)
  : session(options.timeouts), sys_(sys),
    local_(sys, std::move(ops), options.timeouts),
    addresses_(std::move(remote)), options_(std::move(options)) {
  // nop
}

distributed_session::~distributed_session() {
  for (auto& [name, node] : connected_)
    caf::anon_send_exit(node->proxy, caf::exit_reason::user_shutdown);
}

caf::actor_system& distributed_session::system() {
  return sys_;
}

bool distributed_session::is_remote(const std::string& name) const {
  annotated_mutex::guard guard{mtx_};
  return addresses_.count(name) > 0;
}

std::string distributed_session::address_of(const std::string& name) const {
  annotated_mutex::guard guard{mtx_};
  auto i = addresses_.find(name);
  return i == addresses_.end() ? std::string{} : i->second.str();
}

caf::expected<node_handle>
distributed_session::connect(const std::string& name) {
  return connect(name, addresses_.at(name));
}

caf::expected<node_handle>
distributed_session::connect(const std::string& name,
                             const node_address& address) {
  remote_node_config cfg;
  cfg.name = name;
  cfg.address = address;
  cfg.secret = options_.secret;
  cfg.timeouts = options_.timeouts;
  cfg.handshake_timeout = options_.handshake_timeout;
  // One per node, kept across reconnections: a partitioned or frozen node
  // stays so for the new connection too.
  auto& link = links_[name];
  if (!link)
    link = std::make_shared<remote_link_faults>();
  cfg.link = link;
  auto connected = connect_remote_node(sys_, cfg);
  if (!connected)
    return std::move(connected.error());
  auto proxy = connected->proxy;
  auto exchange = connected->exchange;
  // The daemon reaches the other daemons' exchanges through this one.
  local_.hub_->add_relay_peer(exchange);
  connected_.insert_or_assign(
    name, std::make_unique<remote_node>(std::move(*connected)));
  return node_handle{
    name, proxy, proxy, exchange, local_.hub_->endpoint(), cfg.address};
}

caf::expected<node_handle> distributed_session::node(const std::string& name) {
  if (!is_remote(name))
    return local_.node(name);
  if (auto problem = node_name_problem(name); !problem.empty())
    return make_error(actors_errc::unknown_node,
                      "invalid node name '" + name + "': " + problem);
  annotated_mutex::guard guard{mtx_};
  if (auto i = connected_.find(name); i != connected_.end())
    return node_handle{name,
                       i->second->proxy,
                       i->second->proxy,
                       i->second->exchange,
                       local_.hub_->endpoint(),
                       addresses_.at(name)};
  return connect(name);
}

caf::error distributed_session::connect_all() {
  if (auto& err = local_.start_error())
    return err;
  // node() takes the lock: the names first (a move keeps a node's name).
  std::vector<std::string> names;
  {
    annotated_mutex::guard guard{mtx_};
    for (auto& kvp : addresses_)
      names.push_back(kvp.first);
  }
  for (auto& name : names)
    if (auto handle = node(name); !handle)
      return std::move(handle.error());
  return {};
}

caf::error distributed_session::recover_lost_nodes() {
  annotated_mutex::guard guard{mtx_};
  std::vector<std::string> lost;
  for (auto& [name, node] : connected_)
    if (node->lost->load())
      lost.push_back(name);
  for (auto& name : lost)
    if (auto err = bring_back(name))
      return err;
  return {};
}

caf::error distributed_session::bring_back(const std::string& name) {
  caf::anon_send_exit(connected_.at(name)->proxy,
                      caf::exit_reason::user_shutdown);
  auto& address = addresses_.at(name);
  auto deadline = std::chrono::steady_clock::now() + options_.reconnect_timeout;
  auto pause = options_.reconnect_backoff_min;
  for (int attempt = 1;; ++attempt) {
    auto handle = connect(name);
    if (handle) {
      detail::log(sys_).info("node {} is back at {} (attempt {})", name,
                             address.str(), attempt);
      return {};
    }
    // A daemon that refuses us will not change its mind.
    auto& err = handle.error();
    if (is_error(err, actors_errc::auth_failed)
        || is_error(err, actors_errc::rejected))
      return std::move(handle.error());
    if (std::chrono::steady_clock::now() + pause > deadline)
      return move_to_spare(
        name,
        make_error(actors_errc::node_lost,
                   "node " + name + " did not come back at " + address.str()
                     + " within "
                     + std::to_string(options_.reconnect_timeout.count())
                     + " ms: " + error_text(handle.error())));
    detail::log(sys_).info("node {} not back yet ({}); retrying in {} ms", name,
                           error_text(handle.error()), pause.count());
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, options_.reconnect_backoff_max);
  }
}

caf::error distributed_session::move_to_spare(const std::string& name,
                                              caf::error why_not_back) {
  auto why = error_text(why_not_back);
  auto& spares = options_.spares;
  while (!spares.empty()) {
    auto spare = spares.front();
    spares.erase(spares.begin());
    // The link faults were the lost host's; the spare is a new link.
    links_.erase(name);
    auto handle = connect(name, spare);
    if (handle) {
      detail::log(sys_).warn("node {} moved from {} to the spare daemon at {}: "
                             "{}",
                             name, addresses_.at(name).str(), spare.str(), why);
      addresses_.insert_or_assign(name, spare);
      return {};
    }
    // A spare that cannot take this node would not take the next lost one
    // either: it stays dropped, and the next spare is tried.
    why += "; the spare at " + spare.str()
      + " could not take it: " + error_text(handle.error());
  }
  return make_error(actors_errc::node_lost, why + " (no spare daemon left)");
}

} // namespace epochrt
