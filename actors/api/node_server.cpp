#include <epochrt/actors/api/node_server.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/actors/core/persistence_actor.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/remote/node_gate_actor.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

namespace {

using clock_type = std::chrono::steady_clock;

// A challenge lives this long: enough for any handshake, short enough that
// a nonce seen on the wire is soon worthless.
constexpr auto challenge_lifetime = std::chrono::seconds(30);

// Unanswered challenges kept at most: a peer that only says hello cannot
// make the daemon hold more.
constexpr size_t max_open_challenges = 64;

struct challenge {
  std::string node;
  caf::node_id peer;
  clock_type::time_point expires;
};

struct attachment {
  caf::node_id master;
  caf::actor_addr master_actor;
  caf::actor gate;
  node_actor node;
  persistence_actor persistence;
};

struct gatekeeper_state {
  node_server_options options;
  std::string root;
  std::shared_ptr<const op_registry> ops;
  std::shared_ptr<worker_pool> pool;
  std::shared_ptr<exchange_hub> hub;
  std::map<std::vector<char>, challenge> challenges;
  // Shared with the exit functor, which drops every node on shutdown.
  std::shared_ptr<std::map<std::string, attachment>> attached;
};

using gatekeeper_ptr = caf::stateful_actor<gatekeeper_state>*;

void drop(attachment& x) {
  caf::anon_send_exit(x.gate, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(x.node, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(x.persistence, caf::exit_reason::user_shutdown);
}

caf::error refuse(std::string why) {
  return make_error(actors_errc::rejected, std::move(why));
}

// The master already attached here, if any other than `peer`.
std::optional<caf::node_id> other_master(gatekeeper_state& st,
                                         const caf::node_id& peer) {
  for (auto& [name, x] : *st.attached)
    if (x.master != peer)
      return x.master;
  return std::nullopt;
}

void forget_expired(gatekeeper_state& st) {
  auto now = clock_type::now();
  for (auto i = st.challenges.begin(); i != st.challenges.end();)
    i = i->second.expires < now ? st.challenges.erase(i) : std::next(i);
  while (st.challenges.size() >= max_open_challenges) {
    auto oldest = st.challenges.begin();
    for (auto i = st.challenges.begin(); i != st.challenges.end(); ++i)
      if (i->second.expires < oldest->second.expires)
        oldest = i;
    st.challenges.erase(oldest);
  }
}

caf::result<remote_challenge> on_hello(gatekeeper_ptr self, remote_hello& msg) {
  auto& st = self->state;
  auto& sender = self->current_sender();
  if (!sender)
    return refuse("an anonymous hello gets no challenge");
  if (msg.version != remote_protocol_version)
    return refuse("protocol version " + std::to_string(msg.version)
                  + " is not spoken here (this daemon speaks "
                  + std::to_string(remote_protocol_version) + ")");
  if (auto problem = node_name_problem(msg.node); !problem.empty())
    return refuse("invalid node name '" + msg.node.substr(0, 64)
                  + "': " + problem);
  if (msg.client_nonce.size() != detail::nonce_size)
    return refuse("a hello carries a nonce of "
                  + std::to_string(detail::nonce_size) + " bytes");
  if (auto other = other_master(st, sender->node()))
    return refuse("this daemon serves another master (" + caf::to_string(*other)
                  + ") until it goes away");
  forget_expired(st);
  remote_challenge reply;
  reply.nonce = detail::make_nonce();
  reply.secret_required = st.options.secret.has_value();
  if (st.options.secret)
    reply.proof = detail::make_proof(*st.options.secret, detail::prover::daemon,
                                     msg.client_nonce, msg.node);
  st.challenges.emplace(reply.nonce,
                        challenge{msg.node, sender->node(),
                                  clock_type::now() + challenge_lifetime});
  return reply;
}

caf::error check_proof(gatekeeper_state& st, const remote_attach& msg,
                       const std::string& peer) {
  if (!st.options.secret)
    return {};
  if (msg.proof.empty()) {
    detail::log().warn("refused master {} for node {}: it has no secret", peer,
                       msg.node);
    return make_error(actors_errc::auth_failed,
                      "this daemon requires a secret and the master gave "
                      "none (--secret-file)");
  }
  auto expected = detail::make_proof(*st.options.secret, detail::prover::master,
                                     msg.nonce, msg.node);
  if (!detail::same_proof(expected, msg.proof)) {
    detail::log().warn("refused master {} for node {}: wrong secret", peer,
                       msg.node);
    return make_error(actors_errc::auth_failed,
                      "the daemon refused the master's proof: wrong secret");
  }
  return {};
}

caf::result<remote_attached> on_attach(gatekeeper_ptr self,
                                       remote_attach& msg) {
  auto& st = self->state;
  auto& sender = self->current_sender();
  if (!sender)
    return refuse("an anonymous peer cannot attach a node");
  auto peer = caf::to_string(sender->node());
  // A challenge answers one attach only, from the peer it was made for.
  auto i = st.challenges.find(msg.nonce);
  if (i == st.challenges.end() || i->second.expires < clock_type::now()
      || i->second.peer != sender->node() || i->second.node != msg.node) {
    if (i != st.challenges.end())
      st.challenges.erase(i);
    return make_error(actors_errc::auth_failed,
                      "no open challenge matches this attach (expired, "
                      "used, or made for another node)");
  }
  st.challenges.erase(i);
  if (!msg.declined.empty()) {
    detail::log().warn("master {} declined to attach node {}: {}", peer,
                       msg.node, msg.declined);
    return make_error(actors_errc::auth_failed, "declined: " + msg.declined);
  }
  if (auto err = check_proof(st, msg, peer))
    return err;
  if (auto other = other_master(st, sender->node()))
    return refuse("this daemon serves another master (" + caf::to_string(*other)
                  + ") until it goes away");
  auto& attached = *st.attached;
  // The same master attaching a node again (it reconnected) replaces it.
  if (auto old = attached.find(msg.node); old != attached.end()) {
    self->demonitor(old->second.master_actor);
    drop(old->second);
    attached.erase(old);
  }
  attachment x;
  x.master = sender->node();
  x.master_actor = sender->address();
  auto ws = std::make_shared<workspace>();
  x.node
    = spawn_node(self->system(), msg.node, ws, st.ops, st.options.task_timeout,
                 st.pool, st.options.faults, st.hub);
  x.persistence = spawn_persistence(self->system(), msg.node, ws, st.root,
                                    st.options.faults);
  if (!x.persistence) {
    caf::anon_send_exit(x.node, caf::exit_reason::user_shutdown);
    detail::log().warn("node {}: no thread for its persistence actor",
                       msg.node);
    return make_error(actors_errc::rejected,
                      "node " + msg.node
                        + " could not be started on the daemon: no thread "
                          "for its persistence actor");
  }
  node_gate_config gate_cfg;
  gate_cfg.node = msg.node;
  gate_cfg.node_host = x.node;
  gate_cfg.persistence = x.persistence;
  gate_cfg.master = x.master;
  gate_cfg.ops = st.ops;
  gate_cfg.limits.max_tensor_bytes = st.options.max_tensor_bytes;
  gate_cfg.file_root = st.root;
  gate_cfg.faults = st.options.faults;
  gate_cfg.pool = st.pool;
  x.gate = spawn_node_gate(self->system(), std::move(gate_cfg));
  self->monitor(sender);
  auto gate = x.gate;
  attached.emplace(msg.node, std::move(x));
  detail::log().info("node {} attached for master {}", msg.node, peer);
  return remote_attached{gate, st.options.max_tensor_bytes, st.hub->endpoint()};
}

void on_master_down(gatekeeper_ptr self, const caf::down_msg& dm) {
  auto& attached = *self->state.attached;
  for (auto i = attached.begin(); i != attached.end();) {
    if (i->second.master_actor != dm.source) {
      ++i;
      continue;
    }
    detail::log().info("the master of node {} is gone ({}); node dropped",
                       i->first, caf::to_string(dm.reason));
    drop(i->second);
    i = attached.erase(i);
  }
}

caf::behavior gatekeeper(gatekeeper_ptr self, node_server_options options,
                         std::string root,
                         std::shared_ptr<const op_registry> ops,
                         std::shared_ptr<worker_pool> pool,
                         std::shared_ptr<exchange_hub> hub) {
  auto& st = self->state;
  st.options = std::move(options);
  st.root = std::move(root);
  st.ops = std::move(ops);
  st.pool = std::move(pool);
  st.hub = std::move(hub);
  st.attached = std::make_shared<std::map<std::string, attachment>>();
  self->attach_functor([self, attached = st.attached](const caf::error&) {
    for (auto& [name, x] : *attached) {
      // CAF 0.17 would otherwise notify this (destroyed) actor when the
      // middleman drops the master's proxy at shutdown, and crash.
      self->demonitor(x.master_actor);
      drop(x);
    }
    attached->clear();
  });
  self->set_down_handler([self](caf::down_msg& dm) {
    on_master_down(self, dm);
  });
  return {
    [self](remote_hello& msg) {
      return on_hello(self, msg);
    },
    [self](remote_attach& msg) {
      return on_attach(self, msg);
    },
  };
}

caf::expected<std::string> make_root(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(actors_errc::invalid_argument,
                      "checkpoint root " + dir + ": " + ec.message());
  auto absolute = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(absolute))
    return make_error(actors_errc::invalid_argument,
                      "checkpoint root " + dir + " is not a directory");
  return absolute.string();
}

// Keeps the connection this daemon opened to another daemon watched:
// `linked` once, then `unlinked` when the connection (the other daemon's
// gatekeeper, reached over it) is gone; ends with `owner` (the exchange's
// endpoint) too, so that a daemon stopped within a process that goes on
// leaves no watch behind.
void watch_link(caf::actor_system& sys, caf::actor gate, caf::actor owner,
                std::function<void(const caf::node_id&)> linked,
                std::function<void(const caf::node_id&)> unlinked) {
  // The handles go in as arguments, not captures: CAF 0.17 dereferences a
  // null pointer to spawn a function actor without arguments (UBSan).
  auto body = [linked, unlinked](caf::event_based_actor* self, caf::actor gate,
                                 caf::actor owner) -> caf::behavior {
    auto node = gate.node();
    self->set_down_handler(
      [self, node, unlinked, gate = gate.address()](caf::down_msg& dm) {
        if (dm.source == gate)
          unlinked(node);
        self->quit();
      });
    self->monitor(gate);
    self->monitor(owner);
    linked(node);
    // A behavior keeps the actor, and so the watch, alive until a down.
    return {[gate](exchange_link_atom) {
      // nothing to do: announcements go to the exchange, not here
    }};
  };
  sys.spawn<caf::hidden>(body, std::move(gate), std::move(owner));
}

// How the daemon's exchange connects to another daemon: as a master
// connects to a daemon, over TLS or through the admission handshake with
// the daemon's own secret (the daemons of one job share it).
auto peer_connector(caf::actor_system& sys,
                    const node_server_options& options) {
  return [&sys, secret = options.secret, timeout = options.admission_timeout](
           const std::string& host, uint16_t port, const caf::actor& owner,
           std::function<void(const caf::node_id&)> linked,
           std::function<void(const caf::node_id&)> unlinked) {
    auto address = node_address{host, port}.str();
    connect_actor_async(
      sys, host, port, timeout, secret,
      [&sys, address, owner, linked, unlinked](caf::expected<caf::actor> gate) {
        if (!gate) {
          detail::log().info("exchange: no connection of its own to the "
                             "daemon at {} ({}); messages to it go through "
                             "the master",
                             address, caf::to_string(gate.error()));
          unlinked({});
          return;
        }
        watch_link(sys, std::move(*gate), owner, linked, unlinked);
      });
  };
}

} // namespace

node_server::node_server(caf::actor_system& sys, caf::actor gatekeeper,
                         uint16_t port, std::string root,
                         std::shared_ptr<fault_injector> faults,
                         std::shared_ptr<worker_pool> pool,
                         std::shared_ptr<exchange_hub> hub)
  : sys_(sys), gatekeeper_(std::move(gatekeeper)), port_(port),
    root_(std::move(root)), faults_(std::move(faults)), pool_(std::move(pool)),
    hub_(std::move(hub)) {
  // nop
}

caf::expected<std::unique_ptr<node_server>>
node_server::start(caf::actor_system& sys,
                   std::shared_ptr<const op_registry> ops,
                   node_server_options options) {
  if (!sys.has_middleman())
    return make_error(actors_errc::invalid_argument,
                      "a node daemon needs CAF's middleman "
                      "(configure_network)");
  if (!is_loopback(options.host) && !options.secret && !uses_tls(sys))
    return make_error(actors_errc::invalid_argument,
                      "refusing to listen on " + options.host
                        + " without a secret or TLS: any host could run "
                          "code here (give --secret-file or --tls-*, or "
                          "listen on 127.0.0.1)");
  auto root = make_root(options.checkpoint_root);
  if (!root)
    return std::move(root.error());
  auto made = worker_pool::make({options.worker_threads});
  if (!made)
    return std::move(made.error());
  std::shared_ptr<worker_pool> pool = std::move(*made);
  auto host = options.host;
  auto port = options.port;
  admission_options admission;
  admission.secret = options.secret;
  admission.timeout = options.admission_timeout;
  admission.max_pending_connections = options.max_pending_connections;
  admission.max_message_bytes
    = options.max_tensor_bytes + message_overhead_bytes;
  admission.faults = options.faults;
  auto faults = options.faults;
  exchange_hub_options hub_options;
  hub_options.max_tensor_bytes = options.max_tensor_bytes;
  // Messages for runs not begun here yet: a few tensors' worth, not the
  // default gigabyte, whatever the tensor limit.
  hub_options.max_early_bytes = std::min<uint64_t>(
    hub_options.max_early_bytes,
    8 * (options.max_tensor_bytes + message_overhead_bytes));
  auto silence = caf::get_or(sys.config(), "middleman.connection-timeout",
                             caf::timespan{std::chrono::seconds(5)});
  if (silence.count() > 0)
    hub_options.silence_limit
      = std::chrono::duration_cast<std::chrono::milliseconds>(silence);
  hub_options.connect_peer = peer_connector(sys, options);
  bool secret_required = options.secret.has_value(); // options move below
  auto hub = exchange_hub::make(sys, pool, hub_options);
  auto keeper = sys.spawn(gatekeeper, std::move(options), *root, std::move(ops),
                          pool, hub);
  auto bound = publish_actor(keeper, host, port, admission);
  if (!bound) {
    hub->shutdown();
    caf::anon_send_exit(keeper, caf::exit_reason::user_shutdown);
    return make_error(actors_errc::unreachable,
                      "cannot listen on " + node_address{host, port}.str()
                        + ": " + caf::to_string(bound.error()));
  }
  detail::log().info("node daemon listening on {}{}, checkpoints under {}{}",
                     node_address{host, *bound}.str(),
                     uses_tls(sys) ? " (TLS)" : "", *root,
                     secret_required ? ", secret required" : "");
  return std::unique_ptr<node_server>{
    new node_server(sys, std::move(keeper), *bound, std::move(*root),
                    std::move(faults), std::move(pool), std::move(hub))};
}

node_server::~node_server() {
  stop();
}

void node_server::stop() {
  if (!gatekeeper_)
    return;
  detail::log().info("node daemon on port {}: shutting down", port_);
  // As for a session: no thread of its nodes sleeps past the daemon.
  if (faults_)
    faults_->interrupt_delays();
  sys_.middleman().unpublish(gatekeeper_, port_);
  caf::anon_send_exit(gatekeeper_, caf::exit_reason::user_shutdown);
  gatekeeper_ = nullptr;
  // Waiting tasks are woken (and fail) before the pool drops its queue.
  hub_->shutdown();
  // Queued work is dropped; running tasks end at their next op once their
  // node, dropped with the gatekeeper, has seen its exit.
  pool_->stop();
}

} // namespace epochrt
