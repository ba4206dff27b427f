#pragma once

#include <atomic>
#include <csignal>
#include <functional>
#include <thread>

namespace epochrt {

class job_runner;

/// SIGINT and SIGTERM as graceful preemption, for a host program that
/// wants it (`epochrt run` uses it; the library installs nothing unless
/// the host makes one of these).
///
/// No signal handler runs: the signals are blocked and taken by a thread
/// that waits for them (sigtimedwait), so that reacting to one may do
/// anything a thread may. One per process at a time.
///
///     epochrt::stop_signals signals;    // before the actor system
///     caf::actor_system sys{cfg};
///     ...
///     epochrt::job_runner runner{job, &manager};
///     signals.watch(runner);            // Ctrl-C: stop after the epoch;
///     auto epochs = runner.train(sess); // again: at once (stopped)
class stop_signals {
public:
  /// Blocks SIGINT and SIGTERM in the calling thread, and so in every
  /// thread it starts afterwards (CAF's): construct it before the actor
  /// system. A signal that arrives before `watch` stays pending until then.
  stop_signals();

  /// Stops the watching thread. The signals stay blocked: a signal pending
  /// now arrived after the job.
  ~stop_signals();

  stop_signals(const stop_signals&) = delete;
  stop_signals& operator=(const stop_signals&) = delete;

  /// Starts the thread that takes the signals: it calls `on_first` with
  /// the first one's number, and `on_again` with every later one's (on
  /// that thread; they must not block long). No effect when watching
  /// already.
  void watch(std::function<void(int)> on_first,
             std::function<void(int)> on_again);

  /// `runner`'s graceful preemption: the first signal calls
  /// `request_stop` (the running epoch ends and is committed), a later one
  /// `request_stop_now` (the running group is cancelled); each with a
  /// notice on stderr. `train` then returns actors_errc::stopped. The
  /// runner must outlive the watching (this object).
  void watch(job_runner& runner);

  /// Writes to stderr what `watch(runner)` says of signal `signo`: the
  /// first (`again` false) stops after the running epoch, a later one at
  /// once.
  static void print_notice(int signo, bool again);

  /// The number of the first signal taken; 0 before any.
  int received() const noexcept {
    return received_.load();
  }

private:
  void run(std::function<void(int)> on_first,
           std::function<void(int)> on_again);

  sigset_t set_;
  std::atomic<bool> done_{false};
  std::atomic<int> received_{0};
  std::thread watcher_;
};

/// "SIGINT", "SIGTERM", or "signal".
const char* signal_name(int signo);

} // namespace epochrt
