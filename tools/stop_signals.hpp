#pragma once

#include <atomic>
#include <csignal>
#include <functional>
#include <thread>

namespace epochrt::cli {

/// SIGINT and SIGTERM for `epochrt run`: graceful preemption. The first
/// signal asks the job to stop (through `on_first`); a second one ends the
/// process at once with 128 + its number, which loses nothing committed
/// (a commit is atomic on disk) but whatever the running epoch did.
///
/// No signal handler runs: the signals are blocked and taken by a thread
/// that waits for them (sigtimedwait), so that reacting to one may do
/// anything a thread may. The command only: the library installs no
/// handler.
class stop_signals {
public:
  /// Blocks SIGINT and SIGTERM in the calling thread, and so in every
  /// thread it starts afterwards (CAF's): construct it before the actor
  /// system. A signal that arrives before `watch` stays pending until then.
  stop_signals();

  /// Stops the watching thread. The signals stay blocked: the process is
  /// about to end, and a signal pending now arrived after the job.
  ~stop_signals();

  stop_signals(const stop_signals&) = delete;
  stop_signals& operator=(const stop_signals&) = delete;

  /// Starts the thread that takes the signals: it calls `on_first` with the
  /// first one's number (on that thread; it must not block long), then
  /// prints a notice on stderr, and ends the process on the second.
  void watch(std::function<void(int)> on_first);

  /// The number of the first signal taken; 0 before any.
  int received() const noexcept {
    return received_.load();
  }

private:
  void run(std::function<void(int)> on_first);

  sigset_t set_;
  std::atomic<bool> done_{false};
  std::atomic<int> received_{0};
  std::thread watcher_;
};

/// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int signo);

} // namespace epochrt::cli
