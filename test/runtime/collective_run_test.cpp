// A collective's algorithm on its own (runtime/collective_run.hpp), over
// simulated processes: every event (a participant's contribution, a
// message's delivery, a share of handed-out work, a task's end, a lost
// node) waits in one pool, and a test picks the order. Small cases run
// every order there is; larger ones run seeded random orders. Whatever
// the order, every participant gets the same bits, those of a reduction
// over the participants in their order, and every wait ends.
#include <epochrt/runtime/collective_run.hpp>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "test_util.hpp"
#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/reduction.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

using wait_ptr = std::shared_ptr<exchange_wait>;
using message = std::variant<exchange_part, exchange_result>;

// A tensor of `count` floats of very different magnitudes, so that a sum
// in another order than the participants' gives other bits.
tensor spread_floats(uint32_t seed, size_t count) {
  std::mt19937 gen{seed};
  std::uniform_real_distribution<float> mantissa{-1.0f, 1.0f};
  std::uniform_int_distribution<int> exponent{-8, 24};
  std::vector<float> values(count);
  for (auto& v : values)
    v = std::ldexp(mantissa(gen), exponent(gen));
  return make_tensor<float>({static_cast<int64_t>(count)}, values);
}

tensor counting_i64(int64_t first, size_t count) {
  std::vector<int64_t> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = first * 1000 + static_cast<int64_t>(i);
  return make_tensor<int64_t>({static_cast<int64_t>(count)}, values);
}

// Participant p's blobs for call `call`: two blobs of other types, sizes
// that chunks do not divide evenly.
std::vector<tensor_ptr> blobs_of(uint32_t p, uint64_t call, size_t floats) {
  auto seed = static_cast<uint32_t>(p * 7919 + call * 104729 + 1);
  return {std::make_shared<const tensor>(spread_floats(seed, floats)),
          std::make_shared<const tensor>(counting_i64(p + 10 * call, 5))};
}

// What a message is once it crossed a process boundary: its views
// serialized as values, its tensors copies of the sender's.
message over_the_wire(const message& m) {
  auto values_of = [](const std::vector<tensor>& values,
                      const std::vector<tensor_slice_view>& views) {
    std::vector<tensor> result;
    if (views.empty())
      return values;
    for (auto& x : views)
      result.push_back(materialize(x));
    return result;
  };
  if (auto* part = std::get_if<exchange_part>(&m)) {
    exchange_part copy = *part;
    for (auto& c : copy.parts) {
      c.values = values_of(c.values, c.views);
      c.views.clear();
    }
    return copy;
  }
  auto copy = std::get<exchange_result>(m);
  copy.values = values_of(copy.values, copy.views);
  copy.views.clear();
  return copy;
}

// One setting of the world: who runs where, what they give, what happens.
struct scenario {
  collective_kind kind = collective_kind::all_reduce;
  reduce_op op = reduce_op::sum;
  // By participant: its process.
  std::vector<uint32_t> process_of;
  // Calls each participant makes, one after the other.
  uint64_t calls = 1;
  size_t floats = 7;
  collective_limits limits;
  // Every message is delivered twice.
  bool duplicate_messages = false;
  // This participant's node is lost, at a moment the order picks.
  std::optional<uint32_t> lost;
  // These participants' tasks end before their first call, at a moment
  // the order picks; their processes and those they tell hear of it.
  std::vector<uint32_t> ends_early;
  // This participant gives a blob of another shape.
  std::optional<uint32_t> misshapen;
  // A broadcast's root: this participant's node (the only participant
  // there).
  uint32_t root = 0;

  size_t participants() const {
    return process_of.size();
  }

  std::vector<tensor_ptr> inputs(uint32_t p, uint64_t call) const {
    auto xs = blobs_of(p, call, floats);
    if (misshapen && *misshapen == p)
      xs[0] = std::make_shared<const tensor>(spread_floats(p, floats + 1));
    if (kind == collective_kind::barrier)
      xs.clear();
    return xs;
  }
};

// The world: one collective_run per process, and the events not yet
// happened.
class world {
public:
  struct contribute_event {
    uint32_t participant;
    uint64_t call;
  };
  struct deliver_event {
    uint32_t from;
    uint32_t to;
    message what;
  };
  struct share_event {
    uint32_t process;
    uint64_t call;
    uint32_t chunk;
    std::function<void()> share;
    std::shared_ptr<size_t> left;
  };
  struct lose_event {
    uint32_t participant;
  };
  struct end_event {
    uint32_t process;
    uint32_t participant;
  };
  using event = std::variant<contribute_event, deliver_event, share_event,
                             lose_event, end_event>;

  explicit world(const scenario& s) : s_(s) {
    plan_.name = "g";
    plan_.kind = s.kind;
    plan_.op = s.op;
    for (uint32_t p = 0; p < s.participants(); ++p)
      plan_.participants.push_back(task_ref{
        "n" + std::to_string(s.process_of[p]), "t" + std::to_string(p)});
    plan_.root = plan_.participants.at(s.root).node;
    for (auto proc : s.process_of)
      processes_ = std::max<uint32_t>(processes_, proc + 1);
    auto recycler = tensor_recycler::make(0);
    for (uint32_t q = 0; q < processes_; ++q)
      runs_.emplace_back(1, plan_, s.process_of, q, recycler, s.limits);
    for (uint32_t p = 0; p < s.participants(); ++p) {
      auto& ending = s.ends_early;
      if (std::find(ending.begin(), ending.end(), p) != ending.end()) {
        // Its process, and those it tells (as an exchange does).
        auto own = s.process_of[p];
        pending_.push_back(end_event{own, p});
        for (auto q : runs_[own].told_of_end(p))
          pending_.push_back(end_event{q, p});
        continue;
      }
      pending_.push_back(contribute_event{p, 0});
    }
    if (s.lost)
      pending_.push_back(lose_event{*s.lost});
  }

  size_t pending() const {
    return pending_.size();
  }

  // Makes the i-th pending event happen.
  void step(size_t i) {
    auto ev = std::move(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<ptrdiff_t>(i));
    std::visit(
      [this](auto& x) {
        happen(x);
      },
      ev);
  }

  // Participant p's wait for call `call`, if it made the call.
  wait_ptr wait_of(uint32_t p, uint64_t call) const {
    auto i = waits_.find({p, call});
    return i == waits_.end() ? nullptr : i->second;
  }

  const collective_run& run_of(uint32_t process) const {
    return runs_[process];
  }

  bool is_gone(uint32_t process) const {
    return gone_.count(process) > 0;
  }

  const collective_plan& plan() const {
    return plan_;
  }

  size_t messages_sent() const {
    return messages_sent_;
  }

  // Messages delivered to process q (duplicates counted once each).
  size_t received_by(uint32_t q) const {
    auto i = received_.find(q);
    return i == received_.end() ? 0 : i->second;
  }

  // The processes each process sent messages to.
  const std::map<uint32_t, std::set<uint32_t>>& partners() const {
    return partners_;
  }

private:
  void happen(contribute_event& ev) {
    auto q = s_.process_of[ev.participant];
    if (is_gone(q))
      return;
    auto wait = std::make_shared<exchange_wait>();
    waits_[{ev.participant, ev.call}] = wait;
    // The participant's next call comes once this one ends.
    if (ev.call + 1 < s_.calls)
      wait->on_complete([this, p = ev.participant, next = ev.call + 1] {
        next_calls_.push_back(contribute_event{p, next});
      });
    collective_actions out;
    runs_[q].contribute(ev.participant, ev.call,
                        s_.inputs(ev.participant, ev.call), wait, out);
    absorb(q, out);
  }

  void happen(deliver_event& ev) {
    if (is_gone(ev.to))
      return;
    collective_actions out;
    std::optional<std::string> refused;
    if (auto* part = std::get_if<exchange_part>(&ev.what))
      refused = runs_[ev.to].part_arrived(ev.from, *part, out);
    else
      refused = runs_[ev.to].result_arrived(
        ev.from, std::get<exchange_result>(ev.what), out);
    BOOST_CHECK_MESSAGE(!refused, refused.value_or(""));
    absorb(ev.to, out);
  }

  void happen(share_event& ev) {
    if (is_gone(ev.process))
      return;
    ev.share();
    if (--*ev.left > 0)
      return;
    collective_actions out;
    runs_[ev.process].chunk_reduced(ev.call, ev.chunk, out);
    absorb(ev.process, out);
  }

  void happen(lose_event& ev) {
    auto lost_process = s_.process_of[ev.participant];
    gone_.insert(lost_process);
    auto& node = plan_.participants[ev.participant].node;
    for (uint32_t q = 0; q < processes_; ++q) {
      if (is_gone(q))
        continue;
      collective_actions out;
      runs_[q].node_lost(node, "its process is gone", out);
      absorb(q, out);
    }
  }

  void happen(end_event& ev) {
    if (is_gone(ev.process))
      return;
    collective_actions out;
    runs_[ev.process].task_ended(ev.participant, 0, true, out);
    absorb(ev.process, out);
  }

  void absorb(uint32_t from, collective_actions& out) {
    complete_all(out.done);
    for (auto& send : out.sends) {
      ++messages_sent_;
      std::vector<uint32_t> to;
      if (send.to == collective_send::every_other_process) {
        for (uint32_t q = 0; q < processes_; ++q)
          if (q != from)
            to.push_back(q);
      } else if (send.to == collective_send::each_of) {
        BOOST_REQUIRE(!send.those.empty());
        for (auto p : send.those) {
          BOOST_REQUIRE_LT(p, s_.participants());
          to.push_back(s_.process_of[p]);
          BOOST_CHECK_NE(to.back(), from);
        }
      } else {
        BOOST_REQUIRE_LT(send.to, s_.participants());
        to.push_back(s_.process_of[send.to]);
        BOOST_CHECK_NE(to.back(), from);
      }
      for (auto q : to) {
        ++received_[q];
        partners_[from].insert(q);
      }
      for (auto q : to)
        for (int copies = s_.duplicate_messages ? 2 : 1; copies > 0; --copies)
          pending_.push_back(
            deliver_event{from, q, over_the_wire(send.message)});
    }
    for (auto& work : out.work) {
      BOOST_REQUIRE(!work.shares.empty());
      auto left = std::make_shared<size_t>(work.shares.size());
      for (auto& share : work.shares)
        pending_.push_back(
          share_event{from, work.call, work.chunk, std::move(share), left});
    }
    for (auto& next : next_calls_)
      pending_.push_back(next);
    next_calls_.clear();
  }

  const scenario& s_;
  collective_plan plan_;
  uint32_t processes_ = 0;
  std::vector<collective_run> runs_;
  std::vector<event> pending_;
  std::vector<contribute_event> next_calls_;
  std::map<std::pair<uint32_t, uint64_t>, wait_ptr> waits_;
  std::set<uint32_t> gone_;
  size_t messages_sent_ = 0;
  std::map<uint32_t, size_t> received_;
  std::map<uint32_t, std::set<uint32_t>> partners_;
};

// What participant p's call must bring: the reduction of every
// participant's blobs in their order, the root's blobs, or the blobs
// stacked in order.
std::vector<tensor> expected_of(const scenario& s, uint64_t call) {
  auto n = static_cast<uint32_t>(s.participants());
  std::vector<std::vector<tensor_ptr>> all;
  for (uint32_t p = 0; p < n; ++p)
    all.push_back(s.inputs(p, call));
  std::vector<tensor> result;
  for (size_t b = 0; b < all[0].size(); ++b) {
    auto& first = *all[0][b];
    switch (s.kind) {
      case collective_kind::all_reduce: {
        tensor out = first;
        std::vector<const void*> sources;
        for (auto& xs : all)
          sources.push_back(xs[b]->data.data());
        reduce_into(s.op, first.type, sources, out.data.data(),
                    first.element_count());
        result.push_back(std::move(out));
        break;
      }
      case collective_kind::broadcast:
        result.push_back(*all[s.root][b]);
        break;
      case collective_kind::all_gather: {
        tensor out;
        out.type = first.type;
        out.shape = {static_cast<int64_t>(n)};
        for (auto d : first.shape)
          out.shape.push_back(d);
        for (auto& xs : all)
          out.data.insert(out.data.end(), xs[b]->data.begin(),
                          xs[b]->data.end());
        result.push_back(std::move(out));
        break;
      }
      case collective_kind::barrier:
        break;
    }
  }
  return result;
}

bool same_bits(const tensor& x, const tensor& y) {
  return x.type == y.type && x.shape == y.shape && x.data == y.data;
}

// Runs events until none is left, the k-th pick taken by `pick(k, n)`
// among the n pending.
void run_to_end(world& w, const std::function<size_t(size_t, size_t)>& pick) {
  for (size_t k = 0; w.pending() > 0; ++k) {
    BOOST_REQUIRE_LT(k, 100000u);
    w.step(pick(k, w.pending()));
  }
}

// Checks a world that ran out of events: every participant's every call
// ended with the expected bits, and nothing is kept.
void check_results(const scenario& s, const world& w) {
  for (uint64_t call = 0; call < s.calls; ++call) {
    auto expected = expected_of(s, call);
    for (uint32_t p = 0; p < s.participants(); ++p) {
      auto wait = w.wait_of(p, call);
      BOOST_REQUIRE_MESSAGE(wait,
                            "participant " << p << " never made call " << call);
      BOOST_REQUIRE_MESSAGE(wait->completed(),
                            "participant " << p << " still waits in call "
                                           << call);
      auto& outcome = wait->outcome();
      BOOST_REQUIRE_MESSAGE(!outcome.error, error_text(outcome.error));
      BOOST_REQUIRE_EQUAL(outcome.values.size(), expected.size());
      for (size_t b = 0; b < expected.size(); ++b)
        BOOST_REQUIRE_MESSAGE(same_bits(*outcome.values[b], expected[b]),
                              "participant " << p << ", call " << call
                                             << ", blob " << b
                                             << ": other bits");
    }
  }
  for (uint32_t q = 0;
       q <= *std::max_element(s.process_of.begin(), s.process_of.end()); ++q)
    BOOST_CHECK_EQUAL(w.run_of(q).calls_kept(), 0u);
}

// Checks that every wait a participant of a process still running made has
// ended, and those that failed say `why`.
void check_every_wait_ended(const scenario& s, const world& w,
                            const std::string& why) {
  for (uint64_t call = 0; call < s.calls; ++call)
    for (uint32_t p = 0; p < s.participants(); ++p) {
      if (w.is_gone(s.process_of[p]))
        continue;
      auto wait = w.wait_of(p, call);
      if (!wait)
        continue;
      BOOST_REQUIRE_MESSAGE(wait->completed(),
                            "participant " << p << " still waits in call "
                                           << call);
      auto& outcome = wait->outcome();
      if (outcome.error)
        BOOST_CHECK_MESSAGE(error_text(outcome.error).find(why)
                              != std::string::npos,
                            error_text(outcome.error));
    }
}

// Runs `s` in every order of its events (depth first over the picks, each
// run from the start), calling `check` after each. Returns the orders run.
size_t every_order(const scenario& s,
                   const std::function<void(const world&)>& check,
                   size_t limit = 200000) {
  std::vector<size_t> picks;
  std::vector<size_t> widths;
  size_t orders = 0;
  for (;;) {
    world w{s};
    for (size_t depth = 0; w.pending() > 0; ++depth) {
      if (depth == picks.size()) {
        picks.push_back(0);
        widths.push_back(w.pending());
      }
      BOOST_REQUIRE_EQUAL(widths[depth], w.pending());
      w.step(picks[depth]);
    }
    BOOST_REQUIRE_EQUAL(picks.size(), widths.size());
    check(w);
    BOOST_REQUIRE_LT(++orders, limit);
    while (!picks.empty() && picks.back() + 1 == widths.back()) {
      picks.pop_back();
      widths.pop_back();
    }
    if (picks.empty())
      return orders;
    ++picks.back();
  }
}

// Runs `s` in `runs` random orders from `seed`.
void random_orders(const scenario& s, uint32_t seed, size_t runs,
                   const std::function<void(const world&)>& check) {
  std::mt19937 gen{seed};
  for (size_t r = 0; r < runs; ++r) {
    world w{s};
    run_to_end(w, [&gen](size_t, size_t n) {
      return std::uniform_int_distribution<size_t>{0, n - 1}(gen);
    });
    check(w);
  }
}

// 16 processes, 20 participants (four processes with two), three calls of
// 50 floats, two children a process in the tree.
void spread_over_16_processes(scenario& s) {
  s.process_of
    = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 3, 7, 15, 0};
  s.calls = 3;
  s.floats = 50;
  s.limits.tree_fanout = 2;
}

// Limits that cut a handful of floats into several chunks and hand every
// reduction and copy out as work in several shares.
collective_limits tiny_limits() {
  collective_limits limits;
  limits.min_chunk_bytes = 8;
  limits.piece_bytes = 8;
  limits.inline_bytes = 0;
  limits.share_bytes = 16;
  limits.max_shares = 3;
  return limits;
}

} // namespace

BOOST_AUTO_TEST_SUITE(collective_run_suite)

BOOST_AUTO_TEST_CASE(
  an_all_reduce_over_three_processes_gives_the_same_bits_in_every_order) {
  scenario s;
  s.process_of = {0, 1, 2};
  auto orders = every_order(s, [&s](const world& w) {
    check_results(s, w);
  });
  BOOST_TEST_MESSAGE(orders << " orders");
  BOOST_CHECK_GT(orders, 10u);
}

BOOST_AUTO_TEST_CASE(
  an_all_reduce_cut_into_chunks_gives_the_same_bits_in_every_order) {
  // Three chunks, one per participant; two participants share a process.
  scenario s;
  s.process_of = {0, 0, 1};
  s.floats = 4;
  s.limits.min_chunk_bytes = 16;
  auto orders = every_order(s, [&s](const world& w) {
    check_results(s, w);
  });
  BOOST_TEST_MESSAGE(orders << " orders");
  BOOST_CHECK_GT(orders, 10u);
}

BOOST_AUTO_TEST_CASE(
  an_all_reduce_with_work_handed_out_gives_the_same_bits_in_every_order) {
  // Every reduction and every copy of a result is work in shares, whose
  // ends interleave with the messages.
  scenario s;
  s.process_of = {0, 1};
  s.floats = 5;
  s.limits = tiny_limits();
  s.limits.min_chunk_bytes = 16;
  s.limits.piece_bytes = 32;
  auto orders = every_order(s, [&s](const world& w) {
    check_results(s, w);
  });
  BOOST_TEST_MESSAGE(orders << " orders");
  BOOST_CHECK_GT(orders, 10u);
}

BOOST_AUTO_TEST_CASE(
  broadcast_all_gather_and_barrier_end_alike_in_every_order) {
  for (auto kind : {collective_kind::broadcast, collective_kind::all_gather,
                    collective_kind::barrier}) {
    BOOST_TEST_CONTEXT(describe(kind)) {
      scenario s;
      s.kind = kind;
      s.process_of = {0, 1, 1, 2};
      every_order(s, [&s](const world& w) {
        check_results(s, w);
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(every_reduction_gives_the_bits_of_the_participants_order) {
  for (auto op :
       {reduce_op::sum, reduce_op::mean, reduce_op::max, reduce_op::min}) {
    scenario s;
    s.op = op;
    s.process_of = {0, 1, 2, 0, 1};
    s.floats = 23;
    s.limits = tiny_limits();
    random_orders(s, 7, 50, [&s](const world& w) {
      check_results(s, w);
    });
  }
}

BOOST_AUTO_TEST_CASE(
  many_participants_and_calls_give_the_same_bits_in_random_orders) {
  // Eight participants on four processes, three calls each: a call's
  // messages may come before the process has begun it, or after.
  for (auto kind : {collective_kind::all_reduce, collective_kind::broadcast,
                    collective_kind::all_gather}) {
    BOOST_TEST_CONTEXT(describe(kind)) {
      scenario s;
      s.kind = kind;
      // A broadcast's root is the one participant of its node.
      s.process_of = {0, 1, 2, 3, 1, 2, 3, 1};
      s.calls = 3;
      s.floats = 61;
      s.limits = tiny_limits();
      random_orders(s, 11, 100, [&s](const world& w) {
        check_results(s, w);
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(duplicate_messages_change_nothing) {
  scenario s;
  s.process_of = {0, 1, 2};
  s.calls = 2;
  s.floats = 9;
  s.limits = tiny_limits();
  s.duplicate_messages = true;
  random_orders(s, 3, 200, [&s](const world& w) {
    check_results(s, w);
  });
  s.kind = collective_kind::all_gather;
  random_orders(s, 4, 100, [&s](const world& w) {
    check_results(s, w);
  });
}

BOOST_AUTO_TEST_CASE(every_wait_ends_when_a_participant_is_lost_at_any_moment) {
  for (auto kind : {collective_kind::all_reduce, collective_kind::broadcast,
                    collective_kind::all_gather, collective_kind::barrier}) {
    BOOST_TEST_CONTEXT(describe(kind)) {
      scenario s;
      s.kind = kind;
      s.process_of = {0, 1, 2};
      s.lost = 2;
      every_order(s, [&s](const world& w) {
        check_every_wait_ended(s, w, "node n2 was lost");
      });
    }
  }
  scenario s;
  s.process_of = {0, 1, 2, 0};
  s.calls = 2;
  s.limits = tiny_limits();
  s.lost = 1;
  random_orders(s, 5, 300, [&s](const world& w) {
    check_every_wait_ended(s, w, "node n1 was lost");
  });
}

BOOST_AUTO_TEST_CASE(a_call_after_the_loss_fails_at_once) {
  scenario s;
  s.process_of = {0, 1};
  s.lost = 1;
  world w{s};
  // The loss first (the last event), then participant 0's contribution.
  w.step(2);
  w.step(0);
  auto wait = w.wait_of(0, 0);
  BOOST_REQUIRE(wait && wait->completed());
  BOOST_CHECK(is_code(wait->outcome().error, runtime_errc::peer_lost));
}

BOOST_AUTO_TEST_CASE(every_wait_fails_when_a_participant_ends_before_its_call) {
  for (auto kind : {collective_kind::all_reduce, collective_kind::broadcast,
                    collective_kind::all_gather}) {
    BOOST_TEST_CONTEXT(describe(kind)) {
      scenario s;
      s.kind = kind;
      s.process_of = {0, 1, 2};
      s.ends_early = {1};
      every_order(s, [&s, kind = kind](const world& w) {
        for (uint32_t p : {0u, 2u}) {
          auto wait = w.wait_of(p, 0);
          BOOST_REQUIRE(wait && wait->completed());
          // A broadcast needs only its root: a participant that has its
          // blobs before it hears of the end is done.
          if (kind == collective_kind::broadcast && !wait->outcome().error)
            continue;
          BOOST_CHECK_MESSAGE(
            error_text(wait->outcome().error).find("ended after 0 calls")
              != std::string::npos,
            error_text(wait->outcome().error));
        }
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(a_task_end_is_told_to_the_ancestors_of_its_process_only) {
  scenario s;
  spread_over_16_processes(s);
  world w{s};
  // Two children a process: rank r's parent is (r - 1) / 2.
  BOOST_CHECK(
    (w.run_of(15).told_of_end(15) == std::vector<uint32_t>{7, 3, 1, 0}));
  BOOST_CHECK((w.run_of(4).told_of_end(4) == std::vector<uint32_t>{1, 0}));
  BOOST_CHECK(w.run_of(0).told_of_end(19).empty());
  // A broadcast's root is waited for by everyone; another participant by
  // the root's process and those between.
  s.kind = collective_kind::broadcast;
  s.root = 5;
  world b{s};
  auto everyone = b.run_of(5).told_of_end(5);
  BOOST_CHECK_EQUAL(everyone.size(), 15u);
  BOOST_CHECK((b.run_of(6).told_of_end(6) == std::vector<uint32_t>{5}));
}

BOOST_AUTO_TEST_CASE(
  every_wait_fails_when_tasks_deep_in_the_tree_and_at_its_root_end) {
  // Participants 0 and 19 (all of the root's), 9 (below 4 and 1) and 13
  // (below 6 and 2), each alone in its process, end before their first
  // call: no call reaches the root, and the others' calls fail because
  // processes 4 and 6, told of the ends below them, fail them everywhere,
  // however the events fall.
  struct setting {
    collective_kind kind;
    size_t min_chunk_bytes;
  };
  for (auto [kind, chunk] :
       {setting{collective_kind::all_reduce, size_t{64} << 10},
        setting{collective_kind::all_reduce, 8},
        setting{collective_kind::all_reduce, 80},
        setting{collective_kind::all_gather, size_t{64} << 10},
        setting{collective_kind::all_gather, 8},
        setting{collective_kind::barrier, size_t{64} << 10}}) {
    BOOST_TEST_CONTEXT(describe(kind) << ", chunks of " << chunk) {
      scenario s;
      spread_over_16_processes(s);
      s.kind = kind;
      s.calls = 1;
      s.limits.min_chunk_bytes = chunk;
      s.limits.piece_bytes = 8;
      s.ends_early = {0, 19, 9, 13};
      random_orders(s, 31, 40, [&s](const world& w) {
        check_every_wait_ended(s, w, "ended after 0 calls");
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(
  every_wait_fails_when_a_broadcast_root_ends_before_its_call) {
  scenario s;
  spread_over_16_processes(s);
  s.kind = collective_kind::broadcast;
  s.calls = 1;
  s.root = 9;
  s.ends_early = {9};
  random_orders(s, 37, 40, [&s](const world& w) {
    for (uint32_t p = 0; p < s.participants(); ++p)
      if (p != 9) {
        auto wait = w.wait_of(p, 0);
        BOOST_REQUIRE(wait && wait->completed());
        BOOST_CHECK_MESSAGE(
          error_text(wait->outcome().error).find("ended after 0 calls")
            != std::string::npos,
          error_text(wait->outcome().error));
      }
  });
}

BOOST_AUTO_TEST_CASE(blobs_of_another_shape_fail_every_wait_in_every_order) {
  for (auto kind : {collective_kind::all_reduce, collective_kind::all_gather}) {
    for (uint32_t misshapen : {0u, 2u}) {
      BOOST_TEST_CONTEXT(describe(kind) << ", participant " << misshapen) {
        scenario s;
        s.kind = kind;
        s.process_of = {0, 1, 1};
        s.misshapen = misshapen;
        s.floats = 40;
        auto every_wait_fails = [&s](const world& w) {
          for (uint32_t p = 0; p < 3; ++p) {
            auto wait = w.wait_of(p, 0);
            BOOST_REQUIRE(wait);
            BOOST_REQUIRE_MESSAGE(wait->completed(),
                                  "participant " << p << " still waits");
            BOOST_CHECK(
              is_code(wait->outcome().error, runtime_errc::exchange_failed));
          }
        };
        every_order(s, every_wait_fails);
        // Three processes, the blobs cut into three chunks: each owner
        // sees a part of its own.
        s.process_of = {0, 1, 2};
        s.limits.min_chunk_bytes = 32;
        random_orders(s, 13, 300, every_wait_fails);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(
  a_part_cut_otherwise_is_refused_without_changing_anything) {
  scenario s;
  s.process_of = {0, 1};
  world w{s};
  collective_run run{1, w.plan(), {0, 1}, 0, tensor_recycler::make(0)};
  exchange_part part;
  part.run = 1;
  part.collective = "g";
  part.chunk = 5; // one chunk only for blobs this small
  collective_contribution c;
  c.participant = 1;
  c.types = {dtype::f32};
  c.shapes = {{4}};
  c.values = {make_tensor<float>({4}, {1, 2, 3, 4})};
  part.parts.push_back(c);
  collective_actions out;
  auto refused = run.part_arrived(1, part, out);
  BOOST_REQUIRE(refused);
  BOOST_CHECK_NE(refused->find("not this process's"), std::string::npos);
  BOOST_CHECK(out.done.empty() && out.sends.empty() && out.work.empty());
  BOOST_CHECK_EQUAL(run.calls_kept(), 0u);
}

BOOST_AUTO_TEST_CASE(a_call_within_one_process_sends_nothing) {
  scenario s;
  s.process_of = {0, 0, 0};
  s.floats = 100000; // handed out as work: past inline_bytes
  world w{s};
  run_to_end(w, [](size_t, size_t) {
    return size_t{0};
  });
  check_results(s, w);
  BOOST_CHECK_EQUAL(w.messages_sent(), 0u);
}

BOOST_AUTO_TEST_CASE(
  a_small_all_reduce_up_and_down_the_tree_gives_the_same_bits_in_every_order) {
  // Four processes, one with two participants, two children each: ranks
  // 1 and 2 are the root's children, rank 3 is rank 1's.
  scenario s;
  s.process_of = {0, 1, 2, 2, 3};
  s.limits.tree_fanout = 2;
  auto orders = every_order(s, [&s](const world& w) {
    check_results(s, w);
  });
  BOOST_TEST_MESSAGE(orders << " orders");
  BOOST_CHECK_GT(orders, 10u);
}

BOOST_AUTO_TEST_CASE(a_small_all_reduce_over_many_processes_stays_on_the_tree) {
  // 16 processes, 20 participants, three calls, two children each: the
  // root hears from its 2 children only, and no process talks to more than
  // its parent and children.
  scenario s;
  spread_over_16_processes(s);
  random_orders(s, 17, 100, [&s](const world& w) {
    check_results(s, w);
    BOOST_CHECK_EQUAL(w.received_by(0), 2u * s.calls);
    for (auto& [from, to] : w.partners())
      BOOST_CHECK_LE(to.size(), 3u);
  });
  // The default fanout, 16: the root hears from all 15 others.
  s.limits = {};
  random_orders(s, 18, 20, [&s](const world& w) {
    check_results(s, w);
    BOOST_CHECK_EQUAL(w.received_by(0), 15u * s.calls);
  });
}

BOOST_AUTO_TEST_CASE(
  the_tree_survives_duplicates_and_ends_every_wait_on_a_loss) {
  scenario s;
  s.process_of = {0, 1, 2, 3, 4, 5, 6};
  s.calls = 2;
  s.limits.tree_fanout = 2;
  s.duplicate_messages = true;
  random_orders(s, 19, 100, [&s](const world& w) {
    check_results(s, w);
  });
  s.duplicate_messages = false;
  for (uint32_t lost : {0u, 2u, 3u, 6u}) {
    BOOST_TEST_CONTEXT("participant " << lost << " lost") {
      s.lost = lost;
      random_orders(s, 23 + lost, 100, [&s, lost](const world& w) {
        check_every_wait_ended(
          s, w, "node n" + std::to_string(s.process_of[lost]) + " was lost");
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(
  blobs_on_either_side_of_the_tree_threshold_fail_every_wait) {
  // Participant 2's first blob is large enough to be cut into chunks,
  // the others' small enough for the tree: each sends its way, and the
  // call fails everywhere instead of waiting.
  scenario s;
  s.process_of = {0, 1, 2, 3};
  s.limits.min_chunk_bytes = 64;
  s.misshapen = 2;
  auto every_wait_fails = [&s](const world& w) {
    for (uint32_t p = 0; p < 4; ++p) {
      auto wait = w.wait_of(p, 0);
      BOOST_REQUIRE(wait);
      BOOST_REQUIRE_MESSAGE(wait->completed(),
                            "participant " << p << " still waits");
      BOOST_CHECK(
        is_code(wait->outcome().error, runtime_errc::exchange_failed));
    }
  };
  // 21 floats and 5 i64: 124 bytes, under 2 x 64: the tree; participant
  // 2's 22 floats: 128 bytes, cut in two chunks.
  s.floats = 21;
  random_orders(s, 29, 200, every_wait_fails);
  // Both sides on the tree.
  s.floats = 5;
  random_orders(s, 31, 200, every_wait_fails);
}

BOOST_AUTO_TEST_CASE(
  a_broadcast_goes_down_a_tree_from_its_root_in_every_order) {
  // Four processes, two children each, the root at rank 3: ranks 0 and 1
  // are its children, rank 2 is rank 0's.
  scenario s;
  s.kind = collective_kind::broadcast;
  s.process_of = {0, 1, 2, 2, 3};
  s.root = 4;
  s.limits.tree_fanout = 2;
  auto orders = every_order(s, [&s](const world& w) {
    check_results(s, w);
    BOOST_CHECK((w.partners().at(3) == std::set<uint32_t>{0, 1}));
    BOOST_CHECK((w.partners().at(0) == std::set<uint32_t>{2}));
    BOOST_CHECK_EQUAL(w.partners().count(1) + w.partners().count(2), 0u);
  });
  BOOST_TEST_MESSAGE(orders << " orders");
  BOOST_CHECK_GT(orders, 10u);
}

BOOST_AUTO_TEST_CASE(a_broadcast_over_many_processes_stays_on_the_tree) {
  // 16 processes, 20 participants, three calls, the root's process 5:
  // every process hears once a call, from its parent only, and sends to
  // at most its two children.
  scenario s;
  s.kind = collective_kind::broadcast;
  spread_over_16_processes(s);
  s.root = 5;
  random_orders(s, 37, 100, [&s](const world& w) {
    check_results(s, w);
    for (uint32_t q = 0; q < 16; ++q)
      BOOST_CHECK_EQUAL(w.received_by(q), q == 5 ? 0u : s.calls);
    for (auto& [from, to] : w.partners())
      BOOST_CHECK_LE(to.size(), 2u);
  });
  // The default fanout, 16: the root sends to the 15 others.
  s.limits = {};
  random_orders(s, 38, 20, [&s](const world& w) {
    check_results(s, w);
    BOOST_CHECK_EQUAL(w.partners().at(5).size(), 15u);
  });
}

BOOST_AUTO_TEST_CASE(
  a_broadcast_tree_survives_duplicates_and_ends_every_wait_on_a_loss) {
  scenario s;
  s.kind = collective_kind::broadcast;
  s.process_of = {0, 1, 2, 3, 4, 5, 6};
  s.root = 3;
  s.calls = 2;
  s.limits.tree_fanout = 2;
  s.duplicate_messages = true;
  random_orders(s, 41, 100, [&s](const world& w) {
    check_results(s, w);
  });
  s.duplicate_messages = false;
  for (uint32_t lost : {3u, 4u, 5u, 0u}) {
    BOOST_TEST_CONTEXT("participant " << lost << " lost") {
      s.lost = lost;
      random_orders(s, 43 + lost, 100, [&s, lost](const world& w) {
        check_every_wait_ended(
          s, w, "node n" + std::to_string(s.process_of[lost]) + " was lost");
      });
    }
  }
}

BOOST_AUTO_TEST_CASE(a_broadcast_result_comes_from_the_tree_parent_only) {
  // Ranks 0..3, two children each, the root at rank 2: rank 3 and rank 0
  // are its children, rank 1 is rank 3's.
  collective_plan plan;
  plan.name = "b";
  plan.kind = collective_kind::broadcast;
  for (int i = 0; i < 4; ++i)
    plan.participants.push_back(
      task_ref{"n" + std::to_string(i), "t" + std::to_string(i)});
  plan.root = "n2";
  collective_limits binary;
  binary.tree_fanout = 2;
  collective_run leaf{1,     plan, {0, 1, 2, 3}, 1, tensor_recycler::make(0),
                      binary};
  exchange_result result;
  result.run = 1;
  result.collective = "b";
  result.values = {make_tensor<float>({4}, {1, 2, 3, 4})};
  collective_actions out;
  // From the root, or from rank 0: not the way down.
  for (uint32_t wrong : {2u, 0u}) {
    auto copy = result;
    auto refused = leaf.result_arrived(wrong, copy, out);
    BOOST_REQUIRE(refused);
    BOOST_CHECK_NE(refused->find("does not send it"), std::string::npos);
  }
  BOOST_CHECK_EQUAL(leaf.calls_kept(), 0u); // a refusal keeps nothing
  // From rank 3, its parent: taken, and nothing is sent on (a leaf).
  auto copy = result;
  BOOST_CHECK(!leaf.result_arrived(3, copy, out));
  BOOST_CHECK(out.sends.empty());
  // The root takes none.
  collective_run root{1,     plan, {0, 1, 2, 3}, 2, tensor_recycler::make(0),
                      binary};
  copy = result;
  BOOST_CHECK(root.result_arrived(3, copy, out));
  BOOST_CHECK_EQUAL(root.calls_kept(), 0u);
  // After a loss, a result neither starts a call nor goes on down.
  collective_run middle{1,     plan, {0, 1, 2, 3}, 3, tensor_recycler::make(0),
                        binary};
  collective_actions after_loss;
  middle.node_lost("n0", "its process is gone", after_loss);
  copy = result;
  BOOST_CHECK(!middle.result_arrived(2, copy, after_loss));
  BOOST_CHECK_EQUAL(middle.calls_kept(), 0u);
  BOOST_CHECK(after_loss.sends.empty());
}

BOOST_AUTO_TEST_CASE(
  a_small_all_gather_and_a_barrier_go_up_and_down_the_tree_in_every_order) {
  // As the small all-reduce: ranks 1 and 2 are the root's children, rank 3
  // is rank 1's.
  for (auto kind : {collective_kind::all_gather, collective_kind::barrier}) {
    BOOST_TEST_CONTEXT(describe(kind)) {
      scenario s;
      s.kind = kind;
      s.process_of = {0, 1, 2, 2, 3};
      s.limits.tree_fanout = 2;
      auto orders = every_order(s, [&s](const world& w) {
        check_results(s, w);
        BOOST_CHECK((w.partners().at(0) == std::set<uint32_t>{1, 2}));
        BOOST_CHECK((w.partners().at(1) == std::set<uint32_t>{0, 3}));
        BOOST_CHECK((w.partners().at(2) == std::set<uint32_t>{0}));
        BOOST_CHECK((w.partners().at(3) == std::set<uint32_t>{1}));
      });
      BOOST_TEST_MESSAGE(orders << " orders");
      BOOST_CHECK_GT(orders, 10u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_larger_all_gather_goes_all_to_all_in_every_order) {
  // A stack of 4 x 68 bytes, over 2 x 64: every process sends to every
  // other.
  scenario s;
  s.kind = collective_kind::all_gather;
  s.process_of = {0, 1, 1, 2};
  s.limits.min_chunk_bytes = 64;
  auto orders = every_order(s, [&s](const world& w) {
    check_results(s, w);
    for (uint32_t q = 0; q < 3; ++q)
      BOOST_CHECK_EQUAL(w.partners().at(q).size(), 2u);
  });
  BOOST_TEST_MESSAGE(orders << " orders");
  BOOST_CHECK_GT(orders, 10u);
}

BOOST_AUTO_TEST_CASE(a_small_all_gather_over_many_processes_stays_on_the_tree) {
  scenario s;
  s.kind = collective_kind::all_gather;
  spread_over_16_processes(s);
  random_orders(s, 53, 100, [&s](const world& w) {
    check_results(s, w);
    BOOST_CHECK_EQUAL(w.received_by(0), 2u * s.calls);
    for (auto& [from, to] : w.partners())
      BOOST_CHECK_LE(to.size(), 3u);
  });
}

BOOST_AUTO_TEST_CASE(
  the_gather_tree_survives_duplicates_and_ends_every_wait_on_a_loss) {
  for (auto kind : {collective_kind::all_gather, collective_kind::barrier}) {
    BOOST_TEST_CONTEXT(describe(kind)) {
      scenario s;
      s.kind = kind;
      s.process_of = {0, 1, 2, 3, 4, 5, 6};
      s.calls = 2;
      s.limits.tree_fanout = 2;
      s.duplicate_messages = true;
      random_orders(s, 59, 100, [&s](const world& w) {
        check_results(s, w);
      });
      s.duplicate_messages = false;
      for (uint32_t lost : {0u, 2u, 3u, 6u}) {
        BOOST_TEST_CONTEXT("participant " << lost << " lost") {
          s.lost = lost;
          random_orders(s, 61 + lost, 100, [&s, lost](const world& w) {
            check_every_wait_ended(s, w,
                                   "node n" + std::to_string(s.process_of[lost])
                                     + " was lost");
          });
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(
  all_gather_blobs_on_either_side_of_the_tree_threshold_fail_every_wait) {
  // Stacks of 4 x 124 bytes (the tree, under 2 x 256) and, for
  // participant 2's one more float, of 4 x 128 (all to all).
  scenario s;
  s.kind = collective_kind::all_gather;
  s.process_of = {0, 1, 2, 3};
  s.limits.min_chunk_bytes = 256;
  s.limits.tree_fanout = 2;
  s.floats = 21;
  s.misshapen = 2;
  random_orders(s, 67, 200, [](const world& w) {
    for (uint32_t p = 0; p < 4; ++p) {
      auto wait = w.wait_of(p, 0);
      BOOST_REQUIRE(wait);
      BOOST_REQUIRE_MESSAGE(wait->completed(),
                            "participant " << p << " still waits");
      BOOST_CHECK(
        is_code(wait->outcome().error, runtime_errc::exchange_failed));
    }
  });
}

BOOST_AUTO_TEST_CASE(a_part_from_a_process_that_does_not_send_it_is_refused) {
  // Ranks 0..3, two children each; rank 3's blobs reach the root through
  // rank 1.
  collective_plan plan;
  plan.name = "g";
  for (int i = 0; i < 4; ++i)
    plan.participants.push_back(
      task_ref{"n" + std::to_string(i), "t" + std::to_string(i)});
  collective_limits binary;
  binary.tree_fanout = 2;
  collective_run root{1,     plan, {0, 1, 2, 3}, 0, tensor_recycler::make(0),
                      binary};
  exchange_part part;
  part.run = 1;
  part.collective = "g";
  collective_contribution c;
  c.participant = 3;
  c.types = {dtype::f32};
  c.shapes = {{4}};
  c.values = {make_tensor<float>({4}, {1, 2, 3, 4})};
  part.parts.push_back(c);
  collective_actions out;
  // From rank 3 itself, or from rank 2: not the way up.
  for (uint32_t wrong : {3u, 2u}) {
    auto copy = part;
    auto refused = root.part_arrived(wrong, copy, out);
    BOOST_REQUIRE(refused);
    BOOST_CHECK_NE(refused->find("from another process"), std::string::npos);
  }
  BOOST_CHECK_EQUAL(root.calls_kept(), 0u);
  // From rank 1, its parent on the way: kept.
  auto copy = part;
  BOOST_CHECK(!root.part_arrived(1, copy, out));
  BOOST_CHECK_EQUAL(root.calls_kept(), 1u);
  // A result only ever comes down: the root takes none.
  exchange_result result;
  result.run = 1;
  result.collective = "g";
  result.values = {make_tensor<float>({4}, {1, 2, 3, 4})};
  BOOST_CHECK(root.result_arrived(1, result, out));
}

BOOST_AUTO_TEST_SUITE_END()
