#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/channel.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/send_window.hpp>
#include <epochrt/runtime/tensor_recycler.hpp>

namespace epochrt {

class worker_pool;
struct collective_actions;
struct collective_state;

/// A task's operation on a channel.
enum class channel_op_kind { put, take, close };

/// Options of an exchange_hub.
struct exchange_hub_options {
  /// How long a node may stay silent before what waits for it fails as a
  /// lost node: a node frozen by a fault plan, a message a plan dropped.
  /// The middleman's connection timeout where there is one. Default: 5 s.
  std::chrono::milliseconds silence_limit{5000};
  /// Largest tensor a peer may send (a daemon's --max-tensor-bytes).
  /// Default: 1 GiB.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  /// Bytes of messages for runs that have not begun here yet (a peer that
  /// started first) kept at most; beyond, such messages are refused.
  /// Default: 1 GiB.
  uint64_t max_early_bytes = uint64_t{1} << 30;
  /// Bytes of all-reduce result buffers kept for the next calls once their
  /// blobs are dropped (a training loop reduces the same sizes every step;
  /// a kept buffer spares faulting in fresh pages). Default: 256 MiB.
  size_t max_recycled_bytes = size_t{256} << 20;
  /// How a daemon's exchange opens a connection of its own to another
  /// daemon of a run (at exchange_peer::host, port), one it sent data to
  /// or received data from in an earlier run (through the relay), and
  /// whose address sorts after its own: called without the
  /// hub's locks, must not block, and calls `linked` with the other
  /// process's node once connected and `unlinked` when that connection is
  /// gone (with a null node when it never came up). What watches the
  /// connection must end with `owner`, the exchange's endpoint. Null (the
  /// default, and a session's exchange): daemons reach each other through
  /// the relay only.
  std::function<void(const std::string& host, uint16_t port,
                     const caf::actor& owner,
                     std::function<void(const caf::node_id&)> linked,
                     std::function<void(const caf::node_id&)> unlinked)>
    connect_peer;
  /// After a connection to a daemon failed to come up, how long runs
  /// beginning here go through the relay before one tries again (each run
  /// that begins would otherwise try, and a job of short epochs would open
  /// hundreds of connections a second to an unreachable address).
  /// Default: 10 s.
  std::chrono::milliseconds link_retry_delay{10000};
  /// Connections to other daemons being opened at once, at most: the
  /// others wait for a later run (which goes through the relay meanwhile).
  /// Every daemon of a job of n opening its n/2 connections at the first
  /// epoch starves the processes of a machine or a network of CPU: a
  /// master then hears nothing for its whole connection timeout, and
  /// loses a daemon that is alive. Default: 4.
  size_t max_links_opening = 4;
  /// Bytes of data a daemon's exchange may have sent through the relay
  /// and not yet seen acknowledged by their receivers
  /// (runtime/send_window.hpp); what comes beyond waits here, in order.
  /// Bounds what the master holds for each daemon: with no bound, the
  /// first 64 MiB all-reduce over 32 fresh daemons put 4 GiB through the
  /// master at once, whose middleman then read its connections more than
  /// the connection timeout late and lost live daemons. Default: 4 MiB.
  uint64_t relay_window_bytes = uint64_t{4} << 20;
  /// How often a run is checked for a deadlock: every task that uses its
  /// channels or collectives waiting for another, nothing under way
  /// (runtime/deadlock_detector.hpp). A run of this process alone is
  /// checked here; one over several processes by the exchange of its
  /// first peer, which asks every other for a report and counts the run's
  /// messages between processes (runtime/deadlock_probe.hpp). A deadlocked
  /// run fails after two quiet checks in a row, its waits in every process
  /// with `exchange_failed` naming every task and what it waits in. 0:
  /// never, and no report for the runs of other processes (which are then
  /// never found deadlocked either). Default: 500 ms.
  std::chrono::milliseconds deadlock_check{500};
};

/// The exchange of one process: the channels its nodes host and its part
/// of every collective among their tasks, for every group run that uses
/// them. A session and a node daemon each have one; its endpoint actor is
/// where the exchanges of other processes reach it (messages/
/// exchange_protocol.hpp).
///
/// Within the process, tasks reach it by calls (through their task_port,
/// exchange_port.hpp) and blobs are passed as shared pointers, never
/// copied. Between processes, its endpoint sends and receives the
/// exchange messages over the connections the middleman has (the same
/// authenticated connections as every other message). Until a daemon has
/// a connection of its own to another daemon (connect_peer, a few at a
/// time, at the start of runs), what one daemon's exchange sends the other
/// goes through the master's exchange,
/// the run's relay (exchange_plan::relay), wrapped in an exchange_forward
/// and delivered as an exchange_relayed that names its origin. A relay
/// passes on only between the exchanges it was given (add_relay_peer),
/// and a daemon accepts relayed messages of a run only from that run's
/// relay; the origin is then checked like any sender.
///
/// An all-reduce is a reduce-scatter and an all-gather: participant i's
/// process reduces chunk i of every blob (1/n of its elements) from every
/// participant's contribution, folded in participant order, then sends
/// the chunk to the other participants' processes. Participants in one
/// process share their inputs and their result (all in one process: the
/// call is one chunk, which the pool reduces in shares). A call is
/// forgotten once it finished. The bits of a result
/// depend only on the participant order, never on where participants run
/// or in which order they come.
///
/// Waits end, at the latest, once what they wait for is known to be
/// impossible: the run is aborted, a task they wait for has ended, a node
/// they wait for is lost (its process's endpoint went down, its node actor
/// stopped, it stayed frozen for `silence_limit`). A daemon reached through
/// the relay is not lost when a connection of its own to it closes (CAF
/// 0.17 then reports its endpoint down although it lives); only a run that
/// sent over that connection loses it, as its messages may be lost.
///
/// Thread-safe. Owned by shared pointers (its session or daemon, and the
/// ports of running tasks); `shutdown` stops its endpoint and fails every
/// wait.
class exchange_hub : public std::enable_shared_from_this<exchange_hub> {
public:
  /// Makes a hub and spawns its endpoint in `sys`. Reductions and large
  /// copies run on `pool`.
  static std::shared_ptr<exchange_hub> make(caf::actor_system& sys,
                                            std::shared_ptr<worker_pool> pool,
                                            exchange_hub_options options = {});

  ~exchange_hub();

  exchange_hub(const exchange_hub&) = delete;
  exchange_hub& operator=(const exchange_hub&) = delete;

  /// Where other processes reach this exchange.
  const caf::actor& endpoint() const noexcept {
    return endpoint_;
  }

  const exchange_hub_options& options() const noexcept {
    return options_;
  }

  /// Stops the endpoint and fails every wait with node_lost. Idempotent.
  void shutdown();

  /// Makes this exchange the relay for `peer`, the exchange of a daemon
  /// the session is connected to: messages between such peers are passed
  /// on. Thread-safe; a peer added twice is kept once.
  void add_relay_peer(const caf::actor& peer);

  // -- nodes of this process --------------------------------------------------

  /// Node `node` of this process takes part in run `run` of a group with
  /// `plan` (its run_tasks came). The first node of the process to begin a
  /// run creates its channels and collectives here; messages that came for
  /// the run before are handled now. An error when the plan is unusable
  /// (it names no endpoint of this process for `node`).
  caf::error begin(uint64_t run, const std::string& node,
                   const exchange_plan& plan);

  /// The run is over on `node`: reports the channels `node` hosted in it
  /// and forgets them. With `abort`, every wait of `node`'s tasks in the
  /// run fails first (cancelled). The run is forgotten here once every
  /// node of this process that began it has ended it.
  exchange_report end(uint64_t run, const std::string& node, bool abort);

  /// Every wait of a task of `node`, in every run, fails with `why`: its
  /// tasks are being stopped (cancel_tasks, the node's exit).
  void cancel_node(const std::string& node, const caf::error& why);

  /// Every wait of a task of `node` in run `run` fails with `why`: the
  /// node's group of that run failed or timed out.
  void cancel(uint64_t run, const std::string& node, const caf::error& why);

  /// Node `node` of this process is gone (killed): what waits for it here
  /// and in other processes fails with `runtime_errc::peer_lost`.
  void node_lost(const std::string& node, const std::string& why);

  /// Node `node` of this process is frozen: it is lost once it stays so
  /// for `silence_limit`.
  void node_frozen(const std::string& node);

  // -- a task's operations (through its port) -------------------------------

  /// The channel `name` of run `run`, if it has one.
  std::optional<channel_def> find_channel(uint64_t run,
                                          const std::string& name);

  /// A channel operation of task `from`, with `op` an id unique among the
  /// task's operations (a second call with the same id is ignored, as a
  /// duplicated message is).
  void put(uint64_t run, const task_ref& from, uint64_t op,
           const std::string& channel, std::vector<tensor_ptr> item,
           std::shared_ptr<exchange_wait> wait);
  void take(uint64_t run, const task_ref& from, uint64_t op,
            const std::string& channel, std::shared_ptr<exchange_wait> wait);
  void close(uint64_t run, const task_ref& from, uint64_t op,
             const std::string& channel, std::shared_ptr<exchange_wait> wait);

  /// Task `from` makes call `call` (from 0) of collective `name`, a `kind`.
  /// A second contribution to the same call is ignored.
  void contribute(uint64_t run, const task_ref& from, collective_kind kind,
                  const std::string& name, uint64_t call,
                  std::vector<tensor_ptr> inputs,
                  std::shared_ptr<exchange_wait> wait);

  /// Task `task` of this process ended after `calls` calls of each
  /// collective it took part in.
  void task_ended(uint64_t run, const task_ref& task, bool ok,
                  const std::map<std::string, uint64_t>& calls);

  /// Runs `fn` after `delay`, on a thread of the actor system, unless the
  /// hub is shut down first.
  void after(std::chrono::milliseconds delay, std::function<void()> fn);

  /// A fresh id for a task's operation.
  uint64_t next_op_id();

  // -- the endpoint (messages from other processes) -------------------------

  /// What arrived at the endpoint from `sender` (never null).
  void receive(const caf::actor& sender, exchange_put& msg);
  void receive(const caf::actor& sender, exchange_take& msg);
  void receive(const caf::actor& sender, exchange_close& msg);
  void receive(const caf::actor& sender, exchange_reply& msg);
  void receive(const caf::actor& sender, exchange_part& msg);
  void receive(const caf::actor& sender, exchange_result& msg);
  void receive(const caf::actor& sender, exchange_task_end& msg);
  void receive(const caf::actor& sender, exchange_node_lost& msg);
  void receive(const caf::actor& sender, exchange_probe& msg);
  void receive(const caf::actor& sender, exchange_probe_reply& msg);
  void receive(const caf::actor& sender, exchange_deadlock& msg);
  void receive(const caf::actor& sender, exchange_forward& msg);
  void receive(const caf::actor& sender, exchange_relayed& msg);
  /// Bytes of data sent through the relay and not yet acknowledged, and
  /// messages waiting for them (relay_window_bytes).
  std::pair<uint64_t, size_t> relay_backlog();
  /// `sender`, another daemon's exchange, connected to this process.
  void receive_link(const caf::actor& sender);

  /// Sends `msg` to the exchange `to` as this exchange: through the relay
  /// when `to` is a daemon's exchange reached through one.
  void deliver(const caf::actor& to, caf::message msg);

  /// The endpoint of another process went down (`reason`).
  void peer_down(const caf::actor_addr& peer, const caf::error& reason);

  /// A timer of `after` fired.
  void timer_fired(uint64_t id);

  // Implementation details, defined in the .cpp: one run's state, what a
  // locked section leaves to do once the lock is released, and a message
  // that came before its run began here.
  struct run_state;
  struct deferred;
  struct early_message;

  // Where a message through the relay goes: the exchange it is for, the
  // relay, and the run it is of (whose end here frees its bytes).
  struct relayed_to {
    caf::actor to;
    caf::actor relay;
    uint64_t run = 0;
  };

private:
  exchange_hub(std::shared_ptr<worker_pool> pool, exchange_hub_options opts);

  void flush(deferred& later);
  run_state* find_run(uint64_t run);
  // put, take or close: done here when this process hosts the channel,
  // else asked of the channel's node once; failed at once when the run is
  // over or that node was lost.
  void channel_op(uint64_t run, const task_ref& from, uint64_t op,
                  channel_op_kind kind, const std::string& channel_name,
                  std::vector<tensor_ptr> item,
                  std::shared_ptr<exchange_wait> wait);
  // Handle a message of a run that began here (lock held).
  void handle(run_state& st, const caf::actor& sender, exchange_put& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_take& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_close& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_reply& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_part& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_result& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_task_end& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_node_lost& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_probe& msg,
              deferred& later);
  void handle(run_state& st, const caf::actor& sender,
              exchange_probe_reply& msg, deferred& later);
  void handle(run_state& st, const caf::actor& sender, exchange_deadlock& msg,
              deferred& later);
  // Whether `sender` is the exchange that probes run `st` for deadlocks
  // (the plan's first peer's), and not this one.
  bool from_prober(const run_state& st, const caf::actor& sender,
                   const char* what);
  // Whether `sender` is the process that hosts `node` in the run.
  bool admitted(const caf::actor& sender, run_state& st,
                const std::string& node, const char* what);
  // Receives a message: its run's, buffered until the run begins, or
  // refused. `via` is the relay that passed it on, or null.
  template <class Message>
  void
  dispatch(const caf::actor& sender, Message& msg, const caf::actor& via = {});
  // Whether a message that came `via` a relay (or directly: null) may be
  // one of run `st`'s.
  bool came_right_way(const run_state& st, const caf::actor& sender,
                      const caf::actor& via);
  // Where a message to `to` goes: `to`, or the relay that reaches it.
  // With `data` (the message carries_data), `to`, when another daemon's
  // exchange, is a partner from then on.
  caf::actor route_of(const caf::actor& to, bool data);
  // The routes of a run's peers, chosen as it begins (with mtx_ held): for
  // each daemon peer, direct when connected and no other run here uses it
  // (a run never switches from the relay to a direct connection midway:
  // its messages keep their order), else the relay; and connections to
  // open, to the peers whose address is greater than this daemon's (one
  // side opens each, so that two daemons never race to connect).
  void choose_routes(const exchange_plan& plan, deferred& later);
  bool in_use(const caf::actor& peer) const;
  // Drops the routes of an ended run's peers that no other run uses, so
  // that a daemon serving job after job keeps no route of the jobs gone.
  void forget_routes(const std::vector<exchange_peer>& peers);
  // Forgets the messages `peer` sent (or relayed) for runs not begun
  // here (mtx_ held).
  void drop_early_from(const caf::actor_addr& peer);
  // Whether `peer` is another daemon's exchange seen from a daemon: not
  // the relay of a run here, nor a daemon this process relays for (mtx_
  // held).
  bool is_daemon_peer(const caf::actor_addr& peer);
  // Sends what the relay window released, in order (relay_mtx_ held).
  void send_relayed(
    std::vector<send_window<relayed_to, caf::message>::send> released);
  // `receiver` says through `relay` that it has relayed message `seq`.
  void relay_acked(uint64_t seq, const caf::actor& relay,
                   const caf::actor& receiver);
  // Frees, every silence_limit while messages are in flight, the bytes of
  // those whose acknowledgement has not come within it (send_window.hpp's
  // expire): a receiver lost, a message refused on the way.
  void arm_relay_expiry();
  // Frees the bytes in flight of the messages for which `sent` holds, and
  // drops the queued ones for which `queued` holds.
  void relay_forget(const std::function<bool(const relayed_to&)>& sent,
                    const std::function<bool(const relayed_to&)>& queued);
  void link_up(const caf::node_id& node, const caf::actor& peer,
               const std::string& address);
  void link_down(const caf::node_id& node, const std::string& address);
  void chunk_reduced(uint64_t run, const std::string& name, uint64_t call,
                     uint32_t chunk);
  // Does what a collective's event asked (lock held): its completions and
  // messages go to `later`, its work to the pool, each chunk's last share
  // reporting chunk_reduced.
  void carry_out(run_state& st, collective_state& cs, collective_actions& out,
                 deferred& later);
  void lose_node(run_state& st, const std::string& node, const std::string& why,
                 deferred& later);
  void end_task(run_state& st, const task_ref& task, bool ok,
                const std::map<std::string, uint64_t>& calls, deferred& later);
  void remember_ended(uint64_t run);
  void cancel_in(run_state& st, const std::string& node, const caf::error& why,
                 deferred& later);
  // The deadlock check of a run of this process alone: every
  // `deadlock_check` while the run lasts.
  void schedule_deadlock_check(uint64_t run);
  void check_deadlock(uint64_t run);
  // What this process sees of run `st` for round `round` of its deadlock
  // check (its own tasks, and its counts).
  exchange_probe_reply report_of(const run_state& st, uint64_t round) const;
  // Fails every wait of run `st` here with the deadlock `what`; the prober
  // tells the other processes too.
  void fail_deadlocked(run_state& st, const std::string& what, deferred& later);

  // The system of the endpoint; its logger is the hub's.
  caf::actor_system* system_ = nullptr;
  caf::actor endpoint_;
  std::shared_ptr<worker_pool> pool_;
  exchange_hub_options options_;
  std::shared_ptr<tensor_recycler> recycler_;
  std::mutex mtx_;
  bool stopped_ = false;
  std::map<uint64_t, std::unique_ptr<run_state>> runs_;
  // Messages for runs not begun here yet, oldest first, and their bytes.
  std::map<uint64_t, std::vector<early_message>> early_;
  uint64_t early_bytes_ = 0;
  // Runs ended here, newest last: their late messages are dropped.
  std::set<uint64_t> ended_runs_;
  std::vector<uint64_t> ended_order_;
  uint64_t next_op_ = 0;
  uint64_t next_timer_ = 0;
  std::map<uint64_t, std::function<void()>> timers_;
  // Nodes of this process frozen, for node_frozen's deadline.
  std::set<std::string> frozen_;
  // Endpoints of other processes the endpoint watches.
  std::set<caf::actor_addr> watched_;
  // Guards the maps and sets below, which `deliver` reads without mtx_.
  std::mutex routes_mtx_;
  // Daemons' exchanges reached through a relay, and that relay.
  std::map<caf::actor_addr, caf::actor> routes_;
  // As a relay: the exchanges it passes messages between.
  std::set<caf::actor_addr> relay_peers_;
  // Other daemons' exchanges this one sent data to or received data from
  // (channel requests and replies, collective parts and results), through
  // the relay or not: the only ones it connects to. Runs' other messages
  // (a task's end, probes) go to every process and do not count.
  std::set<caf::actor_addr> partners_;
  // Processes this one has a connection of its own to, the daemons'
  // exchanges reached over one instead of the relay, and the addresses
  // being connected to or connected.
  std::set<caf::node_id> direct_nodes_;
  std::set<caf::actor_addr> direct_endpoints_;
  std::set<std::string> linking_;
  // Of those, the ones being connected to (a set, not a count: the end of
  // an attempt is then forgotten once however it is reported).
  std::set<std::string> opening_;
  // Addresses a connection to failed, and when one may be tried again.
  std::map<std::string, std::chrono::steady_clock::time_point> retry_at_;
  // Guards relay_window_, and is held while what it releases is sent, so
  // that messages through the relay leave in the order they were given.
  // Taken last: nothing else is locked while it is held.
  std::mutex relay_mtx_;
  send_window<relayed_to, caf::message> relay_window_;
  bool relay_expiry_armed_ = false;
};

} // namespace epochrt
