#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/actors/remote/remote_node_actor.hpp>

#include <functional>
#include <map>
#include <thread>
#include <type_traits>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/response_promise.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/detail/epoch_of.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

using handshake_atom = caf::atom_constant<caf::atom("ert_shake")>;

// A fault's timer fired: run the deferred action with this key.
using deferred_atom = caf::atom_constant<caf::atom("ert_defer")>;

using steady = std::chrono::steady_clock;

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
  // Fault plan: the injector (owned by cfg.timeouts.faults), the link's
  // state shared with later connections, how long a silent connection
  // lasts, and the actions waiting for their timer.
  fault_injector* faults = nullptr;
  std::shared_ptr<remote_link_faults> link;
  std::chrono::milliseconds silence_limit{0};
  uint64_t next_deferred = 0;
  std::map<uint64_t, std::function<void()>> deferred;
  // By group, the key of the plan the daemon keeps (run_tasks::plan_key),
  // whether a run sent with it whole has succeeded (only then is the plan
  // surely kept, and no run sent whole may still be on its way, which one
  // sent as a key could overtake), and the runs sent with the key alone
  // since. Any error forgets them all.
  struct kept_plan {
    uint64_t key = 0;
    bool confirmed = false;
    uint32_t runs = 0;
  };
  std::map<std::string, kept_plan> kept_plans;
  // Requests that carry a plan whole: their group and key.
  std::map<uint64_t, std::pair<std::string, uint64_t>> whole_plans;
};

// A kept plan is sent whole again after this many runs: a plan whose
// handles to other daemons CAF purged when a link closed still works (the
// daemon sends through the relay then, exchange_routes), but goes direct
// again only once it comes anew.
constexpr uint32_t plan_resent_after_runs = 64;

// What the proxy takes: a node's and a persistence actor's requests, and
// what it sends itself (the handshake, from connect_remote_node; the
// timers of a fault plan's actions).
using proxy_actor = node_and_persistence_actor::extend<
  caf::replies_to<handshake_atom>::with<caf::actor>,
  caf::reacts_to<deferred_atom, uint64_t>>;

using proxy_ptr = proxy_actor::stateful_pointer<proxy_state>;

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
  auto& st = self->state;
  if constexpr (std::is_same_v<Reply, caf::error>) {
    st.kept_plans.clear();
  } else if (auto i = st.whole_plans.find(id); i != st.whole_plans.end()) {
    auto& kept = st.kept_plans[i->second.first];
    if (kept.key == i->second.second)
      kept.confirmed = true;
  }
  st.whole_plans.erase(id);
  auto& pending = *self->state.pending;
  auto i = pending.find(id);
  if (i == pending.end())
    return;
  auto rp = std::move(i->second);
  pending.erase(i);
  rp.deliver(std::move(reply));
}

// The plan of `msg` as its key alone when the daemon surely keeps it.
// Returns whether `msg` carries a plan whole that the daemon will keep.
bool strip_kept_plan(proxy_state& st, run_tasks& msg) {
  if (msg.plan_key == 0 || msg.plan.empty())
    return false;
  auto& kept = st.kept_plans[msg.group];
  if (kept.key == msg.plan_key && kept.confirmed
      && kept.runs < plan_resent_after_runs) {
    ++kept.runs;
    msg.plan = {};
    return false;
  }
  kept = {msg.plan_key, false, 0};
  return true;
}

void connection_lost(proxy_ptr self, const caf::error& reason) {
  auto& st = self->state;
  if (*st.lost)
    return;
  if (reason == caf::exit_reason::remote_link_unreachable)
    st.lost_reason = "its process is gone or stopped answering heartbeats";
  else if (in_category(reason, fault_category))
    st.lost_reason = error_text(reason); // Names the fault and its point.
  else
    st.lost_reason = reason ? coded_error_text(reason) : "the daemon went away";
  st.lost->store(true);
  detail::log(self->system())
    .error("lost the connection to {}: {}", where(st), st.lost_reason);
  auto pending = std::move(*st.pending);
  st.pending->clear();
  for (auto& [id, rp] : pending)
    rp.deliver(lost_error(st));
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           steady::now().time_since_epoch())
    .count();
}

// Nothing passes between the node and the master: frozen, or partitioned.
bool cut_off(const remote_link_faults& link) {
  return link.frozen.load() || link.partitioned_until.load() > now_ns();
}

// Runs `fn` in this actor after `delay`: a timer, never a sleep.
void defer(proxy_ptr self, std::chrono::milliseconds delay,
           std::function<void()> fn) {
  auto& st = self->state;
  auto key = st.next_deferred++;
  st.deferred.emplace(key, std::move(fn));
  self->delayed_send(self, delay, deferred_atom::value, key);
}

// The connection is lost after `delay` unless it was already, for `why`.
void lose_connection_after(proxy_ptr self, std::chrono::milliseconds delay,
                           std::string why) {
  defer(self, delay, [self, why = std::move(why)] {
    connection_lost(self, make_error(fault_errc::injected, why));
  });
}

// A message of request `id` was lost. TCP loses no message without the
// stream breaking, so this ends as a silent connection does: the node is
// lost once CAF would have noticed (the connection timeout), or when the
// request would have timed out, whichever comes first — never later.
void lose(proxy_ptr self, uint64_t id, std::chrono::milliseconds timeout,
          std::string why) {
  auto& st = self->state;
  auto delay = std::min(timeout, st.silence_limit);
  detail::log(self->system())
    .warn("{}: a message was lost ({}); the node is lost in {} ms "
          "unless it answers",
          where(st), why, delay.count());
  defer(self, delay, [self, id, why = std::move(why)] {
    if (self->state.pending->count(id) > 0)
      connection_lost(
        self, make_error(fault_errc::injected, "a message was lost: " + why));
  });
}

std::string lost_to_link(const proxy_state& st) {
  return st.link->frozen.load()
    ? std::string{"the node is frozen"}
    : std::string{"the node is partitioned from the master"};
}

// Carries out a fault that strikes a message at `point` and is not about
// the message's timing (delay, duplicate are the caller's). True when the
// message is gone.
bool strike_message(proxy_ptr self, fault_point point, const fault_site& site,
                    const fault_action& action, uint64_t id,
                    std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto why = error_text(injected_error(point, site, action));
  switch (action.kind) {
    case fault_kind::drop:
      lose(self, id, timeout, std::move(why));
      return true;
    case fault_kind::partition: {
      auto until = now_ns()
        + std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::milliseconds{action.ms})
            .count();
      if (until > st.link->partitioned_until.load())
        st.link->partitioned_until.store(until);
      // As CAF's heartbeats would: a window at least as long as the
      // connection timeout loses the node even when no message tried.
      if (std::chrono::milliseconds{action.ms} >= st.silence_limit)
        lose_connection_after(self, st.silence_limit, why);
      lose(self, id, timeout, std::move(why));
      return true;
    }
    case fault_kind::freeze_node:
      st.link->frozen.store(true);
      lose_connection_after(self, st.silence_limit, why);
      lose(self, id, timeout, std::move(why));
      return true;
    case fault_kind::kill_node: {
      // The daemon's gate stops its node's actors with this reason and
      // goes on serving; the master loses the node now rather than when
      // the gate's down message comes back.
      auto reason = make_error(fault_errc::injected, why);
      self->send_exit(st.gate, reason);
      connection_lost(self, reason);
      return true;
    }
    default:
      return false;
  }
}

// A reply (or the daemon's error) for request `id` arrived; `deliver` hands
// it to the requester.
void arrived(proxy_ptr self, uint64_t id, fault_site site,
             std::chrono::milliseconds timeout, std::function<void()> deliver) {
  auto& st = self->state;
  if (st.pending->count(id) == 0)
    return;
  if (st.faults != nullptr && cut_off(*st.link)) {
    lose(self, id, timeout,
         "a reply of " + std::string{site.detail} + " arrived while "
           + lost_to_link(st));
    return;
  }
  auto action = strike(st.faults, fault_point::remote_receive, site);
  if (strike_message(self, fault_point::remote_receive, site, action, id,
                     timeout))
    return;
  if (action.kind == fault_kind::delay) {
    defer(self, std::chrono::milliseconds{action.ms}, std::move(deliver));
    return;
  }
  deliver();
  // The second delivery finds the request answered and does nothing.
  if (action.kind == fault_kind::duplicate)
    deliver();
}

// Forwards `msg` to the gate; the returned promise is the requester's,
// answered by `finish` or `connection_lost`. `Reply` is the request's reply
// type, void for none.
template <class Reply, class Msg>
caf::response_promise forward(proxy_ptr self, std::string_view type, Msg&& msg,
                              std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  if (*st.lost || !st.gate) {
    rp.deliver(st.gate ? lost_error(st)
                       : make_error(actors_errc::not_initialized,
                                    where(st) + " is not attached yet"));
    return rp;
  }
  auto id = st.next_id++;
  st.pending->emplace(id, rp);
  fault_site site{st.cfg.name, detail::epoch_of(msg), type};
  if (st.faults != nullptr && cut_off(*st.link)) {
    lose(self, id, timeout,
         std::string{type} + " was sent while " + lost_to_link(st));
    return rp;
  }
  auto action = strike(st.faults, fault_point::remote_send, site);
  if (strike_message(self, fault_point::remote_send, site, action, id, timeout))
    return rp;
  auto send = [self, id, timeout, site,
               twice = action.kind == fault_kind::duplicate,
               msg = std::forward<Msg>(msg)]() mutable {
    auto& st = self->state;
    if (st.pending->count(id) == 0)
      return;
    auto on_error = [self, id, site, timeout](caf::error& err) {
      // Only the daemon's errors arrive; a timeout or a dead receiver is
      // this process's own verdict.
      if (err == caf::sec::request_timeout
          || err == caf::sec::request_receiver_down) {
        finish(self, id, translate(self->state, std::move(err), timeout));
        return;
      }
      arrived(self, id, site, timeout, [self, id, err] {
        finish(self, id, err);
      });
    };
    // Only a duplicate needs the request again: the others move it, and
    // a tensor travels without a copy.
    auto handle = twice ? self->request(st.gate, timeout, msg)
                        : self->request(st.gate, timeout, std::move(msg));
    auto mid = handle.id();
    if constexpr (std::is_same_v<Reply, void>) {
      handle.then(
        [self, id, site, timeout] {
          arrived(self, id, site, timeout, [self, id] {
            finish(self, id, caf::make_message());
          });
        },
        on_error);
    } else {
      handle.then(
        [self, id, site, timeout](Reply& reply) {
          if (self->state.faults == nullptr) {
            // No plan: the reply goes on as it is, without a copy.
            finish(self, id, caf::make_message(std::move(reply)));
            return;
          }
          arrived(self, id, site, timeout,
                  [self, id, reply = std::move(reply)] {
                    finish(self, id, caf::make_message(reply));
                  });
        },
        on_error);
    }
    // The same request again, under the same id, bit for bit (its
    // priority too): what a retransmission would put on the wire. Its
    // reply, if the daemon sent one, would find no handler and be
    // dropped.
    if (twice)
      caf::actor_cast<caf::abstract_actor*>(st.gate)->eq_impl(
        caf::message_id{mid.integer_value()
                        & ~caf::message_id::response_flag_mask},
        caf::strong_actor_ptr{self->ctrl()}, self->context(), std::move(msg));
  };
  if (action.kind == fault_kind::delay)
    defer(self, std::chrono::milliseconds{action.ms}, std::move(send));
  else
    send();
  return rp;
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
          // (A typed actor may send() only to typed ones; the gatekeeper is
          // not, and it needs to know who declines.)
          caf::send_as(
            caf::actor_cast<caf::actor>(self), st.gatekeeper,
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
              detail::log(self->system()).info("attached {}", where(st));
              rp.deliver(std::move(attached.exchange));
            },
            [self, fail, timeout](caf::error& err) mutable {
              fail(translate(self->state, std::move(err), timeout));
            });
      },
      [self, fail, timeout](caf::error& err) mutable {
        fail(translate(self->state, std::move(err), timeout));
      });
}

proxy_actor::behavior_type proxy(proxy_ptr self, remote_node_config cfg,
                                 caf::actor gatekeeper,
                                 std::shared_ptr<std::atomic<bool>> lost) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.gatekeeper = std::move(gatekeeper);
  st.lost = std::move(lost);
  st.faults = st.cfg.timeouts.faults.get();
  st.link = st.cfg.link;
  // What CAF waits before it declares a silent connection lost; without
  // heartbeats, the handshake's limit stands in for it.
  st.silence_limit = std::chrono::duration_cast<std::chrono::milliseconds>(
    caf::get_or(self->system().config(), "middleman.connection-timeout",
                caf::timespan{st.cfg.handshake_timeout}));
  if (st.silence_limit.count() <= 0)
    st.silence_limit = st.cfg.handshake_timeout;
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
    [self](handshake_atom) -> caf::result<caf::actor> {
      auto rp = self->make_response_promise();
      handshake(self, rp);
      return rp;
    },
    [self](deferred_atom, uint64_t key) {
      auto& deferred = self->state.deferred;
      auto i = deferred.find(key);
      if (i == deferred.end())
        return;
      auto fn = std::move(i->second);
      deferred.erase(i);
      fn();
    },
    [self, t](run_tasks& msg) -> caf::result<tasks_done> {
      auto& st = self->state;
      auto id = st.next_id; // forward's, if it sends
      if (strip_kept_plan(st, msg))
        st.whole_plans[id] = {msg.group, msg.plan_key};
      auto rp = forward<tasks_done>(self, "run_tasks", std::move(msg),
                                    t.group_timeout);
      if (st.next_id == id)
        st.whole_plans.erase(id); // refused before it was sent
      return rp;
    },
    [self, t](exchange_end& msg) -> caf::result<exchange_report> {
      return forward<exchange_report>(self, "exchange_end", std::move(msg),
                                      t.request_timeout);
    },
    [self, t](fetch_blobs& msg) -> caf::result<blob_values> {
      return forward<blob_values>(self, "fetch_blobs", std::move(msg),
                                  t.request_timeout);
    },
    [self, t](put_blobs& msg) -> caf::result<void> {
      return forward<void>(self, "put_blobs", std::move(msg),
                           t.request_timeout);
    },
    [self, t](cancel_tasks& msg) -> caf::result<void> {
      return forward<void>(self, "cancel_tasks", std::move(msg),
                           t.request_timeout);
    },
    [self, t](reset_workspace& msg) -> caf::result<void> {
      return forward<void>(self, "reset_workspace", std::move(msg),
                           t.request_timeout);
    },
    [self, t](check_ops& msg) -> caf::result<void> {
      return forward<void>(self, "check_ops", std::move(msg),
                           t.request_timeout);
    },
    [self, t](load_checkpoint& msg) -> caf::result<checkpoint_stats> {
      return forward<checkpoint_stats>(self, "load_checkpoint", std::move(msg),
                                       t.checkpoint_timeout);
    },
    [self, t](init_checkpoint& msg) -> caf::result<blob_names> {
      return forward<blob_names>(self, "init_checkpoint", std::move(msg),
                                 t.checkpoint_timeout);
    },
    [self, t](check_checkpoint& msg) -> caf::result<checkpoint_status> {
      return forward<checkpoint_status>(self, "check_checkpoint",
                                        std::move(msg), t.checkpoint_timeout);
    },
    [self, t](begin_save& msg) -> caf::result<snapshot_taken> {
      return forward<snapshot_taken>(self, "begin_save", std::move(msg),
                                     t.checkpoint_timeout);
    },
    [self, t](end_save& msg) -> caf::result<checkpoint_stats> {
      return forward<checkpoint_stats>(self, "end_save", std::move(msg),
                                       t.checkpoint_timeout);
    },
    [self, t](read_checkpoint& msg) -> caf::result<blob_values> {
      return forward<blob_values>(self, "read_checkpoint", std::move(msg),
                                  t.checkpoint_timeout);
    },
    [self, t](prune_checkpoints& msg) -> caf::result<pruned_checkpoints> {
      return forward<pruned_checkpoints>(self, "prune_checkpoints",
                                         std::move(msg), t.checkpoint_timeout);
    },
    [self, t](keep_commit_record& msg) -> caf::result<void> {
      return forward<void>(self, "keep_commit_record", std::move(msg),
                           t.checkpoint_timeout);
    },
    [self, t](fetch_commit_record& msg) -> caf::result<checkpoint_metadata> {
      return forward<checkpoint_metadata>(self, "fetch_commit_record",
                                          std::move(msg), t.checkpoint_timeout);
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
  return coded_error_text(err);
}

} // namespace

caf::expected<remote_node> connect_remote_node(caf::actor_system& sys,
                                               const remote_node_config& cfg) {
  if (!sys.has_middleman())
    return make_error(actors_errc::invalid_argument,
                      "remote nodes need CAF's middleman "
                      "(configure_network)");
  auto link = cfg.link ? cfg.link : std::make_shared<remote_link_faults>();
  // A host thread: a delay may sleep here.
  fault_action action;
  if (auto err
      = strike_blocking(cfg.timeouts.faults.get(), fault_point::remote_attach,
                        fault_site{cfg.name, -1, {}}, action))
    return err;
  if (cut_off(*link))
    return make_error(
      actors_errc::unreachable,
      "cannot reach node " + cfg.name + " at " + cfg.address.str() + ": "
        + (link->frozen.load() ? "it is frozen (fault plan)"
                               : "it is partitioned from the master (fault "
                                 "plan)"));
  auto gatekeeper = connect_actor(sys, cfg.address.host, cfg.address.port,
                                  cfg.handshake_timeout, cfg.secret);
  if (!gatekeeper && is_error(gatekeeper.error(), actors_errc::auth_failed))
    return make_error(actors_errc::auth_failed,
                      "node " + cfg.name + " at " + cfg.address.str() + ": "
                        + error_text(gatekeeper.error()));
  if (!gatekeeper)
    return make_error(actors_errc::unreachable,
                      "cannot reach node " + cfg.name + " at "
                        + cfg.address.str() + ": "
                        + why_unreachable(sys, gatekeeper.error(), cfg));
  auto lost = std::make_shared<std::atomic<bool>>(false);
  auto proxy_cfg = cfg;
  proxy_cfg.link = std::move(link);
  auto actor
    = sys.spawn(proxy, std::move(proxy_cfg), std::move(*gatekeeper), lost);
  auto shaken = detail::blocking_request<caf::actor>(
    sys, actor, cfg.handshake_timeout * 2 + std::chrono::seconds(1),
    handshake_atom::value);
  if (!shaken) {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    return std::move(shaken.error());
  }
  return remote_node{std::move(actor), std::move(lost), std::move(*shaken)};
}

} // namespace epochrt
