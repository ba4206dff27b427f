#include <epochrt/runtime/worker_pool.hpp>

#include <algorithm>
#include <string>
#include <system_error>

#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

size_t worker_pool::default_threads() {
  return std::max<size_t>(4, std::thread::hardware_concurrency());
}

caf::expected<std::unique_ptr<worker_pool>>
worker_pool::make(worker_pool_options opts) {
  auto n = opts.threads == 0 ? default_threads() : opts.threads;
  std::unique_ptr<worker_pool> pool{new worker_pool};
  pool->threads_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    try {
      pool->threads_.emplace_back([p = pool.get()] {
        p->run_worker();
      });
    } catch (const std::system_error& ex) {
      // The destructor stops and joins the threads already running.
      return make_error(runtime_errc::op_failed,
                        "cannot start the worker pool: thread "
                          + std::to_string(i + 1) + " of " + std::to_string(n)
                          + " could not be created: " + ex.what());
    }
  }
  return pool;
}

worker_pool::~worker_pool() {
  stop();
}

namespace {

class function_job : public worker_pool::job {
public:
  explicit function_job(worker_pool::work fn) : fn_(std::move(fn)) {
    // nop
  }

  void run() override {
    fn_();
  }

private:
  worker_pool::work fn_;
};

} // namespace

std::unique_ptr<worker_pool::job> worker_pool::make_job(work fn) {
  return std::unique_ptr<job>{new function_job(std::move(fn))};
}

bool worker_pool::submit(work fn) {
  return submit(make_job(std::move(fn)));
}

bool worker_pool::submit(std::unique_ptr<job>&& j) {
  bool wake = false;
  {
    annotated_mutex::guard guard{mtx_};
    if (stopped_)
      return false;
    queue_.push_back(std::move(j));
    has_work_.store(true, std::memory_order_relaxed);
    wake = idle_ > 0 && queue_.size() > searching_;
  }
  if (wake)
    ready_.notify_one();
  return true;
}

void worker_pool::stop() {
  std::deque<std::unique_ptr<job>> dropped;
  {
    annotated_mutex::guard guard{mtx_};
    stopped_ = true;
    dropped.swap(queue_);
  }
  ready_.notify_all();
  // Destroyed here, outside the lock: what they hold may run code of its
  // own when it goes (a reply that the work will never send).
  dropped.clear();
  for (auto& t : threads_)
    if (t.joinable())
      t.join();
}

bool worker_pool::take_work(std::unique_ptr<job>& j, bool& wake) {
  if (queue_.empty()) {
    --searching_;
    return false; // stopped, and nothing left that was taken before the stop
  }
  j = std::move(queue_.front());
  queue_.pop_front();
  has_work_.store(!queue_.empty(), std::memory_order_relaxed);
  --searching_;
  // More work waits than threads look for it: wake a helper.
  wake = idle_ > 0 && queue_.size() > searching_;
  return true;
}

void worker_pool::run_worker() {
  for (;;) {
    std::unique_ptr<job> j;
    bool wake = false;
    bool spin = false;
    {
      annotated_mutex::guard guard{mtx_};
      ++searching_;
      spin = queue_.empty() && !stopped_;
      if (!spin && !take_work(j, wake))
        return;
    }
    if (spin) {
      // A short spin first: work that comes in a burst (the tasks of an
      // epoch's nodes) is taken without a sleep and a wake-up per piece.
      for (int i = 0; i < spin_rounds; ++i) {
        if (has_work_.load(std::memory_order_relaxed))
          break;
        std::this_thread::yield();
      }
      annotated_mutex::guard guard{mtx_};
      while (queue_.empty() && !stopped_) {
        --searching_;
        ++idle_;
        ready_.wait(guard);
        --idle_;
        ++searching_;
      }
      if (!take_work(j, wake))
        return;
    }
    if (wake)
      ready_.notify_one();
    try {
      j->run();
    } catch (...) {
      // The work reports its own errors; see the class comment.
    }
    // What the work holds goes before the next one is taken.
    j.reset();
  }
}

} // namespace epochrt
