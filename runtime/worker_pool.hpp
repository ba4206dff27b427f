#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/annotated_mutex.hpp>

namespace epochrt {

/// Options of a worker_pool.
struct worker_pool_options {
  /// Worker threads. 0 (the default): `worker_pool::default_threads()`.
  size_t threads = 0;
};

/// A fixed set of threads that run submitted work in the order it was
/// submitted: where the tasks of a session's or a daemon's nodes run, so
/// that an epoch costs no thread creation and a long op never holds one of
/// CAF's scheduler threads.
///
/// Every thread is created by `make`, once; nothing creates one later. At
/// most `size()` pieces of work run at once, whoever submitted them: work
/// that blocks (a Sleep, a slow disk) holds its thread for as long as it
/// blocks, and work submitted while every thread is busy waits in the queue
/// until one is free. Work must therefore never wait for other work of the
/// same pool to make progress: with every thread waiting, nothing would.
///
/// Thread-safe. Work must not throw (an exception escaping it is caught and
/// dropped). The pool must not be destroyed from one of its own threads.
class worker_pool {
public:
  using work = std::function<void()>;

  /// A piece of work that owns what it needs: `run()` once on a worker,
  /// or destroyed unrun when the pool stops, in which case its destructor
  /// owes whatever end its submitter expects. For work on a hot path: one
  /// allocation per piece, where a `work` costs one more (it is wrapped in
  /// a job) and its state often another.
  class job {
  public:
    virtual ~job() = default;
    virtual void run() = 0;
  };

  /// The default size: the machine's hardware threads, and at least 4, so
  /// that a few blocking tasks on a small machine do not queue the rest.
  static size_t default_threads();

  /// Starts a pool of `opts.threads` threads. An error
  /// (`runtime_errc::op_failed`, naming how many threads were asked for and
  /// why) when one of them cannot be created; the threads already created
  /// are stopped again.
  static caf::expected<std::unique_ptr<worker_pool>>
  make(worker_pool_options opts = {});

  /// `stop()`.
  ~worker_pool();

  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;

  /// `fn` as a job, for a caller that must keep the work when the pool
  /// refuses it (`submit(std::unique_ptr<job>&&)`).
  static std::unique_ptr<job> make_job(work fn);

  /// Queues `fn`, wrapped in a job. Returns false after `stop()`: `fn` is
  /// then destroyed without running.
  bool submit(work fn);

  /// Queues `j`. Returns false after `stop()`, and leaves `j` with the
  /// caller, unrun and not destroyed.
  bool submit(std::unique_ptr<job>&& j);

  /// Takes no more work, destroys the work still queued without running it,
  /// and waits for the work that is running to return. Idempotent.
  void stop();

  size_t size() const noexcept {
    return threads_.size();
  }

private:
  worker_pool() = default;

  void run_worker();

  // Takes the oldest work into `j`, and sets `wake` when a sleeping thread
  // should help with the rest; false when the pool stopped and nothing is
  // left that was queued before the stop. Counts the calling thread out of
  // the searching ones either way.
  bool take_work(std::unique_ptr<job>& j, bool& wake) EPOCHRT_REQUIRES(mtx_);

  annotated_mutex mtx_;
  std::condition_variable_any ready_;
  std::deque<std::unique_ptr<job>> queue_ EPOCHRT_GUARDED_BY(mtx_);
  bool stopped_ EPOCHRT_GUARDED_BY(mtx_) = false;
  // Threads asleep on `ready_`.
  size_t idle_ EPOCHRT_GUARDED_BY(mtx_) = 0;
  // Threads awake without work: about to take from the queue, or to sleep.
  // A submit, or a thread taking work, wakes a sleeping thread only when
  // more work waits than threads look for it (so a burst of short work
  // that the awake threads take costs no wake-up, and long work still
  // spreads over every thread). Not merely when none looks: a thread that
  // spins by yielding on a core busy with other work may not run again
  // for milliseconds, and work queued meanwhile would wait for it while
  // other cores idle.
  size_t searching_ EPOCHRT_GUARDED_BY(mtx_) = 0;
  // A hint for spinning threads, read without the lock: the queue may not
  // be empty.
  std::atomic<bool> has_work_{false};
  // Yields a thread tries before it sleeps.
  static constexpr int spin_rounds = 64;
  std::vector<std::thread> threads_;
};

} // namespace epochrt
