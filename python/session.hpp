#pragma once

#include <memory>
#include <string>

#include <epochrt/epochrt.hpp>

#include "runtime.hpp"

namespace epochrt::python {

/// What Python's sessions share (LocalSession, DistributedSession): an
/// epochrt::session in a runtime of the module, running the ops of a
/// registry, and its fetch and put. A job runner and a checkpoint manager
/// take any session.
///
/// Every call but the accessors blocks in epochrt and must be made without
/// the GIL; the destructor releases the GIL itself when it holds it,
/// because it waits for the session's tasks to end (and, for remote
/// nodes, for their daemons to drop them). Thread-safe, as epochrt's
/// sessions are.
class session {
public:
  virtual ~session();

  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// A copy of blob `blob` of node `node`. Throws `error`
  /// (runtime_errc::missing_blob: BadInput; BadInput from a Python op).
  tensor fetch(const std::string& node, const std::string& blob);

  /// Blob `blob` of node `node` itself, shared, when the node is in this
  /// process (a workspace's blobs are copy-on-write: the node writes a copy
  /// while anyone else holds one); null for a node on a daemon, which only
  /// `fetch` reaches. Throws as `fetch` does.
  std::shared_ptr<const tensor> local_blob(const std::string& node,
                                           const std::string& blob);

  /// Stores `value` as blob `blob` of node `node`. Throws `error`
  /// (BadInput from a Python op).
  void put(const std::string& node, const std::string& blob, tensor value);

  epochrt::session& get() noexcept {
    return *session_;
  }

  /// The ops the session's nodes in this process run, which a job is
  /// checked against (a daemon checks its own).
  const epochrt::op_registry& ops() const noexcept {
    return *ops_;
  }

  const std::shared_ptr<runtime>& owner() const noexcept {
    return runtime_;
  }

protected:
  /// `python_name`, the Python class ("LocalSession"), names the session
  /// in errors.
  session(const char* python_name, std::shared_ptr<runtime> owner,
          std::shared_ptr<const epochrt::op_registry> ops);

  const char* python_name_;

  // Declared first: the session's actors must end before their system.
  std::shared_ptr<runtime> runtime_;
  std::shared_ptr<const epochrt::op_registry> ops_;
  // Set by the derived class's constructor.
  std::unique_ptr<epochrt::session> session_;
};

} // namespace epochrt::python
