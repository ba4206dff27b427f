#include <epochrt/runtime/worker_pool.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/support/thread_starved_child.hpp"
#include "test_util.hpp"

using namespace epochrt;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<worker_pool> make_pool(size_t threads) {
  auto pool = worker_pool::make({threads});
  if (!pool)
    BOOST_FAIL(error_text(pool.error()));
  return std::move(*pool);
}

// A gate that work waits at until the test opens it.
class gate {
public:
  void wait() {
    std::unique_lock<std::mutex> guard{mtx_};
    ++waiting_;
    changed_.notify_all();
    changed_.wait(guard, [this] {
      return open_;
    });
  }

  void open() {
    std::lock_guard<std::mutex> guard{mtx_};
    open_ = true;
    changed_.notify_all();
  }

  // Blocks until `n` callers wait at the gate, or 10 s pass.
  bool await_waiting(int n) {
    std::unique_lock<std::mutex> guard{mtx_};
    return changed_.wait_for(guard, 10s, [&] {
      return waiting_ >= n;
    });
  }

  int waiting() {
    std::lock_guard<std::mutex> guard{mtx_};
    return waiting_;
  }

private:
  std::mutex mtx_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

// Sets a flag when destroyed: tells whether work was dropped.
struct destroy_flag {
  explicit destroy_flag(std::shared_ptr<std::atomic<int>> counter)
    : destroyed(std::move(counter)) {
    // nop
  }
  std::shared_ptr<std::atomic<int>> destroyed;
  ~destroy_flag() {
    destroyed->fetch_add(1);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(worker_pool_suite)

BOOST_AUTO_TEST_CASE(the_default_size_is_the_hardware_threads_and_at_least_4) {
  BOOST_TEST(worker_pool::default_threads() >= 4u);
  BOOST_TEST(worker_pool::default_threads()
             >= static_cast<size_t>(std::thread::hardware_concurrency()));
  auto pool = make_pool(0);
  BOOST_TEST(pool->size() == worker_pool::default_threads());
}

BOOST_AUTO_TEST_CASE(every_submitted_work_runs_once) {
  auto pool = make_pool(3);
  std::atomic<int> runs{0};
  std::promise<void> all_done;
  constexpr int n = 1000;
  for (int i = 0; i < n; ++i)
    BOOST_TEST(pool->submit([&] {
      if (runs.fetch_add(1) + 1 == n)
        all_done.set_value();
    }));
  BOOST_TEST_REQUIRE(
    (all_done.get_future().wait_for(10s) == std::future_status::ready));
  pool->stop();
  BOOST_TEST(runs.load() == n);
}

BOOST_AUTO_TEST_CASE(no_more_work_runs_at_once_than_the_pool_has_threads) {
  auto pool = make_pool(2);
  gate g;
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  for (int i = 0; i < 5; ++i)
    pool->submit([&] {
      auto now = running.fetch_add(1) + 1;
      auto seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      g.wait();
      running.fetch_sub(1);
    });
  BOOST_TEST_REQUIRE(g.await_waiting(2));
  // The other three wait in the queue for a free thread.
  std::this_thread::sleep_for(100ms);
  BOOST_TEST(g.waiting() == 2);
  g.open();
  pool->stop();
  BOOST_TEST(most.load() == 2);
}

BOOST_AUTO_TEST_CASE(work_that_blocks_holds_only_its_own_thread) {
  auto pool = make_pool(2);
  gate g;
  pool->submit([&] {
    g.wait();
  });
  BOOST_TEST_REQUIRE(g.await_waiting(1));
  // The blocked work holds one thread; the other still serves the queue.
  std::promise<void> done;
  pool->submit([&] {
    done.set_value();
  });
  BOOST_TEST((done.get_future().wait_for(10s) == std::future_status::ready));
  g.open();
}

BOOST_AUTO_TEST_CASE(stop_waits_for_running_work_and_drops_queued_work) {
  auto pool = make_pool(1);
  gate g;
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  std::atomic<bool> first_ended{false};
  std::atomic<int> queued_runs{0};
  pool->submit([&] {
    g.wait();
    first_ended = true;
  });
  BOOST_TEST_REQUIRE(g.await_waiting(1));
  for (int i = 0; i < 3; ++i) {
    auto flag = std::make_shared<destroy_flag>(destroyed);
    pool->submit([flag, &queued_runs] {
      queued_runs.fetch_add(1);
    });
  }
  auto stopper = std::async(std::launch::async, [&] {
    pool->stop();
  });
  // stop() waits for the running work...
  BOOST_TEST((stopper.wait_for(200ms) == std::future_status::timeout));
  // ...and has already destroyed the queued work, unrun.
  BOOST_TEST(destroyed->load() == 3);
  g.open();
  BOOST_TEST((stopper.wait_for(10s) == std::future_status::ready));
  BOOST_TEST(first_ended.load());
  BOOST_TEST(queued_runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(work_submitted_after_stop_is_refused_and_destroyed) {
  auto pool = make_pool(1);
  pool->stop();
  pool->stop(); // idempotent
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  auto flag = std::make_shared<destroy_flag>(destroyed);
  bool ran = false;
  BOOST_TEST(!pool->submit([flag, &ran] {
    ran = true;
  }));
  flag.reset();
  BOOST_TEST(destroyed->load() == 1);
  BOOST_TEST(!ran);
}

namespace {

// Counts its runs and its destruction, and records the destroying thread.
class counting_job : public worker_pool::job {
public:
  counting_job(std::atomic<int>& runs, std::atomic<int>& destroyed,
               std::thread::id& destroyed_on)
    : runs_(runs), destroyed_(destroyed), destroyed_on_(destroyed_on) {
    // nop
  }

  ~counting_job() override {
    destroyed_on_ = std::this_thread::get_id();
    ++destroyed_;
  }

  void run() override {
    ++runs_;
  }

private:
  std::atomic<int>& runs_;
  std::atomic<int>& destroyed_;
  std::thread::id& destroyed_on_;
};

} // namespace

BOOST_AUTO_TEST_CASE(a_job_runs_once_and_is_destroyed_on_its_worker) {
  auto pool = make_pool(1);
  std::atomic<int> runs{0};
  std::atomic<int> destroyed{0};
  std::thread::id destroyed_on;
  std::unique_ptr<worker_pool::job> job{
    new counting_job(runs, destroyed, destroyed_on)};
  BOOST_TEST(pool->submit(std::move(job)));
  BOOST_TEST(!job);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (runs.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  pool->stop(); // joins the worker, which destroyed the job after its run
  BOOST_TEST(runs.load() == 1);
  BOOST_TEST(destroyed.load() == 1);
  BOOST_TEST((destroyed_on != std::this_thread::get_id()));
}

BOOST_AUTO_TEST_CASE(a_job_refused_after_stop_stays_with_its_submitter) {
  auto pool = make_pool(1);
  pool->stop();
  std::atomic<int> runs{0};
  std::atomic<int> destroyed{0};
  std::thread::id destroyed_on;
  std::unique_ptr<worker_pool::job> job{
    new counting_job(runs, destroyed, destroyed_on)};
  BOOST_TEST(!pool->submit(std::move(job)));
  // Still the caller's: it may still report what the refusal means.
  BOOST_TEST(static_cast<bool>(job));
  BOOST_TEST(destroyed.load() == 0);
  job.reset();
  BOOST_TEST(destroyed.load() == 1);
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(work_that_throws_does_not_take_its_thread) {
  auto pool = make_pool(1);
  pool->submit([] {
    throw std::runtime_error("host code");
  });
  std::promise<void> done;
  pool->submit([&] {
    done.set_value();
  });
  BOOST_TEST((done.get_future().wait_for(10s) == std::future_status::ready));
}

BOOST_AUTO_TEST_CASE(threads_that_cannot_be_created_are_a_clear_error) {
  auto code = test::exit_code_without_threads([] {
    auto pool = worker_pool::make({4});
    if (pool)
      return 3;
    auto text = error_text(pool.error());
    bool clear = text.find("cannot start the worker pool") != std::string::npos
      && text.find("of 4") != std::string::npos;
    return clear ? 0 : 4;
  });
  BOOST_TEST(code == 0);
}

BOOST_AUTO_TEST_SUITE_END()
