#include <epochrt/runtime/collective_driver.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/collective_chunks.hpp>
#include <epochrt/runtime/reduction.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

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

} // namespace

collective_driver::collective_driver(collective_run& self, uint64_t call,
                                     call_state& c, collective_actions& out)
  : self_(self), plan_(self.plan_), call_(call), c_(c), out_(out) {
  // nop
}

collective_driver::~collective_driver() {
  self_.retire_finished();
}

void collective_driver::advance(uint32_t arrived) {
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
      // As for an all-reduce: blobs that differ may have gone different
      // ways (the tree, all to all), and would never all meet.
      if (auto err = check_known_metas()) {
        fail_everywhere(err);
        return;
      }
      if (c_.tree && self_.rank_ != self_.origin_)
        send_whole_up();
      else
        try_gather();
      break;
  }
}

void collective_driver::chunk_done(uint32_t j) {
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

void collective_driver::chunk_arrived(uint32_t j, std::vector<tensor>& values) {
  if (c_.finished || !c_.local_ready || j >= c_.chunks || c_.chunk_done[j]
      || c_.chunk_busy[j] || owned_here(j))
    return;
  // Everywhere: on the tree, the subtree below waits for this process.
  auto wrong_size = [&] {
    fail_everywhere(self_.mismatch(call_,
                                   "node " + owner_of(j).node
                                     + " sent a result of the "
                                       "wrong size"));
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

void collective_driver::root_arrived(std::vector<tensor>& values) {
  if (c_.finished || c_.results_known)
    return;
  c_.results.clear();
  collective_run::blob_meta meta;
  for (auto& v : values) {
    meta.types.push_back(v.type);
    meta.shapes.push_back(v.shape);
    c_.results.push_back(std::make_shared<tensor>(std::move(v)));
  }
  for (uint32_t p = 0; p < self_.size(); ++p)
    if (plan_.participants[p].node == plan_.root)
      c_.metas[p] = meta;
  c_.results_known = true;
  // On down the tree at once: the subtree need not wait for this
  // process's own participants.
  send_results_down();
  advance();
}

bool collective_driver::owned_here(uint32_t j) const {
  return self_.local_[j % self_.size()];
}

const task_ref& collective_driver::owner_of(uint32_t j) const {
  return plan_.participants[j % self_.size()];
}

void collective_driver::self_send(
  uint32_t to, std::variant<exchange_part, exchange_result> m) {
  out_.sends.push_back({to, std::move(m)});
}

bool collective_driver::all_locals_in() const {
  for (uint32_t i = 0; i < self_.size(); ++i)
    if (self_.local_[i] && !c_.inputs[i])
      return false;
  return true;
}

uint32_t collective_driver::first_local() const {
  for (uint32_t i = 0; i < self_.size(); ++i)
    if (self_.local_[i])
      return i;
  return 0;
}

void collective_driver::fail_everywhere(const caf::error& err) {
  self_.fail_call_everywhere(call_, c_, err, out_);
}

void collective_driver::complete_locals() {
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

caf::error collective_driver::check_known_metas() const {
  auto first = first_local();
  for (uint32_t i = 0; i < self_.size(); ++i)
    if (i != first && c_.metas[i])
      if (auto err = self_.check_meta(call_, c_, i, first))
        return err;
  return {};
}

void collective_driver::on_local_ready() {
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
  if (plan_.kind == collective_kind::all_reduce)
    send_parts();
  else if (plan_.kind == collective_kind::broadcast)
    send_root();
  else // an all-gather or a barrier: every local input goes whole
    send_whole();
}

void collective_driver::send_parts() {
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
    auto part = new_part();
    part.chunk = j;
    for (uint32_t i = 0; i < n; ++i) {
      if (!self_.local_[i])
        continue;
      auto contribution = contribution_of(i);
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

exchange_part collective_driver::new_part() const {
  exchange_part part;
  part.run = self_.run_;
  part.collective = plan_.name;
  part.call = call_;
  return part;
}

collective_contribution collective_driver::contribution_of(uint32_t i) const {
  collective_contribution contribution;
  contribution.participant = i;
  contribution.types = c_.metas[i]->types;
  contribution.shapes = c_.metas[i]->shapes;
  return contribution;
}

void collective_driver::send_up() {
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
  auto part = new_part();
  part.chunk = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (!self_.local_[i] && !below(i))
      continue;
    auto contribution = contribution_of(i);
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

void collective_driver::send_down() {
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

void collective_driver::try_reduce(uint32_t j) {
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
  auto shares
    = std::clamp<size_t>((bytes + limits.share_bytes - 1) / limits.share_bytes,
                         1, limits.max_shares);
  c_.chunk_busy[j] = true;
  collective_work work{call_, j, {}};
  for (size_t q = 0; q < shares; ++q)
    work.shares.emplace_back([pieces, op, q, shares, keep, slices] {
      reduce_share(*pieces, op, q, shares);
    });
  out_.work.push_back(std::move(work));
}

void collective_driver::send_root() {
  for (uint32_t i = 0; i < self_.size(); ++i) {
    if (!self_.local_[i] || plan_.participants[i].node != plan_.root)
      continue;
    auto& root = *c_.inputs[i];
    c_.results.clear();
    for (auto& x : root)
      c_.results.push_back(std::const_pointer_cast<tensor>(x));
    c_.results_known = true;
    send_results_down();
    return;
  }
}

// The results whole (their shapes and strings too), to this process's
// children in the tree, in one message they share: a broadcast's root's
// blobs, or an all-gather's stack.
void collective_driver::send_results_down() {
  auto children = self_.children();
  if (children.empty())
    return;
  exchange_result msg;
  msg.run = self_.run_;
  msg.collective = plan_.name;
  msg.call = call_;
  for (auto& x : c_.results)
    msg.values.push_back(*x);
  collective_send send;
  send.to = collective_send::each_of;
  send.message = std::move(msg);
  for (auto child : children)
    send.those.push_back(self_.first_of_rank_[child]);
  out_.sends.push_back(std::move(send));
}

void collective_driver::finish_broadcast() {
  if (auto err = self_.check_all_metas(call_, c_)) {
    fail_everywhere(err);
    return;
  }
  complete_locals();
}

void collective_driver::send_whole() {
  if (!self_.spans_processes_)
    return;
  c_.tree = self_.tree_for(*c_.metas[first_local()]);
  if (c_.tree)
    return; // up the tree once the subtree's blobs are in (advance)
  auto part = new_part();
  for (uint32_t i = 0; i < self_.size(); ++i) {
    if (!self_.local_[i])
      continue;
    auto contribution = contribution_of(i);
    for (auto& x : *c_.inputs[i])
      contribution.values.push_back(*x);
    part.parts.push_back(std::move(contribution));
  }
  self_send(collective_send::every_other_process, std::move(part));
}

void collective_driver::try_gather() {
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
  if (c_.tree)
    send_results_down();
  complete_locals();
}

void collective_driver::send_whole_up() {
  if (c_.sent_up)
    return;
  auto n = self_.size();
  auto here_or_below = [&](uint32_t i) {
    return self_.local_[i] || self_.below_here(self_.rank_of(i));
  };
  for (uint32_t i = 0; i < n; ++i)
    if (here_or_below(i) && !c_.inputs[i])
      return;
  auto part = new_part();
  for (uint32_t i = 0; i < n; ++i) {
    if (!here_or_below(i))
      continue;
    auto contribution = contribution_of(i);
    for (auto& x : *c_.inputs[i])
      contribution.values.push_back(*x);
    part.parts.push_back(std::move(contribution));
  }
  c_.sent_up = true;
  self_send(self_.first_of_rank_[self_.parent_of(self_.rank_)],
            std::move(part));
}

void collective_driver::stacked_arrived(std::vector<tensor>& values) {
  if (c_.finished || c_.results_known)
    return;
  auto& mine = *c_.metas[first_local()];
  auto n = static_cast<int64_t>(self_.size());
  bool fits = values.size() == mine.types.size();
  for (size_t b = 0; fits && b < values.size(); ++b) {
    auto shape = mine.shapes[b];
    shape.insert(shape.begin(), n);
    fits = values[b].type == mine.types[b] && values[b].shape == shape
      && values[b].data.size()
        == element_count_of(shape) * element_size(mine.types[b]);
  }
  if (!fits) {
    // Everywhere: the subtree below waits for this process.
    fail_everywhere(self_.mismatch(call_,
                                   "the blobs stacked down the tree "
                                   "are not this process's blobs "
                                   "stacked"));
    return;
  }
  c_.results.clear();
  for (auto& v : values)
    c_.results.push_back(std::make_shared<tensor>(std::move(v)));
  c_.results_known = true;
  send_results_down();
  complete_locals();
}

} // namespace epochrt
