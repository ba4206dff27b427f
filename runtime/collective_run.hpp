#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/runtime/channel.hpp>
#include <epochrt/runtime/exchange.hpp>
#include <epochrt/runtime/tensor_recycler.hpp>

namespace epochrt {

/// How a collective cuts and spreads its work. Every process of a run must
/// use the same limits: they decide how an all-reduce's blobs are cut into
/// chunks, and a chunk cut otherwise elsewhere is refused.
struct collective_limits {
  /// Between processes, an all-reduce's chunk is at least this large, so
  /// that the blobs of a small call (a gradient of a few KiB) go to fewer
  /// owners than participants, down to one: latency, not bandwidth, bounds
  /// such a call, and its messages then grow as 2(n - 1) with n
  /// participants, not 2n(n - 1).
  size_t min_chunk_bytes = size_t{64} << 10;
  /// Between processes, each participant's share of an all-reduce is cut
  /// into pieces of about this size (at most max_pieces), each a message
  /// of its own, so that a process sends, receives and reduces at once.
  size_t piece_bytes = size_t{1} << 20;
  size_t max_pieces = 1024;
  /// Work on a chunk this small is done within the event that finds it
  /// rather than handed out: a trip through a thread pool costs more.
  size_t inline_bytes = size_t{256} << 10;
  /// Work handed out is split into shares of about this size, at most
  /// max_shares of them.
  size_t share_bytes = size_t{256} << 10;
  size_t max_shares = 32;
  /// Children a process has at most in the tree of a small all-reduce.
  /// Up to fanout + 1 processes the root hears from every other directly
  /// (one hop each way); past that the tree deepens by one level for every
  /// factor of the fanout. A hop costs more than a message at the root on
  /// a busy host (a binary tree over 8 to 16 processes on 2 cores took
  /// 20-30% longer than one root), so the default is wide.
  uint32_t tree_fanout = 16;
};

/// A message of a collective for other processes: to the process of
/// participant `to`; when `to` is `every_other_process`, one message whose
/// contents every other process of the collective shares; when `to` is
/// `each_of`, one whose contents the processes of the participants in
/// `those` share.
struct collective_send {
  static constexpr uint32_t every_other_process
    = std::numeric_limits<uint32_t>::max();
  static constexpr uint32_t each_of = every_other_process - 1;
  uint32_t to = every_other_process;
  std::variant<exchange_part, exchange_result> message;
  std::vector<uint32_t> those = {};
};

/// Work handed out to run off the owner's lock: the shares of one chunk's
/// reduction, or of the copy of a reduced chunk into the results. The
/// shares touch disjoint memory and may run at once on any threads; once
/// every one has run, the owner reports `chunk_reduced(call, chunk)`.
struct collective_work {
  uint64_t call = 0;
  uint32_t chunk = 0;
  std::vector<std::function<void()>> shares;
};

class collective_driver;

/// What one event asks of the collective's owner: waits to complete
/// (after unlocking, as a channel's), messages to send, work to run.
struct collective_actions {
  exchange_completions done;
  std::vector<collective_send> sends;
  std::vector<collective_work> work;
};

/// One collective of one group run, as one process runs its calls: the
/// algorithm alone. Events come in (a local participant's contribution, a
/// part or a result from another process, a chunk's work done, a task's
/// end, a lost node, the run's end); each appends to `out` what the owner
/// must do. It sends nothing, starts no thread and reads no clock itself,
/// so that a test can drive it through any order of events.
///
/// The algorithms, with n participants sorted by node and task name (the
/// plan's order), the same in every process. The processes are ranked by
/// their first participant: rank 0 hosts participant 0.
/// - all-reduce, small (blobs of less than 2 × min_chunk_bytes, between
///   processes): up and down a tree of the processes, rooted at rank 0,
///   with at most `tree_fanout` (k) children each (the parent of rank r is
///   (r − 1) / k). Each process sends its parent, in one message, the
///   blobs of every participant of its subtree once it has them all; the
///   root folds all of them in participant order and the result goes down
///   the tree. A process exchanges with at most k + 1 others, and the root
///   handles at most k messages each way rather than m − 1, for m
///   processes.
/// - all-reduce, larger: the blobs are cut into chunks (a function of
///   their types and shapes and of n alone); chunk j's owner is
///   participant j mod n, which reduces the chunk over the participants in
///   their order and sends it to every other process. Within one process
///   the call is one chunk.
///   Either way every element is folded over the participants in their
///   order, so the bits of a result depend on the participants and their
///   blobs only, never on the order of arrival, the cut or the placement.
/// - broadcast: the root's blobs go down the same tree, rooted at the
///   root's process instead of rank 0 (ranks counted on from the root's,
///   around): each process forwards them to its children as they come,
///   so the root sends at most k messages rather than m − 1, and a
///   process exchanges with at most k + 1 others. Every process gets the
///   root's bits unchanged; over k + 1 processes or fewer the root sends
///   to each of the others, as a single level.
/// - all-gather and barrier, small (the stack of every participant's
///   blobs under 2 × min_chunk_bytes; a barrier's is empty): up the tree
///   from rank 0 as a small all-reduce, each process sending its
///   subtree's whole blobs; the root stacks them in the participants'
///   order and the stack goes down the tree.
/// - all-gather, larger (or of strings): every process sends its
///   participants' whole blobs to every other; each stacks them in the
///   participants' order.
///
/// Calls are numbered from 0 by each participant. A call fails, here and
/// (when the failure is found here) in every other process, when the
/// participants' blobs differ in number, type or shape, when a message
/// is cut otherwise than this process would cut it, when a participant
/// ended before making it, or when a node of a participant is lost; every
/// wait of a failed call fails, and so does a later contribution to it.
///
/// A participant's end is told to its own process and its tree ancestors
/// only (`told_of_end`), and each of them fails everywhere a later call
/// it comes to know of. Some process that knows comes to know of every
/// call that waits for the ended participant q: a call waiting in the
/// tree reaches the lowest common ancestor of q and the waiting process
/// (no participant below it on that side ended, or that one's ancestor
/// is lower); a larger all-reduce sends to q's own process (q owns
/// chunks) or, cut in fewer chunks than participants, to rank 0 (owner
/// of chunk 0, everyone's ancestor); a larger all-gather sends to every
/// process; a broadcast's root tells every process of its end.
/// Duplicates (a second contribution, part or result for the same call
/// and chunk) and messages for calls finished here are ignored.
///
/// Not thread-safe: its owner serializes the calls. Shares of handed-out
/// work may run at once with the owner's calls: they touch only the
/// buffers they were given, which the collective does not touch again
/// until `chunk_reduced`.
class collective_run {
public:
  /// `process_of[i]`: the process participant i of `plan` runs in, any
  /// numbering the same for every participant of a process; `here`: this
  /// process, which hosts at least one participant.
  collective_run(uint64_t run, collective_plan plan,
                 std::vector<uint32_t> process_of, uint32_t here,
                 std::shared_ptr<tensor_recycler> recycler,
                 collective_limits limits = {});

  collective_run(collective_run&&) = default;

  const collective_plan& plan() const noexcept {
    return plan_;
  }

  size_t size() const noexcept {
    return plan_.participants.size();
  }

  bool is_local(uint32_t participant) const noexcept {
    return local_[participant];
  }

  /// Whether participants run in other processes too.
  bool spans_processes() const noexcept {
    return spans_processes_;
  }

  /// The participant index of `t`, if it takes part.
  std::optional<uint32_t> index_of(const task_ref& t) const;

  /// "all-reduce 'grad' (call 3)" for call 2.
  std::string label(uint64_t call) const;

  /// Local participant `p` makes call `call` with `inputs`; `wait` ends
  /// with the results, one per input. Returns whether `wait` now waits in
  /// the call: false when it was completed at once (a failed call, a lost
  /// node, a participant that ended before the call) or dropped as a
  /// duplicate contribution.
  bool contribute(uint32_t p, uint64_t call, std::vector<tensor_ptr> inputs,
                  std::shared_ptr<exchange_wait> wait, collective_actions& out);

  /// Process `from` sent contributions to chunk `msg.chunk` (all-reduce)
  /// or whole blobs (the others). The caller checked that each names a
  /// participant and that the values are well formed. Returns why the
  /// message is refused (the sender is at fault: nothing changed), or
  /// none: a participant that `from` does not send for, a chunk that is
  /// not this process's.
  std::optional<std::string> part_arrived(uint32_t from, exchange_part& msg,
                                          collective_actions& out);

  /// Process `from` sent a chunk reduced (its owner, or the tree parent),
  /// the root's blobs, or the call's failure (any process). Returns why
  /// the message is refused, or none.
  std::optional<std::string> result_arrived(uint32_t from, exchange_result& msg,
                                            collective_actions& out);

  /// Every share of the work for chunk `chunk` of call `call` has run.
  void chunk_reduced(uint64_t call, uint32_t chunk, collective_actions& out);

  /// Participant `p` ended (`ok`: succeeded) after `calls` calls: the
  /// calls from `calls` on can never complete, and fail here and in every
  /// other process. Told to its own process and to those of
  /// `told_of_end(p)`; a process that knows of the end fails, everywhere,
  /// any later call it comes to know of.
  void task_ended(uint32_t p, uint64_t calls, bool ok, collective_actions& out);

  /// The other processes (numbered as `process_of`) that must learn that
  /// local participant `p` ended, so that no call waits for it for ever:
  /// the ancestors of its process in the tree rooted at `origin_`; every
  /// process for a broadcast's root, whose blobs the others wait for and
  /// who sends nothing else. Each of those sees every later call that
  /// waits for `p` (see the class comment), not every process: a task's
  /// end costs O(log m) messages, not m - 1.
  std::vector<uint32_t> told_of_end(uint32_t p) const;

  /// `node` was lost (`why`): when a participant runs there, every call
  /// fails, as does every later one (`runtime_errc::peer_lost`).
  void node_lost(const std::string& node, const std::string& why,
                 collective_actions& out);

  /// Fails every call kept, and every wait in them, with `err`.
  void fail_all(const caf::error& err, collective_actions& out);

  /// Fails the waits of the participants on `node` with `why` (their tasks
  /// are being stopped); the calls themselves go on.
  void cancel_waits_of(const std::string& node, const caf::error& why,
                       collective_actions& out);

  /// Where call `call` stands, for the deadlock check: none when it is not
  /// kept (not begun here, or finished well).
  struct progress {
    /// The participants whose blobs (or their metadata) have not come.
    std::vector<uint32_t> missing;
    /// A chunk's work is running.
    bool busy = false;
  };
  std::optional<progress> progress_of(uint64_t call) const;

  /// Calls kept: begun and not finished, failed, or finished above one
  /// that is not. Those that finished well are forgotten in order.
  size_t calls_kept() const noexcept {
    return calls_.size();
  }

private:
  struct blob_meta {
    std::vector<dtype> types;
    std::vector<std::vector<int64_t>> shapes;

    bool operator==(const blob_meta& other) const {
      return types == other.types && shapes == other.shapes;
    }

    std::string describe(size_t blob) const;
  };

  struct call_state {
    explicit call_state(size_t n) : inputs(n), waits(n), metas(n) {
      // nop
    }
    // By participant: its blobs (local ones; remote ones for broadcast and
    // all-gather), the wait of a local one, and its metadata once known.
    std::vector<std::optional<std::vector<tensor_ptr>>> inputs;
    std::vector<std::shared_ptr<exchange_wait>> waits;
    std::vector<std::optional<blob_meta>> metas;
    // All-reduce: the chunks (known once the local participants are in),
    // and by chunk owned here, by participant, the slices received.
    uint32_t chunks = 0;
    // A small all-reduce between processes: up and down the tree, and
    // whether this process has sent its subtree's blobs up.
    bool tree = false;
    bool sent_up = false;
    std::map<uint32_t, std::map<uint32_t, std::vector<tensor>>> chunk_slices;
    std::vector<bool> chunk_done;
    std::vector<bool> chunk_busy;
    size_t chunks_done = 0;
    // The results, filled chunk by chunk (all-reduce) or at once.
    std::vector<std::shared_ptr<tensor>> results;
    bool results_known = false;
    bool local_ready = false;
    bool finished = false;
    caf::error failed;
  };

  friend class collective_driver;

  static blob_meta meta_of(const std::vector<tensor_ptr>& xs);
  uint32_t chunk_count(const blob_meta& meta) const;
  // Whether an all-reduce, all-gather or barrier of such blobs goes up and
  // down the tree.
  bool tree_for(const blob_meta& meta) const;
  uint32_t rank_of(uint32_t participant) const;
  // The tree of the processes, rooted at rank `origin_` (0; a broadcast's
  // root): a rank's place in it, and the rank at a place.
  uint32_t place_of(uint32_t rank) const;
  uint32_t rank_at(uint32_t place) const;
  uint32_t parent_of(uint32_t rank) const;
  // Whether `rank` is in this process's subtree, not this process.
  bool below_here(uint32_t rank) const;
  // This process's child whose subtree holds `rank` (below_here(rank)).
  uint32_t child_towards(uint32_t rank) const;
  std::vector<uint32_t> children() const;
  std::optional<std::string> miscut(const collective_contribution& x,
                                    uint32_t j) const;
  caf::error mismatch(uint64_t call, const std::string& what) const;
  caf::error check_meta(uint64_t call, const call_state& c, uint32_t p,
                        uint32_t q) const;
  caf::error check_all_metas(uint64_t call, const call_state& c) const;
  void fail_call(call_state& c, const caf::error& err, collective_actions& out);
  void fail_call_everywhere(uint64_t call, call_state& c, const caf::error& err,
                            collective_actions& out);
  void retire_finished();
  // Why call `call` can never complete (a participant ended before it),
  // or no error.
  caf::error never_completes(uint64_t call) const;
  // Why call `call` cannot complete: participant `q` (in ended_after_)
  // ended before it.
  caf::error ended_before(uint64_t call, uint32_t q) const;

  uint64_t run_;
  collective_plan plan_;
  std::vector<uint32_t> process_of_;
  uint32_t here_;
  std::vector<bool> local_;
  // By participant, its process's rank; by rank, that process's first
  // participant; this process's rank, and the count of processes.
  std::vector<uint32_t> rank_of_;
  std::vector<uint32_t> first_of_rank_;
  uint32_t rank_ = 0;
  uint32_t ranks_ = 0;
  // The rank at the root of the tree: 0, or a broadcast's root's.
  uint32_t origin_ = 0;
  bool spans_processes_ = false;
  std::shared_ptr<tensor_recycler> recycler_;
  collective_limits limits_;
  std::map<uint64_t, call_state> calls_;
  // Calls below this one finished well here and are forgotten: what comes
  // for them now is a duplicate.
  uint64_t retired_below_ = 0;
  // Participants whose task ended, with the calls they had made and
  // whether it succeeded (for the error's words).
  std::map<uint32_t, std::pair<uint64_t, bool>> ended_after_;
  // Set once a node of a participant is lost: every call fails.
  caf::error lost_;
};

} // namespace epochrt
