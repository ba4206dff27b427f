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

#include <epochrt/actors/core/exchange_hub_options.hpp>
#include <epochrt/actors/remote/exchange_routes.hpp>
#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/channel.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/tensor_recycler.hpp>

namespace epochrt {

class worker_pool;
struct collective_actions;
struct collective_state;

/// A task's operation on a channel.
enum class channel_op_kind { put, take, close };

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

private:
  exchange_hub(std::shared_ptr<worker_pool> pool, exchange_hub_options opts);

  void flush(deferred& later);
  run_state* find_run(uint64_t run) EPOCHRT_REQUIRES(mtx_);
  // put, take or close: done here when this process hosts the channel,
  // else asked of the channel's node once; failed at once when the run is
  // over or that node was lost.
  void channel_op(uint64_t run, const task_ref& from, uint64_t op,
                  channel_op_kind kind, const std::string& channel_name,
                  std::vector<tensor_ptr> item,
                  std::shared_ptr<exchange_wait> wait);
  // Handle a message of a run that began here (lock held).
  void handle(run_state& st, const caf::actor& sender, exchange_put& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_take& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_close& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_reply& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_part& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_result& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_task_end& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_node_lost& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_probe& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender,
              exchange_probe_reply& msg, deferred& later)
    EPOCHRT_REQUIRES(mtx_);
  void handle(run_state& st, const caf::actor& sender, exchange_deadlock& msg,
              deferred& later) EPOCHRT_REQUIRES(mtx_);
  // Whether `sender` is the exchange that probes run `st` for deadlocks
  // (the plan's first peer's), and not this one.
  bool from_prober(const run_state& st, const caf::actor& sender,
                   const char* what) EPOCHRT_REQUIRES(mtx_);
  // Whether `sender` is the process that hosts `node` in the run.
  bool admitted(const caf::actor& sender, run_state& st,
                const std::string& node, const char* what)
    EPOCHRT_REQUIRES(mtx_);
  // Receives a message: its run's, buffered until the run begins, or
  // refused. `via` is the relay that passed it on, or null.
  template <class Message>
  void
  dispatch(const caf::actor& sender, Message& msg, const caf::actor& via = {});
  // Whether a message that came `via` a relay (or directly: null) may be
  // one of run `st`'s.
  bool came_right_way(const run_state& st, const caf::actor& sender,
                      const caf::actor& via) EPOCHRT_REQUIRES(mtx_);
  // The exchanges of other processes the runs under way here use.
  std::set<caf::actor> peers_in_use() const EPOCHRT_REQUIRES(mtx_);
  // Forgets the messages `peer` sent (or relayed) for runs not begun
  // here (mtx_ held).
  void drop_early_from(const caf::actor_addr& peer) EPOCHRT_REQUIRES(mtx_);
  // Whether `peer` is another daemon's exchange seen from a daemon: not
  // the relay of a run here, nor a daemon this process relays for (mtx_
  // held).
  bool is_daemon_peer(const caf::actor_addr& peer) EPOCHRT_REQUIRES(mtx_);
  void chunk_reduced(uint64_t run, const std::string& name, uint64_t call,
                     uint32_t chunk);
  // Does what a collective's event asked (lock held): its completions and
  // messages go to `later`, its work to the pool, each chunk's last share
  // reporting chunk_reduced.
  void carry_out(run_state& st, collective_state& cs, collective_actions& out,
                 deferred& later) EPOCHRT_REQUIRES(mtx_);
  void lose_node(run_state& st, const std::string& node, const std::string& why,
                 deferred& later) EPOCHRT_REQUIRES(mtx_);
  void end_task(run_state& st, const task_ref& task, bool ok,
                const std::map<std::string, uint64_t>& calls, deferred& later)
    EPOCHRT_REQUIRES(mtx_);
  void remember_ended(uint64_t run) EPOCHRT_REQUIRES(mtx_);
  void cancel_in(run_state& st, const std::string& node, const caf::error& why,
                 deferred& later) EPOCHRT_REQUIRES(mtx_);
  // The deadlock check of a run of this process alone: every
  // `deadlock_check` while the run lasts.
  void schedule_deadlock_check(uint64_t run);
  void check_deadlock(uint64_t run);
  // What this process sees of run `st` for round `round` of its deadlock
  // check (its own tasks, and its counts).
  exchange_probe_reply report_of(const run_state& st, uint64_t round) const
    EPOCHRT_REQUIRES(mtx_);
  // Fails every wait of run `st` here with the deadlock `what`; the prober
  // tells the other processes too.
  void fail_deadlocked(run_state& st, const std::string& what, deferred& later)
    EPOCHRT_REQUIRES(mtx_);

  // The system of the endpoint; its logger is the hub's.
  caf::actor_system* system_ = nullptr;
  caf::actor endpoint_;
  std::shared_ptr<worker_pool> pool_;
  exchange_hub_options options_;
  std::shared_ptr<tensor_recycler> recycler_;
  annotated_mutex mtx_;
  bool stopped_ EPOCHRT_GUARDED_BY(mtx_) = false;
  std::map<uint64_t, std::unique_ptr<run_state>> runs_ EPOCHRT_GUARDED_BY(mtx_);
  // Messages for runs not begun here yet, oldest first, and their bytes.
  std::map<uint64_t, std::vector<early_message>>
    early_ EPOCHRT_GUARDED_BY(mtx_);
  uint64_t early_bytes_ EPOCHRT_GUARDED_BY(mtx_) = 0;
  // Runs ended here, newest last: their late messages are dropped.
  std::set<uint64_t> ended_runs_ EPOCHRT_GUARDED_BY(mtx_);
  std::vector<uint64_t> ended_order_ EPOCHRT_GUARDED_BY(mtx_);
  uint64_t next_op_ EPOCHRT_GUARDED_BY(mtx_) = 0;
  uint64_t next_timer_ EPOCHRT_GUARDED_BY(mtx_) = 0;
  std::map<uint64_t, std::function<void()>> timers_ EPOCHRT_GUARDED_BY(mtx_);
  // Nodes of this process frozen, for node_frozen's deadline.
  std::set<std::string> frozen_ EPOCHRT_GUARDED_BY(mtx_);
  // Endpoints of other processes the endpoint watches.
  std::set<caf::actor_addr> watched_ EPOCHRT_GUARDED_BY(mtx_);
  // Routes to other processes, the relay window and the connections to
  // other daemons: locked on their own, after mtx_ when both are.
  std::shared_ptr<exchange_routes> routes_;
};

} // namespace epochrt
