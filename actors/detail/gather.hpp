#pragma once

// Internal to actors/: one fan-out of requests to the nodes of a job,
// gathered under ONE timeout for the whole fan-out.
//
// Why one timeout: in CAF 0.17 every timed request is a trip through the
// clock thread, and its entry holds a strong reference to the requester
// until it fires -- even when the reply came long before (a group timeout of
// a day kept every epoch's entries, and the actors they name, for a day).
// The requests of a gather carry no timeout of their own; the gather arms
// one timer, a request timeout on a message id of its own, and cancels it
// as soon as it has settled.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/behavior.hpp>
#include <caf/duration.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message_id.hpp>
#include <caf/message_priority.hpp>
#include <caf/sec.hpp>
#include <caf/unit.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/timeouts.hpp>

namespace epochrt::detail {

/// What a gather does with the first failure of one of its requests.
enum class gather_policy {
  /// Waits for every answer (or the timeout) and only then reports: a node
  /// may still be working on its request (loading a checkpoint into its
  /// workspace) while another has failed, and a caller that went on at the
  /// first failure would race it. Of several failures, a lost node's wins:
  /// only the others may be answered by falling back.
  settle_all,
  /// Reports the first failure at once; later answers are dropped. For a
  /// caller that stops the work itself (a group runner quits, and its
  /// nodes cancel their tasks).
  fail_fast,
};

/// Where a fan-out happens, for the errors that name a node: "node n (what,
/// epoch e)"; the epoch is left out when it is -1.
struct gather_site {
  std::string what;
  int64_t epoch = -1;

  /// "node <node> (<what>, epoch <epoch>)".
  std::string where(const std::string& node) const {
    auto text = "node " + node + " (" + what;
    if (epoch >= 0)
      text += ", epoch " + std::to_string(epoch);
    text += ')';
    return text;
  }
};

/// One request of a fan-out: the node it is for and the actor that answers.
template <class Handle>
struct gather_target {
  std::string node;
  Handle handle;
};

/// A fan-out in flight, for the caller's down handler (see `node_down`).
template <class Reply>
class gather_state {
public:
  using done_fn = std::function<void(caf::expected<std::vector<Reply>>)>;
  using translate_fn
    = std::function<caf::error(const std::string& node, caf::error err)>;

  gather_state(std::vector<std::string> nodes, gather_site site,
               gather_policy policy, std::chrono::milliseconds timeout,
               translate_fn translate, done_fn done)
    : nodes_(std::move(nodes)), site_(std::move(site)), policy_(policy),
      timeout_(timeout), translate_(std::move(translate)),
      done_(std::move(done)), replies_(nodes_.size()),
      answered_(nodes_.size(), false), remaining_(nodes_.size()) {
    // nop
  }

  /// Has `done` run?
  bool finished() const noexcept {
    return finished_;
  }

  /// Leg `i` answered with `reply`.
  void succeed(size_t i, Reply reply) {
    if (!settle_leg(i))
      return;
    replies_[i] = std::move(reply);
    after_leg();
  }

  /// Leg `i` answered with `err` (as CAF reported it).
  void fail(size_t i, caf::error err) {
    if (!settle_leg(i))
      return;
    record(lost_or_translated(i, std::move(err)));
    after_leg();
  }

  /// The actor at `source` went down: a leg still waiting for it fails
  /// with `node_lost` at once, instead of waiting for the timeout (a local
  /// actor that ends while it holds a request never answers it). Returns
  /// whether `source` was a target still waited for. Call it from the
  /// caller's down handler when the gather monitors its targets, or the
  /// caller does (`gather_options::monitor`, `caller_monitors`).
  template <class Address>
  bool node_down(const Address& source) {
    auto matched = false;
    if (addresses_.empty())
      return false; // not monitoring
    for (size_t i = 0; i < nodes_.size() && !finished_; ++i)
      if (!answered_[i] && addresses_[i] == source) {
        matched = true;
        fail(i, caf::sec::request_receiver_down);
      }
    return matched;
  }

  /// The caller gives up on the fan-out: every leg still waiting fails with
  /// `err` (a stop on request), as the node had answered it.
  void abandon(const caf::error& err) {
    for (size_t i = 0; i < nodes_.size() && !finished_; ++i)
      if (!answered_[i])
        fail(i, err);
  }

  /// The one timeout of the fan-out has passed: every leg still waiting
  /// fails with `node_lost`.
  void expire() {
    timer_armed_ = false;
    for (size_t i = 0; i < nodes_.size() && !finished_; ++i)
      if (!answered_[i])
        fail(i, caf::sec::request_timeout);
  }

  // -- for gather() ----------------------------------------------------------

  std::vector<caf::actor_addr> addresses_;
  std::function<void()> disarm_; // cancels the timer; set while it is armed
  // Removes the monitors. A monitor stays attached to its target after the
  // requester quits, and keeps the requester's memory until the target
  // ends: on a long job, one per fan-out per node.
  std::function<void()> demonitor_;
  bool timer_armed_ = false;

  void finish_empty() {
    finish();
  }

private:
  bool settle_leg(size_t i) {
    if (answered_[i])
      return false;
    answered_[i] = true;
    --remaining_;
    return !finished_;
  }

  caf::error lost_or_translated(size_t i, caf::error err) {
    if (err == caf::sec::request_timeout)
      return make_error(actors_errc::node_lost,
                        site_.where(nodes_[i]) + " did not answer within "
                          + std::to_string(timeout_.count()) + " ms");
    if (err == caf::sec::request_receiver_down)
      return make_error(actors_errc::node_lost,
                        site_.where(nodes_[i]) + " is down");
    return translate_(nodes_[i], std::move(err));
  }

  // A node whose tasks were only cancelled reports no cause: it stopped
  // because another failed. Its error counts least, and a fan-out that
  // fails fast waits for the others on it (they answer once cancelled).
  static bool cancelled_only(const caf::error& err) noexcept {
    return is_error(err, actors_errc::task_cancelled);
  }

  static int weight(const caf::error& err) noexcept {
    return is_node_lost(err) ? 2 : cancelled_only(err) ? 0 : 1;
  }

  void record(caf::error err) {
    if (!failure_ || weight(err) > weight(failure_))
      failure_ = std::move(err);
  }

  void after_leg() {
    if (failure_ && policy_ == gather_policy::fail_fast
        && !cancelled_only(failure_))
      finish();
    else if (remaining_ == 0)
      finish();
  }

  void finish() {
    finished_ = true;
    // The timer goes before `done` runs: `done` may make the actor quit.
    if (timer_armed_ && disarm_) {
      timer_armed_ = false;
      disarm_();
    }
    disarm_ = nullptr;
    if (demonitor_) {
      demonitor_();
      demonitor_ = nullptr;
    }
    auto done = std::move(done_);
    if (failure_)
      done(std::move(failure_));
    else
      done(std::move(replies_));
  }

  std::vector<std::string> nodes_;
  gather_site site_;
  gather_policy policy_;
  std::chrono::milliseconds timeout_;
  translate_fn translate_;
  done_fn done_;
  std::vector<Reply> replies_;
  std::vector<bool> answered_;
  size_t remaining_;
  caf::error failure_;
  bool finished_ = false;
};

/// Options of one gather.
struct gather_options {
  gather_site site;
  gather_policy policy = gather_policy::settle_all;
  /// For the whole fan-out, from the moment the requests go out. A
  /// timeout of a century or more means "never" (no timer at all).
  std::chrono::milliseconds timeout{std::chrono::hours(1)};
  /// Monitor every target; the caller's down handler must then pass every
  /// down message to `node_down` of the returned state.
  bool monitor = false;
  /// The caller monitors the targets itself, for longer than this gather
  /// (the job runner, for its whole job), and passes their down messages
  /// to `node_down`: the gather only remembers their addresses.
  bool caller_monitors = false;
};

/// Sends `make(target)` to every target at once (`make` is called once per
/// target, in target order, before `gather` returns) and runs `done` once with
/// every reply, in target order, or with the failure (see `gather_policy`).
/// A timeout, or a target that is down, becomes `actors_errc::node_lost`
/// naming the node, the site and its epoch; every other error of a target
/// is passed through `translate(node, err)`. With no targets, `done` runs
/// at once with no replies. Returns the state, for `node_down`.
///
/// `Reply` is the reply type of the request (`caf::unit_t` for a request
/// answered with nothing). Must run in the actor `self`, and so does
/// `done`.
template <class Reply, class Self, class Handle, class MakeRequest>
std::shared_ptr<gather_state<Reply>>
gather(Self* self, const std::vector<gather_target<Handle>>& targets,
       gather_options opts, MakeRequest make,
       typename gather_state<Reply>::translate_fn translate,
       typename gather_state<Reply>::done_fn done) {
  std::vector<std::string> nodes;
  nodes.reserve(targets.size());
  for (auto& target : targets)
    nodes.push_back(target.node);
  auto st = std::make_shared<gather_state<Reply>>(
    std::move(nodes), std::move(opts.site), opts.policy, opts.timeout,
    std::move(translate), std::move(done));
  if (targets.empty()) {
    st->finish_empty();
    return st;
  }
  if (opts.monitor || opts.caller_monitors) {
    st->addresses_.reserve(targets.size());
    for (auto& target : targets)
      st->addresses_.push_back(target.handle.address());
  }
  if (opts.monitor) {
    for (auto& target : targets)
      self->monitor(target.handle);
    st->demonitor_ = [self, addresses = st->addresses_] {
      for (auto& address : addresses)
        self->demonitor(address);
    };
  }
  // The one timer: a request timeout on an id of the gather's own, whose
  // response handler is the gather's expiry. Settling first cancels the
  // clock's entry and consumes the handler with a reply of no error.
  if (opts.timeout < never) {
    auto rid = self->new_request_id(caf::message_priority::normal);
    auto response_id = rid.response_id();
    self->add_multiplexed_response_handler(response_id,
                                           caf::behavior{[st](caf::error& err) {
                                             if (err && st->timer_armed_)
                                               st->expire();
                                           }});
    self->request_response_timeout(caf::duration{opts.timeout}, rid);
    st->timer_armed_ = true;
    st->disarm_ = [self, response_id] {
      self->clock().cancel_request_timeout(self, response_id);
      self->enqueue(
        caf::make_mailbox_element(nullptr, response_id, {}, caf::error{}),
        self->context());
    };
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    auto handle
      = self->request(targets[i].handle, caf::infinite, make(targets[i]));
    if constexpr (std::is_same_v<Reply, caf::unit_t>) {
      handle.then(
        [st, i] {
          st->succeed(i, caf::unit);
        },
        [st, i](caf::error& err) {
          st->fail(i, std::move(err));
        });
    } else {
      handle.then(
        [st, i](Reply& reply) {
          st->succeed(i, std::move(reply));
        },
        [st, i](caf::error& err) {
          st->fail(i, std::move(err));
        });
    }
  }
  return st;
}

} // namespace epochrt::detail
