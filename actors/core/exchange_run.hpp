#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/actors/core/exchange_effects.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/channel.hpp>
#include <epochrt/runtime/collective_run.hpp>
#include <epochrt/runtime/deadlock_detector.hpp>
#include <epochrt/runtime/deadlock_probe.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/tensor_recycler.hpp>

namespace epochrt {

/// A task's operation on a channel.
enum class channel_op_kind { put, take, close };

/// What every run of one exchange shares: set once by the hub, read by its
/// runs.
struct exchange_run_context {
  /// The endpoint of this process's exchange.
  caf::actor endpoint;
  /// The largest tensor a peer may send.
  uint64_t max_tensor_bytes = 0;
  std::shared_ptr<tensor_recycler> recycler;
  /// Sends a message as this exchange, from any thread, with no lock held:
  /// the reply to another process's channel request once its wait ends.
  /// Does nothing once the hub is gone.
  std::function<void(const caf::actor& to, caf::message msg)> deliver;
  /// Tells the hub, from the pool thread that finished it, that chunk
  /// `chunk` of call `call` of collective `name` of run `run` is reduced.
  /// Does nothing once the hub is gone.
  std::function<void(uint64_t run, const std::string& name, uint64_t call,
                     uint32_t chunk)>
    chunk_reduced;
};

/// One group run in one process's exchange: the channels its nodes host,
/// the process's part of every collective (runtime/collective_run.hpp),
/// the channel requests sent to other processes, the nodes known lost, and
/// what the deadlock check needs.
///
/// It checks what other processes send it (who may send what, and that it
/// is well formed), applies it, and leaves what follows in an
/// `exchange_effects`: waits to complete, messages to send, work for the
/// pool. It takes no lock and sends nothing itself: its owner (the hub,
/// under its lock) serialises every call and carries the effects out.
class exchange_run {
public:
  /// The run `id` of `plan`, begun here by `node`. An error when the plan
  /// is unusable (it names no endpoint of this process for `node`, or none
  /// for a participant of a collective). With `watched`, the run keeps
  /// what the deadlock check needs; when it spans several processes and
  /// this one hosts the plan's first peer, it probes the others.
  static caf::expected<std::unique_ptr<exchange_run>>
  make(uint64_t id, const exchange_plan& plan, const std::string& node,
       bool watched, const exchange_run_context& context);

  exchange_run(const exchange_run&) = delete;
  exchange_run& operator=(const exchange_run&) = delete;

  uint64_t id() const noexcept {
    return id_;
  }

  const exchange_plan& plan() const noexcept {
    return plan_;
  }

  /// Whether node `node` is hosted by this process.
  bool is_local(const std::string& node) const {
    return local_nodes_.count(node) > 0;
  }

  /// The exchanges of the run's other processes, once each.
  std::vector<caf::actor> other_processes() const;

  /// Whether the hub should check the run for deadlocks: it is watched,
  /// and runs in this process alone or is probed from here.
  bool checked_here() const noexcept;

  // -- the nodes of this process --------------------------------------------

  /// Node `node` of this process began the run.
  void node_began(const std::string& node);

  /// Node `node` ended the run: reports the channels it hosted and forgets
  /// them, after failing their waits. With `abort`, every wait of its
  /// tasks fails first. True when no node of this process is left in the
  /// run; the run must then `fail_all` and be forgotten.
  bool node_ended(const std::string& node, bool abort, exchange_report& report,
                  exchange_effects& out);

  /// Node `node` of this process is gone: what waits for it fails, here
  /// and (told by message) in the other processes. True when no node of
  /// this process is left in the run.
  bool local_node_lost(const std::string& node, const std::string& why,
                       exchange_effects& out);

  /// Node `node` (of any process) is lost: every wait that needs it fails
  /// with peer_lost. Idempotent.
  void lose_node(const std::string& node, const std::string& why,
                 exchange_effects& out);

  /// Every wait of a task of `node` fails with `why`.
  void cancel(const std::string& node, const caf::error& why,
              exchange_effects& out);

  /// Every wait of the run fails with `why`.
  void fail_all(const caf::error& why, exchange_effects& out);

  // -- a task's operations --------------------------------------------------

  /// The channel `name` of the run, if it has one.
  const channel_plan* find_channel(const std::string& name) const {
    return plan_.find_channel(name);
  }

  /// A put, take or close of task `from` (operation `op`, obeyed once):
  /// done here when this process hosts the channel, else asked of the
  /// channel's node; failed at once when that node was lost.
  void channel_op(const task_ref& from, uint64_t op, channel_op_kind kind,
                  const std::string& channel_name, std::vector<tensor_ptr> item,
                  std::shared_ptr<exchange_wait> wait, exchange_effects& out);

  /// Task `from` makes call `call` of collective `name`, a `kind`.
  void contribute(const task_ref& from, collective_kind kind,
                  const std::string& name, uint64_t call,
                  std::vector<tensor_ptr> inputs,
                  std::shared_ptr<exchange_wait> wait, exchange_effects& out);

  /// A chunk of a collective's call was reduced on the pool.
  void chunk_reduced(const std::string& name, uint64_t call, uint32_t chunk,
                     exchange_effects& out);

  /// Task `task` of this process ended after `calls` calls of each
  /// collective it took part in; the other processes that must know are
  /// told: the nodes of the channels it used, and for each collective
  /// those of collective_run::told_of_end.
  void task_ended(const task_ref& task, bool ok,
                  const std::map<std::string, uint64_t>& calls,
                  exchange_effects& out);

  // -- messages from other processes ----------------------------------------

  /// Whether a message that came `via` a relay (or directly: null) from
  /// `sender` may be one of this run's; logs a refusal if not.
  bool came_right_way(const caf::actor& sender, const caf::actor& via) const;

  /// A message of the run's traffic came (counted for the deadlock check).
  void count_received() noexcept {
    ++received_;
  }

  /// A message of this run from `sender`, checked then applied; refused
  /// (logged, and answered when it is a request) when `sender` may not
  /// send it or it is malformed.
  void handle(const caf::actor& sender, exchange_put& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_take& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_close& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_reply& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_part& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_result& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_task_end& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_node_lost& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_probe& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_probe_reply& msg,
              exchange_effects& out);
  void handle(const caf::actor& sender, exchange_deadlock& msg,
              exchange_effects& out);

  // -- the deadlock check ---------------------------------------------------

  /// One look for a deadlock: of a run of this process alone, from what
  /// its tasks wait in; of a run probed from here, a round that asks every
  /// other process for its report. A deadlock found fails every wait of
  /// the run (and tells the other processes); its text is returned.
  std::optional<std::string> check_deadlock(exchange_effects& out);

private:
  // One collective of the run in this process: its algorithm, and where
  // its messages go.
  struct collective_state {
    collective_run calls;
    // By participant index: the endpoint of its process.
    std::vector<caf::actor> endpoints;
    // The endpoints of other processes with participants, once each.
    std::vector<caf::actor> others;

    // The process `sender` is, as collective_run numbers them: 0 this one,
    // i + 1 others[i]; none when no participant runs there.
    std::optional<uint32_t> process_of(const caf::actor& sender) const;
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

  exchange_run(uint64_t id, const exchange_plan& plan,
               const exchange_run_context& context);

  // Queues a message of the run's traffic, which the deadlock check counts.
  void send(exchange_effects& out, const caf::actor& to, caf::message msg);
  void track(const task_ref& from, tracked_wait wait);
  const caf::actor* endpoint_of(const std::string& node) const {
    return plan_.endpoint_of(node);
  }
  // Whether `sender` is the process that hosts `node`.
  bool admitted(const caf::actor& sender, const std::string& node,
                const char* what) const;
  // Whether `sender` is the exchange that probes the run for deadlocks (the
  // plan's first peer's), and not this one.
  bool from_prober(const caf::actor& sender, const char* what) const;
  // The channel hosted here that a request of another process names, when
  // its task may use it so; else logs and answers the refusal.
  template <class Request>
  channel* checked_request(const caf::actor& sender, const Request& msg,
                           bool put_or_close, exchange_effects& out);
  std::shared_ptr<exchange_wait> replying_wait(const caf::actor& to,
                                               uint64_t op) const;
  std::vector<caf::actor> told_of_end(const task_ref& task) const;
  void end_task(const task_ref& task, bool ok,
                const std::map<std::string, uint64_t>& calls,
                exchange_effects& out);
  // Does what a collective's event asked: its completions and messages go
  // to `out`, its work to the pool, each chunk's last share reporting
  // chunk_reduced.
  void carry_out(collective_state& cs, collective_actions& actions,
                 exchange_effects& out);
  exchange_task_view view_of(const task_ref& t) const;
  exchange_probe_reply report_of(uint64_t round) const;
  void fail_deadlocked(const std::string& what, exchange_effects& out);

  uint64_t id_;
  exchange_plan plan_;
  const exchange_run_context& context_;
  // Nodes of the plan hosted by this process, and those that began the run
  // and have not ended it.
  std::set<std::string> local_nodes_;
  std::set<std::string> begun_;
  std::map<std::string, channel> channels_;
  std::map<std::string, collective_state> collectives_;
  std::map<uint64_t, outgoing_request> requests_;
  // Channel requests obeyed already, to obey a duplicate once.
  std::set<std::pair<task_ref, uint64_t>> seen_;
  // Nodes of the run known lost, and why.
  std::map<std::string, std::string> lost_;
  // For the deadlock check (`watched_`): what each task of this process
  // waits in, the tasks that ended, and a count of everything that
  // happened here. A run of this process alone is checked here
  // (runtime/deadlock_detector.hpp); one over several processes by its
  // prober (`probe_`: the exchange of the plan's first peer), from every
  // process's report (runtime/deadlock_probe.hpp), which counts the run's
  // messages sent to and received from other processes. A reply to a
  // channel request of another process is sent off the lock, when its
  // wait completes: `replies_sent_` counts those.
  bool watched_ = false;
  std::map<task_ref, tracked_wait> waits_;
  std::set<task_ref> ended_tasks_;
  uint64_t events_ = 0;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  std::shared_ptr<std::atomic<uint64_t>> replies_sent_
    = std::make_shared<std::atomic<uint64_t>>(0);
  deadlock_detector deadlock_;
  std::optional<deadlock_probe> probe_;
};

} // namespace epochrt
