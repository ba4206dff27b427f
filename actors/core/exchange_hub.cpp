#include <epochrt/actors/core/exchange_hub.hpp>

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/core/exchange_endpoint_actor.hpp>
#include <epochrt/actors/core/exchange_run.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>

namespace epochrt {

namespace {

// Runs remembered as ended, to drop their late messages.
constexpr size_t remembered_runs = 1024;

} // namespace

// -- messages for runs not begun here ---------------------------------------

using early_payload
  = std::variant<exchange_put, exchange_take, exchange_close, exchange_reply,
                 exchange_part, exchange_result, exchange_task_end,
                 exchange_node_lost>;

struct exchange_hub::early_message {
  caf::actor sender;
  // The relay that passed it on, or null.
  caf::actor via;
  early_payload payload;
  uint64_t bytes = 0;
};

namespace {

uint64_t bytes_of(const std::vector<tensor>& xs) {
  uint64_t n = 0;
  for (auto& x : xs)
    n += x.byte_size() + 64;
  return n;
}

// What views keep alive: the whole tensors they are slices of.
uint64_t bytes_of(const std::vector<tensor_slice_view>& xs) {
  uint64_t n = 0;
  for (auto& x : xs)
    n += x.source->byte_size() + 64;
  return n;
}

uint64_t bytes_of(const early_payload& x) {
  return std::visit(
    [](const auto& msg) -> uint64_t {
      using type = std::decay_t<decltype(msg)>;
      if constexpr (std::is_same_v<type, exchange_put>)
        return 256 + bytes_of(msg.item);
      else if constexpr (std::is_same_v<type, exchange_reply>)
        return 256 + bytes_of(msg.values);
      else if constexpr (std::is_same_v<type, exchange_result>)
        return 256 + bytes_of(msg.values) + bytes_of(msg.views);
      else if constexpr (std::is_same_v<type, exchange_part>) {
        uint64_t n = 256;
        for (auto& part : msg.parts)
          n += bytes_of(part.values) + bytes_of(part.views);
        return n;
      } else
        return 256;
    },
    x);
}

} // namespace

// -- construction -----------------------------------------------------------

exchange_hub::exchange_hub(std::shared_ptr<worker_pool> pool,
                           exchange_hub_options opts)
  : pool_(std::move(pool)), options_(opts) {
  // nop
}

std::shared_ptr<exchange_hub>
exchange_hub::make(caf::actor_system& sys, std::shared_ptr<worker_pool> pool,
                   exchange_hub_options options) {
  std::shared_ptr<exchange_hub> result{
    new exchange_hub(std::move(pool), options)};
  result->system_ = &sys;
  result->endpoint_ = spawn_exchange_endpoint(sys, result);
  std::weak_ptr<exchange_hub> weak = result;
  result->routes_ = exchange_routes::make(
    sys, result->endpoint_, result->options_,
    [weak](std::chrono::milliseconds delay, std::function<void()> fn) {
      if (auto hub = weak.lock())
        hub->after(delay, std::move(fn));
    });
  auto& context = result->context_;
  context.endpoint = result->endpoint_;
  context.max_tensor_bytes = options.max_tensor_bytes;
  context.recycler = tensor_recycler::make(options.max_recycled_bytes);
  context.deliver = [weak](const caf::actor& to, caf::message msg) {
    if (auto hub = weak.lock())
      hub->deliver(to, std::move(msg));
  };
  context.chunk_reduced = [weak](uint64_t run, const std::string& name,
                                 uint64_t call, uint32_t chunk) {
    if (auto hub = weak.lock())
      hub->chunk_reduced(run, name, call, chunk);
  };
  return result;
}

exchange_hub::~exchange_hub() {
  shutdown();
}

void exchange_hub::shutdown() {
  exchange_effects later;
  caf::actor endpoint;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return;
    stopped_ = true;
    auto err = make_error(runtime_errc::peer_lost,
                          "the exchange of this process stopped");
    for (auto& [id, run] : runs_)
      run->fail_all(err, later);
    runs_.clear();
    early_.clear();
    early_bytes_ = 0;
    timers_.clear();
    endpoint = endpoint_;
  }
  complete_all(later.done);
  if (endpoint)
    caf::anon_send_exit(endpoint, caf::exit_reason::user_shutdown);
}

// -- helpers under the lock -------------------------------------------------

void exchange_hub::add_relay_peer(const caf::actor& peer) {
  routes_->add_relay_peer(peer);
}

std::set<caf::actor> exchange_hub::peers_in_use() const {
  std::set<caf::actor> result;
  for (auto& [id, run] : runs_)
    for (auto& p : run->plan().peers)
      if (p.endpoint)
        result.insert(p.endpoint);
  return result;
}

void exchange_hub::receive_link(const caf::actor& sender) {
  routes_->accepted(sender);
  // Its connection gone, its process is reached through the relay again.
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    watch(sender, later);
  }
  flush(later);
}

void exchange_hub::deliver(const caf::actor& to, caf::message msg) {
  routes_->deliver(to, std::move(msg));
}

std::pair<uint64_t, size_t> exchange_hub::relay_backlog() {
  return routes_->backlog();
}

void exchange_hub::flush(exchange_effects& later) {
  for (auto& peer : later.watch)
    caf::send_as(endpoint_, endpoint_, exchange_watch_atom::value, peer);
  routes_->open(later.links);
  later.links.clear();
  for (auto& [to, msg] : later.outbox)
    deliver(to, std::move(msg));
  later.outbox.clear();
  std::function<void()> here;
  if (later.last_job_here && !later.jobs.empty()) {
    here = std::move(later.jobs.back());
    later.jobs.pop_back();
  }
  for (auto& fn : later.jobs) {
    // Moved, never copied: a job may own a chunk's bytes.
    auto job = worker_pool::make_job(std::move(fn));
    if (!pool_ || !pool_->submit(std::move(job)))
      job->run(); // no pool (stopped): the work is short enough to do here
  }
  later.jobs.clear();
  complete_all(later.done);
  if (here)
    here();
}

exchange_run* exchange_hub::find_run(uint64_t run) {
  auto i = runs_.find(run);
  return i == runs_.end() ? nullptr : i->second.get();
}

void exchange_hub::watch(const caf::actor& x, exchange_effects& later) {
  if (x && x != endpoint_ && watched_.insert(x.address()).second)
    later.watch.push_back(x);
}

std::optional<channel_def> exchange_hub::find_channel(uint64_t run,
                                                      const std::string& name) {
  annotated_mutex::guard guard{mtx_};
  auto* st = find_run(run);
  if (st == nullptr)
    return std::nullopt;
  auto* plan = st->find_channel(name);
  if (plan == nullptr)
    return std::nullopt;
  return plan->channel;
}

uint64_t exchange_hub::next_op_id() {
  annotated_mutex::guard guard{mtx_};
  return ++next_op_;
}

void exchange_hub::after(std::chrono::milliseconds delay,
                         std::function<void()> fn) {
  uint64_t id;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return;
    id = ++next_timer_;
    timers_.emplace(id, std::move(fn));
  }
  auto source = caf::actor_cast<caf::strong_actor_ptr>(endpoint_);
  endpoint_->home_system().clock().schedule_message(
    endpoint_->home_system().clock().now() + delay,
    caf::actor_cast<caf::strong_actor_ptr>(endpoint_),
    caf::make_mailbox_element(source, caf::make_message_id(), {},
                              exchange_timer_atom::value, id));
}

void exchange_hub::timer_fired(uint64_t id) {
  std::function<void()> fn;
  {
    annotated_mutex::guard guard{mtx_};
    auto i = timers_.find(id);
    if (i == timers_.end())
      return;
    fn = std::move(i->second);
    timers_.erase(i);
  }
  fn();
}

// -- runs -------------------------------------------------------------------

void exchange_hub::remember_ended(uint64_t run) {
  if (!ended_runs_.insert(run).second)
    return;
  // Its messages sent through the relay no longer hold the window (an
  // acknowledgement from a node lost in it never comes); those queued
  // still go: other processes may wait for them.
  routes_->forget_relayed(
    [run](const exchange_routes::relayed_to& x) {
      return x.run == run;
    },
    [](const exchange_routes::relayed_to&) {
      return false;
    });
  ended_order_.push_back(run);
  if (ended_order_.size() > remembered_runs) {
    ended_runs_.erase(ended_order_.front());
    ended_order_.erase(ended_order_.begin());
  }
  if (auto i = early_.find(run); i != early_.end()) {
    for (auto& msg : i->second)
      early_bytes_ -= msg.bytes;
    early_.erase(i);
  }
}

void exchange_hub::forget_run(uint64_t run, const caf::error& why,
                              exchange_effects& later) {
  auto i = runs_.find(run);
  if (i == runs_.end())
    return;
  // Nothing of this process waits in the run any more; what still does
  // (tasks of a node that never began it, requests of other processes to
  // its channels) is told why.
  i->second->fail_all(why, later);
  auto peers = i->second->plan().peers;
  runs_.erase(i);
  remember_ended(run);
  routes_->forget(peers, peers_in_use());
}

caf::error exchange_hub::begin(uint64_t run, const std::string& node,
                               const exchange_plan& plan) {
  exchange_effects later;
  bool check_deadlocks = false;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return make_error(runtime_errc::peer_lost,
                        "the exchange of this process stopped");
    if (ended_runs_.count(run) > 0)
      return run_over(run);
    auto* st = find_run(run);
    if (st == nullptr) {
      auto fresh = exchange_run::make(
        run, plan, node, options_.deadlock_check.count() > 0, context_);
      if (!fresh)
        return std::move(fresh.error());
      // A daemon reaches the other daemons through the relay until it has
      // a connection of its own to them (chosen among the peers of the
      // runs before this one), and watches the relay, which tells it of
      // lost nodes.
      st = fresh->get();
      auto& relay = st->plan().relay;
      bool relayed = relay && relay != endpoint_;
      if (relayed) {
        // A run that sends over a connection of its own watches the
        // exchange it sends to, whichever side opened the connection: what
        // goes over a connection that closes is lost, and only the down of
        // that exchange's proxy tells the run.
        std::vector<caf::actor> direct;
        routes_->choose(st->plan(), peers_in_use(), later.links, direct);
        watch(relay, later);
        for (auto& peer : direct)
          watch(peer, later);
      }
      runs_.emplace(run, std::move(*fresh));
      for (auto& peer : st->plan().peers)
        if (!relayed || peer.endpoint == relay)
          watch(peer.endpoint, later);
      check_deadlocks = st->checked_here();
      if (auto i = early_.find(run); i != early_.end()) {
        auto messages = std::move(i->second);
        early_.erase(i);
        for (auto& msg : messages) {
          early_bytes_ -= msg.bytes;
          if (!st->came_right_way(msg.sender, msg.via))
            continue;
          st->count_received();
          std::visit(
            [&](auto& payload) {
              st->handle(msg.sender, payload, later);
            },
            msg.payload);
        }
      }
    }
    st->node_began(node);
  }
  flush(later);
  if (check_deadlocks)
    schedule_deadlock_check(run);
  return {};
}

exchange_report exchange_hub::end(uint64_t run, const std::string& node,
                                  bool abort) {
  exchange_effects later;
  exchange_report report;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    if (st == nullptr) {
      remember_ended(run);
      return report;
    }
    if (st->node_ended(node, abort, report, later))
      forget_run(run, run_over(run), later);
  }
  flush(later);
  return report;
}

void exchange_hub::cancel_node(const std::string& node, const caf::error& why) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    for (auto& [id, run] : runs_)
      run->cancel(node, why, later);
  }
  flush(later);
}

void exchange_hub::cancel(uint64_t run, const std::string& node,
                          const caf::error& why) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    if (auto* st = find_run(run))
      st->cancel(node, why, later);
  }
  flush(later);
}

void exchange_hub::node_lost(const std::string& node, const std::string& why) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    frozen_.erase(node);
    std::vector<uint64_t> over;
    for (auto& [id, run] : runs_)
      if (run->is_local(node) && run->local_node_lost(node, why, later))
        over.push_back(id);
    for (auto id : over)
      forget_run(id,
                 make_error(runtime_errc::peer_lost,
                            "node " + node + " was lost (" + why + ")"),
                 later);
  }
  flush(later);
}

void exchange_hub::node_frozen(const std::string& node) {
  {
    annotated_mutex::guard guard{mtx_};
    if (!frozen_.insert(node).second)
      return;
  }
  auto limit = options_.silence_limit;
  std::weak_ptr<exchange_hub> weak = shared_from_this();
  after(limit, [weak, node, limit] {
    auto hub = weak.lock();
    if (!hub)
      return;
    {
      annotated_mutex::guard guard{hub->mtx_};
      if (hub->frozen_.count(node) == 0)
        return;
    }
    hub->node_lost(node,
                   "it stopped answering (frozen) for "
                     + std::to_string(limit.count()) + " ms");
  });
}

void exchange_hub::peer_down(const caf::actor_addr& peer,
                             const caf::error& reason) {
  bool was_direct = routes_->down(peer);
  // CAF 0.17 kills every proxy of a process, with remote_link_unreachable,
  // once its last direct connection to that process closes, also when the
  // process is still reached through another (basp_broker's
  // connection_cleanup). A daemon's connection of its own to another daemon
  // closes so when the other side gave it up during its handshake (a
  // spurious connection_timeout, which connect_actor retries), so such a
  // down says only that this connection is gone: the daemon is still
  // reached through the relay, which tells of it if it is lost. Only a run
  // that sent over that very connection may have lost messages.
  bool unreachable = reason == caf::exit_reason::remote_link_unreachable;
  auto link_only = [&](const exchange_plan& plan) {
    return unreachable && plan.relay && plan.relay != endpoint_
      && plan.relay.address() != peer;
  };
  exchange_effects later;
  bool process_gone = false;
  {
    annotated_mutex::guard guard{mtx_};
    watched_.erase(peer);
    // What `peer` sent for runs not begun here came, whichever connection
    // carried it. It goes only with the process that sent it: a daemon's
    // endpoint unreachable from another daemon may be only its own link
    // closing, and its run then begins here and needs those messages.
    process_gone = !unreachable || !is_daemon_peer(peer);
    if (process_gone)
      drop_early_from(peer);
    auto why = unreachable
      ? std::string{"its process is gone or stopped answering "
                    "heartbeats"}
      : "its exchange stopped: " + error_text(reason);
    for (auto& [id, run] : runs_) {
      auto& plan = run->plan();
      // A relay gone takes every node this process reached through it.
      bool via_relay
        = plan.relay && plan.relay.address() == peer && plan.relay != endpoint_;
      bool only_link = link_only(plan);
      for (auto& p : plan.peers) {
        if (via_relay && !run->is_local(p.node)) {
          run->lose_node(p.node, why, later);
        } else if (p.endpoint && p.endpoint.address() == peer) {
          if (!only_link)
            run->lose_node(p.node, why, later);
          else if (was_direct)
            run->lose_node(p.node,
                           "the connection of its own to that daemon closed "
                           "while the run sent over it",
                           later);
        }
      }
    }
  }
  // Through a relay gone nothing more arrives; to a process gone, nothing
  // needs to. A daemon still reached through the relay keeps its messages.
  routes_->forget_relayed(
    [&](const exchange_routes::relayed_to& x) {
      return x.relay.address() == peer
        || (process_gone && x.to.address() == peer);
    },
    [&](const exchange_routes::relayed_to& x) {
      return x.relay.address() == peer
        || (process_gone && x.to.address() == peer);
    });
  flush(later);
}

bool exchange_hub::is_daemon_peer(const caf::actor_addr& peer) {
  if (routes_->relays_for(peer))
    return false; // this is the session, which reaches `peer` directly
  for (auto& [id, run] : runs_)
    if (run->plan().relay.address() == peer || run->plan().relay == endpoint_)
      return false;
  return true;
}

void exchange_hub::drop_early_from(const caf::actor_addr& peer) {
  // What it sent for runs that have not begun here never will be used.
  for (auto i = early_.begin(); i != early_.end();) {
    auto& msgs = i->second;
    for (auto j = msgs.begin(); j != msgs.end();) {
      auto& from = j->via ? j->via : j->sender;
      if (from.address() == peer) {
        early_bytes_ -= j->bytes;
        j = msgs.erase(j);
      } else {
        ++j;
      }
    }
    i = msgs.empty() ? early_.erase(i) : std::next(i);
  }
}

// -- a task's operations ------------------------------------------------------

void exchange_hub::put(uint64_t run, const task_ref& from, uint64_t op,
                       const std::string& channel_name,
                       std::vector<tensor_ptr> item,
                       std::shared_ptr<exchange_wait> wait) {
  channel_op(run, from, op, channel_op_kind::put, channel_name, std::move(item),
             std::move(wait));
}

void exchange_hub::take(uint64_t run, const task_ref& from, uint64_t op,
                        const std::string& channel_name,
                        std::shared_ptr<exchange_wait> wait) {
  channel_op(run, from, op, channel_op_kind::take, channel_name, {},
             std::move(wait));
}

void exchange_hub::close(uint64_t run, const task_ref& from, uint64_t op,
                         const std::string& channel_name,
                         std::shared_ptr<exchange_wait> wait) {
  channel_op(run, from, op, channel_op_kind::close, channel_name, {},
             std::move(wait));
}

void exchange_hub::channel_op(uint64_t run, const task_ref& from, uint64_t op,
                              channel_op_kind kind,
                              const std::string& channel_name,
                              std::vector<tensor_ptr> item,
                              std::shared_ptr<exchange_wait> wait) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    if (auto* st = find_run(run))
      st->channel_op(from, op, kind, channel_name, std::move(item),
                     std::move(wait), later);
    else
      later.fail(std::move(wait), run_over(run));
  }
  flush(later);
}

void exchange_hub::contribute(uint64_t run, const task_ref& from,
                              collective_kind kind, const std::string& name,
                              uint64_t call, std::vector<tensor_ptr> inputs,
                              std::shared_ptr<exchange_wait> wait) {
  exchange_effects later;
  later.last_job_here = true;
  {
    annotated_mutex::guard guard{mtx_};
    if (auto* st = find_run(run))
      st->contribute(from, kind, name, call, std::move(inputs), std::move(wait),
                     later);
    else
      later.fail(std::move(wait), run_over(run));
  }
  flush(later);
}

void exchange_hub::chunk_reduced(uint64_t run, const std::string& name,
                                 uint64_t call, uint32_t chunk) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    if (auto* st = find_run(run))
      st->chunk_reduced(name, call, chunk, later);
  }
  flush(later);
}

void exchange_hub::task_ended(uint64_t run, const task_ref& task, bool ok,
                              const std::map<std::string, uint64_t>& calls) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    if (auto* st = find_run(run))
      st->task_ended(task, ok, calls, later);
  }
  flush(later);
}

// -- the deadlock check -------------------------------------------------------

void exchange_hub::schedule_deadlock_check(uint64_t run) {
  after(options_.deadlock_check, [weak = weak_from_this(), run] {
    if (auto hub = weak.lock())
      hub->check_deadlock(run);
  });
}

void exchange_hub::check_deadlock(uint64_t run) {
  exchange_effects later;
  std::optional<std::string> found;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    if (st == nullptr || stopped_)
      return;
    found = st->check_deadlock(later);
  }
  flush(later);
  if (!found)
    schedule_deadlock_check(run);
}

// -- the endpoint -------------------------------------------------------------

namespace {

// The request types, which a refusal must answer.
template <class Message>
constexpr bool is_request_v
  = std::is_same_v<
      Message,
      exchange_put> || std::is_same_v<Message, exchange_take> || std::is_same_v<Message, exchange_close>;

// The messages of the deadlock check, which are not the run's traffic:
// neither counted nor kept for a run not begun (a round that misses a
// process's report counts as not quiet).
template <class Message>
constexpr bool is_probe_v
  = std::is_same_v<
      Message,
      exchange_probe> || std::is_same_v<Message, exchange_probe_reply> || std::is_same_v<Message, exchange_deadlock>;

} // namespace

template <class Message>
void exchange_hub::dispatch(const caf::actor& sender, Message& msg,
                            const caf::actor& via) {
  exchange_effects later;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return;
    if (auto* st = find_run(msg.run)) {
      if (st->came_right_way(sender, via)) {
        if constexpr (!is_probe_v<Message>)
          st->count_received();
        st->handle(sender, msg, later);
      }
    } else if constexpr (is_probe_v<Message>) {
      // nop: see is_probe_v
    } else if (ended_runs_.count(msg.run) > 0) {
      if constexpr (is_request_v<Message>)
        later.reply(sender, msg.run, msg.op, exchange_status::failed,
                    error_text(run_over(msg.run)));
    } else {
      keep_early(sender, via, msg, later);
    }
  }
  flush(later);
}

template <class Message>
void exchange_hub::keep_early(const caf::actor& sender, const caf::actor& via,
                              Message& msg, exchange_effects& later) {
  early_payload payload{std::move(msg)};
  auto bytes = bytes_of(payload);
  auto& kept = std::get<Message>(payload);
  if (early_bytes_ + bytes > options_.max_early_bytes) {
    auto why = "run " + std::to_string(kept.run)
      + " has not begun here, and messages for runs not begun fill "
      + std::to_string(early_bytes_) + " bytes already";
    log_refusal(sender, why);
    if constexpr (is_request_v<Message>)
      later.reply(sender, kept.run, kept.op, exchange_status::failed, why);
    return;
  }
  early_bytes_ += bytes;
  auto run = kept.run;
  // Kept until its run begins or ends here, or until the process that sent
  // it (the relay, for a relayed one) goes down: a run that never begins
  // here must not hold the bytes for good.
  watch(via ? via : sender, later);
  early_[run].push_back(early_message{sender, via, std::move(payload), bytes});
}

void exchange_hub::receive(const caf::actor& sender, exchange_put& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_take& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_close& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_reply& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_part& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_result& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_task_end& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_node_lost& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_probe& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender,
                           exchange_probe_reply& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_deadlock& msg) {
  dispatch(sender, msg);
}

void exchange_hub::receive(const caf::actor& sender, exchange_forward& msg) {
  if (!routes_->relays_for(sender.address()) || !msg.peer
      || !routes_->relays_for(msg.peer.address())) {
    log_refusal(sender,
                "a message to pass on between exchanges this one "
                "does not relay for");
    return;
  }
  caf::send_as(endpoint_, msg.peer,
               exchange_relayed{sender, std::move(msg.payload), msg.seq});
}

void exchange_hub::receive(const caf::actor& sender, exchange_relayed& msg) {
  if (!msg.peer) {
    log_refusal(sender, "a relayed message without its origin");
    return;
  }
  auto& x = msg.payload;
  // Acknowledged as it arrives, through the relay it came by: its sender
  // may send more (relay_window_bytes).
  if (msg.seq != 0)
    caf::send_as(
      endpoint_, sender,
      exchange_forward{msg.peer, caf::make_message(exchange_relay_ack{msg.seq}),
                       0});
  if (x.match_elements<exchange_relay_ack>()) {
    routes_->acked(x.get_as<exchange_relay_ack>(0).seq, sender, msg.peer);
    return;
  }
  if (carries_data(x))
    routes_->received_data_from(msg.peer.address());
  if (visit_exchange_message(x, [&](auto& payload) {
        dispatch(msg.peer, payload, sender);
      }))
    return;
  log_refusal(sender, "a relayed message of no exchange type");
}

} // namespace epochrt
