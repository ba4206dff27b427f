#include <epochrt/actors/core/exchange_hub.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <variant>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/core/exchange_endpoint_actor.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/collective_run.hpp>
#include <epochrt/runtime/deadlock_detector.hpp>
#include <epochrt/runtime/deadlock_probe.hpp>
#include <epochrt/runtime/reduction.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>

namespace epochrt {

namespace {

// Runs remembered as ended, to drop their late messages.
constexpr size_t remembered_runs = 1024;

// A collective's calls, at most: a bound on what a peer may name.
constexpr uint64_t max_calls = uint64_t{1} << 40;

// The longest deadlock text taken from another process.
constexpr size_t max_deadlock_text = 64 * 1024;

exchange_outcome failure(caf::error err) {
  exchange_outcome result;
  result.error = std::move(err);
  return result;
}

// What a message that reached this process without being serialized (one
// actor system holding several exchanges) carries as views: the tensors a
// serialized one would have brought.
void take_views(std::vector<tensor>& values,
                std::vector<tensor_slice_view>& views) {
  if (views.empty())
    return;
  values.clear();
  for (auto& x : views)
    values.push_back(materialize(x));
  views.clear();
}

// A peer's tensor: well formed and within the limit.
bool acceptable(const tensor& x, uint64_t max_bytes) {
  return x.consistent() && x.byte_size() <= max_bytes;
}

} // namespace

// -- per-run state ---------------------------------------------------------

// One collective of a run in this process: its algorithm
// (runtime/collective_run.hpp), and where its messages go.
struct collective_state {
  collective_run calls;
  // By participant index: the endpoint of its process.
  std::vector<caf::actor> endpoints;
  // The endpoints of other processes with participants, once each.
  std::vector<caf::actor> others;

  size_t size() const noexcept {
    return calls.size();
  }

  const collective_plan& plan() const noexcept {
    return calls.plan();
  }

  // The process `sender` is, as collective_run numbers them: 0 this one,
  // i + 1 others[i]; none when no participant runs there.
  std::optional<uint32_t> process_of(const caf::actor& sender) const {
    auto i = std::find(others.begin(), others.end(), sender);
    if (i == others.end())
      return std::nullopt;
    return static_cast<uint32_t>(i - others.begin()) + 1;
  }
};

// A channel request of a local task sent to a remote channel's node.
struct outgoing_request {
  std::shared_ptr<exchange_wait> wait;
  task_ref from;
  std::string host;
  std::string channel;
};

// The latest exchange operation of a task of this process, for the
// deadlock check: its wait, and the channel or the collective call.
struct tracked_wait {
  std::weak_ptr<exchange_wait> wait;
  channel_op_kind kind = channel_op_kind::take;
  std::string channel;    // a channel operation's, else empty
  std::string collective; // a collective call's
  uint64_t call = 0;
};

struct exchange_hub::run_state {
  uint64_t id = 0;
  exchange_plan plan;
  // Nodes of the plan hosted by this process, and those that began the
  // run and have not ended it.
  std::set<std::string> local_nodes;
  std::set<std::string> begun;
  std::map<std::string, channel> channels;
  std::map<std::string, collective_state> collectives;
  std::map<uint64_t, outgoing_request> requests;
  // Channel requests obeyed already, to obey a duplicate once.
  std::set<std::pair<task_ref, uint64_t>> seen;
  // Nodes of the run known lost, and why.
  std::map<std::string, std::string> lost;
  // For the deadlock check (`watched`): what each task of this process
  // waits in, the tasks that ended, and a count of everything that
  // happened here. A run of this process alone is checked here
  // (runtime/deadlock_detector.hpp); one over several processes by its
  // prober (`probe`: the exchange of the plan's first peer), from every
  // process's report (runtime/deadlock_probe.hpp), which counts the run's
  // messages sent to and received from other processes. A reply to a
  // channel request of another process is sent off the lock, when its
  // wait completes: `replies_sent` counts those.
  bool watched = false;
  std::map<task_ref, tracked_wait> waits;
  std::set<task_ref> ended_tasks;
  uint64_t events = 0;
  uint64_t sent = 0;
  uint64_t received = 0;
  std::shared_ptr<std::atomic<uint64_t>> replies_sent
    = std::make_shared<std::atomic<uint64_t>>(0);
  deadlock_detector deadlock;
  std::optional<deadlock_probe> probe;

  void track(const task_ref& from, tracked_wait wait) {
    ++events;
    if (watched)
      waits[from] = std::move(wait);
  }

  bool is_local(const std::string& node) const {
    return local_nodes.count(node) > 0;
  }

  const caf::actor* endpoint_of(const std::string& node) const {
    return plan.endpoint_of(node);
  }
};

struct exchange_hub::deferred {
  exchange_completions done;
  std::vector<std::pair<caf::actor, caf::message>> outbox;
  std::vector<std::function<void()>> jobs;
  // The caller does the last job itself rather than queue it: a task
  // whose contribution completed a call (on a pool thread, and with
  // nothing else to do until the call ends) works on it at once instead
  // of waiting for another thread to wake and take it. Its op holds the
  // node's workspace meanwhile, for one share of the reduction (at most
  // 1/max_shares of it).
  bool last_job_here = false;
  std::vector<caf::actor> watch;
  // Daemons to open a connection of our own to.
  std::vector<exchange_peer> links;
  // The run whose messages `send` counts as sent (deadlock_probe), or
  // null: probes and verdicts of the deadlock check are not counted.
  run_state* counted = nullptr;
};

namespace {

// The waits a collective completed, to complete once the lock is released.
void take_completions(collective_actions& out, exchange_hub::deferred& later) {
  for (auto& completion : out.done)
    later.done.push_back(std::move(completion));
  out.done.clear();
}

} // namespace

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

using run_state = exchange_hub::run_state;
using deferred_t = std::vector<std::pair<caf::actor, caf::message>>;

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
  : pool_(std::move(pool)), options_(opts),
    recycler_(tensor_recycler::make(opts.max_recycled_bytes)) {
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
  return result;
}

exchange_hub::~exchange_hub() {
  shutdown();
}

void exchange_hub::shutdown() {
  deferred later;
  caf::actor endpoint;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return;
    stopped_ = true;
    auto err = make_error(runtime_errc::peer_lost,
                          "the exchange of this process stopped");
    for (auto& [id, st] : runs_) {
      for (auto& [name, ch] : st->channels)
        ch.fail_waiting(err, later.done);
      for (auto& [name, cs] : st->collectives) {
        collective_actions out;
        cs.calls.fail_all(err, out);
        take_completions(out, later);
      }
      for (auto& [op, req] : st->requests)
        later.done.emplace_back(std::move(req.wait), failure(err));
    }
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

namespace {

void send(exchange_hub::deferred& later, const caf::actor& to,
          caf::message msg) {
  if (!to)
    return;
  later.outbox.emplace_back(to, std::move(msg));
  if (later.counted != nullptr)
    ++later.counted->sent;
}

// The distinct endpoints other than `self` among `nodes`' endpoints.
void add_other(std::vector<caf::actor>& others, const caf::actor& x,
               const caf::actor& self) {
  if (!x || x == self)
    return;
  if (std::find(others.begin(), others.end(), x) == others.end())
    others.push_back(x);
}

} // namespace

void exchange_hub::add_relay_peer(const caf::actor& peer) {
  routes_->add_relay_peer(peer);
}

std::set<caf::actor> exchange_hub::peers_in_use() const {
  std::set<caf::actor> result;
  for (auto& [id, st] : runs_)
    for (auto& p : st->plan.peers)
      if (p.endpoint)
        result.insert(p.endpoint);
  return result;
}

void exchange_hub::receive_link(const caf::actor& sender) {
  routes_->accepted(sender);
  // Its connection gone, its process is reached through the relay again.
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    if (watched_.insert(sender.address()).second)
      later.watch.push_back(sender);
  }
  flush(later);
}

void exchange_hub::deliver(const caf::actor& to, caf::message msg) {
  routes_->deliver(to, std::move(msg));
}

std::pair<uint64_t, size_t> exchange_hub::relay_backlog() {
  return routes_->backlog();
}

void exchange_hub::flush(deferred& later) {
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
  for (auto& job : later.jobs)
    if (!pool_ || !pool_->submit(job))
      job(); // no pool (stopped): the work is short enough to do here
  later.jobs.clear();
  complete_all(later.done);
  if (here)
    here();
}

exchange_hub::run_state* exchange_hub::find_run(uint64_t run) {
  auto i = runs_.find(run);
  return i == runs_.end() ? nullptr : i->second.get();
}

std::optional<channel_def> exchange_hub::find_channel(uint64_t run,
                                                      const std::string& name) {
  annotated_mutex::guard guard{mtx_};
  auto* st = find_run(run);
  if (st == nullptr)
    return std::nullopt;
  auto* plan = st->plan.find_channel(name);
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

namespace {

caf::error run_over(uint64_t run) {
  return make_error(runtime_errc::exchange_failed,
                    "the group run " + std::to_string(run)
                      + " is over on this node");
}

exchange_status status_of(const exchange_outcome& outcome) {
  if (!outcome.error)
    return outcome.closed ? exchange_status::closed : exchange_status::ok;
  if (is_error(outcome.error, runtime_errc::peer_lost))
    return exchange_status::lost;
  return exchange_status::failed;
}

void reply_to(exchange_hub::deferred& later, const caf::actor& to, uint64_t run,
              uint64_t op, exchange_status status, std::string error) {
  exchange_reply reply;
  reply.run = run;
  reply.op = op;
  reply.status = status;
  reply.error = std::move(error);
  send(later, to, caf::make_message(std::move(reply)));
}

// A tensor from a peer, as the shared value tasks see.
std::vector<tensor_ptr> shared_values(std::vector<tensor>& xs) {
  std::vector<tensor_ptr> result;
  result.reserve(xs.size());
  for (auto& x : xs)
    result.push_back(std::make_shared<tensor>(std::move(x)));
  return result;
}

std::vector<tensor> copies_of(const std::vector<tensor_ptr>& xs) {
  std::vector<tensor> result;
  result.reserve(xs.size());
  for (auto& x : xs)
    result.push_back(*x);
  return result;
}

void apply_channel_op(channel& ch, channel_op_kind kind, const task_ref& from,
                      std::vector<tensor_ptr> item,
                      std::shared_ptr<exchange_wait> wait,
                      exchange_completions& done) {
  switch (kind) {
    case channel_op_kind::put:
      ch.put(from, std::move(item), std::move(wait), done);
      return;
    case channel_op_kind::take:
      ch.take(from, std::move(wait), done);
      return;
    case channel_op_kind::close:
      ch.close(from, std::move(wait), done);
      return;
  }
}

// The message that asks the channel's node to do `kind` for `from`.
caf::message channel_message(channel_op_kind kind, uint64_t run,
                             const std::string& channel_name, uint64_t op,
                             const task_ref& from,
                             const std::vector<tensor_ptr>& item) {
  switch (kind) {
    case channel_op_kind::put:
      return caf::make_message(
        exchange_put{run, channel_name, op, from, copies_of(item)});
    case channel_op_kind::take:
      return caf::make_message(exchange_take{run, channel_name, op, from});
    case channel_op_kind::close:
      break;
  }
  return caf::make_message(exchange_close{run, channel_name, op, from});
}

} // namespace

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

caf::error exchange_hub::begin(uint64_t run, const std::string& node,
                               const exchange_plan& plan) {
  deferred later;
  bool watch_deadlock = false;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return make_error(runtime_errc::peer_lost,
                        "the exchange of this process stopped");
    if (ended_runs_.count(run) > 0)
      return run_over(run);
    auto* st = find_run(run);
    if (st == nullptr) {
      auto fresh = std::make_unique<run_state>();
      fresh->id = run;
      fresh->plan = plan;
      for (auto& peer : fresh->plan.peers)
        if (peer.endpoint == endpoint_)
          fresh->local_nodes.insert(peer.node);
      if (fresh->local_nodes.count(node) == 0)
        return make_error(runtime_errc::exchange_failed,
                          "the plan of the group names no exchange of this "
                          "process for node "
                            + node);
      for (auto& ch : fresh->plan.channels)
        if (fresh->is_local(ch.channel.node))
          fresh->channels.emplace(ch.channel.name, channel{ch});
      for (auto& cp : fresh->plan.collectives) {
        std::vector<uint32_t> process_of;
        std::vector<caf::actor> endpoints;
        std::vector<caf::actor> others;
        for (auto& p : cp.participants) {
          auto* ep = fresh->endpoint_of(p.node);
          if (ep == nullptr || !*ep)
            return make_error(runtime_errc::exchange_failed,
                              "the plan of the group names no exchange for "
                              "node "
                                + p.node + " of collective '" + cp.name + "'");
          endpoints.push_back(*ep);
          add_other(others, *ep, endpoint_);
          // Its process: this one (0), or the others in their order.
          auto other = std::find(others.begin(), others.end(), *ep);
          process_of.push_back(fresh->is_local(p.node)
                                 ? 0
                                 : static_cast<uint32_t>(other - others.begin())
                                   + 1);
        }
        fresh->collectives.emplace(
          cp.name,
          collective_state{
            collective_run{run, cp, std::move(process_of), 0, recycler_},
            std::move(endpoints), std::move(others)});
      }
      // A daemon reaches the other daemons through the relay until it has
      // a connection of its own to them, and watches the relay, which
      // tells it of lost nodes.
      auto& relay = fresh->plan.relay;
      bool relayed = relay && relay != endpoint_;
      if (relayed)
        routes_->choose(fresh->plan, peers_in_use(), later.links);
      auto watch = [&](const caf::actor& x) EPOCHRT_REQUIRES(mtx_) {
        if (x && x != endpoint_ && watched_.insert(x.address()).second)
          later.watch.push_back(x);
      };
      if (relayed)
        watch(relay);
      for (auto& peer : fresh->plan.peers)
        if (!relayed || peer.endpoint == relay)
          watch(peer.endpoint);
      fresh->watched = options_.deadlock_check.count() > 0;
      std::vector<caf::actor> processes;
      for (auto& peer : fresh->plan.peers)
        add_other(processes, peer.endpoint, {});
      if (fresh->watched && processes.size() > 1
          && fresh->plan.peers.front().endpoint == endpoint_)
        fresh->probe.emplace(processes.size());
      st = fresh.get();
      runs_.emplace(run, std::move(fresh));
      watch_deadlock = st->watched && (processes.size() == 1 || st->probe);
      if (auto i = early_.find(run); i != early_.end()) {
        auto messages = std::move(i->second);
        early_.erase(i);
        later.counted = st;
        for (auto& msg : messages) {
          early_bytes_ -= msg.bytes;
          if (!came_right_way(*st, msg.sender, msg.via))
            continue;
          ++st->received;
          std::visit(
            [&](auto& payload) EPOCHRT_REQUIRES(mtx_) {
              handle(*st, msg.sender, payload, later);
            },
            msg.payload);
        }
      }
    }
    st->begun.insert(node);
  }
  flush(later);
  if (watch_deadlock)
    schedule_deadlock_check(run);
  return {};
}

exchange_report exchange_hub::end(uint64_t run, const std::string& node,
                                  bool abort) {
  deferred later;
  exchange_report report;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    if (st == nullptr) {
      remember_ended(run);
      return report;
    }
    auto cancelled
      = make_error(runtime_errc::cancelled, "cancelled: the group run ended");
    for (auto i = st->channels.begin(); i != st->channels.end();) {
      auto& ch = i->second;
      if (ch.plan().channel.node != node) {
        ++i;
        continue;
      }
      report.channels.push_back(
        channel_state{ch.name(), node, ch.items(), ch.closed()});
      ch.fail_waiting(cancelled, later.done);
      i = st->channels.erase(i);
    }
    if (abort)
      cancel_in(*st, node, cancelled, later);
    st->begun.erase(node);
    if (st->begun.empty()) {
      // Nothing of this process waits in the run any more; what still
      // does (tasks of a node that never began it) is told so.
      for (auto& [name, ch] : st->channels)
        ch.fail_waiting(run_over(run), later.done);
      for (auto& [name, cs] : st->collectives) {
        collective_actions out;
        cs.calls.fail_all(run_over(run), out);
        take_completions(out, later);
      }
      for (auto& [op, req] : st->requests)
        later.done.emplace_back(std::move(req.wait), failure(run_over(run)));
      auto peers = std::move(st->plan.peers);
      runs_.erase(run);
      remember_ended(run);
      routes_->forget(peers, peers_in_use());
    }
  }
  flush(later);
  return report;
}

void exchange_hub::cancel_in(run_state& st, const std::string& node,
                             const caf::error& why, deferred& later) {
  for (auto& [name, ch] : st.channels)
    ch.fail_waiting_of(node, why, later.done);
  for (auto& [name, cs] : st.collectives) {
    collective_actions out;
    cs.calls.cancel_waits_of(node, why, out);
    take_completions(out, later);
  }
  for (auto i = st.requests.begin(); i != st.requests.end();) {
    if (i->second.from.node != node) {
      ++i;
      continue;
    }
    later.done.emplace_back(std::move(i->second.wait), failure(why));
    i = st.requests.erase(i);
  }
}

void exchange_hub::cancel_node(const std::string& node, const caf::error& why) {
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    for (auto& [id, st] : runs_)
      cancel_in(*st, node, why, later);
  }
  flush(later);
}

void exchange_hub::cancel(uint64_t run, const std::string& node,
                          const caf::error& why) {
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    if (auto* st = find_run(run))
      cancel_in(*st, node, why, later);
  }
  flush(later);
}

void exchange_hub::lose_node(run_state& st, const std::string& node,
                             const std::string& why, deferred& later) {
  if (!st.lost.emplace(node, why).second)
    return;
  auto lost = [&](const std::string& what) {
    return make_error(runtime_errc::peer_lost,
                      "node " + node + " was lost (" + why + ")" + what);
  };
  auto uses = [&](const channel_plan& plan) {
    auto on_node = [&](const task_ref& t) {
      return t.node == node;
    };
    return plan.channel.node == node
      || std::any_of(plan.putters.begin(), plan.putters.end(), on_node)
      || std::any_of(plan.takers.begin(), plan.takers.end(), on_node);
  };
  for (auto& [name, ch] : st.channels)
    if (uses(ch.plan()))
      ch.fail_waiting(lost(" while tasks waited on channel '" + name + "'"),
                      later.done);
  for (auto& [name, cs] : st.collectives) {
    collective_actions out;
    cs.calls.node_lost(node, why, out);
    take_completions(out, later);
  }
  for (auto i = st.requests.begin(); i != st.requests.end();) {
    auto& req = i->second;
    if (req.host != node && req.from.node != node) {
      ++i;
      continue;
    }
    later.done.emplace_back(
      std::move(req.wait),
      failure(lost(", the node of channel '" + req.channel + "'")));
    i = st.requests.erase(i);
  }
}

void exchange_hub::node_lost(const std::string& node, const std::string& why) {
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    frozen_.erase(node);
    for (auto i = runs_.begin(); i != runs_.end();) {
      auto& st = *i->second;
      if (!st.is_local(node)) {
        ++i;
        continue;
      }
      later.counted = &st;
      lose_node(st, node, why, later);
      std::vector<caf::actor> others;
      for (auto& peer : st.plan.peers)
        add_other(others, peer.endpoint, endpoint_);
      for (auto& other : others)
        send(later, other,
             caf::make_message(exchange_node_lost{st.id, node, why}));
      later.counted = nullptr;
      st.begun.erase(node);
      if (st.begun.empty()) {
        auto id = st.id;
        auto peers = std::move(st.plan.peers);
        i = runs_.erase(i);
        remember_ended(id);
        routes_->forget(peers, peers_in_use());
      } else {
        ++i;
      }
    }
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
  auto link_only = [&](const run_state& st) {
    return unreachable && st.plan.relay && st.plan.relay != endpoint_
      && st.plan.relay.address() != peer;
  };
  deferred later;
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
    for (auto& [id, st] : runs_) {
      // A relay gone takes every node this process reached through it.
      bool via_relay = st->plan.relay && st->plan.relay.address() == peer
        && st->plan.relay != endpoint_;
      bool only_link = link_only(*st);
      for (auto& p : st->plan.peers) {
        if (via_relay && !st->is_local(p.node)) {
          lose_node(*st, p.node, why, later);
        } else if (p.endpoint && p.endpoint.address() == peer) {
          if (!only_link)
            lose_node(*st, p.node, why, later);
          else if (was_direct)
            lose_node(*st, p.node,
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
  for (auto& [id, st] : runs_)
    if (st->plan.relay.address() == peer || st->plan.relay == endpoint_)
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
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    auto* plan = st != nullptr ? st->plan.find_channel(channel_name) : nullptr;
    later.counted = st;
    if (plan == nullptr) {
      later.done.emplace_back(std::move(wait), failure(run_over(run)));
    } else if (auto lost = st->lost.find(plan->channel.node);
               lost != st->lost.end()) {
      later.done.emplace_back(
        std::move(wait),
        failure(make_error(runtime_errc::peer_lost,
                           "node " + plan->channel.node + " of channel '"
                             + channel_name + "' was lost (" + lost->second
                             + ")")));
    } else if (st->is_local(plan->channel.node)) {
      st->track(from, tracked_wait{wait, kind, channel_name, {}, 0});
      if (st->seen.emplace(from, op).second)
        apply_channel_op(st->channels.at(channel_name), kind, from,
                         std::move(item), std::move(wait), later.done);
    } else if (st->requests.count(op) == 0) {
      st->track(from, tracked_wait{wait, kind, channel_name, {}, 0});
      st->requests.emplace(op,
                           outgoing_request{std::move(wait), from,
                                            plan->channel.node, channel_name});
      send(later, *st->endpoint_of(plan->channel.node),
           channel_message(kind, run, channel_name, op, from, item));
    }
  }
  flush(later);
}

void exchange_hub::contribute(uint64_t run, const task_ref& from,
                              collective_kind kind, const std::string& name,
                              uint64_t call, std::vector<tensor_ptr> inputs,
                              std::shared_ptr<exchange_wait> wait) {
  deferred later;
  later.last_job_here = true;
  {
    annotated_mutex::guard guard{mtx_};
    auto fail_with = [&](caf::error err) {
      later.done.emplace_back(std::move(wait), failure(std::move(err)));
    };
    auto* st = find_run(run);
    auto i = st != nullptr ? st->collectives.find(name)
                           : decltype(st->collectives.end()){};
    later.counted = st;
    if (st == nullptr) {
      fail_with(run_over(run));
    } else if (i == st->collectives.end()) {
      fail_with(make_error(runtime_errc::exchange_failed,
                           "collective '" + name
                             + "' is not a collective of this group"));
    } else if (auto& cs = i->second; cs.plan().kind != kind) {
      fail_with(make_error(runtime_errc::exchange_failed,
                           "collective '" + name + "' is "
                             + describe_one(cs.plan().kind) + ", not "
                             + describe_one(kind)));
    } else if (auto p = cs.calls.index_of(from); !p) {
      fail_with(make_error(runtime_errc::exchange_failed,
                           task_text(from) + " is not a participant of "
                             + describe(kind) + " '" + name + "'"));
    } else {
      std::weak_ptr<exchange_wait> tracked = wait;
      collective_actions out;
      if (cs.calls.contribute(*p, call, std::move(inputs), std::move(wait),
                              out))
        st->track(from,
                  tracked_wait{
                    std::move(tracked), channel_op_kind::take, {}, name, call});
      carry_out(*st, cs, out, later);
    }
  }
  flush(later);
}

void exchange_hub::schedule_deadlock_check(uint64_t run) {
  after(options_.deadlock_check, [weak = weak_from_this(), run] {
    if (auto hub = weak.lock())
      hub->check_deadlock(run);
  });
}

namespace {

// What the deadlock check sees of task `t` of run `st` now (lock held).
exchange_task_view view_of(const run_state& st, const task_ref& t) {
  using state = exchange_task_view::state;
  exchange_task_view result{task_text(t), state::running, {}};
  if (st.ended_tasks.count(t) > 0) {
    result.what = state::ended;
    return result;
  }
  auto i = st.waits.find(t);
  if (i == st.waits.end())
    return result; // has not reached the exchange yet
  auto wait = i->second.wait.lock();
  if (!wait || wait->completed())
    return result; // between operations
  auto& w = i->second;
  if (!w.channel.empty()) {
    // A channel of another process: its state is known there.
    std::string state_text;
    if (auto ch = st.channels.find(w.channel); ch != st.channels.end()) {
      auto& c = ch->second;
      state_text = " (" + std::to_string(c.items()) + " of "
        + std::to_string(c.plan().channel.capacity) + " items"
        + (c.closed() ? ", closed)" : ")");
    } else if (auto* plan = st.plan.find_channel(w.channel)) {
      state_text = " (on node " + plan->channel.node + ")";
    } else {
      return result;
    }
    result.what = state::waiting;
    result.waits_in
      = (w.kind == channel_op_kind::put      ? "a put into channel '"
           : w.kind == channel_op_kind::take ? "a take from channel '"
                                             : "a close of channel '")
      + w.channel + "'" + state_text;
    return result;
  }
  auto cs = st.collectives.find(w.collective);
  if (cs == st.collectives.end())
    return result;
  auto& calls = cs->second.calls;
  result.waits_in = calls.label(w.call);
  auto progress = calls.progress_of(w.call);
  if (!progress)
    return result;
  // Every contribution in (or a chunk being reduced): the call is under
  // way, not stuck.
  std::string missing;
  for (auto p : progress->missing)
    missing += (missing.empty() ? "" : ", ")
      + task_text(calls.plan().participants[p]);
  bool all_in = progress->missing.empty();
  bool busy = progress->busy;
  result.what = all_in || busy ? state::in_flight : state::waiting;
  if (result.what == state::waiting)
    result.waits_in += ", which waits for " + missing;
  return result;
}

// Every task of the plan that uses a channel or a collective, once.
std::vector<task_ref> exchanging_tasks(const exchange_plan& plan) {
  std::set<task_ref> seen;
  std::vector<task_ref> result;
  auto add = [&](const task_ref& t) {
    if (seen.insert(t).second)
      result.push_back(t);
  };
  for (auto& ch : plan.channels) {
    for (auto& t : ch.putters)
      add(t);
    for (auto& t : ch.takers)
      add(t);
  }
  for (auto& c : plan.collectives)
    for (auto& t : c.participants)
      add(t);
  return result;
}

// Where `x` reports from, for deadlock_probe: its endpoint.
std::string process_key(const caf::actor& x) {
  return caf::to_string(x.node()) + "#" + std::to_string(x.id());
}

} // namespace

exchange_probe_reply exchange_hub::report_of(const run_state& st,
                                             uint64_t round) const {
  exchange_probe_reply result;
  result.run = st.id;
  result.round = round;
  for (auto& t : exchanging_tasks(st.plan))
    if (st.is_local(t.node))
      result.tasks.push_back(view_of(st, t));
  result.activity = st.events;
  result.sent = st.sent + st.replies_sent->load();
  result.received = st.received;
  return result;
}

void exchange_hub::fail_deadlocked(run_state& st, const std::string& what,
                                   deferred& later) {
  // Every wait of the run fails: the tasks fail, and their group with the
  // first of them, naming all of them.
  auto err = make_error(runtime_errc::exchange_failed, what);
  for (auto& [name, ch] : st.channels)
    ch.fail_waiting(err, later.done);
  for (auto& [task, w] : st.waits)
    if (auto wait = w.wait.lock(); wait && !wait->completed())
      later.done.emplace_back(std::move(wait), failure(err));
  st.waits.clear();
  if (st.probe) {
    std::vector<caf::actor> others;
    for (auto& peer : st.plan.peers)
      add_other(others, peer.endpoint, endpoint_);
    for (auto& other : others)
      send(later, other, caf::make_message(exchange_deadlock{st.id, what}));
    st.probe.reset();
  }
}

void exchange_hub::check_deadlock(uint64_t run) {
  deferred later;
  std::optional<std::string> found;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    if (st == nullptr || stopped_)
      return;
    if (st->probe) {
      // A round over every process: the others report by message.
      auto round = st->probe->begin_round();
      std::vector<caf::actor> others;
      for (auto& peer : st->plan.peers)
        add_other(others, peer.endpoint, endpoint_);
      for (auto& other : others)
        send(later, other, caf::make_message(exchange_probe{run, round}));
      found = st->probe->report(process_key(endpoint_), report_of(*st, round));
    } else {
      std::vector<exchange_task_view> views;
      for (auto& t : exchanging_tasks(st->plan))
        views.push_back(view_of(*st, t));
      found = st->deadlock.observe(views, st->events);
    }
    if (found)
      fail_deadlocked(*st, *found, later);
  }
  flush(later);
  if (!found)
    schedule_deadlock_check(run);
}

void exchange_hub::chunk_reduced(uint64_t run, const std::string& name,
                                 uint64_t call, uint32_t chunk) {
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    if (st == nullptr)
      return;
    auto i = st->collectives.find(name);
    if (i == st->collectives.end())
      return;
    ++st->events;
    later.counted = st;
    collective_actions out;
    i->second.calls.chunk_reduced(call, chunk, out);
    carry_out(*st, i->second, out, later);
  }
  flush(later);
}

void exchange_hub::carry_out(run_state& st, collective_state& cs,
                             collective_actions& out, deferred& later) {
  take_completions(out, later);
  for (auto& [to, message] : out.sends) {
    auto msg = std::visit(
      [](auto& x) {
        return caf::make_message(std::move(x));
      },
      message);
    if (to != collective_send::every_other_process) {
      send(later, cs.endpoints[to], std::move(msg));
      continue;
    }
    // One message for every other process: a message's contents are
    // shared, not copied, by its receivers.
    for (auto& other : cs.others)
      send(later, other, msg);
  }
  for (auto& work : out.work) {
    // The last share to finish reports the chunk, unless the hub is gone
    // by then.
    auto left = std::make_shared<std::atomic<size_t>>(work.shares.size());
    auto report = [weak = weak_from_this(), run = st.id, name = cs.plan().name,
                   call = work.call, chunk = work.chunk] {
      if (auto hub = weak.lock())
        hub->chunk_reduced(run, name, call, chunk);
    };
    for (auto& share : work.shares)
      later.jobs.push_back([share = std::move(share), left, report] {
        share();
        if (left->fetch_sub(1) == 1)
          report();
      });
  }
  out.sends.clear();
  out.work.clear();
}

void exchange_hub::end_task(run_state& st, const task_ref& task, bool ok,
                            const std::map<std::string, uint64_t>& calls,
                            deferred& later) {
  ++st.events;
  if (st.watched)
    st.ended_tasks.insert(task);
  for (auto& [name, ch] : st.channels)
    ch.task_ended(task, later.done);
  for (auto& [name, cs] : st.collectives) {
    auto p = cs.calls.index_of(task);
    if (!p)
      continue;
    auto made = calls.count(name) > 0 ? calls.at(name) : 0;
    collective_actions out;
    cs.calls.task_ended(*p, made, ok, out);
    take_completions(out, later);
  }
}

void exchange_hub::task_ended(uint64_t run, const task_ref& task, bool ok,
                              const std::map<std::string, uint64_t>& calls) {
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    auto* st = find_run(run);
    if (st == nullptr)
      return;
    later.counted = st;
    end_task(*st, task, ok, calls, later);
    exchange_task_end msg;
    msg.run = run;
    msg.task = task;
    msg.ok = ok;
    for (auto& [name, n] : calls) {
      msg.collectives.push_back(name);
      msg.calls.push_back(n);
    }
    std::vector<caf::actor> others;
    for (auto& peer : st->plan.peers)
      add_other(others, peer.endpoint, endpoint_);
    for (auto& other : others)
      send(later, other, caf::make_message(msg));
  }
  flush(later);
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

void log_refusal(const caf::actor& sender, const std::string& what) {
  // A proxy lives in this process's system: its logger is ours.
  detail::log(sender.home_system())
    .warn("exchange: refused a message from {}: {}",
          caf::to_string(sender.node()), what);
}

} // namespace

bool exchange_hub::admitted(const caf::actor& sender, run_state& st,
                            const std::string& node, const char* what) {
  auto* ep = st.endpoint_of(node);
  if (ep != nullptr && *ep && ep->node() == sender.node())
    return true;
  log_refusal(sender,
              std::string{what} + " claims node '" + node
                + "', which that process does not host in run "
                + std::to_string(st.id));
  return false;
}

bool exchange_hub::came_right_way(const run_state& st, const caf::actor& sender,
                                  const caf::actor& via) {
  if (!via)
    return true; // direct: `admitted` checks the sender
  if (via == st.plan.relay && via != endpoint_)
    return true;
  log_refusal(sender,
              "a message of run " + std::to_string(st.id)
                + " came through an exchange that is not the run's "
                  "relay");
  return false;
}

template <class Message>
void exchange_hub::dispatch(const caf::actor& sender, Message& msg,
                            const caf::actor& via) {
  deferred later;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return;
    if (auto* st = find_run(msg.run)) {
      if (came_right_way(*st, sender, via)) {
        if constexpr (!is_probe_v<Message>) {
          ++st->received;
          later.counted = st;
        }
        handle(*st, sender, msg, later);
      }
    } else if constexpr (is_probe_v<Message>) {
      // nop: see is_probe_v
    } else if (ended_runs_.count(msg.run) > 0) {
      if constexpr (is_request_v<Message>)
        reply_to(later, sender, msg.run, msg.op, exchange_status::failed,
                 error_text(run_over(msg.run)));
    } else {
      early_payload payload{std::move(msg)};
      auto bytes = bytes_of(payload);
      if (early_bytes_ + bytes > options_.max_early_bytes) {
        auto why = "run " + std::to_string(msg.run)
          + " has not begun here, and messages for runs not begun "
            "fill "
          + std::to_string(early_bytes_) + " bytes already";
        log_refusal(sender, why);
        if constexpr (is_request_v<Message>) {
          auto& kept = std::get<Message>(payload);
          reply_to(later, sender, kept.run, kept.op, exchange_status::failed,
                   why);
        }
      } else {
        early_bytes_ += bytes;
        auto run = std::visit(
          [](auto& x) {
            return x.run;
          },
          payload);
        // Kept until its run begins or ends here, or until the process
        // that sent it (the relay, for a relayed one) goes down: a run
        // that never begins here must not hold the bytes for good.
        auto& from = via ? via : sender;
        if (from != endpoint_ && watched_.insert(from.address()).second)
          later.watch.push_back(from);
        early_[run].push_back(
          early_message{sender, via, std::move(payload), bytes});
      }
    }
  }
  flush(later);
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

namespace {

// A channel request from another process: the channel it names, hosted
// here, and the task, a user of it in the run, or an error text.
template <class Request>
std::string check_request(run_state& st, const Request& msg, channel*& found,
                          bool put_or_close) {
  auto i = st.channels.find(msg.channel);
  if (i == st.channels.end())
    return "no channel '" + msg.channel.substr(0, 64) + "' of run "
      + std::to_string(st.id) + " is hosted here";
  auto& users
    = put_or_close ? i->second.plan().putters : i->second.plan().takers;
  if (std::find(users.begin(), users.end(), msg.from) == users.end())
    return task_text(msg.from) + " does not "
      + (put_or_close ? "put into or close" : "take from") + " channel '"
      + msg.channel + "'";
  found = &i->second;
  return {};
}

// Completes a request from another process by replying to it.
std::shared_ptr<exchange_wait>
replying_wait(std::weak_ptr<exchange_hub> hub, const caf::actor& to,
              uint64_t run, uint64_t op,
              std::shared_ptr<std::atomic<uint64_t>> replies_sent) {
  auto wait = std::make_shared<exchange_wait>();
  auto* raw = wait.get();
  // Runs inside complete(), while the wait is alive.
  wait->on_complete([raw, hub = std::move(hub), to, run, op,
                     replies_sent = std::move(replies_sent)] {
    auto& outcome = raw->outcome();
    exchange_reply reply;
    reply.run = run;
    reply.op = op;
    reply.status = status_of(outcome);
    if (outcome.error)
      reply.error = error_text(outcome.error);
    reply.values = copies_of(outcome.values);
    if (auto self = hub.lock()) {
      ++*replies_sent;
      self->deliver(to, caf::make_message(std::move(reply)));
    }
  });
  return wait;
}

} // namespace

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_put& msg, deferred& later) {
  if (!admitted(sender, st, msg.from.node, "a put"))
    return;
  channel* ch = nullptr;
  auto problem = check_request(st, msg, ch, true);
  if (problem.empty() && msg.item.size() != ch->plan().channel.blobs.size())
    problem = "an item of channel '" + msg.channel + "' has "
      + std::to_string(ch->plan().channel.blobs.size()) + " blobs, the put has "
      + std::to_string(msg.item.size());
  if (problem.empty())
    for (auto& x : msg.item)
      if (!acceptable(x, options_.max_tensor_bytes))
        problem = "a blob of the put is malformed or over "
          + std::to_string(options_.max_tensor_bytes) + " bytes";
  if (!problem.empty()) {
    log_refusal(sender, problem);
    reply_to(later, sender, msg.run, msg.op, exchange_status::failed, problem);
    return;
  }
  if (!st.seen.emplace(msg.from, msg.op).second)
    return; // a duplicate: obeyed once
  ch->put(
    msg.from, shared_values(msg.item),
    replying_wait(weak_from_this(), sender, msg.run, msg.op, st.replies_sent),
    later.done);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_take& msg, deferred& later) {
  if (!admitted(sender, st, msg.from.node, "a take"))
    return;
  channel* ch = nullptr;
  auto problem = check_request(st, msg, ch, false);
  if (!problem.empty()) {
    log_refusal(sender, problem);
    reply_to(later, sender, msg.run, msg.op, exchange_status::failed, problem);
    return;
  }
  if (!st.seen.emplace(msg.from, msg.op).second)
    return;
  ch->take(
    msg.from,
    replying_wait(weak_from_this(), sender, msg.run, msg.op, st.replies_sent),
    later.done);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_close& msg, deferred& later) {
  if (!admitted(sender, st, msg.from.node, "a close"))
    return;
  channel* ch = nullptr;
  auto problem = check_request(st, msg, ch, true);
  if (!problem.empty()) {
    log_refusal(sender, problem);
    reply_to(later, sender, msg.run, msg.op, exchange_status::failed, problem);
    return;
  }
  if (!st.seen.emplace(msg.from, msg.op).second)
    return;
  ch->close(
    msg.from,
    replying_wait(weak_from_this(), sender, msg.run, msg.op, st.replies_sent),
    later.done);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_reply& msg, deferred& later) {
  auto i = st.requests.find(msg.op);
  if (i == st.requests.end())
    return; // answered already (a duplicate), or failed here meanwhile
  if (!admitted(sender, st, i->second.host, "a reply"))
    return;
  auto req = std::move(i->second);
  st.requests.erase(i);
  exchange_outcome outcome;
  switch (msg.status) {
    case exchange_status::ok:
      for (auto& x : msg.values)
        if (!acceptable(x, options_.max_tensor_bytes)) {
          outcome.error = make_error(runtime_errc::exchange_failed,
                                     "node " + req.host
                                       + " sent a malformed item of channel '"
                                       + req.channel + "'");
          break;
        }
      if (!outcome.error)
        outcome.values = shared_values(msg.values);
      break;
    case exchange_status::closed:
      outcome.closed = true;
      break;
    case exchange_status::lost:
      outcome.error = make_error(runtime_errc::peer_lost, msg.error);
      break;
    default:
      outcome.error = make_error(runtime_errc::exchange_failed, msg.error);
  }
  later.done.emplace_back(std::move(req.wait), std::move(outcome));
}

namespace {

// A peer's claim about a participant's blobs: consistent and within limits.
bool sane(const collective_contribution& x, uint64_t max_bytes) {
  if (x.types.size() != x.shapes.size() || x.types.size() > 4096)
    return false;
  for (auto& shape : x.shapes) {
    uint64_t n = 1;
    for (auto d : shape) {
      if (d < 0
          || (d != 0 && n > (uint64_t{1} << 40) / static_cast<uint64_t>(d)))
        return false;
      n *= static_cast<uint64_t>(d);
    }
  }
  for (auto& v : x.values)
    if (!acceptable(v, max_bytes))
      return false;
  return true;
}

} // namespace

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_part& msg, deferred& later) {
  auto i = st.collectives.find(msg.collective);
  if (i == st.collectives.end() || msg.call >= max_calls) {
    log_refusal(sender,
                "no collective '" + msg.collective.substr(0, 64) + "' in run "
                  + std::to_string(st.id));
    return;
  }
  auto& cs = i->second;
  auto from = cs.process_of(sender);
  if (!from) {
    log_refusal(sender,
                "a part of collective '" + msg.collective
                  + "' from a process without its participants");
    return;
  }
  for (auto& part : msg.parts)
    take_views(part.values, part.views);
  for (auto& part : msg.parts)
    if (part.participant >= cs.size()
        || !sane(part, options_.max_tensor_bytes)) {
      log_refusal(sender,
                  "a part of collective '" + msg.collective
                    + "' names no participant, or is malformed");
      return;
    }
  collective_actions out;
  if (auto refused = cs.calls.part_arrived(*from, msg, out)) {
    log_refusal(sender, *refused);
    return;
  }
  carry_out(st, cs, out, later);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_result& msg, deferred& later) {
  auto i = st.collectives.find(msg.collective);
  if (i == st.collectives.end() || msg.call >= max_calls)
    return;
  auto& cs = i->second;
  auto from = cs.process_of(sender);
  if (!from) {
    log_refusal(sender,
                "a result of collective '" + msg.collective
                  + "' from a process without its participants");
    return;
  }
  take_views(msg.values, msg.views);
  for (auto& v : msg.values)
    if (!acceptable(v, options_.max_tensor_bytes)) {
      log_refusal(sender,
                  "a result of collective '" + msg.collective
                    + "' that is malformed or too large");
      return;
    }
  collective_actions out;
  if (auto refused = cs.calls.result_arrived(*from, msg, out)) {
    log_refusal(sender, *refused);
    return;
  }
  carry_out(st, cs, out, later);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_task_end& msg, deferred& later) {
  if (!admitted(sender, st, msg.task.node, "a task's end"))
    return;
  if (msg.collectives.size() != msg.calls.size())
    return;
  std::map<std::string, uint64_t> calls;
  for (size_t i = 0; i < msg.calls.size(); ++i)
    calls[msg.collectives[i]] = msg.calls[i];
  end_task(st, msg.task, msg.ok, calls, later);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_node_lost& msg, deferred& later) {
  if (!admitted(sender, st, msg.node, "a lost node"))
    return;
  lose_node(st, msg.node, msg.why.substr(0, 1024), later);
}

// -- the deadlock check of a run over several processes ---------------------

bool exchange_hub::from_prober(const run_state& st, const caf::actor& sender,
                               const char* what) {
  auto& prober = st.plan.peers.front().endpoint;
  if (prober && prober == sender && prober != endpoint_)
    return true;
  log_refusal(sender,
              std::string{what} + " of run " + std::to_string(st.id)
                + " from an exchange that does not probe it");
  return false;
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_probe& msg, deferred& later) {
  if (!st.watched || !from_prober(st, sender, "a deadlock probe"))
    return;
  send(later, sender, caf::make_message(report_of(st, msg.round)));
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_probe_reply& msg, deferred& later) {
  if (!st.probe)
    return; // not the prober, or the verdict is out
  auto& peers = st.plan.peers;
  if (std::none_of(peers.begin(), peers.end(), [&](const exchange_peer& p) {
        return p.endpoint == sender;
      })) {
    log_refusal(sender,
                "a deadlock report from an exchange not of run "
                  + std::to_string(st.id));
    return;
  }
  if (auto found = st.probe->report(process_key(sender), msg))
    fail_deadlocked(st, *found, later);
}

void exchange_hub::handle(run_state& st, const caf::actor& sender,
                          exchange_deadlock& msg, deferred& later) {
  if (!from_prober(st, sender, "a deadlock"))
    return;
  fail_deadlocked(st, msg.what.substr(0, max_deadlock_text), later);
}

} // namespace epochrt
