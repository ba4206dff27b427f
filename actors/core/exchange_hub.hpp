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

#include <epochrt/actors/core/exchange_effects.hpp>
#include <epochrt/actors/core/exchange_hub_options.hpp>
#include <epochrt/actors/core/exchange_run.hpp>
#include <epochrt/actors/remote/exchange_routes.hpp>
#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/channel.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/tensor_recycler.hpp>

namespace epochrt {

class worker_pool;

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
  /// and in other processes fails with `runtime_errc::peer_lost`. A run
  /// left with no node of this process is forgotten, and what still waits
  /// in it here (another node's channel requests to it included) fails
  /// with peer_lost too.
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

  // A message that came before its run began here (defined in the .cpp).
  struct early_message;

private:
  exchange_hub(std::shared_ptr<worker_pool> pool, exchange_hub_options opts);

  void flush(exchange_effects& later);
  exchange_run* find_run(uint64_t run) EPOCHRT_REQUIRES(mtx_);
  // The run is over in this process: what still waits in it fails with
  // `why`, and it is forgotten.
  void forget_run(uint64_t run, const caf::error& why, exchange_effects& later)
    EPOCHRT_REQUIRES(mtx_);
  // Has the endpoint watch `x`, another process's exchange, once.
  void watch(const caf::actor& x, exchange_effects& later)
    EPOCHRT_REQUIRES(mtx_);
  // put, take or close of a task of this process (exchange_run::channel_op).
  void channel_op(uint64_t run, const task_ref& from, uint64_t op,
                  channel_op_kind kind, const std::string& channel_name,
                  std::vector<tensor_ptr> item,
                  std::shared_ptr<exchange_wait> wait);
  // Receives a message: its run's, kept until the run begins, or refused.
  // `via` is the relay that passed it on, or null.
  template <class Message>
  void
  dispatch(const caf::actor& sender, Message& msg, const caf::actor& via = {});
  // Keeps a message of a run not begun here, unless messages kept so fill
  // max_early_bytes already.
  template <class Message>
  void keep_early(const caf::actor& sender, const caf::actor& via, Message& msg,
                  exchange_effects& later) EPOCHRT_REQUIRES(mtx_);
  // The exchanges of other processes the runs under way here use.
  std::set<caf::actor> peers_in_use() const EPOCHRT_REQUIRES(mtx_);
  // Forgets the messages `peer` sent (or relayed) for runs not begun
  // here.
  void drop_early_from(const caf::actor_addr& peer) EPOCHRT_REQUIRES(mtx_);
  // Whether `peer` is another daemon's exchange seen from a daemon: not
  // the relay of a run here, nor a daemon this process relays for.
  bool is_daemon_peer(const caf::actor_addr& peer) EPOCHRT_REQUIRES(mtx_);
  void chunk_reduced(uint64_t run, const std::string& name, uint64_t call,
                     uint32_t chunk);
  void remember_ended(uint64_t run) EPOCHRT_REQUIRES(mtx_);
  // The deadlock check of a run checked here: every `deadlock_check`
  // while the run lasts.
  void schedule_deadlock_check(uint64_t run);
  void check_deadlock(uint64_t run);

  // The system of the endpoint; its logger is the hub's.
  caf::actor_system* system_ = nullptr;
  caf::actor endpoint_;
  std::shared_ptr<worker_pool> pool_;
  exchange_hub_options options_;
  // What every run shares; set in `make`, read-only after.
  exchange_run_context context_;
  annotated_mutex mtx_;
  bool stopped_ EPOCHRT_GUARDED_BY(mtx_) = false;
  std::map<uint64_t, std::unique_ptr<exchange_run>>
    runs_ EPOCHRT_GUARDED_BY(mtx_);
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
