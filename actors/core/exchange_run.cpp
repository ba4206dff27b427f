#include <epochrt/actors/core/exchange_run.hpp>

#include <algorithm>
#include <utility>
#include <variant>

#include <caf/make_message.hpp>

#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/reduction.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// A collective's calls, at most: a bound on what a peer may name.
constexpr uint64_t max_calls = uint64_t{1} << 40;

// The longest deadlock text taken from another process.
constexpr size_t max_deadlock_text = 64 * 1024;

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

// The waits a collective completed, to complete once the lock is released.
void take_completions(collective_actions& actions, exchange_effects& out) {
  for (auto& completion : actions.done)
    out.done.push_back(std::move(completion));
  actions.done.clear();
}

// The distinct endpoints other than `self` among `nodes`' endpoints.
void add_other(std::vector<caf::actor>& others, const caf::actor& x,
               const caf::actor& self) {
  if (!x || x == self)
    return;
  if (std::find(others.begin(), others.end(), x) == others.end())
    others.push_back(x);
}

exchange_status status_of(const exchange_outcome& outcome) {
  if (!outcome.error)
    return outcome.closed ? exchange_status::closed : exchange_status::ok;
  if (is_error(outcome.error, runtime_errc::peer_lost))
    return exchange_status::lost;
  return exchange_status::failed;
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

// -- construction -------------------------------------------------------------

std::optional<uint32_t>
exchange_run::collective_state::process_of(const caf::actor& sender) const {
  auto i = std::find(others.begin(), others.end(), sender);
  if (i == others.end())
    return std::nullopt;
  return static_cast<uint32_t>(i - others.begin()) + 1;
}

exchange_run::exchange_run(uint64_t id, const exchange_plan& plan,
                           const exchange_run_context& context)
  : id_(id), plan_(plan), context_(context) {
  // nop
}

caf::expected<std::unique_ptr<exchange_run>>
exchange_run::make(uint64_t id, const exchange_plan& plan,
                   const std::string& node, bool watched,
                   const exchange_run_context& context) {
  std::unique_ptr<exchange_run> result{new exchange_run(id, plan, context)};
  auto& self = context.endpoint;
  for (auto& peer : result->plan_.peers)
    if (peer.endpoint == self)
      result->local_nodes_.insert(peer.node);
  if (!result->is_local(node))
    return make_error(runtime_errc::exchange_failed,
                      "the plan of the group names no exchange of this "
                      "process for node "
                        + node);
  for (auto& ch : result->plan_.channels)
    if (result->is_local(ch.channel.node))
      result->channels_.emplace(ch.channel.name, channel{ch});
  for (auto& cp : result->plan_.collectives) {
    std::vector<uint32_t> process_of;
    std::vector<caf::actor> endpoints;
    std::vector<caf::actor> others;
    for (auto& p : cp.participants) {
      auto* ep = result->endpoint_of(p.node);
      if (ep == nullptr || !*ep)
        return make_error(runtime_errc::exchange_failed,
                          "the plan of the group names no exchange for "
                          "node "
                            + p.node + " of collective '" + cp.name + "'");
      endpoints.push_back(*ep);
      add_other(others, *ep, self);
      // Its process: this one (0), or the others in their order.
      auto other = std::find(others.begin(), others.end(), *ep);
      process_of.push_back(result->is_local(p.node)
                             ? 0
                             : static_cast<uint32_t>(other - others.begin())
                               + 1);
    }
    result->collectives_.emplace(
      cp.name,
      collective_state{
        collective_run{id, cp, std::move(process_of), 0, context.recycler},
        std::move(endpoints), std::move(others)});
  }
  result->watched_ = watched;
  auto processes = result->other_processes().size() + 1;
  if (watched && processes > 1 && result->plan_.peers.front().endpoint == self)
    result->probe_.emplace(processes);
  return result;
}

std::vector<caf::actor> exchange_run::other_processes() const {
  std::vector<caf::actor> others;
  for (auto& peer : plan_.peers)
    add_other(others, peer.endpoint, context_.endpoint);
  return others;
}

bool exchange_run::checked_here() const noexcept {
  return watched_ && (other_processes().empty() || probe_.has_value());
}

void exchange_run::send(exchange_effects& out, const caf::actor& to,
                        caf::message msg) {
  if (!to)
    return;
  ++sent_;
  out.send(to, std::move(msg));
}

void exchange_run::track(const task_ref& from, tracked_wait wait) {
  ++events_;
  if (watched_)
    waits_[from] = std::move(wait);
}

// -- the nodes of this process ------------------------------------------------

void exchange_run::node_began(const std::string& node) {
  begun_.insert(node);
}

bool exchange_run::node_ended(const std::string& node, bool abort,
                              exchange_report& report, exchange_effects& out) {
  auto cancelled
    = make_error(runtime_errc::cancelled, "cancelled: the group run ended");
  for (auto i = channels_.begin(); i != channels_.end();) {
    auto& ch = i->second;
    if (ch.plan().channel.node != node) {
      ++i;
      continue;
    }
    report.channels.push_back(
      channel_state{ch.name(), node, ch.items(), ch.closed()});
    ch.fail_waiting(cancelled, out.done);
    i = channels_.erase(i);
  }
  if (abort)
    cancel(node, cancelled, out);
  begun_.erase(node);
  return begun_.empty();
}

bool exchange_run::local_node_lost(const std::string& node,
                                   const std::string& why,
                                   exchange_effects& out) {
  lose_node(node, why, out);
  for (auto& other : other_processes())
    send(out, other, caf::make_message(exchange_node_lost{id_, node, why}));
  begun_.erase(node);
  return begun_.empty();
}

void exchange_run::lose_node(const std::string& node, const std::string& why,
                             exchange_effects& out) {
  if (!lost_.emplace(node, why).second)
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
  for (auto& [name, ch] : channels_)
    if (uses(ch.plan()))
      ch.fail_waiting(lost(" while tasks waited on channel '" + name + "'"),
                      out.done);
  for (auto& [name, cs] : collectives_) {
    collective_actions actions;
    cs.calls.node_lost(node, why, actions);
    take_completions(actions, out);
  }
  for (auto i = requests_.begin(); i != requests_.end();) {
    auto& req = i->second;
    if (req.host != node && req.from.node != node) {
      ++i;
      continue;
    }
    out.fail(std::move(req.wait),
             lost(", the node of channel '" + req.channel + "'"));
    i = requests_.erase(i);
  }
}

void exchange_run::cancel(const std::string& node, const caf::error& why,
                          exchange_effects& out) {
  for (auto& [name, ch] : channels_)
    ch.fail_waiting_of(node, why, out.done);
  for (auto& [name, cs] : collectives_) {
    collective_actions actions;
    cs.calls.cancel_waits_of(node, why, actions);
    take_completions(actions, out);
  }
  for (auto i = requests_.begin(); i != requests_.end();) {
    if (i->second.from.node != node) {
      ++i;
      continue;
    }
    out.fail(std::move(i->second.wait), why);
    i = requests_.erase(i);
  }
}

void exchange_run::fail_all(const caf::error& why, exchange_effects& out) {
  for (auto& [name, ch] : channels_)
    ch.fail_waiting(why, out.done);
  for (auto& [name, cs] : collectives_) {
    collective_actions actions;
    cs.calls.fail_all(why, actions);
    take_completions(actions, out);
  }
  for (auto& [op, req] : requests_)
    out.fail(std::move(req.wait), why);
  requests_.clear();
}

// -- a task's operations ------------------------------------------------------

void exchange_run::channel_op(const task_ref& from, uint64_t op,
                              channel_op_kind kind,
                              const std::string& channel_name,
                              std::vector<tensor_ptr> item,
                              std::shared_ptr<exchange_wait> wait,
                              exchange_effects& out) {
  auto* plan = plan_.find_channel(channel_name);
  if (plan == nullptr) {
    out.fail(std::move(wait), run_over(id_));
  } else if (auto lost = lost_.find(plan->channel.node); lost != lost_.end()) {
    out.fail(std::move(wait),
             make_error(runtime_errc::peer_lost,
                        "node " + plan->channel.node + " of channel '"
                          + channel_name + "' was lost (" + lost->second
                          + ")"));
  } else if (is_local(plan->channel.node)) {
    track(from, tracked_wait{wait, kind, channel_name, {}, 0});
    if (seen_.emplace(from, op).second)
      apply_channel_op(channels_.at(channel_name), kind, from, std::move(item),
                       std::move(wait), out.done);
  } else if (requests_.count(op) == 0) {
    track(from, tracked_wait{wait, kind, channel_name, {}, 0});
    requests_.emplace(op,
                      outgoing_request{std::move(wait), from,
                                       plan->channel.node, channel_name});
    send(out, *endpoint_of(plan->channel.node),
         channel_message(kind, id_, channel_name, op, from, item));
  }
}

void exchange_run::contribute(const task_ref& from, collective_kind kind,
                              const std::string& name, uint64_t call,
                              std::vector<tensor_ptr> inputs,
                              std::shared_ptr<exchange_wait> wait,
                              exchange_effects& out) {
  auto i = collectives_.find(name);
  if (i == collectives_.end()) {
    out.fail(std::move(wait),
             make_error(runtime_errc::exchange_failed,
                        "collective '" + name
                          + "' is not a collective of this group"));
  } else if (auto& cs = i->second; cs.calls.plan().kind != kind) {
    out.fail(std::move(wait),
             make_error(runtime_errc::exchange_failed,
                        "collective '" + name + "' is "
                          + describe_one(cs.calls.plan().kind) + ", not "
                          + describe_one(kind)));
  } else if (auto p = cs.calls.index_of(from); !p) {
    out.fail(std::move(wait),
             make_error(runtime_errc::exchange_failed,
                        task_text(from) + " is not a participant of "
                          + describe(kind) + " '" + name + "'"));
  } else {
    std::weak_ptr<exchange_wait> tracked = wait;
    collective_actions actions;
    if (cs.calls.contribute(*p, call, std::move(inputs), std::move(wait),
                            actions))
      track(from,
            tracked_wait{
              std::move(tracked), channel_op_kind::take, {}, name, call});
    carry_out(cs, actions, out);
  }
}

void exchange_run::chunk_reduced(const std::string& name, uint64_t call,
                                 uint32_t chunk, exchange_effects& out) {
  auto i = collectives_.find(name);
  if (i == collectives_.end())
    return;
  ++events_;
  collective_actions actions;
  i->second.calls.chunk_reduced(call, chunk, actions);
  carry_out(i->second, actions, out);
}

void exchange_run::carry_out(collective_state& cs, collective_actions& actions,
                             exchange_effects& out) {
  take_completions(actions, out);
  for (auto& [to, message, those] : actions.sends) {
    auto msg = std::visit(
      [](auto& x) {
        return caf::make_message(std::move(x));
      },
      message);
    if (to == collective_send::each_of) {
      for (auto p : those)
        send(out, cs.endpoints[p], msg);
      continue;
    }
    if (to != collective_send::every_other_process) {
      send(out, cs.endpoints[to], std::move(msg));
      continue;
    }
    // One message for every other process: a message's contents are
    // shared, not copied, by its receivers.
    for (auto& other : cs.others)
      send(out, other, msg);
  }
  for (auto& work : actions.work) {
    // The last share to finish reports the chunk.
    auto left = std::make_shared<std::atomic<size_t>>(work.shares.size());
    auto report
      = [reduced = context_.chunk_reduced, run = id_,
         name = cs.calls.plan().name, call = work.call, chunk = work.chunk] {
          reduced(run, name, call, chunk);
        };
    for (auto& share : work.shares)
      out.jobs.push_back([share = std::move(share), left, report] {
        share();
        if (left->fetch_sub(1) == 1)
          report();
      });
  }
  actions.sends.clear();
  actions.work.clear();
}

void exchange_run::end_task(const task_ref& task, bool ok,
                            const std::map<std::string, uint64_t>& calls,
                            exchange_effects& out) {
  ++events_;
  if (watched_)
    ended_tasks_.insert(task);
  for (auto& [name, ch] : channels_)
    ch.task_ended(task, out.done);
  for (auto& [name, cs] : collectives_) {
    auto p = cs.calls.index_of(task);
    if (!p)
      continue;
    auto made = calls.count(name) > 0 ? calls.at(name) : 0;
    collective_actions actions;
    cs.calls.task_ended(*p, made, ok, actions);
    take_completions(actions, out);
  }
}

void exchange_run::task_ended(const task_ref& task, bool ok,
                              const std::map<std::string, uint64_t>& calls,
                              exchange_effects& out) {
  end_task(task, ok, calls, out);
  exchange_task_end msg;
  msg.run = id_;
  msg.task = task;
  msg.ok = ok;
  for (auto& [name, n] : calls) {
    msg.collectives.push_back(name);
    msg.calls.push_back(n);
  }
  for (auto& other : told_of_end(task))
    send(out, other, caf::make_message(msg));
}

// Not every process: at 128 daemons one per task and process was 16,000
// messages an epoch, most of them through the master's relay.
std::vector<caf::actor> exchange_run::told_of_end(const task_ref& task) const {
  std::vector<caf::actor> result;
  auto add = [&](const caf::actor& endpoint) {
    if (endpoint && endpoint != context_.endpoint
        && std::find(result.begin(), result.end(), endpoint) == result.end())
      result.push_back(endpoint);
  };
  for (auto& [name, cs] : collectives_)
    if (auto p = cs.calls.index_of(task))
      for (auto process : cs.calls.told_of_end(*p))
        if (process > 0)
          add(cs.others[process - 1]);
  auto uses = [&](const std::vector<task_ref>& tasks) {
    return std::find(tasks.begin(), tasks.end(), task) != tasks.end();
  };
  for (auto& ch : plan_.channels)
    if (uses(ch.putters) || uses(ch.takers))
      if (auto* endpoint = endpoint_of(ch.channel.node))
        add(*endpoint);
  return result;
}

// -- messages from other processes --------------------------------------------

bool exchange_run::came_right_way(const caf::actor& sender,
                                  const caf::actor& via) const {
  if (!via)
    return true; // direct: `admitted` checks the sender
  if (via == plan_.relay && via != context_.endpoint)
    return true;
  log_refusal(sender,
              "a message of run " + std::to_string(id_)
                + " came through an exchange that is not the run's "
                  "relay");
  return false;
}

bool exchange_run::admitted(const caf::actor& sender, const std::string& node,
                            const char* what) const {
  auto* ep = endpoint_of(node);
  if (ep != nullptr && *ep && ep->node() == sender.node())
    return true;
  log_refusal(sender,
              std::string{what} + " claims node '" + node
                + "', which that process does not host in run "
                + std::to_string(id_));
  return false;
}

template <class Request>
channel* exchange_run::checked_request(const caf::actor& sender,
                                       const Request& msg, bool put_or_close,
                                       exchange_effects& out) {
  auto refuse = [&](const std::string& problem) -> channel* {
    log_refusal(sender, problem);
    send(out, sender,
         reply_message(msg.run, msg.op, exchange_status::failed, problem));
    return nullptr;
  };
  auto i = channels_.find(msg.channel);
  if (i == channels_.end())
    return refuse("no channel '" + msg.channel.substr(0, 64) + "' of run "
                  + std::to_string(id_) + " is hosted here");
  auto& users
    = put_or_close ? i->second.plan().putters : i->second.plan().takers;
  if (std::find(users.begin(), users.end(), msg.from) == users.end())
    return refuse(task_text(msg.from) + " does not "
                  + (put_or_close ? "put into or close" : "take from")
                  + " channel '" + msg.channel + "'");
  auto& ch = i->second;
  if constexpr (std::is_same_v<Request, exchange_put>) {
    auto blobs = ch.plan().channel.blobs.size();
    if (msg.item.size() != blobs)
      return refuse("an item of channel '" + msg.channel + "' has "
                    + std::to_string(blobs) + " blobs, the put has "
                    + std::to_string(msg.item.size()));
    for (auto& x : msg.item)
      if (!acceptable(x, context_.max_tensor_bytes))
        return refuse("a blob of the put is malformed or over "
                      + std::to_string(context_.max_tensor_bytes) + " bytes");
  }
  return &ch;
}

std::shared_ptr<exchange_wait> exchange_run::replying_wait(const caf::actor& to,
                                                           uint64_t op) const {
  auto wait = std::make_shared<exchange_wait>();
  auto* raw = wait.get();
  // Runs inside complete(), while the wait is alive, with no lock held.
  wait->on_complete([raw, deliver = context_.deliver, to, run = id_, op,
                     replies_sent = replies_sent_] {
    auto& outcome = raw->outcome();
    exchange_reply reply;
    reply.run = run;
    reply.op = op;
    reply.status = status_of(outcome);
    if (outcome.error)
      reply.error = error_text(outcome.error);
    reply.values = copies_of(outcome.values);
    ++*replies_sent;
    deliver(to, caf::make_message(std::move(reply)));
  });
  return wait;
}

void exchange_run::handle(const caf::actor& sender, exchange_put& msg,
                          exchange_effects& out) {
  if (!admitted(sender, msg.from.node, "a put"))
    return;
  auto* ch = checked_request(sender, msg, true, out);
  if (ch == nullptr || !seen_.emplace(msg.from, msg.op).second)
    return; // refused, or a duplicate: obeyed once
  ch->put(msg.from, shared_values(msg.item), replying_wait(sender, msg.op),
          out.done);
}

void exchange_run::handle(const caf::actor& sender, exchange_take& msg,
                          exchange_effects& out) {
  if (!admitted(sender, msg.from.node, "a take"))
    return;
  auto* ch = checked_request(sender, msg, false, out);
  if (ch == nullptr || !seen_.emplace(msg.from, msg.op).second)
    return;
  ch->take(msg.from, replying_wait(sender, msg.op), out.done);
}

void exchange_run::handle(const caf::actor& sender, exchange_close& msg,
                          exchange_effects& out) {
  if (!admitted(sender, msg.from.node, "a close"))
    return;
  auto* ch = checked_request(sender, msg, true, out);
  if (ch == nullptr || !seen_.emplace(msg.from, msg.op).second)
    return;
  ch->close(msg.from, replying_wait(sender, msg.op), out.done);
}

void exchange_run::handle(const caf::actor& sender, exchange_reply& msg,
                          exchange_effects& out) {
  auto i = requests_.find(msg.op);
  if (i == requests_.end())
    return; // answered already (a duplicate), or failed here meanwhile
  if (!admitted(sender, i->second.host, "a reply"))
    return;
  auto req = std::move(i->second);
  requests_.erase(i);
  exchange_outcome outcome;
  switch (msg.status) {
    case exchange_status::ok:
      for (auto& x : msg.values)
        if (!acceptable(x, context_.max_tensor_bytes)) {
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
  out.done.emplace_back(std::move(req.wait), std::move(outcome));
}

void exchange_run::handle(const caf::actor& sender, exchange_part& msg,
                          exchange_effects& out) {
  auto i = collectives_.find(msg.collective);
  if (i == collectives_.end() || msg.call >= max_calls) {
    log_refusal(sender,
                "no collective '" + msg.collective.substr(0, 64) + "' in run "
                  + std::to_string(id_));
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
    if (part.participant >= cs.calls.size()
        || !sane(part, context_.max_tensor_bytes)) {
      log_refusal(sender,
                  "a part of collective '" + msg.collective
                    + "' names no participant, or is malformed");
      return;
    }
  collective_actions actions;
  if (auto refused = cs.calls.part_arrived(*from, msg, actions)) {
    log_refusal(sender, *refused);
    return;
  }
  carry_out(cs, actions, out);
}

void exchange_run::handle(const caf::actor& sender, exchange_result& msg,
                          exchange_effects& out) {
  auto i = collectives_.find(msg.collective);
  if (i == collectives_.end() || msg.call >= max_calls)
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
    if (!acceptable(v, context_.max_tensor_bytes)) {
      log_refusal(sender,
                  "a result of collective '" + msg.collective
                    + "' that is malformed or too large");
      return;
    }
  collective_actions actions;
  if (auto refused = cs.calls.result_arrived(*from, msg, actions)) {
    log_refusal(sender, *refused);
    return;
  }
  carry_out(cs, actions, out);
}

void exchange_run::handle(const caf::actor& sender, exchange_task_end& msg,
                          exchange_effects& out) {
  if (!admitted(sender, msg.task.node, "a task's end"))
    return;
  if (msg.collectives.size() != msg.calls.size())
    return;
  std::map<std::string, uint64_t> calls;
  for (size_t i = 0; i < msg.calls.size(); ++i)
    calls[msg.collectives[i]] = msg.calls[i];
  end_task(msg.task, msg.ok, calls, out);
}

void exchange_run::handle(const caf::actor& sender, exchange_node_lost& msg,
                          exchange_effects& out) {
  if (!admitted(sender, msg.node, "a lost node"))
    return;
  lose_node(msg.node, msg.why.substr(0, 1024), out);
}

// -- the deadlock check -------------------------------------------------------

exchange_task_view exchange_run::view_of(const task_ref& t) const {
  using state = exchange_task_view::state;
  exchange_task_view result{task_text(t), state::running, {}};
  if (ended_tasks_.count(t) > 0) {
    result.what = state::ended;
    return result;
  }
  auto i = waits_.find(t);
  if (i == waits_.end())
    return result; // has not reached the exchange yet
  auto wait = i->second.wait.lock();
  if (!wait || wait->completed())
    return result; // between operations
  auto& w = i->second;
  if (!w.channel.empty()) {
    // A channel of another process: its state is known there.
    std::string state_text;
    if (auto ch = channels_.find(w.channel); ch != channels_.end()) {
      auto& c = ch->second;
      state_text = " (" + std::to_string(c.items()) + " of "
        + std::to_string(c.plan().channel.capacity) + " items"
        + (c.closed() ? ", closed)" : ")");
    } else if (auto* plan = plan_.find_channel(w.channel)) {
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
  auto cs = collectives_.find(w.collective);
  if (cs == collectives_.end())
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

exchange_probe_reply exchange_run::report_of(uint64_t round) const {
  exchange_probe_reply result;
  result.run = id_;
  result.round = round;
  for (auto& t : exchanging_tasks(plan_))
    if (is_local(t.node))
      result.tasks.push_back(view_of(t));
  result.activity = events_;
  result.sent = sent_ + replies_sent_->load();
  result.received = received_;
  return result;
}

void exchange_run::fail_deadlocked(const std::string& what,
                                   exchange_effects& out) {
  // Every wait of the run fails: the tasks fail, and their group with the
  // first of them, naming all of them.
  auto err = make_error(runtime_errc::exchange_failed, what);
  for (auto& [name, ch] : channels_)
    ch.fail_waiting(err, out.done);
  for (auto& [task, w] : waits_)
    if (auto wait = w.wait.lock(); wait && !wait->completed())
      out.fail(std::move(wait), err);
  waits_.clear();
  if (probe_) {
    // The verdict is not the run's traffic: not counted.
    for (auto& other : other_processes())
      out.send(other, caf::make_message(exchange_deadlock{id_, what}));
    probe_.reset();
  }
}

std::optional<std::string> exchange_run::check_deadlock(exchange_effects& out) {
  std::optional<std::string> found;
  if (probe_) {
    // A round over every process: the others report by message (not the
    // run's traffic: not counted).
    auto round = probe_->begin_round();
    for (auto& other : other_processes())
      out.send(other, caf::make_message(exchange_probe{id_, round}));
    found = probe_->report(process_key(context_.endpoint), report_of(round));
  } else {
    std::vector<exchange_task_view> views;
    for (auto& t : exchanging_tasks(plan_))
      views.push_back(view_of(t));
    found = deadlock_.observe(views, events_);
  }
  if (found)
    fail_deadlocked(*found, out);
  return found;
}

bool exchange_run::from_prober(const caf::actor& sender,
                               const char* what) const {
  auto& prober = plan_.peers.front().endpoint;
  if (prober && prober == sender && prober != context_.endpoint)
    return true;
  log_refusal(sender,
              std::string{what} + " of run " + std::to_string(id_)
                + " from an exchange that does not probe it");
  return false;
}

void exchange_run::handle(const caf::actor& sender, exchange_probe& msg,
                          exchange_effects& out) {
  if (!watched_ || !from_prober(sender, "a deadlock probe"))
    return;
  out.send(sender, caf::make_message(report_of(msg.round)));
}

void exchange_run::handle(const caf::actor& sender, exchange_probe_reply& msg,
                          exchange_effects& out) {
  if (!probe_)
    return; // not the prober, or the verdict is out
  auto& peers = plan_.peers;
  if (std::none_of(peers.begin(), peers.end(), [&](const exchange_peer& p) {
        return p.endpoint == sender;
      })) {
    log_refusal(sender,
                "a deadlock report from an exchange not of run "
                  + std::to_string(id_));
    return;
  }
  if (auto found = probe_->report(process_key(sender), msg))
    fail_deadlocked(*found, out);
}

void exchange_run::handle(const caf::actor& sender, exchange_deadlock& msg,
                          exchange_effects& out) {
  if (!from_prober(sender, "a deadlock"))
    return;
  fail_deadlocked(msg.what.substr(0, max_deadlock_text), out);
}

} // namespace epochrt
