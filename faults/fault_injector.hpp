#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/faults/fault_draws.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/faults/fault_point.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

namespace epochrt {

/// Where a point is hit: the node (empty on the master), the epoch (-1 when
/// the point does not know it) and the point's detail (the message, op type
/// or group; may be empty).
struct fault_site {
  std::string_view node;
  int64_t epoch = -1;
  std::string_view detail;
};

/// What the code at a point must do. `none` almost always.
struct fault_action {
  fault_kind kind = fault_kind::none;
  /// io_error: the errno.
  int error = 0;
  /// delay, partition: milliseconds.
  uint64_t ms = 0;
  /// Random bits from the plan's seed, for choosing which byte to corrupt
  /// or where to cut a write, reproducibly: seed a `fault_draws` with it.
  uint64_t draw = 0;

  explicit operator bool() const noexcept {
    return kind != fault_kind::none;
  }
};

/// Carries out a fault plan at the points that consult it.
///
/// Each rule counts the hits that match its filters; `hit`, `probability`
/// (drawn from a stream of its own, seeded by the plan's seed and the rule's
/// index) and `count` decide on which it strikes. So a plan strikes the same
/// hits again whenever the matching hits come in the same order — always
/// when a rule names a node and a point that node passes on one thread (the
/// persistence points, snapshots, a node's messages), and for the master's
/// points (the job runner's, commits, the remote points of a master); the
/// ops of tasks that run concurrently on one node may interleave
/// differently from run to run (docs/fault-plans.md, Reproducibility).
///
/// Crashes happen inside `hit`; every other kind is carried out by the code
/// at the point, which knows what a failed write or a dropped message is.
///
/// Thread-safe. Shared by everything of one session or daemon
/// (`std::shared_ptr`); a null injector means no plan, and a point then
/// costs a null test (`strike`).
class fault_injector {
public:
  explicit fault_injector(fault_plan plan);

  ~fault_injector();

  fault_injector(const fault_injector&) = delete;
  fault_injector& operator=(const fault_injector&) = delete;

  /// True when some rule is about `point` or hits are traced.
  bool armed(fault_point point) const noexcept {
    return armed_[static_cast<size_t>(point)].load(std::memory_order_relaxed);
  }

  /// A hit of `point` at `site`: the fault that strikes, if any. A crash
  /// does not return: it writes one line to stderr and kills the process
  /// with SIGKILL.
  fault_action hit(fault_point point, const fault_site& site);

  /// Appends a line for every later hit to the file at `path` (created
  /// when missing): "<point>\t<node>\t<epoch>\t<detail>\t<n>\n", where n
  /// counts the hits of that point at that node so far (from 1). Each line
  /// is one write(2), so a crash loses none — made on the thread at the
  /// point, a CAF scheduler thread too: tracing is for `epochrt sweep`, not
  /// for production. Arms every point. Errors: fault_errc::unreadable_plan when
  /// the file cannot be opened.
  caf::error trace_to(const std::string& path);

  /// Waits `ms` for an injected delay, or less: until interrupt_delays() is
  /// called, or until `*cancel` (when given; polled every 10 ms) is true.
  /// For code that may block (task threads, persistence, host threads).
  void delay(std::chrono::milliseconds ms,
             const std::atomic<bool>* cancel = nullptr);

  /// Ends every delay in progress and makes later ones return at once. For
  /// the owner of the plan (a session, a daemon) shutting down: no thread
  /// of its own may sleep past it on an injected delay.
  void interrupt_delays();

  /// The strikes so far, one line each: "crash at save.open (node
  /// trainer_0, epoch 2, hit 1)".
  std::vector<std::string> strikes() const;

  const fault_plan& plan() const noexcept {
    return plan_;
  }

private:
  struct rule_state {
    uint64_t matches = 0;
    uint64_t strikes = 0;
    fault_draws draws{0};
  };

  fault_plan plan_;
  std::condition_variable_any delays_cv_;
  bool delays_interrupted_ EPOCHRT_GUARDED_BY(mtx_) = false;
  // Read at every point without the lock; trace_to may arm them while
  // others read.
  std::array<std::atomic<bool>, fault_point_count> armed_{};
  mutable annotated_mutex mtx_;
  std::vector<rule_state> states_ EPOCHRT_GUARDED_BY(mtx_);
  int trace_fd_ EPOCHRT_GUARDED_BY(mtx_) = -1;
  std::map<std::pair<fault_point, std::string>, uint64_t>
    trace_counts_ EPOCHRT_GUARDED_BY(mtx_);
  std::vector<std::string> strikes_ EPOCHRT_GUARDED_BY(mtx_);
};

/// The fault at `point`, or none when there is no injector: what code at an
/// injection point calls.
inline fault_action strike(fault_injector* faults, fault_point point,
                           const fault_site& site) {
  if (faults == nullptr || !faults->armed(point))
    return {};
  return faults->hit(point, site);
}

/// fault_errc::injected, naming the point, the site and, for an io_error,
/// the errno: "injected EIO at save.open (node trainer_0, epoch 2):
/// Input/output error".
caf::error injected_error(fault_point point, const fault_site& site,
                          const fault_action& action);

/// Writes "epochrt: fault plan: <why>" to stderr in one write(2) and kills
/// this process with SIGKILL: no destructor runs, nothing is flushed. What
/// a crash does, and a daemon's kill_node.
[[noreturn]] void kill_process(std::string_view why) noexcept;

/// Writes the same line and stops this process with SIGSTOP, as a host that
/// froze: no thread runs, no heartbeat leaves. Returns only if someone
/// continues it (SIGCONT).
void freeze_process(std::string_view why) noexcept;

/// For points in code that may block (persistence, task threads, host
/// threads): carries out a delay (`fault_injector::delay`, which `cancel`
/// may end early), returns an io_error as injected_error, and leaves any
/// other kind in `action` for the caller.
caf::error strike_blocking(fault_injector* faults, fault_point point,
                           const fault_site& site, fault_action& action,
                           const std::atomic<bool>* cancel = nullptr);

} // namespace epochrt
