#include <epochrt/runtime/collective_run.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/runtime/collective_chunks.hpp>
#include <epochrt/runtime/collective_driver.hpp>
#include <epochrt/runtime/reduction.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

// -- blobs and chunks -------------------------------------------------------

std::string collective_run::blob_meta::describe(size_t blob) const {
  return std::string{to_string(types[blob])} + " " + format_shape(shapes[blob]);
}

collective_run::blob_meta
collective_run::meta_of(const std::vector<tensor_ptr>& xs) {
  blob_meta result;
  for (auto& x : xs) {
    result.types.push_back(x->type);
    result.shapes.push_back(x->shape);
  }
  return result;
}

// Within a process, one chunk: every participant's blobs are at hand, and
// the chunk is reduced in shares. Between processes, each participant's
// share cut into pieces; or, for blobs of less than n * min_chunk_bytes,
// chunks of at least min_chunk_bytes owned by the first participants. A
// function of the blobs' types and shapes and of n alone, so that
// participants whose blobs agree cut them alike.
uint32_t collective_run::chunk_count(const blob_meta& meta) const {
  if (!spans_processes_)
    return 1;
  auto n = size();
  uint64_t bytes = 0;
  for (size_t b = 0; b < meta.types.size(); ++b)
    bytes += element_count_of(meta.shapes[b]) * element_size(meta.types[b]);
  if (bytes < n * limits_.min_chunk_bytes)
    return static_cast<uint32_t>(
      std::clamp<uint64_t>(bytes / limits_.min_chunk_bytes, 1, n));
  auto pieces = std::clamp<uint64_t>(bytes / (n * limits_.piece_bytes), 1,
                                     limits_.max_pieces);
  return static_cast<uint32_t>(n * pieces);
}

// Only small blobs: the root reduces (or stacks) every participant's whole
// blobs. A broadcast goes down its own tree whatever its size.
bool collective_run::tree_for(const blob_meta& meta) const {
  if (!spans_processes_)
    return false;
  switch (plan_.kind) {
    case collective_kind::all_reduce:
      return chunk_count(meta) == 1;
    case collective_kind::all_gather:
    case collective_kind::barrier: {
      uint64_t bytes = 0;
      for (size_t b = 0; b < meta.types.size(); ++b) {
        // Strings have no size the metadata tells: all to all.
        if (meta.types[b] == dtype::string)
          return false;
        bytes += element_count_of(meta.shapes[b]) * element_size(meta.types[b]);
      }
      return bytes * size() < 2 * limits_.min_chunk_bytes;
    }
    case collective_kind::broadcast:
      break;
  }
  return false;
}

uint32_t collective_run::rank_of(uint32_t participant) const {
  return rank_of_[participant];
}

uint32_t collective_run::place_of(uint32_t rank) const {
  return (rank + ranks_ - origin_) % ranks_;
}

uint32_t collective_run::rank_at(uint32_t place) const {
  return (place + origin_) % ranks_;
}

// The parent of the process at place q is at place (q - 1) / k.
uint32_t collective_run::parent_of(uint32_t rank) const {
  auto k = std::max<uint32_t>(limits_.tree_fanout, 1);
  return rank_at((place_of(rank) - 1) / k);
}

// A descendant's place is greater than its ancestors'.
bool collective_run::below_here(uint32_t rank) const {
  auto here = place_of(rank_);
  if (place_of(rank) <= here)
    return false;
  while (place_of(rank) > here)
    rank = parent_of(rank);
  return rank == rank_;
}

uint32_t collective_run::child_towards(uint32_t rank) const {
  while (parent_of(rank) != rank_)
    rank = parent_of(rank);
  return rank;
}

std::vector<uint32_t> collective_run::children() const {
  std::vector<uint32_t> result;
  auto k = std::max<uint32_t>(limits_.tree_fanout, 1);
  for (uint32_t i = 1; i <= k; ++i) {
    auto child = uint64_t{place_of(rank_)} * k + i;
    if (child >= ranks_)
      break;
    result.push_back(rank_at(static_cast<uint32_t>(child)));
  }
  return result;
}

std::optional<std::string>
collective_run::miscut(const collective_contribution& x, uint32_t j) const {
  auto chunk = "chunk " + std::to_string(j);
  if (x.values.size() != x.types.size())
    return chunk + " with " + std::to_string(x.values.size()) + " values for "
      + std::to_string(x.types.size()) + " blobs";
  auto chunks = chunk_count(blob_meta{x.types, x.shapes});
  for (size_t b = 0; b < x.types.size(); ++b) {
    auto [first, last] = chunk_range(element_count_of(x.shapes[b]), j, chunks);
    if (x.values[b].type != x.types[b]
        || x.values[b].element_count() != last - first)
      return chunk + " of blob " + std::to_string(b) + " in the wrong size";
  }
  return std::nullopt;
}

caf::error collective_run::mismatch(uint64_t call,
                                    const std::string& what) const {
  return make_error(runtime_errc::exchange_failed, label(call) + ": " + what);
}

// Participant `p`'s blobs against participant `q`'s (both known), and that
// an all-reduce can reduce them.
caf::error collective_run::check_meta(uint64_t call, const call_state& c,
                                      uint32_t p, uint32_t q) const {
  auto& x = *c.metas[p];
  auto& y = *c.metas[q];
  auto& px = plan_.participants[p];
  auto& py = plan_.participants[q];
  if (x.types.size() != y.types.size())
    return mismatch(call,
                    task_text(px) + " gives " + std::to_string(x.types.size())
                      + " blobs, " + task_text(py) + " "
                      + std::to_string(y.types.size()));
  for (size_t b = 0; b < x.types.size(); ++b)
    if (x.types[b] != y.types[b] || x.shapes[b] != y.shapes[b])
      return mismatch(call,
                      "blob " + std::to_string(b) + " is " + x.describe(b)
                        + " on node " + px.node + " (" + task_text(px)
                        + ") but " + y.describe(b) + " on node " + py.node
                        + " (" + task_text(py) + ")");
  if (plan_.kind == collective_kind::all_reduce)
    for (size_t b = 0; b < x.types.size(); ++b)
      if (!reducible(x.types[b]))
        return mismatch(call,
                        "blob " + std::to_string(b) + " is "
                          + to_string(x.types[b])
                          + ": an all-reduce takes numeric blobs (f32, "
                            "f64, i32, i64, u8)");
  return {};
}

// Every participant's metadata known: all must match the first (or the
// broadcast's root).
caf::error collective_run::check_all_metas(uint64_t call,
                                           const call_state& c) const {
  uint32_t reference = 0;
  if (plan_.kind == collective_kind::broadcast)
    for (uint32_t i = 0; i < size(); ++i)
      if (plan_.participants[i].node == plan_.root)
        reference = i;
  for (uint32_t i = 0; i < size(); ++i)
    if (i != reference && c.metas[i] && c.metas[reference])
      if (auto err = check_meta(call, c, i, reference))
        return err;
  return {};
}

// -- failing and forgetting calls ---------------------------------------------

void collective_run::fail_call(call_state& c, const caf::error& err,
                               collective_actions& out) {
  if (c.finished)
    return;
  c.finished = true;
  c.failed = err;
  for (auto& wait : c.waits)
    if (wait) {
      exchange_outcome failure;
      failure.error = err;
      out.done.emplace_back(std::move(wait), std::move(failure));
    }
}

// The other processes' waits would otherwise wait for a chunk that never
// comes.
void collective_run::fail_call_everywhere(uint64_t call, call_state& c,
                                          const caf::error& err,
                                          collective_actions& out) {
  if (c.finished)
    return;
  fail_call(c, err, out);
  if (!spans_processes_)
    return;
  exchange_result msg;
  msg.run = run_;
  msg.collective = plan_.name;
  msg.call = call;
  msg.error = error_text(err);
  out.sends.push_back({collective_send::every_other_process, std::move(msg)});
}

// Nothing that comes for a call that finished well can change it (every
// part and result it needed came), and a training loop makes thousands of
// calls in one run: kept, each would hold its results, which could then
// never go back to the recycler. A failed call is kept, so that a
// participant that comes to it late gets its error.
void collective_run::retire_finished() {
  for (auto i = calls_.begin(); i != calls_.end() && i->first == retired_below_
       && i->second.finished && !i->second.failed;
       i = calls_.erase(i))
    ++retired_below_;
}

// -- events
// ---------------------------------------------------------------------

collective_run::collective_run(uint64_t run, collective_plan plan,
                               std::vector<uint32_t> process_of, uint32_t here,
                               std::shared_ptr<tensor_recycler> recycler,
                               collective_limits limits)
  : run_(run), plan_(std::move(plan)), process_of_(std::move(process_of)),
    here_(here), recycler_(std::move(recycler)), limits_(limits) {
  std::map<uint32_t, uint32_t> rank_of_process;
  for (uint32_t i = 0; i < process_of_.size(); ++i) {
    local_.push_back(process_of_[i] == here_);
    auto [it, added] = rank_of_process.emplace(
      process_of_[i], static_cast<uint32_t>(first_of_rank_.size()));
    if (added)
      first_of_rank_.push_back(i);
    rank_of_.push_back(it->second);
  }
  ranks_ = static_cast<uint32_t>(first_of_rank_.size());
  rank_ = rank_of_process.count(here_) > 0 ? rank_of_process.at(here_) : 0;
  spans_processes_ = ranks_ > 1;
  if (plan_.kind == collective_kind::broadcast)
    for (uint32_t i = 0; i < process_of_.size(); ++i)
      if (plan_.participants[i].node == plan_.root)
        origin_ = rank_of_[i];
}

std::optional<uint32_t> collective_run::index_of(const task_ref& t) const {
  auto& ps = plan_.participants;
  for (size_t i = 0; i < ps.size(); ++i)
    if (ps[i] == t)
      return static_cast<uint32_t>(i);
  return std::nullopt;
}

std::string collective_run::label(uint64_t call) const {
  return std::string{describe(plan_.kind)} + " '" + plan_.name + "' (call "
    + std::to_string(call + 1) + ")";
}

bool collective_run::contribute(uint32_t p, uint64_t call,
                                std::vector<tensor_ptr> inputs,
                                std::shared_ptr<exchange_wait> wait,
                                collective_actions& out) {
  auto fail_with = [&](caf::error err) {
    exchange_outcome failure;
    failure.error = std::move(err);
    out.done.emplace_back(std::move(wait), std::move(failure));
    return false;
  };
  if (lost_)
    return fail_with(lost_);
  // A contribution to a call that finished and was forgotten is a
  // duplicate: ignored, as one to a call still kept is (below).
  if (call < retired_below_)
    return false;
  // A participant that ended before this call means it never ends; the
  // other processes may not know.
  auto never = never_completes(call);
  auto& c = calls_.try_emplace(call, size()).first->second;
  if (never) {
    fail_call_everywhere(call, c, never, out);
    return fail_with(never);
  }
  if (c.failed)
    return fail_with(c.failed);
  // A second contribution to a call (a duplicate) is ignored.
  if (c.finished || c.inputs[p])
    return false;
  c.metas[p] = meta_of(inputs);
  c.inputs[p] = std::move(inputs);
  c.waits[p] = std::move(wait);
  collective_driver{*this, call, c, out}.advance();
  return true;
}

std::optional<std::string>
collective_run::part_arrived(uint32_t from, exchange_part& msg,
                             collective_actions& out) {
  auto n = size();
  bool reduce = plan_.kind == collective_kind::all_reduce;
  bool gather = plan_.kind == collective_kind::all_gather
    || plan_.kind == collective_kind::barrier;
  auto not_from_there = [&](uint32_t p) {
    return "process of node " + plan_.participants[p].node
      + "'s blobs, from another process, of collective '" + plan_.name + "'";
  };
  auto rank_from = std::find(process_of_.begin(), process_of_.end(), from);
  if (from == here_ || rank_from == process_of_.end())
    return "a part of collective '" + plan_.name
      + "' from a process without its participants";
  // A broadcast's blobs come down as results only.
  if (plan_.kind == collective_kind::broadcast)
    return "a part of broadcast '" + plan_.name + "'";
  auto from_rank
    = rank_of_[static_cast<size_t>(rank_from - process_of_.begin())];
  for (auto& part : msg.parts)
    if (local_[part.participant])
      return "a part of collective '" + plan_.name
        + "' for a participant of this process";
  bool tree = (reduce || gather) && !msg.parts.empty()
    && tree_for(blob_meta{msg.parts[0].types, msg.parts[0].shapes});
  if (reduce && !tree
      && (msg.parts.empty()
          || msg.chunk
            >= chunk_count(blob_meta{msg.parts[0].types, msg.parts[0].shapes})
          || !local_[msg.chunk % n]))
    return "chunk " + std::to_string(msg.chunk) + " of collective '"
      + plan_.name + "' is not this process's";
  if (tree && msg.chunk != 0)
    return "chunk " + std::to_string(msg.chunk) + " of collective '"
      + plan_.name + "' is not this process's";
  for (auto& part : msg.parts) {
    auto p = part.participant;
    // Up the tree, a child sends for its subtree; otherwise a process
    // sends for its own participants.
    bool from_there = tree
      ? below_here(rank_of(p)) && child_towards(rank_of(p)) == from_rank
      : process_of_[p] == from;
    if (!from_there)
      return not_from_there(p);
  }
  if (!reduce)
    for (auto& part : msg.parts) {
      // Whole blobs: they must be what the metadata says.
      bool fits = part.values.size() == part.types.size();
      for (size_t b = 0; fits && b < part.values.size(); ++b)
        fits = part.values[b].type == part.types[b]
          && part.values[b].shape == part.shapes[b];
      if (!fits)
        return "the blobs of a part of collective '" + plan_.name
          + "' do not match its shapes";
    }
  if (msg.call < retired_below_)
    return std::nullopt;
  auto& c = calls_.try_emplace(msg.call, n).first->second;
  if (c.finished)
    return std::nullopt;
  // This process may be the only one to know that a participant ended
  // before the call (told_of_end).
  if (auto never = never_completes(msg.call)) {
    fail_call_everywhere(msg.call, c, never, out);
    return std::nullopt;
  }
  // Blobs for a subtree sent up already (a retry, a fault): nothing would
  // ever take them.
  if (gather && c.sent_up)
    return std::nullopt;
  if (reduce) {
    // A duplicate of a chunk reduced already, or being reduced, or of blobs
    // sent up the tree already (a retry, a fault): nothing would ever take
    // it.
    if (c.sent_up
        || (msg.chunk < c.chunk_done.size()
            && (c.chunk_done[msg.chunk] || c.chunk_busy[msg.chunk])))
      return std::nullopt;
    // A piece that is not the chunk of the blobs it declares fails the call
    // now: waiting for the other participants' pieces would not mend it.
    for (auto& part : msg.parts)
      if (auto what = miscut(part, msg.chunk)) {
        fail_call_everywhere(
          msg.call, c,
          mismatch(msg.call,
                   "node " + plan_.participants[part.participant].node
                     + " sent " + *what),
          out);
        retire_finished();
        return std::nullopt;
      }
  }
  for (auto& part : msg.parts) {
    auto p = part.participant;
    blob_meta meta{std::move(part.types), std::move(part.shapes)};
    if (reduce) {
      c.chunk_slices[msg.chunk][p] = std::move(part.values);
    } else {
      std::vector<tensor_ptr> values;
      for (auto& v : part.values)
        values.push_back(std::make_shared<tensor>(std::move(v)));
      c.inputs[p] = std::move(values);
    }
    c.metas[p] = std::move(meta);
  }
  collective_driver d{*this, msg.call, c, out};
  if (reduce)
    d.advance(msg.chunk);
  else
    d.advance();
  return std::nullopt;
}

std::optional<std::string>
collective_run::result_arrived(uint32_t from, exchange_result& msg,
                               collective_actions& out) {
  if (from == here_
      || std::find(process_of_.begin(), process_of_.end(), from)
        == process_of_.end())
    return "a result of collective '" + plan_.name
      + "' from a process without its participants";
  // After a loss every call here failed, and so does every later one.
  if (msg.call < retired_below_ || lost_)
    return std::nullopt;
  if (!msg.error.empty()) {
    auto& c = calls_.try_emplace(msg.call, size()).first->second;
    fail_call(c, make_error(runtime_errc::exchange_failed, msg.error), out);
    return std::nullopt;
  }
  // Checked before the call is kept: a refused message changes nothing.
  auto kept = calls_.find(msg.call);
  const call_state* known = kept == calls_.end() ? nullptr : &kept->second;
  if (known != nullptr && known->finished)
    return std::nullopt;
  bool local_ready = known != nullptr && known->local_ready;
  bool tree = known != nullptr && known->tree;
  // Who may send it: the chunk's owner, or the tree parent; the root of
  // the tree takes none.
  std::optional<uint32_t> sender;
  auto parent = [&]() -> std::optional<uint32_t> {
    if (rank_ == origin_)
      return std::nullopt;
    return first_of_rank_[parent_of(rank_)];
  };
  switch (plan_.kind) {
    case collective_kind::all_reduce:
      // Sent only once this process's blobs went out: before, it cannot
      // be told from a forgery, nor used.
      if (!local_ready)
        return "a result of collective '" + plan_.name
          + "' before this process contributed to it";
      sender = tree ? parent() : msg.chunk % static_cast<uint32_t>(size());
      break;
    case collective_kind::broadcast:
      sender = parent();
      break;
    case collective_kind::all_gather:
    case collective_kind::barrier:
      // Only down the tree, once this process's blobs went up.
      if (!local_ready || !tree)
        return "a result of collective '" + plan_.name
          + "' before this process sent its blobs up the tree";
      sender = parent();
      break;
  }
  if (!sender || process_of_[*sender] != from)
    return "a result of collective '" + plan_.name
      + "' from a process that does not send it";
  auto& c = calls_.try_emplace(msg.call, size()).first->second;
  collective_driver d{*this, msg.call, c, out};
  if (plan_.kind == collective_kind::all_reduce)
    d.chunk_arrived(msg.chunk, msg.values);
  else if (plan_.kind == collective_kind::broadcast)
    d.root_arrived(msg.values);
  else
    d.stacked_arrived(msg.values);
  return std::nullopt;
}

void collective_run::chunk_reduced(uint64_t call, uint32_t chunk,
                                   collective_actions& out) {
  auto i = calls_.find(call);
  if (i == calls_.end())
    return;
  collective_driver{*this, call, i->second, out}.chunk_done(chunk);
}

void collective_run::task_ended(uint32_t p, uint64_t calls, bool ok,
                                collective_actions& out) {
  ended_after_[p] = {calls, ok};
  for (auto& [call, c] : calls_)
    if (call >= calls && !c.finished)
      fail_call_everywhere(call, c, ended_before(call, p), out);
}

std::vector<uint32_t> collective_run::told_of_end(uint32_t p) const {
  std::vector<uint32_t> result;
  if (!spans_processes_)
    return result;
  auto add = [&](uint32_t rank) {
    auto process = process_of_[first_of_rank_[rank]];
    if (process != process_of_[p]
        && std::find(result.begin(), result.end(), process) == result.end())
      result.push_back(process);
  };
  if (plan_.kind == collective_kind::broadcast
      && plan_.participants[p].node == plan_.root) {
    for (uint32_t rank = 0; rank < ranks_; ++rank)
      add(rank);
    return result;
  }
  for (auto rank = rank_of(p); place_of(rank) != 0;) {
    rank = parent_of(rank);
    add(rank);
  }
  return result;
}

caf::error collective_run::ended_before(uint64_t call, uint32_t q) const {
  auto& [calls, ok] = ended_after_.at(q);
  return make_error(runtime_errc::exchange_failed,
                    label(call)
                      + " cannot complete: " + task_text(plan_.participants[q])
                      + (ok ? " ended" : " failed") + " after "
                      + std::to_string(calls) + " calls");
}

caf::error collective_run::never_completes(uint64_t call) const {
  caf::error never;
  for (auto& [q, end] : ended_after_)
    if (end.first <= call)
      never = ended_before(call, q);
  return never;
}

void collective_run::node_lost(const std::string& node, const std::string& why,
                               collective_actions& out) {
  auto& ps = plan_.participants;
  if (std::none_of(ps.begin(), ps.end(), [&](const task_ref& t) {
        return t.node == node;
      }))
    return;
  auto lost = [&](const std::string& what) {
    return make_error(runtime_errc::peer_lost,
                      "node " + node + " was lost (" + why + ")" + what);
  };
  for (auto& [call, c] : calls_)
    fail_call(c, lost(" while tasks waited in " + label(call)), out);
  if (!lost_)
    lost_ = lost(", a participant of " + std::string{describe(plan_.kind)}
                 + " '" + plan_.name + "'");
}

void collective_run::fail_all(const caf::error& err, collective_actions& out) {
  for (auto& [call, c] : calls_)
    fail_call(c, err, out);
}

void collective_run::cancel_waits_of(const std::string& node,
                                     const caf::error& why,
                                     collective_actions& out) {
  for (auto& [call, c] : calls_)
    for (uint32_t p = 0; p < size(); ++p)
      if (c.waits[p] && plan_.participants[p].node == node) {
        exchange_outcome failure;
        failure.error = why;
        out.done.emplace_back(std::move(c.waits[p]), std::move(failure));
      }
}

std::optional<collective_run::progress>
collective_run::progress_of(uint64_t call) const {
  auto i = calls_.find(call);
  if (i == calls_.end())
    return std::nullopt;
  auto& c = i->second;
  progress result;
  // A participant contributed when its blobs or, from another process,
  // their metadata came.
  for (uint32_t p = 0; p < size(); ++p)
    if (!c.inputs[p] && !c.metas[p])
      result.missing.push_back(p);
  result.busy = std::find(c.chunk_busy.begin(), c.chunk_busy.end(), true)
    != c.chunk_busy.end();
  return result;
}

} // namespace epochrt
