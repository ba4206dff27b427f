#include <epochrt/actors/remote/gatekeeper_actor.hpp>

#include <chrono>
#include <map>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/core/node_actor.hpp>
#include <epochrt/actors/core/persistence_actor.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/remote/node_gate_actor.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
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
  gatekeeper_config cfg;
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
  reply.secret_required = st.cfg.secret.has_value();
  if (st.cfg.secret)
    reply.proof = detail::make_proof(*st.cfg.secret, detail::prover::daemon,
                                     msg.client_nonce, msg.node);
  st.challenges.emplace(reply.nonce,
                        challenge{msg.node, sender->node(),
                                  clock_type::now() + challenge_lifetime});
  return reply;
}

caf::error check_proof(gatekeeper_ptr self, const remote_attach& msg,
                       const std::string& peer) {
  auto& st = self->state;
  if (!st.cfg.secret)
    return {};
  if (msg.proof.empty()) {
    detail::log(self->system())
      .warn("refused master {} for node {}: it has no secret", peer, msg.node);
    return make_error(actors_errc::auth_failed,
                      "this daemon requires a secret and the master gave "
                      "none (--secret-file)");
  }
  auto expected = detail::make_proof(*st.cfg.secret, detail::prover::master,
                                     msg.nonce, msg.node);
  if (!detail::same_proof(expected, msg.proof)) {
    detail::log(self->system())
      .warn("refused master {} for node {}: wrong secret", peer, msg.node);
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
    detail::log(self->system())
      .warn("master {} declined to attach node {}: {}", peer, msg.node,
            msg.declined);
    return make_error(actors_errc::auth_failed, "declined: " + msg.declined);
  }
  if (auto err = check_proof(self, msg, peer))
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
    = spawn_node(self->system(), msg.node, ws, st.cfg.ops, st.cfg.task_timeout,
                 st.cfg.pool, st.cfg.faults, st.cfg.hub);
  x.persistence
    = spawn_persistence(self->system(), msg.node, ws, st.cfg.root,
                        st.cfg.faults, st.cfg.find_store, st.cfg.streams);
  if (!x.persistence) {
    caf::anon_send_exit(x.node, caf::exit_reason::user_shutdown);
    detail::log(self->system())
      .warn("node {}: no thread for its persistence actor", msg.node);
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
  gate_cfg.ops = st.cfg.ops;
  gate_cfg.limits.max_tensor_bytes = st.cfg.max_tensor_bytes;
  gate_cfg.file_root = st.cfg.root;
  gate_cfg.faults = st.cfg.faults;
  gate_cfg.pool = st.cfg.pool;
  x.gate = spawn_node_gate(self->system(), std::move(gate_cfg));
  self->monitor(sender);
  auto gate = x.gate;
  attached.emplace(msg.node, std::move(x));
  detail::log(self->system())
    .info("node {} attached for master {}", msg.node, peer);
  return remote_attached{gate, st.cfg.max_tensor_bytes, st.cfg.hub->endpoint()};
}

void on_master_down(gatekeeper_ptr self, const caf::down_msg& dm) {
  auto& attached = *self->state.attached;
  for (auto i = attached.begin(); i != attached.end();) {
    if (i->second.master_actor != dm.source) {
      ++i;
      continue;
    }
    detail::log(self->system())
      .info("the master of node {} is gone ({}); node dropped", i->first,
            caf::to_string(dm.reason));
    drop(i->second);
    i = attached.erase(i);
  }
}

caf::behavior gatekeeper(gatekeeper_ptr self, gatekeeper_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
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
    [self](replica_store_atom) {
      return self->state.cfg.store;
    },
  };
}

} // namespace

caf::actor spawn_gatekeeper(caf::actor_system& sys, gatekeeper_config cfg) {
  return sys.spawn(gatekeeper, std::move(cfg));
}

} // namespace epochrt
