#pragma once

#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include <epochrt/runtime/collective_run.hpp>

namespace epochrt {

/// One event of one call of a collective_run: takes the call as far as it
/// can go and leaves what follows in the run's `collective_actions`. Part
/// of collective_run's implementation: only it makes one, for the length of
/// one event, and it shares the run's single thread. As it ends, the calls
/// that finished are forgotten: the caller must not use its call_state
/// after.
class collective_driver {
public:
  using call_state = collective_run::call_state;

  // What advance() tries when no one chunk's part arrived.
  static constexpr uint32_t every_chunk = std::numeric_limits<uint32_t>::max();

  collective_driver(collective_run& self, uint64_t call, call_state& c,
                    collective_actions& out);

  collective_driver(const collective_driver&) = delete;
  collective_driver& operator=(const collective_driver&) = delete;

  ~collective_driver();

  // A local participant came, or a part or result arrived (an all-reduce's
  // part of chunk `arrived`): go as far as the call can.
  void advance(uint32_t arrived = every_chunk);

  // Chunk j is in the results: reduced here, or copied from its owner's
  // result. A chunk reduced here goes to the other processes. Finishes
  // once it was the last.
  void chunk_done(uint32_t j);

  // The owner of chunk j sent it reduced.
  void chunk_arrived(uint32_t j, std::vector<tensor>& values);

  // The root's blobs came.
  void root_arrived(std::vector<tensor>& values);

  /// A small all-gather's (or a barrier's) stacked blobs came down the
  /// tree.
  void stacked_arrived(std::vector<tensor>& values);

private:
  bool owned_here(uint32_t j) const;

  const task_ref& owner_of(uint32_t j) const;

  void self_send(uint32_t to, std::variant<exchange_part, exchange_result> m);

  bool all_locals_in() const;

  uint32_t first_local() const;

  void fail_everywhere(const caf::error& err);

  void complete_locals();

  // The blobs of every participant known so far against this process's.
  caf::error check_known_metas() const;

  void on_local_ready();

  // A part of this call, to be filled and sent.
  exchange_part new_part() const;

  // Participant i's blobs as they are described (no values yet).
  collective_contribution contribution_of(uint32_t i) const;

  // All-reduce: chunk j of every local participant's blobs to chunk j's
  // owner; the results allocated for the chunks to come.
  void send_parts();

  // Tree: once every participant of this process's subtree is in, all of
  // their blobs in one message to the parent.
  void send_up();

  // Tree: the result, reduced here or come from the parent, to the
  // children.
  void send_down();
  // The results whole to this process's children in the tree.
  void send_results_down();
  // A small all-gather or a barrier: the whole blobs of this process's
  // participants and subtree to its parent, once all are in.
  void send_whole_up();

  // Chunk j, owned here, has every participant's part: reduce it.
  void try_reduce(uint32_t j);

  // Broadcast: the root's process sends the root's blobs to the others;
  // its own participants take them as they are.
  void send_root();

  void finish_broadcast();

  // All-gather and barrier: every local participant's whole blobs to
  // every other process.
  void send_whole();

  void try_gather();

  collective_run& self_;
  const collective_plan& plan_;
  uint64_t call_;
  call_state& c_;
  collective_actions& out_;
};

} // namespace epochrt
