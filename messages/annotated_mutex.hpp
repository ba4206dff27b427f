#pragma once

#include <mutex>

// Clang's thread-safety analysis (-Wthread-safety): a field marked
// EPOCHRT_GUARDED_BY(m) may be touched only with m held, a function marked
// EPOCHRT_REQUIRES(m) only called with it held, one marked
// EPOCHRT_EXCLUDES(m) only without it. Clang checks every such rule at
// compile time (`make thread-safety`, and the CTest `thread_safety`); other
// compilers ignore the marks.

#if defined(__clang__)
#  define EPOCHRT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#  define EPOCHRT_THREAD_ANNOTATION(x)
#endif

#define EPOCHRT_CAPABILITY(x) EPOCHRT_THREAD_ANNOTATION(capability(x))
#define EPOCHRT_SCOPED_CAPABILITY EPOCHRT_THREAD_ANNOTATION(scoped_lockable)
#define EPOCHRT_GUARDED_BY(x) EPOCHRT_THREAD_ANNOTATION(guarded_by(x))
#define EPOCHRT_PT_GUARDED_BY(x) EPOCHRT_THREAD_ANNOTATION(pt_guarded_by(x))
#define EPOCHRT_REQUIRES(...)                                                  \
  EPOCHRT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EPOCHRT_EXCLUDES(...)                                                  \
  EPOCHRT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define EPOCHRT_ACQUIRE(...)                                                   \
  EPOCHRT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define EPOCHRT_RELEASE(...)                                                   \
  EPOCHRT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EPOCHRT_ACQUIRED_AFTER(...)                                            \
  EPOCHRT_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define EPOCHRT_NO_THREAD_SAFETY_ANALYSIS                                      \
  EPOCHRT_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace epochrt {

/// A std::mutex that Clang's thread-safety analysis knows as a capability,
/// so that the fields it guards and the functions that need it can say so.
/// Not recursive.
///
/// Thread-safe.
class EPOCHRT_CAPABILITY("mutex") annotated_mutex {
public:
  annotated_mutex() = default;
  annotated_mutex(const annotated_mutex&) = delete;
  annotated_mutex& operator=(const annotated_mutex&) = delete;

  void lock() EPOCHRT_ACQUIRE() {
    mtx_.lock();
  }

  void unlock() EPOCHRT_RELEASE() {
    mtx_.unlock();
  }

  /// Holds a mutex from construction to destruction. Also a BasicLockable,
  /// for std::condition_variable_any, whose wait releases and retakes it.
  class EPOCHRT_SCOPED_CAPABILITY guard {
  public:
    explicit guard(annotated_mutex& mtx) EPOCHRT_ACQUIRE(mtx) : mtx_(mtx) {
      mtx_.lock();
    }

    ~guard() EPOCHRT_RELEASE() {
      mtx_.unlock();
    }

    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;

    // For a condition variable only: the analysis takes the mutex as held
    // throughout the guard's life, as it is whenever the waiting thread
    // runs.
    void lock() EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
      mtx_.lock();
    }

    void unlock() EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
      mtx_.unlock();
    }

  private:
    annotated_mutex& mtx_;
  };

private:
  std::mutex mtx_;
};

} // namespace epochrt
