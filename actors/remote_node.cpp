#include "actors/remote_node.hpp"

#include <map>
#include <type_traits>

#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/response_promise.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/actors_errc.hpp"
#include "actors/configure.hpp"
#include "actors/detail/blocking_request.hpp"
#include "actors/detail/log.hpp"
#include "actors/detail/proof.hpp"
#include "actors/network.hpp"
#include "messages/manager_protocol.hpp"
#include "messages/protocol.hpp"
#include "messages/remote_protocol.hpp"
#include "runtime/runtime_errc.hpp"

namespace epochrt {

namespace {

using handshake_atom = caf::atom_constant<caf::atom("ert_shake")>;

// Requests forwarded and not answered yet: a lost connection fails them
// all, since CAF itself never would (a request to a dead remote actor waits
// for its full timeout). Shared with the exit functor, which runs after the
// actor's state is gone.
using pending_map = std::map<uint64_t, caf::response_promise>;

struct proxy_state {
  remote_node_config cfg;
  caf::actor gatekeeper;
  caf::actor gate;
  std::shared_ptr<std::atomic<bool>> lost;
  std::string lost_reason;
  uint64_t next_id = 0;
  std::shared_ptr<pending_map> pending = std::make_shared<pending_map>();
  // The gate, for the exit functor.
  std::shared_ptr<caf::actor> monitored = std::make_shared<caf::actor>();
};

using proxy_ptr = caf::stateful_actor<proxy_state>*;

std::string where(const proxy_state& st) {
  return "node " + st.cfg.name + " at " + st.cfg.address.str();
}

caf::error lost_error(const proxy_state& st) {
  return make_error(actors_errc::node_lost,
                    "lost the connection to " + where(st) + " ("
                      + st.lost_reason + ")");
}

// A remote reply's error, for a person reading it on the master.
caf::error translate(const proxy_state& st, caf::error err,
                     std::chrono::milliseconds timeout) {
  if (err == caf::sec::request_timeout)
    return make_error(actors_errc::node_lost,
                      where(st) + " did not answer within "
                        + std::to_string(timeout.count()) + " ms");
  if (err == caf::sec::request_receiver_down)
    return lost_error(st);
  return err;
}

template <class Reply>
void finish(proxy_ptr self, uint64_t id, Reply reply) {
  auto& pending = *self->state.pending;
  auto i = pending.find(id);
  if (i == pending.end())
    return;
  auto rp = std::move(i->second);
  pending.erase(i);
  rp.deliver(std::move(reply));
}

template <class Reply, class Msg>
void forward(proxy_ptr self, Msg&& msg, std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  if (*st.lost || !st.gate) {
    rp.deliver(st.gate ? lost_error(st)
                       : make_error(actors_errc::not_initialized,
                                    where(st) + " is not attached yet"));
    return;
  }
  auto id = st.next_id++;
  st.pending->emplace(id, std::move(rp));
  auto on_error = [self, id, timeout](caf::error& err) {
    finish(self, id, translate(self->state, std::move(err), timeout));
  };
  if constexpr (std::is_same_v<Reply, void>) {
    self->request(st.gate, timeout, std::forward<Msg>(msg))
      .then(
        [self, id] {
          finish(self, id, caf::make_message());
        },
        on_error);
  } else {
    self->request(st.gate, timeout, std::forward<Msg>(msg))
      .then(
        [self, id](Reply& reply) {
          finish(self, id, caf::make_message(std::move(reply)));
        },
        on_error);
  }
}

void connection_lost(proxy_ptr self, const caf::error& reason) {
  auto& st = self->state;
  if (*st.lost)
    return;
  if (reason == caf::exit_reason::remote_link_unreachable)
    st.lost_reason = "its process is gone or stopped answering heartbeats";
  else
    st.lost_reason = reason ? describe_error(reason) : "the daemon went away";
  st.lost->store(true);
  detail::log().error("lost the connection to {}: {}", where(st),
                      st.lost_reason);
  auto pending = std::move(*st.pending);
  st.pending->clear();
  for (auto& [id, rp] : pending)
    rp.deliver(lost_error(st));
}

caf::error check_challenge(const proxy_state& st, const remote_challenge& ch,
                           const std::vector<char>& client_nonce) {
  auto& secret = st.cfg.secret;
  if (ch.secret_required && !secret)
    return make_error(actors_errc::auth_failed,
                      where(st)
                        + " requires a secret and this master has none "
                          "(--secret-file)");
  if (!ch.secret_required && secret)
    return make_error(actors_errc::auth_failed,
                      where(st)
                        + " has no secret, so it cannot prove it is the "
                          "daemon this master shares its secret with");
  if (secret
      && !detail::same_proof(detail::make_proof(*secret, detail::prover::daemon,
                                                client_nonce, st.cfg.name),
                             ch.proof))
    return make_error(actors_errc::auth_failed,
                      where(st)
                        + " does not know this master's secret (wrong "
                          "secret)");
  return {};
}

// hello -> challenge -> attach -> attached, then the proxy forwards.
void handshake(proxy_ptr self, caf::response_promise rp) {
  auto& st = self->state;
  auto timeout = st.cfg.handshake_timeout;
  auto nonce = detail::make_nonce();
  auto fail = [self, rp](caf::error err) mutable {
    rp.deliver(std::move(err));
    self->quit();
  };
  self
    ->request(st.gatekeeper, timeout,
              remote_hello{remote_protocol_version, st.cfg.name, nonce})
    .then(
      [self, rp, fail, nonce, timeout](remote_challenge& ch) mutable {
        auto& st = self->state;
        if (auto err = check_challenge(st, ch, nonce)) {
          // Tell the daemon why, so that its log shows the failure too;
          // no proof of ours goes to a daemon we do not trust.
          self->send(st.gatekeeper,
                     remote_attach{st.cfg.name, ch.nonce, {}, error_text(err)});
          fail(std::move(err));
          return;
        }
        remote_attach attach{st.cfg.name, ch.nonce, {}, {}};
        if (st.cfg.secret)
          attach.proof = detail::make_proof(
            *st.cfg.secret, detail::prover::master, ch.nonce, st.cfg.name);
        self->request(st.gatekeeper, timeout, std::move(attach))
          .then(
            [self, rp](remote_attached& attached) mutable {
              auto& st = self->state;
              st.gate = attached.gate;
              *st.monitored = st.gate;
              self->monitor(st.gate);
              detail::log().info("attached {}", where(st));
              rp.deliver(caf::unit);
            },
            [self, fail, timeout](caf::error& err) mutable {
              fail(translate(self->state, std::move(err), timeout));
            });
      },
      [self, fail, timeout](caf::error& err) mutable {
        fail(translate(self->state, std::move(err), timeout));
      });
}

caf::behavior proxy(proxy_ptr self, remote_node_config cfg,
                    caf::actor gatekeeper,
                    std::shared_ptr<std::atomic<bool>> lost) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.gatekeeper = std::move(gatekeeper);
  st.lost = std::move(lost);
  self->set_down_handler([self](caf::down_msg& dm) {
    if (dm.source == self->state.gate.address())
      connection_lost(self, dm.reason);
  });
  // Stopped with requests in flight (the session is destroyed): their
  // senders are told rather than left waiting.
  self->attach_functor([self, pending = st.pending, gate = st.monitored,
                        name = where(st)](const caf::error&) {
    // CAF 0.17 would otherwise notify this (destroyed) actor when the
    // middleman drops the gate's proxy at shutdown.
    if (*gate)
      self->demonitor(*gate);
    for (auto& [id, rp] : *pending)
      rp.deliver(
        make_error(actors_errc::node_lost, name + ": the session ended"));
    pending->clear();
  });
  auto t = st.cfg.timeouts;
  return {
    [self](handshake_atom) {
      handshake(self, self->make_response_promise());
    },
    [self, t](run_tasks& msg) {
      forward<tasks_done>(self, std::move(msg), t.group_timeout);
    },
    [self, t](fetch_blobs& msg) {
      forward<blob_values>(self, std::move(msg), t.request_timeout);
    },
    [self, t](put_blobs& msg) {
      forward<void>(self, std::move(msg), t.request_timeout);
    },
    [self, t](cancel_tasks& msg) {
      forward<void>(self, std::move(msg), t.request_timeout);
    },
    [self, t](reset_workspace& msg) {
      forward<void>(self, std::move(msg), t.request_timeout);
    },
    [self, t](save_checkpoint& msg) {
      forward<checkpoint_stats>(self, std::move(msg), t.checkpoint_timeout);
    },
    [self, t](load_checkpoint& msg) {
      forward<checkpoint_stats>(self, std::move(msg), t.checkpoint_timeout);
    },
    [self, t](init_checkpoint& msg) {
      forward<blob_names>(self, std::move(msg), t.checkpoint_timeout);
    },
    [self, t](check_checkpoint& msg) {
      forward<checkpoint_status>(self, std::move(msg), t.checkpoint_timeout);
    },
    [self, t](begin_save& msg) {
      forward<ckpt_epoch>(self, std::move(msg), t.checkpoint_timeout);
    },
    [self, t](end_save& msg) {
      forward<checkpoint_stats>(self, std::move(msg), t.checkpoint_timeout);
    },
    [self, t](read_checkpoint& msg) {
      forward<blob_values>(self, std::move(msg), t.checkpoint_timeout);
    },
  };
}

// What a failed connection attempt most likely means, for a person.
std::string why_unreachable(caf::actor_system& sys, const caf::error& err,
                            const remote_node_config& cfg) {
  if (err == caf::sec::cannot_connect_to_node)
    return uses_tls(sys) ? "no daemon listens there, or it does not use TLS"
                         : "no daemon listens there";
  if (err == caf::sec::request_timeout || err == caf::sec::connection_timeout)
    return "it accepted the connection but did not answer within "
      + std::to_string(cfg.handshake_timeout.count())
      + " ms (a frozen process, or not an epochrt node daemon)";
  if (err == caf::sec::disconnect_during_handshake)
    return uses_tls(sys)
      ? "it closed the connection during the handshake (it does not "
        "use TLS, or it refused this master's certificate)"
      : "it closed the connection during the handshake (is TLS on "
        "for one side only, or was its certificate refused?)";
  return describe_error(err);
}

} // namespace

caf::expected<remote_node> connect_remote_node(caf::actor_system& sys,
                                               const remote_node_config& cfg) {
  if (!sys.has_middleman())
    return make_error(actors_errc::invalid_argument,
                      "remote nodes need CAF's middleman "
                      "(configure_network)");
  auto gatekeeper = connect_actor(sys, cfg.address.host, cfg.address.port,
                                  cfg.handshake_timeout, cfg.secret);
  if (!gatekeeper && gatekeeper.error().category() == actors_category
      && gatekeeper.error().code()
        == static_cast<uint8_t>(actors_errc::auth_failed))
    return make_error(actors_errc::auth_failed,
                      "node " + cfg.name + " at " + cfg.address.str() + ": "
                        + error_text(gatekeeper.error()));
  if (!gatekeeper)
    return make_error(actors_errc::unreachable,
                      "cannot reach node " + cfg.name + " at "
                        + cfg.address.str() + ": "
                        + why_unreachable(sys, gatekeeper.error(), cfg));
  auto lost = std::make_shared<std::atomic<bool>>(false);
  auto actor = sys.spawn(proxy, cfg, std::move(*gatekeeper), lost);
  auto shaken = detail::blocking_request<caf::unit_t>(
    sys, actor, cfg.handshake_timeout * 2 + std::chrono::seconds(1),
    handshake_atom::value);
  if (!shaken) {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    return std::move(shaken.error());
  }
  return remote_node{std::move(actor), std::move(lost)};
}

} // namespace epochrt
