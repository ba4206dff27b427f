#pragma once

#include <cstddef>
#include <memory>

#include <epochrt/epochrt.hpp>

#include "session.hpp"

namespace epochrt::python {

/// Python's LocalSession: an epochrt::local_session in the module's
/// runtime, whose nodes run the jobs' tasks in this process on a pool of
/// `worker_threads` threads (0: the hardware threads, at least 4), with the
/// ops of `ops` (shared with the session's nodes, which may call Python
/// ops on those threads). The GIL and threads: see `session`.
class local_session : public session {
public:
  /// Throws `error` when the worker pool cannot be started. Must be called
  /// without the GIL.
  local_session(size_t worker_threads,
                std::shared_ptr<const epochrt::op_registry> ops);
};

} // namespace epochrt::python
