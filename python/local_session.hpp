#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <epochrt/epochrt.hpp>

#include "runtime.hpp"

namespace epochrt::python {

/// Python's LocalSession: an epochrt::local_session in the module's
/// runtime, whose nodes run the jobs' tasks in this process on a pool of
/// `worker_threads` threads (0: the hardware threads, at least 4).
///
/// Every call but `get` blocks in epochrt and must be made without the
/// GIL; the destructor releases the GIL itself when it holds it, because
/// it waits for the session's tasks to end. Thread-safe, as
/// epochrt::local_session is.
class local_session {
public:
  /// Throws `error` when the worker pool cannot be started.
  explicit local_session(size_t worker_threads);

  ~local_session();

  local_session(const local_session&) = delete;
  local_session& operator=(const local_session&) = delete;

  /// A copy of blob `blob` of node `node`. Throws `error`
  /// (runtime_errc::missing_blob: BadInput).
  tensor fetch(const std::string& node, const std::string& blob);

  /// Stores `value` as blob `blob` of node `node`. Throws `error`.
  void put(const std::string& node, const std::string& blob, tensor value);

  epochrt::local_session& get() noexcept {
    return *session_;
  }

  const std::shared_ptr<runtime>& owner() const noexcept {
    return runtime_;
  }

private:
  // Declared first: the session's actors must end before their system.
  std::shared_ptr<runtime> runtime_;
  std::unique_ptr<epochrt::local_session> session_;
};

} // namespace epochrt::python
