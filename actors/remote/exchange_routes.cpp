#include <epochrt/actors/remote/exchange_routes.hpp>

#include <algorithm>

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/detail/log.hpp>

namespace epochrt {

namespace {

std::string address_of(const exchange_peer& peer) {
  return peer.host + ":" + std::to_string(peer.port);
}

uint64_t wire_bytes(const std::vector<tensor>& xs) {
  uint64_t n = 0;
  for (auto& x : xs)
    n += x.byte_size();
  return n;
}

uint64_t wire_bytes(const std::vector<tensor_slice_view>& xs) {
  uint64_t n = 0;
  for (auto& x : xs)
    n += (x.last - x.first) * element_size(x.source->type);
  return n;
}

// The run of an exchange message, and the bytes of tensors it sends.
std::pair<uint64_t, uint64_t> run_and_bytes(const caf::message& msg) {
  std::pair<uint64_t, uint64_t> result{0, 0};
  visit_exchange_message(msg, [&](const auto& x) {
    using type = std::decay_t<decltype(x)>;
    result.first = x.run;
    if constexpr (std::is_same_v<type, exchange_put>)
      result.second = wire_bytes(x.item);
    else if constexpr (std::is_same_v<type, exchange_reply>)
      result.second = wire_bytes(x.values);
    else if constexpr (std::is_same_v<type, exchange_result>)
      result.second = wire_bytes(x.values) + wire_bytes(x.views);
    else if constexpr (std::is_same_v<type, exchange_part>)
      for (auto& part : x.parts)
        result.second += wire_bytes(part.values) + wire_bytes(part.views);
  });
  return result;
}

uint64_t steady_ms() {
  return static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now().time_since_epoch())
      .count());
}

void enqueue_as(const caf::actor& sender, const caf::actor& to,
                caf::message msg) {
  to->enqueue(
    caf::make_mailbox_element(caf::actor_cast<caf::strong_actor_ptr>(sender),
                              caf::make_message_id(), {}, std::move(msg)),
    nullptr);
}

} // namespace

bool carries_data(const caf::message& msg) {
  return msg.match_elements<exchange_put>()
    || msg.match_elements<exchange_take>()
    || msg.match_elements<exchange_close>()
    || msg.match_elements<exchange_reply>()
    || msg.match_elements<exchange_part>()
    || msg.match_elements<exchange_result>();
}

exchange_routes::exchange_routes(caf::actor_system& sys, caf::actor endpoint,
                                 const exchange_hub_options& options,
                                 timer_fn after)
  : system_(sys), endpoint_(std::move(endpoint)), options_(options),
    after_(std::move(after)), window_(options.relay_window_bytes) {
  // nop
}

std::shared_ptr<exchange_routes>
exchange_routes::make(caf::actor_system& sys, caf::actor endpoint,
                      const exchange_hub_options& options, timer_fn after) {
  return std::shared_ptr<exchange_routes>{
    new exchange_routes(sys, std::move(endpoint), options, std::move(after))};
}

// -- as a relay
// -----------------------------------------------------------------

void exchange_routes::add_relay_peer(const caf::actor& peer) {
  if (!peer)
    return;
  annotated_mutex::guard guard{mtx_};
  relay_peers_.insert(peer.address());
}

bool exchange_routes::relays_for(const caf::actor_addr& peer) const {
  annotated_mutex::guard guard{mtx_};
  return relay_peers_.count(peer) > 0;
}

// -- a run's routes
// ---------------------------------------------------------------

void exchange_routes::choose(const exchange_plan& plan,
                             const std::set<caf::actor>& in_use,
                             std::vector<exchange_peer>& links,
                             std::vector<caf::actor>& direct) {
  auto& relay = plan.relay;
  std::string own;
  for (auto& peer : plan.peers)
    if (peer.endpoint == endpoint_ && peer.port != 0)
      own = address_of(peer);
  annotated_mutex::guard guard{mtx_};
  for (auto& peer : plan.peers) {
    if (!peer.endpoint || peer.endpoint == endpoint_ || peer.endpoint == relay)
      continue;
    auto addr = peer.endpoint.address();
    routes_[addr] = relay;
    if (direct_nodes_.count(peer.endpoint.node()) > 0) {
      if (in_use.count(peer.endpoint) == 0)
        direct_endpoints_.insert(addr);
      if (direct_endpoints_.count(addr) > 0 && !is_purged(peer.endpoint))
        direct.push_back(peer.endpoint);
      continue;
    }
    direct_endpoints_.erase(addr);
    if (!options_.connect_peer || peer.port == 0 || own.empty()
        || !(own < address_of(peer)) || partners_.count(addr) == 0)
      continue;
    auto target = address_of(peer);
    if (auto i = retry_at_.find(target); i != retry_at_.end()) {
      if (std::chrono::steady_clock::now() < i->second)
        continue;
      retry_at_.erase(i);
    }
    if (opening_.size() >= options_.max_links_opening)
      continue;
    if (linking_.insert(target).second) {
      opening_.insert(target);
      links.push_back(peer);
    }
  }
}

void exchange_routes::forget(const std::vector<exchange_peer>& peers,
                             const std::set<caf::actor>& in_use) {
  annotated_mutex::guard guard{mtx_};
  for (auto& peer : peers) {
    if (!peer.endpoint || in_use.count(peer.endpoint) > 0)
      continue;
    routes_.erase(peer.endpoint.address());
    direct_endpoints_.erase(peer.endpoint.address());
  }
}

// CAF 0.17 kills every proxy of a process once its last direct connection
// to it closes, and a message enqueued to a killed proxy vanishes. A plan a
// daemon keeps across runs (run_tasks::plan_key) may hold such a proxy
// after a link of its own closed and opened again; through the relay it
// still arrives, since the relay resolves the handle anew.
bool exchange_routes::is_purged(const caf::actor& to) {
  auto* actor = caf::actor_cast<caf::abstract_actor*>(to);
  return actor != nullptr
    && actor->getf(caf::abstract_actor::is_cleaned_up_flag);
}

void exchange_routes::deliver(const caf::actor& to, caf::message msg) {
  if (!to)
    return;
  auto data = carries_data(msg);
  caf::actor relay;
  {
    annotated_mutex::guard guard{mtx_};
    auto addr = to.address();
    if (auto i = routes_.find(addr); i != routes_.end()) {
      if (data)
        partners_.insert(addr);
      if (direct_endpoints_.count(addr) == 0
          || direct_nodes_.count(to.node()) == 0 || is_purged(to))
        relay = i->second;
    }
  }
  if (!relay) {
    enqueue_as(endpoint_, to, std::move(msg));
    return;
  }
  // Through the relay: in order, within the window. Data costs its bytes
  // (at least one); the rest only keeps its place in the order.
  auto [run, bytes] = run_and_bytes(msg);
  {
    annotated_mutex::guard guard{window_mtx_};
    send_relayed(window_.push(relayed_to{to, relay, run}, std::move(msg),
                              data ? std::max<uint64_t>(bytes, 1) : 0,
                              steady_ms()));
  }
  arm_expiry();
}

void exchange_routes::received_data_from(const caf::actor_addr& peer) {
  annotated_mutex::guard guard{mtx_};
  if (routes_.count(peer) > 0)
    partners_.insert(peer);
}

// -- connections of its own
// -------------------------------------------------------

void exchange_routes::open(const std::vector<exchange_peer>& links) {
  for (auto& peer : links) {
    std::weak_ptr<exchange_routes> weak = weak_from_this();
    auto address = address_of(peer);
    options_.connect_peer(
      peer.host, peer.port, endpoint_,
      [weak, endpoint = peer.endpoint, address](const caf::node_id& node) {
        if (auto routes = weak.lock())
          routes->link_up(node, endpoint, address);
      },
      [weak, address](const caf::node_id& node) {
        if (auto routes = weak.lock())
          routes->link_down(node, address);
      });
  }
}

void exchange_routes::link_up(const caf::node_id& node, const caf::actor& peer,
                              const std::string& address) {
  if (node != peer.node()) {
    // Another process than the run's answers at that address now.
    link_down({}, address);
    return;
  }
  {
    annotated_mutex::guard guard{mtx_};
    direct_nodes_.insert(node);
    opening_.erase(address);
  }
  detail::log(system_).info("exchange: connected directly to the daemon at {}",
                            address);
  caf::send_as(endpoint_, peer, exchange_link_atom::value);
}

void exchange_routes::link_down(const caf::node_id& node,
                                const std::string& address) {
  if (node)
    detail::log(system_).info("exchange: the connection of its own to the "
                              "daemon at {} closed; messages to it go "
                              "through the master",
                              address);
  annotated_mutex::guard guard{mtx_};
  if (node)
    direct_nodes_.erase(node);
  else
    retry_at_[address]
      = std::chrono::steady_clock::now() + options_.link_retry_delay;
  opening_.erase(address);
  linking_.erase(address);
}

void exchange_routes::accepted(const caf::actor& peer) {
  annotated_mutex::guard guard{mtx_};
  direct_nodes_.insert(peer.node());
}

bool exchange_routes::down(const caf::actor_addr& peer) {
  annotated_mutex::guard guard{mtx_};
  direct_nodes_.erase(peer.node());
  return direct_endpoints_.erase(peer) > 0;
}

// -- the relay window
// ---------------------------------------------------------------

void exchange_routes::arm_expiry() {
  {
    annotated_mutex::guard guard{window_mtx_};
    if (expiry_armed_ || window_.in_flight() == 0)
      return;
    expiry_armed_ = true;
  }
  std::weak_ptr<exchange_routes> weak = weak_from_this();
  after_(options_.silence_limit, [weak] {
    auto routes = weak.lock();
    if (!routes)
      return;
    {
      annotated_mutex::guard guard{routes->window_mtx_};
      routes->expiry_armed_ = false;
      routes->send_relayed(routes->window_.expire(
        steady_ms(),
        static_cast<uint64_t>(routes->options_.silence_limit.count())));
    }
    routes->arm_expiry();
  });
}

void exchange_routes::send_relayed(
  std::vector<send_window<relayed_to, caf::message>::send> released) {
  for (auto& x : released)
    enqueue_as(
      endpoint_, x.dest.relay,
      caf::make_message(exchange_forward{x.dest.to, std::move(x.item), x.seq}));
}

void exchange_routes::acked(uint64_t seq, const caf::actor& relay,
                            const caf::actor& receiver) {
  annotated_mutex::guard guard{window_mtx_};
  // Only the receiver of `seq`, through the relay it went by, frees it.
  send_relayed(window_.ack(seq, steady_ms(), [&](const relayed_to& x) {
    return x.relay == relay && x.to == receiver;
  }));
}

void exchange_routes::forget_relayed(
  const std::function<bool(const relayed_to&)>& sent,
  const std::function<bool(const relayed_to&)>& queued) {
  annotated_mutex::guard guard{window_mtx_};
  send_relayed(window_.forget(sent, queued, steady_ms()));
}

std::pair<uint64_t, size_t> exchange_routes::backlog() {
  annotated_mutex::guard guard{window_mtx_};
  return {window_.in_flight_bytes(), window_.queued()};
}

} // namespace epochrt
