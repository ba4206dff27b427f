#include <epochrt/runtime/collective_run.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/runtime/reduction.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

// The elements of a blob of `shape` (whose dimensions are not negative).
uint64_t element_count_of(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (auto d : shape)
    count *= static_cast<uint64_t>(d);
  return count;
}

// Chunk `j` of `n` of `count` elements: [first, last).
std::pair<size_t, size_t> chunk_range(size_t count, size_t j, size_t n) {
  return {count * j / n, count * (j + 1) / n};
}

// One blob's share of a chunk's reduction.
struct piece {
  std::vector<const void*> sources;
  void* out = nullptr;
  size_t count = 0;
  dtype type = dtype::f32;
};

// Share q of `shares` of every piece: a disjoint range of its elements, so
// shares may run at once; the bits do not depend on the split
// (reduce_into's contract).
void reduce_share(const std::vector<piece>& pieces, reduce_op op, size_t q,
                  size_t shares) {
  for (auto& p : pieces) {
    auto [first, last] = chunk_range(p.count, q, shares);
    if (last == first)
      continue;
    auto size = element_size(p.type);
    std::vector<const void*> sources;
    for (auto* x : p.sources)
      sources.push_back(static_cast<const char*>(x) + first * size);
    reduce_into(op, p.type, sources, static_cast<char*>(p.out) + first * size,
                last - first);
  }
}

// What driver::advance tries when no one chunk's part arrived.
constexpr uint32_t every_chunk = std::numeric_limits<uint32_t>::max();

} // namespace

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

// Only small blobs: the root reduces every participant's whole blobs.
bool collective_run::tree_for(const blob_meta& meta) const {
  return spans_processes_ && plan_.kind == collective_kind::all_reduce
    && chunk_count(meta) == 1;
}

uint32_t collective_run::rank_of(uint32_t participant) const {
  return rank_of_[participant];
}

uint32_t collective_run::parent_of(uint32_t rank) const {
  return (rank - 1) / std::max<uint32_t>(limits_.tree_fanout, 1);
}

// A descendant's rank is greater than its ancestors'.
bool collective_run::below_here(uint32_t rank) const {
  if (rank <= rank_)
    return false;
  while (rank > rank_)
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
    auto child = uint64_t{rank_} * k + i;
    if (child >= ranks_)
      break;
    result.push_back(static_cast<uint32_t>(child));
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

// -- one call's algorithm -----------------------------------------------------

// One event of one call. As the driver ends, the calls that finished are
// forgotten: the caller must not use its call_state after.
class collective_run::driver {
public:
  driver(collective_run& self, uint64_t call, call_state& c,
         collective_actions& out)
    : self_(self), plan_(self.plan_), call_(call), c_(c), out_(out) {
    // nop
  }

  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;

  ~driver() {
    self_.retire_finished();
  }

  // A local participant came, or a part or result arrived (an all-reduce's
  // part of chunk `arrived`): go as far as the call can.
  void advance(uint32_t arrived = every_chunk) {
    if (c_.finished)
      return;
    if (!c_.local_ready && all_locals_in()) {
      c_.local_ready = true;
      on_local_ready();
      if (c_.finished)
        return;
      arrived = every_chunk; // any chunk may be complete now
    }
    if (!c_.local_ready)
      return;
    switch (plan_.kind) {
      case collective_kind::all_reduce:
        // Checked before any chunk waits for the rest of its parts: blobs
        // that differ are cut differently, and their parts would never
        // complete a chunk.
        if (auto err = check_known_metas()) {
          fail_everywhere(err);
          return;
        }
        if (c_.tree) {
          if (self_.rank_ == 0)
            try_reduce(0);
          else
            send_up();
          break;
        }
        if (arrived != every_chunk) {
          if (arrived < c_.chunks && owned_here(arrived))
            try_reduce(arrived);
          break;
        }
        for (uint32_t j = 0; j < c_.chunks && !c_.finished; ++j)
          if (owned_here(j))
            try_reduce(j);
        break;
      case collective_kind::broadcast:
        if (c_.results_known)
          finish_broadcast();
        break;
      case collective_kind::all_gather:
      case collective_kind::barrier:
        try_gather();
        break;
    }
  }

  // Chunk j is in the results: reduced here, or copied from its owner's
  // result. A chunk reduced here goes to the other processes. Finishes
  // once it was the last.
  void chunk_done(uint32_t j) {
    if (j >= c_.chunks)
      return;
    c_.chunk_busy[j] = false;
    if (c_.finished || c_.chunk_done[j])
      return;
    c_.chunk_done[j] = true;
    ++c_.chunks_done;
    if (c_.tree) {
      send_down();
    } else if (owned_here(j) && self_.spans_processes_) {
      exchange_result msg;
      msg.run = self_.run_;
      msg.collective = plan_.name;
      msg.call = call_;
      msg.chunk = j;
      for (auto& result : c_.results) {
        auto [first, last] = chunk_range(result->element_count(), j, c_.chunks);
        // Serialized from the result itself: nothing writes this chunk of
        // it again, and the message keeps the buffer from being recycled.
        msg.views.push_back(tensor_slice_view{result, first, last});
      }
      self_send(collective_send::every_other_process, std::move(msg));
    }
    if (c_.chunks_done == c_.chunks)
      complete_locals();
  }

  // The owner of chunk j sent it reduced.
  void chunk_arrived(uint32_t j, std::vector<tensor>& values) {
    if (c_.finished || !c_.local_ready || j >= c_.chunks || c_.chunk_done[j]
        || c_.chunk_busy[j] || owned_here(j))
      return;
    auto wrong_size = [&] {
      self_.fail_call(c_,
                      self_.mismatch(call_,
                                     "node " + owner_of(j).node
                                       + " sent a result of the "
                                         "wrong size"),
                      out_);
    };
    if (values.size() != c_.results.size()) {
      wrong_size();
      return;
    }
    size_t bytes = 0;
    for (size_t b = 0; b < values.size(); ++b) {
      auto& result = *c_.results[b];
      auto [first, last] = chunk_range(result.element_count(), j, c_.chunks);
      if (values[b].type != result.type
          || values[b].element_count() != last - first) {
        wrong_size();
        return;
      }
      bytes += values[b].data.size();
    }
    // Copied into the result where each chunk goes: chunks are disjoint,
    // so copies may run at once with each other and with reductions.
    auto results = c_.results;
    auto copy
      = [results, j, n = c_.chunks, values = std::move(values)]() mutable {
          for (size_t b = 0; b < values.size(); ++b) {
            auto& result = *results[b];
            auto [first, last] = chunk_range(result.element_count(), j, n);
            auto size = element_size(result.type);
            if (last > first)
              std::memcpy(result.data.data() + first * size,
                          values[b].data.data(), (last - first) * size);
          }
        };
    if (bytes <= self_.limits_.inline_bytes) {
      copy();
      chunk_done(j);
      return;
    }
    c_.chunk_busy[j] = true;
    collective_work work{call_, j, {}};
    work.shares.emplace_back(std::move(copy));
    out_.work.push_back(std::move(work));
  }

  // The root's blobs came.
  void root_arrived(std::vector<tensor>& values) {
    if (c_.finished || c_.results_known)
      return;
    c_.results.clear();
    blob_meta meta;
    for (auto& v : values) {
      meta.types.push_back(v.type);
      meta.shapes.push_back(v.shape);
      c_.results.push_back(std::make_shared<tensor>(std::move(v)));
    }
    for (uint32_t p = 0; p < self_.size(); ++p)
      if (plan_.participants[p].node == plan_.root)
        c_.metas[p] = meta;
    c_.results_known = true;
    advance();
  }

private:
  bool owned_here(uint32_t j) const {
    return self_.local_[j % self_.size()];
  }

  const task_ref& owner_of(uint32_t j) const {
    return plan_.participants[j % self_.size()];
  }

  void self_send(uint32_t to, std::variant<exchange_part, exchange_result> m) {
    out_.sends.push_back({to, std::move(m)});
  }

  bool all_locals_in() const {
    for (uint32_t i = 0; i < self_.size(); ++i)
      if (self_.local_[i] && !c_.inputs[i])
        return false;
    return true;
  }

  uint32_t first_local() const {
    for (uint32_t i = 0; i < self_.size(); ++i)
      if (self_.local_[i])
        return i;
    return 0;
  }

  void fail_everywhere(const caf::error& err) {
    self_.fail_call_everywhere(call_, c_, err, out_);
  }

  void complete_locals() {
    c_.finished = true;
    std::vector<tensor_ptr> values(c_.results.begin(), c_.results.end());
    for (auto& wait : c_.waits) {
      if (!wait)
        continue;
      exchange_outcome outcome;
      outcome.values = values;
      out_.done.emplace_back(std::move(wait), std::move(outcome));
    }
  }

  // The blobs of every participant known so far against this process's.
  caf::error check_known_metas() const {
    auto first = first_local();
    for (uint32_t i = 0; i < self_.size(); ++i)
      if (i != first && c_.metas[i])
        if (auto err = self_.check_meta(call_, c_, i, first))
          return err;
    return {};
  }

  void on_local_ready() {
    // The local participants must agree among themselves first (a
    // broadcast's participants agree with the root, checked at its end).
    if (plan_.kind != collective_kind::broadcast) {
      auto first = first_local();
      for (uint32_t i = 0; i < self_.size(); ++i)
        if (self_.local_[i] && i != first)
          if (auto err = self_.check_meta(call_, c_, i, first)) {
            fail_everywhere(err);
            return;
          }
      if (auto err = self_.check_meta(call_, c_, first, first)) {
        fail_everywhere(err);
        return;
      }
    }
    switch (plan_.kind) {
      case collective_kind::all_reduce:
        send_parts();
        break;
      case collective_kind::broadcast:
        send_root();
        break;
      case collective_kind::all_gather:
      case collective_kind::barrier:
        send_whole();
        break;
    }
  }

  // All-reduce: chunk j of every local participant's blobs to chunk j's
  // owner; the results allocated for the chunks to come.
  void send_parts() {
    auto& mine = *c_.inputs[first_local()];
    c_.results.clear();
    for (auto& x : mine)
      c_.results.push_back(
        self_.recycler_->make_tensor(x->type, x->shape, x->data.size()));
    auto n = self_.size();
    c_.chunks = self_.chunk_count(*c_.metas[first_local()]);
    c_.chunk_done.assign(c_.chunks, false);
    c_.chunk_busy.assign(c_.chunks, false);
    c_.tree = self_.tree_for(*c_.metas[first_local()]);
    if (c_.tree)
      return; // up the tree once the subtree's blobs are in (advance)
    for (uint32_t j = 0; j < c_.chunks; ++j) {
      if (owned_here(j))
        continue;
      exchange_part part;
      part.run = self_.run_;
      part.collective = plan_.name;
      part.call = call_;
      part.chunk = j;
      for (uint32_t i = 0; i < n; ++i) {
        if (!self_.local_[i])
          continue;
        collective_contribution contribution;
        contribution.participant = i;
        contribution.types = c_.metas[i]->types;
        contribution.shapes = c_.metas[i]->shapes;
        for (auto& x : *c_.inputs[i]) {
          auto [first, last] = chunk_range(x->element_count(), j, c_.chunks);
          // Serialized from the blob itself, which nobody changes.
          contribution.views.push_back(tensor_slice_view{x, first, last});
        }
        part.parts.push_back(std::move(contribution));
      }
      self_send(j % n, std::move(part));
    }
  }

  // Tree: once every participant of this process's subtree is in, all of
  // their blobs in one message to the parent.
  void send_up() {
    if (c_.sent_up)
      return;
    auto n = self_.size();
    auto received = c_.chunk_slices.find(0);
    auto below = [&](uint32_t i) {
      return self_.below_here(self_.rank_of(i));
    };
    for (uint32_t i = 0; i < n; ++i)
      if (below(i)
          && (received == c_.chunk_slices.end()
              || received->second.count(i) == 0))
        return;
    exchange_part part;
    part.run = self_.run_;
    part.collective = plan_.name;
    part.call = call_;
    part.chunk = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (!self_.local_[i] && !below(i))
        continue;
      collective_contribution contribution;
      contribution.participant = i;
      contribution.types = c_.metas[i]->types;
      contribution.shapes = c_.metas[i]->shapes;
      if (self_.local_[i]) {
        // Serialized from the blob itself, which nobody changes.
        for (auto& x : *c_.inputs[i])
          contribution.views.push_back(
            tensor_slice_view{x, 0, x->element_count()});
      } else {
        contribution.values = std::move(received->second[i]);
      }
      part.parts.push_back(std::move(contribution));
    }
    if (received != c_.chunk_slices.end())
      c_.chunk_slices.erase(received);
    c_.sent_up = true;
    auto parent = self_.parent_of(self_.rank_);
    self_send(self_.first_of_rank_[parent], std::move(part));
  }

  // Tree: the result, reduced here or come from the parent, to the
  // children.
  void send_down() {
    for (auto child : self_.children()) {
      exchange_result msg;
      msg.run = self_.run_;
      msg.collective = plan_.name;
      msg.call = call_;
      msg.chunk = 0;
      for (auto& result : c_.results)
        msg.views.push_back(
          tensor_slice_view{result, 0, result->element_count()});
      self_send(self_.first_of_rank_[child], std::move(msg));
    }
  }

  // Chunk j, owned here, has every participant's part: reduce it.
  void try_reduce(uint32_t j) {
    if (c_.chunk_done[j] || c_.chunk_busy[j])
      return;
    auto n = self_.size();
    auto received = c_.chunk_slices.find(j);
    for (uint32_t i = 0; i < n; ++i)
      if (!self_.local_[i]
          && (received == c_.chunk_slices.end()
              || received->second.count(i) == 0))
        return;
    // The slices and inputs the pointers point into live as long as the
    // work: it owns them. (Every participant's blobs were checked against
    // this process's: advance.)
    using slices_t = std::map<uint32_t, std::vector<tensor>>;
    auto slices = std::make_shared<slices_t>();
    if (received != c_.chunk_slices.end()) {
      *slices = std::move(received->second);
      c_.chunk_slices.erase(received);
    }
    auto keep = std::make_shared<std::vector<tensor_ptr>>();
    auto pieces = std::make_shared<std::vector<piece>>(c_.results.size());
    size_t bytes = 0;
    for (size_t b = 0; b < c_.results.size(); ++b) {
      auto& result = *c_.results[b];
      auto [first, last] = chunk_range(result.element_count(), j, c_.chunks);
      auto size = element_size(result.type);
      auto& p = (*pieces)[b];
      p.type = result.type;
      p.count = last - first;
      p.out = result.data.data() + first * size;
      bytes += p.count * size;
      for (uint32_t i = 0; i < n; ++i) {
        if (self_.local_[i]) {
          auto& x = (*c_.inputs[i])[b];
          keep->push_back(x);
          p.sources.push_back(x->data.data() + first * size);
          continue;
        }
        auto& part = (*slices)[i];
        if (b >= part.size() || part[b].type != p.type
            || part[b].element_count() != p.count) {
          fail_everywhere(self_.mismatch(call_,
                                         "node " + plan_.participants[i].node
                                           + " sent chunk " + std::to_string(j)
                                           + " of blob " + std::to_string(b)
                                           + " in the wrong size"));
          return;
        }
        p.sources.push_back(part[b].data.data());
      }
    }
    auto op = plan_.op;
    auto& limits = self_.limits_;
    if (bytes <= limits.inline_bytes) {
      reduce_share(*pieces, op, 0, 1);
      chunk_done(j);
      return;
    }
    // In shares that threads may reduce at once (within a process the call
    // is one chunk, and a chunk between processes can be large).
    auto shares = std::clamp<size_t>((bytes + limits.share_bytes - 1)
                                       / limits.share_bytes,
                                     1, limits.max_shares);
    c_.chunk_busy[j] = true;
    collective_work work{call_, j, {}};
    for (size_t q = 0; q < shares; ++q)
      work.shares.emplace_back([pieces, op, q, shares, keep, slices] {
        reduce_share(*pieces, op, q, shares);
      });
    out_.work.push_back(std::move(work));
  }

  // Broadcast: the root's process sends the root's blobs to the others;
  // its own participants take them as they are.
  void send_root() {
    for (uint32_t i = 0; i < self_.size(); ++i) {
      if (!self_.local_[i] || plan_.participants[i].node != plan_.root)
        continue;
      auto& root = *c_.inputs[i];
      c_.results.clear();
      for (auto& x : root)
        c_.results.push_back(std::const_pointer_cast<tensor>(x));
      c_.results_known = true;
      if (!self_.spans_processes_)
        return;
      exchange_result msg;
      msg.run = self_.run_;
      msg.collective = plan_.name;
      msg.call = call_;
      for (auto& x : root)
        msg.values.push_back(*x);
      self_send(collective_send::every_other_process, std::move(msg));
    }
  }

  void finish_broadcast() {
    if (auto err = self_.check_all_metas(call_, c_)) {
      fail_everywhere(err);
      return;
    }
    complete_locals();
  }

  // All-gather and barrier: every local participant's whole blobs to
  // every other process.
  void send_whole() {
    if (!self_.spans_processes_)
      return;
    exchange_part part;
    part.run = self_.run_;
    part.collective = plan_.name;
    part.call = call_;
    for (uint32_t i = 0; i < self_.size(); ++i) {
      if (!self_.local_[i])
        continue;
      collective_contribution contribution;
      contribution.participant = i;
      contribution.types = c_.metas[i]->types;
      contribution.shapes = c_.metas[i]->shapes;
      for (auto& x : *c_.inputs[i])
        contribution.values.push_back(*x);
      part.parts.push_back(std::move(contribution));
    }
    self_send(collective_send::every_other_process, std::move(part));
  }

  void try_gather() {
    auto n = self_.size();
    for (uint32_t i = 0; i < n; ++i)
      if (!c_.inputs[i])
        return;
    if (auto err = self_.check_all_metas(call_, c_)) {
      fail_everywhere(err);
      return;
    }
    c_.results.clear();
    auto& first = *c_.inputs[0];
    for (size_t b = 0; b < first.size(); ++b) {
      auto result = std::make_shared<tensor>();
      result->type = first[b]->type;
      result->shape.push_back(static_cast<int64_t>(n));
      for (auto d : first[b]->shape)
        result->shape.push_back(d);
      for (uint32_t i = 0; i < n; ++i) {
        auto& x = *(*c_.inputs[i])[b];
        if (x.type == dtype::string)
          result->strings.insert(result->strings.end(), x.strings.begin(),
                                 x.strings.end());
        else
          result->data.insert(result->data.end(), x.data.begin(), x.data.end());
      }
      c_.results.push_back(std::move(result));
    }
    complete_locals();
  }

  collective_run& self_;
  const collective_plan& plan_;
  uint64_t call_;
  call_state& c_;
  collective_actions& out_;
};

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
  // A participant that ended before this call means it never ends.
  caf::error never;
  for (auto& [q, calls] : ended_after_)
    if (calls <= call)
      never = make_error(runtime_errc::exchange_failed,
                         label(call) + " cannot complete: "
                           + task_text(plan_.participants[q]) + " ended after "
                           + std::to_string(calls) + " calls");
  auto& c = calls_.try_emplace(call, size()).first->second;
  if (never) {
    fail_call(c, never, out);
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
  driver{*this, call, c, out}.advance();
  return true;
}

std::optional<std::string>
collective_run::part_arrived(uint32_t from, exchange_part& msg,
                             collective_actions& out) {
  auto n = size();
  bool reduce = plan_.kind == collective_kind::all_reduce;
  auto not_from_there = [&](uint32_t p) {
    return "process of node " + plan_.participants[p].node
      + "'s blobs, from another process, of collective '" + plan_.name + "'";
  };
  auto rank_from = std::find(process_of_.begin(), process_of_.end(), from);
  if (from == here_ || rank_from == process_of_.end())
    return "a part of collective '" + plan_.name
      + "' from a process without its participants";
  auto from_rank
    = rank_of_[static_cast<size_t>(rank_from - process_of_.begin())];
  for (auto& part : msg.parts)
    if (local_[part.participant])
      return "a part of collective '" + plan_.name
        + "' for a participant of this process";
  bool tree = reduce && !msg.parts.empty()
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
  driver d{*this, msg.call, c, out};
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
  if (msg.call < retired_below_)
    return std::nullopt;
  auto& c = calls_.try_emplace(msg.call, size()).first->second;
  if (c.finished)
    return std::nullopt;
  if (!msg.error.empty()) {
    fail_call(c, make_error(runtime_errc::exchange_failed, msg.error), out);
    return std::nullopt;
  }
  // Who may send it: the chunk's owner, or the tree parent; the root.
  std::optional<uint32_t> sender;
  switch (plan_.kind) {
    case collective_kind::all_reduce:
      // Sent only once this process's blobs went out: before, it cannot
      // be told from a forgery, nor used.
      if (!c.local_ready)
        return "a result of collective '" + plan_.name
          + "' before this process contributed to it";
      sender = c.tree ? first_of_rank_[parent_of(rank_)]
                      : msg.chunk % static_cast<uint32_t>(size());
      break;
    case collective_kind::broadcast:
      for (uint32_t p = 0; p < size(); ++p)
        if (plan_.participants[p].node == plan_.root)
          sender = p;
      break;
    case collective_kind::all_gather:
    case collective_kind::barrier:
      break;
  }
  if (!sender || process_of_[*sender] != from)
    return "a result of collective '" + plan_.name
      + "' from a process that does not send it";
  driver d{*this, msg.call, c, out};
  if (plan_.kind == collective_kind::all_reduce)
    d.chunk_arrived(msg.chunk, msg.values);
  else
    d.root_arrived(msg.values);
  return std::nullopt;
}

void collective_run::chunk_reduced(uint64_t call, uint32_t chunk,
                                   collective_actions& out) {
  auto i = calls_.find(call);
  if (i == calls_.end())
    return;
  driver{*this, call, i->second, out}.chunk_done(chunk);
}

void collective_run::task_ended(uint32_t p, uint64_t calls, bool ok,
                                collective_actions& out) {
  ended_after_[p] = calls;
  for (auto& [call, c] : calls_)
    if (call >= calls && !c.finished)
      fail_call(c,
                make_error(runtime_errc::exchange_failed,
                           label(call) + " cannot complete: "
                             + task_text(plan_.participants[p])
                             + (ok ? " ended" : " failed") + " after "
                             + std::to_string(calls) + " calls"),
                out);
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
