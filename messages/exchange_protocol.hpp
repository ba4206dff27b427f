#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/serializer.hpp>

#include <epochrt/messages/collective_kind.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/message_fields.hpp>
#include <epochrt/messages/tensor.hpp>

// What the tasks of one group run exchange: the plan a node gets with its
// tasks (the group's channels and collectives, and where every node of the
// group has its exchange), and the messages the exchanges of two processes
// send each other on behalf of their nodes' tasks.
//
// Every process that hosts nodes (a session, a node daemon) has one
// exchange, reached through one endpoint actor. A task's put, take or close
// goes to the exchange of the channel's node; a collective's contributions
// and results go between the exchanges of its participants. Messages carry
// the group run's id (`run`): a channel or collective lives for one run.
//
//   task side -> host:      exchange_put | exchange_take | exchange_close
//   host -> task side:      exchange_reply
//   participant <-> peers:  exchange_part (contributions to a chunk's
//                           owner), exchange_result (a chunk reduced, a
//                           broadcast's data), exchange_task_end (a task of
//                           the run ended: channels and collectives that
//                           wait for it learn they never will),
//                           exchange_node_lost (a node of the run is gone)
//   prober <-> peers:       exchange_probe, exchange_probe_reply,
//                           exchange_deadlock (the deadlock check of a run
//                           over several processes)

namespace epochrt {

/// A task of a group: its node and its name.
struct task_ref {
  std::string node;
  std::string task;
};

bool operator==(const task_ref& x, const task_ref& y) noexcept;
bool operator<(const task_ref& x, const task_ref& y) noexcept;

/// "task 'T' on N", for error messages.
std::string task_text(const task_ref& x);

/// "'T1' on N1, 'T2' on N2", for error messages.
std::string tasks_text(const std::vector<task_ref>& xs);

/// A channel as one run of a group uses it: its declaration, the tasks that
/// put into it or close it (`putters`), and the tasks that take from it
/// (`takers`). Once every putter has ended, a take from the empty, open
/// channel can never be answered; once every taker has ended, a put into
/// the full channel can never be: both then fail instead of waiting.
struct channel_plan {
  channel_def channel;
  std::vector<task_ref> putters;
  std::vector<task_ref> takers;
};

/// A collective of one run of a group: its name, kind, reduction (all-
/// reduce), root node (broadcast) and participants — every task of the
/// group with an op of this collective, sorted by node name, then task
/// name. That order is the order of reduction and of all-gather's stack,
/// whatever order contributions arrive in.
struct collective_plan {
  std::string name;
  collective_kind kind = collective_kind::all_reduce;
  reduce_op op = reduce_op::sum;
  std::string root;
  std::vector<task_ref> participants;
};

/// Where a node of the group exchanges: the endpoint actor of the process
/// that hosts it, and, for a node on a daemon, the address where the
/// session reached that daemon (empty host and port 0 otherwise), where
/// the other daemons of the run may connect to it directly.
struct exchange_peer {
  std::string node;
  caf::actor endpoint;
  std::string host;
  uint16_t port = 0;
};

/// What a node needs for the channels and collectives of one group run.
/// Empty for a group that uses none (the common case, which costs nothing).
/// `peers` names every node of the group and every channel's node.
struct exchange_plan {
  std::vector<channel_plan> channels;
  std::vector<collective_plan> collectives;
  std::vector<exchange_peer> peers;
  /// The exchange that passes messages between the processes of the run
  /// that are not connected to each other: the session's, when some peers
  /// are node daemons (each daemon is connected to its master only). Null
  /// when every peer reaches every other directly (one process).
  caf::actor relay;

  bool empty() const noexcept {
    return channels.empty() && collectives.empty();
  }

  const channel_plan* find_channel(std::string_view name) const noexcept;
  const collective_plan* find_collective(std::string_view name) const noexcept;
  /// The endpoint of `node`, or null when the plan does not name it.
  const caf::actor* endpoint_of(std::string_view node) const noexcept;
};

/// Node: the run `run` of a group is over (`abort`: it failed). Replies the
/// state of the channels the node hosted in it, and drops them; with
/// `abort`, the node's tasks of the run still waiting are cancelled first.
struct exchange_end {
  uint64_t run = 0;
  bool abort = false;
};

/// A channel as its group run left it.
struct channel_state {
  std::string channel;
  std::string node;
  uint64_t items = 0;
  bool closed = false;
};

struct exchange_report {
  std::vector<channel_state> channels;
};

/// How an exchange request ended, in `exchange_reply`.
enum class exchange_status : uint8_t {
  /// Done: a put stored, a take's item in `values`, a close done.
  ok,
  /// A take found the channel closed and empty.
  closed,
  /// Failed by the job: `error` says why (a put into a closed channel,
  /// a take that can never be answered, mismatched shapes).
  failed,
  /// Failed because a node of the run was lost: `error` names it.
  lost,
};

/// Task side -> a channel's host: put `item` into `channel` of run `run`.
/// `op` is the sender's id for the request, echoed in the reply.
struct exchange_put {
  uint64_t run = 0;
  std::string channel;
  uint64_t op = 0;
  task_ref from;
  std::vector<tensor> item;
};

/// Task side -> a channel's host: take an item, waiting while the channel
/// is empty and open.
struct exchange_take {
  uint64_t run = 0;
  std::string channel;
  uint64_t op = 0;
  task_ref from;
};

/// Task side -> a channel's host: close the channel (idempotent).
struct exchange_close {
  uint64_t run = 0;
  std::string channel;
  uint64_t op = 0;
  task_ref from;
};

/// A channel's host -> task side: the end of request `op`.
struct exchange_reply {
  uint64_t run = 0;
  uint64_t op = 0;
  exchange_status status = exchange_status::ok;
  std::string error;
  std::vector<tensor> values;
};

/// Elements [first, last) of `source`, a numeric tensor, as a sender puts
/// them into a message without copying them first: the serializer reads
/// them from `source`, which the message keeps alive and nobody may change
/// meanwhile. On the wire they are a rank-1 tensor of those elements;
/// a receiver gets that tensor, never a view.
struct tensor_slice_view {
  std::shared_ptr<const tensor> source;
  size_t first = 0;
  size_t last = 0;
};

/// The rank-1 tensor `x` stands for, copied (for a message that reaches
/// its receiver without being serialized).
tensor materialize(const tensor_slice_view& x);

/// The blobs one participant gives a collective call, or a chunk of them:
/// `shapes` are the whole blobs' shapes (so that a mismatch is seen
/// wherever a chunk lands), `values` the chunk's part of each.
struct collective_contribution {
  uint32_t participant = 0;
  std::vector<dtype> types;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<tensor> values;
  /// What a sender sends in place of `values`, when not empty: serialized
  /// as `values` would be, and received as `values`.
  std::vector<tensor_slice_view> views;
};

/// Participants' exchange -> the exchange of chunk `chunk`'s owner: their
/// contributions to that chunk of call `call` (0 for a collective's first
/// call in the run). An all-reduce among n participants has n chunks, or
/// between processes n times the pieces each participant's share is cut
/// into (a function of the blobs' types and shapes); chunk j's owner is
/// participant j mod n. For broadcast and all-gather the chunk is the
/// whole blobs. Also carries barriers.
struct exchange_part {
  uint64_t run = 0;
  std::string collective;
  uint64_t call = 0;
  uint32_t chunk = 0;
  std::vector<collective_contribution> parts;
};

/// The owner of chunk `chunk` -> the other participants' exchanges: the
/// chunk reduced, one tensor per blob; or, with a non-empty `error`, why
/// the call failed (mismatched blobs, naming the nodes).
struct exchange_result {
  uint64_t run = 0;
  std::string collective;
  uint64_t call = 0;
  uint32_t chunk = 0;
  std::vector<tensor> values;
  std::string error;
  /// What a sender sends in place of `values`, when not empty: serialized
  /// as `values` would be, and received as `values`.
  std::vector<tensor_slice_view> views;
};

/// A task of run `run` ended (`ok`: it succeeded) after `calls[i]` calls
/// of collective `collectives[i]`. Sent to every other exchange of the
/// run: a channel whose every putter or taker has ended, or a collective
/// call a participant will never make, fails its waiting tasks.
struct exchange_task_end {
  uint64_t run = 0;
  task_ref task;
  bool ok = true;
  std::vector<std::string> collectives;
  std::vector<uint64_t> calls;
};

/// Node `node` of run `run` is gone (killed, frozen past the connection
/// timeout): what waits for it fails with `why`.
struct exchange_node_lost {
  uint64_t run = 0;
  std::string node;
  std::string why;
};

/// One task of a group run as the deadlock check sees it at one moment.
struct exchange_task_view {
  enum class state : uint8_t {
    /// Between exchange operations: it may still put, take or contribute.
    running,
    /// In an operation that only another task's operation can end.
    waiting,
    /// In an operation that work already under way will end (a collective
    /// call whose contributions are all in, being reduced).
    in_flight,
    /// Ended: it will never act again.
    ended,
  };
  /// "task 'c' on n0".
  std::string task;
  state what = state::running;
  /// What it waits in: "a take from channel 'q2' (0 of 1 items)".
  std::string waits_in;
};

/// The prober of run `run` (the exchange of the run's first peer) -> every
/// other exchange of the run: "report round `round` of the deadlock check".
/// Probes, their replies and a verdict are not the run's traffic: the
/// counts below leave them out.
struct exchange_probe {
  uint64_t run = 0;
  uint64_t round = 0;
};

/// An exchange -> the prober: what it sees of run `run` now: its own tasks
/// of the run (`tasks`), a count of everything that happened there in the
/// run (`activity`: operations, reductions, task ends, messages), and the
/// run's messages it has sent to and received from other exchanges.
struct exchange_probe_reply {
  uint64_t run = 0;
  uint64_t round = 0;
  std::vector<exchange_task_view> tasks;
  uint64_t activity = 0;
  uint64_t sent = 0;
  uint64_t received = 0;
};

/// The prober -> every other exchange of run `run`: the run is deadlocked
/// (`what` names every waiting task): fail every wait of it with `what`.
struct exchange_deadlock {
  uint64_t run = 0;
  std::string what;
};

/// A daemon's exchange -> the relay of the run (its master's exchange):
/// pass `payload`, one of the messages above, on to the exchange `peer`.
/// The relay passes on only between the exchanges of its own daemons.
/// `seq` (0: none) numbers a message that carries data (send_window.hpp):
/// its receiver acknowledges it with an exchange_relay_ack.
struct exchange_forward {
  caf::actor peer;
  caf::message payload;
  uint64_t seq = 0;
};

/// The relay -> a daemon's exchange: `payload` comes from the exchange
/// `peer`, which sent it to the relay as an exchange_forward of `seq`.
struct exchange_relayed {
  caf::actor peer;
  caf::message payload;
  uint64_t seq = 0;
};

/// A daemon's exchange -> the exchange that sent it message `seq` through
/// the relay (as the payload of an exchange_forward to it): "it is here",
/// which frees its bytes of the sender's budget.
struct exchange_relay_ack {
  uint64_t seq = 0;
};

/// A daemon's exchange -> another daemon's exchange, over the connection
/// the first daemon has just opened to the second (exchange_peer::host,
/// port): "we are connected directly". From then on, both send each other
/// their messages over that connection instead of through the relay, for
/// as long as it lasts.
using exchange_link_atom = caf::atom_constant<caf::atom("ert_xlink")>;

bool operator==(const channel_plan& x, const channel_plan& y) noexcept;
bool operator==(const collective_plan& x, const collective_plan& y) noexcept;
bool operator==(const exchange_peer& x, const exchange_peer& y) noexcept;
bool operator==(const exchange_plan& x, const exchange_plan& y) noexcept;

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_EXCHANGE_MESSAGES(X)                                   \
  X(task_ref, node, task)                                              \
  X(channel_plan, channel, putters, takers)                            \
  X(collective_plan, name, kind, op, root, participants)               \
  X(exchange_peer, node, endpoint, host, port)                         \
  X(exchange_plan, channels, collectives, peers, relay)                \
  X(exchange_end, run, abort)                                          \
  X(channel_state, channel, node, items, closed)                       \
  X(exchange_report, channels)                                         \
  X(exchange_put, run, channel, op, from, item)                        \
  X(exchange_take, run, channel, op, from)                             \
  X(exchange_close, run, channel, op, from)                            \
  X(exchange_reply, run, op, status, error, values)                    \
  X(exchange_part, run, collective, call, chunk, parts)                \
  X(exchange_task_end, run, task, ok, collectives, calls)              \
  X(exchange_node_lost, run, node, why)                                \
  X(exchange_task_view, task, what, waits_in)                          \
  X(exchange_probe, run, round)                                        \
  X(exchange_probe_reply, run, round, tasks, activity, sent, received) \
  X(exchange_deadlock, run, what)                                      \
  X(exchange_forward, peer, payload, seq)                              \
  X(exchange_relayed, peer, payload, seq)                              \
  X(exchange_relay_ack, seq)

EPOCHRT_EXCHANGE_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

namespace detail {

/// Views written to a serializer as the std::vector<tensor> of their
/// elements would be, byte for byte (tensor's inspect: type, shape, data
/// as one byte sequence, strings).
struct views_as_tensors {
  const std::vector<tensor_slice_view>* views;
};

caf::error write_views_as_tensors(caf::serializer& f,
                                  const std::vector<tensor_slice_view>& xs);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, views_as_tensors& x) {
  if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    return write_views_as_tensors(f, *x.views);
  } else {
    // Text (a log line): the count alone.
    auto count = x.views->size();
    return f(caf::meta::type_name("tensor_slice_views"), count);
  }
}

} // namespace detail

// The types whose `inspect` is written out below: a sender may hand them
// views instead of tensors, which go on the wire as the tensors they stand
// for. Their fields here are what a receiver gets.
#define EPOCHRT_EXCHANGE_VIEW_MESSAGES(X)                        \
  X(collective_contribution, participant, types, shapes, values) \
  X(exchange_result, run, collective, call, chunk, values, error)

EPOCHRT_EXCHANGE_VIEW_MESSAGES(EPOCHRT_DEFINE_MESSAGE_FIELDS)

template <class Inspector>
typename Inspector::result_type
inspect(Inspector& f, collective_contribution& x) {
  if constexpr (Inspector::reads_state) {
    if (!x.views.empty()) {
      detail::views_as_tensors wire{&x.views};
      return f(
        caf::meta::type_name(message_fields<collective_contribution>::name),
        x.participant, x.types, x.shapes, wire);
    }
  }
  return f(caf::meta::type_name(message_fields<collective_contribution>::name),
           x.participant, x.types, x.shapes, x.values);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exchange_result& x) {
  if constexpr (Inspector::reads_state) {
    if (!x.views.empty()) {
      detail::views_as_tensors wire{&x.views};
      return f(caf::meta::type_name(message_fields<exchange_result>::name),
               x.run, x.collective, x.call, x.chunk, wire, x.error);
    }
  }
  return f(caf::meta::type_name(message_fields<exchange_result>::name), x.run,
           x.collective, x.call, x.chunk, x.values, x.error);
}

} // namespace epochrt
