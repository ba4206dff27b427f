#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/collective_kind.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/tensor.hpp>

// What a task's channel and collective ops see of the world outside their
// node: a port to the exchange of the task's session, and the waits its
// calls return. The runtime defines the interface; the actors layer
// implements it (actors/core/exchange_hub.hpp), in-process and across
// processes.

namespace epochrt {

/// A blob passed between tasks: shared and immutable, so that tasks of one
/// process pass it on without copying it (a workspace that writes a blob
/// someone else holds clones it first).
using tensor_ptr = std::shared_ptr<const tensor>;

/// How an exchange operation ended.
struct exchange_outcome {
  /// Why it failed; none when it succeeded. `runtime_errc::peer_lost` when
  /// a node it waited for was lost (the group then fails as a lost node).
  caf::error error;
  /// What it brought: a taken item's blobs, a collective's results.
  std::vector<tensor_ptr> values;
  /// A take found its channel closed and empty (`values` is empty).
  bool closed = false;
};

/// One exchange operation in flight, which an op started and its task
/// waits for. Completed exactly once, from any thread; the first outcome
/// given wins.
///
/// Thread-safe.
class exchange_wait {
public:
  exchange_wait() = default;
  exchange_wait(const exchange_wait&) = delete;
  exchange_wait& operator=(const exchange_wait&) = delete;

  /// Completes the wait with `outcome` unless it is already complete, and
  /// then runs the function given to `on_complete`, if any, on this
  /// thread, after the wait's own lock is released. Returns whether this
  /// call completed it.
  bool complete(exchange_outcome outcome);

  /// Completes the wait with an error, as `complete`.
  bool fail(caf::error err);

  bool completed() const;

  /// What the operation ended with. Precondition: `completed()`, and no
  /// other thread uses the outcome.
  exchange_outcome& outcome() noexcept EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
    // Unlocked: once complete, nothing but the caller writes it.
    return outcome_;
  }

  /// Asks for `resume` to run once the wait completes, on the completing
  /// thread. Returns false when the wait has completed already: `resume`
  /// is then dropped unrun, and the caller goes on by itself.
  bool on_complete(std::function<void()> resume);

private:
  mutable annotated_mutex mtx_;
  bool done_ EPOCHRT_GUARDED_BY(mtx_) = false;
  exchange_outcome outcome_ EPOCHRT_GUARDED_BY(mtx_);
  std::function<void()> resume_ EPOCHRT_GUARDED_BY(mtx_);
};

/// An exchange operation that is already over: for a port that can answer
/// at once.
std::shared_ptr<exchange_wait> completed_wait(exchange_outcome outcome);

/// Where the channel and collective ops of one task go: the exchange of
/// the task's session, bound to the task and to the run of its group.
///
/// Every call starts an operation and returns its wait at once, never null
/// and never blocking; the op suspends its task until the wait completes
/// (op_context::wait_for). Errors come back as the wait's outcome: an
/// unknown channel or collective, a put into a closed channel, blobs that
/// do not match the other participants', a node lost, the task cancelled.
///
/// A port is used by its task only, one op at a time; the waits it returns
/// may complete on any thread.
class task_port {
public:
  virtual ~task_port();

  /// The declaration of `name` in the group's plan, if it has one: a copy,
  /// since the run (and its plan) may end while the op still looks at it.
  virtual std::optional<channel_def>
  find_channel(const std::string& name) const = 0;

  /// Puts `item` (one tensor per blob of the channel) into `channel`,
  /// waiting while it is full.
  virtual std::shared_ptr<exchange_wait>
  put(const std::string& channel, std::vector<tensor_ptr> item) = 0;

  /// Takes the oldest item of `channel`, waiting while it is empty and
  /// open; the outcome's `closed` is set instead once it is closed and
  /// empty.
  virtual std::shared_ptr<exchange_wait> take(const std::string& channel) = 0;

  /// Closes `channel`: later puts fail, and takes end once it is empty.
  /// Closing a closed channel does nothing.
  virtual std::shared_ptr<exchange_wait> close(const std::string& channel) = 0;

  /// Makes this task's next call of collective `name`, a `kind`, with
  /// `inputs`; the outcome's values are its results, one per input (none
  /// for a barrier).
  virtual std::shared_ptr<exchange_wait>
  collective(collective_kind kind, const std::string& name,
             std::vector<tensor_ptr> inputs)
    = 0;
};

} // namespace epochrt
