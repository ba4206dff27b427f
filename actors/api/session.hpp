#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/task_output.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

// How epochrt's actors reach a node (actors/core/node_handle.hpp): not
// part of the API.
struct node_handle;
class op_registry;

/// Time limits of a session. Every request epochrt sends has one.
struct session_options {
  /// Longest a node may take to run its tasks of one group.
  std::chrono::milliseconds group_timeout = std::chrono::hours(24);
  /// Longest one node may take for one checkpoint operation.
  std::chrono::milliseconds checkpoint_timeout = std::chrono::hours(1);
  /// Longest a node may take for a small request (fetch, put).
  std::chrono::milliseconds request_timeout = std::chrono::minutes(1);
  /// The fault plan every node, task and persistence actor of the session,
  /// and the job runner on it, consult at their injection points
  /// (docs/fault-plans.md). Null: no faults, and no cost.
  std::shared_ptr<fault_injector> faults;
  /// How long an in-process node may stay frozen, or a message of a
  /// channel or collective be lost, before what waits for it fails as a
  /// lost node (for nodes on daemons, the middleman's connection timeout
  /// does this). Default: 5 s.
  std::chrono::milliseconds connection_timeout{5000};
  /// Threads of the worker pool that runs the tasks of the session's
  /// in-process nodes, and their fetches, puts and resets; all of them are
  /// created with the session, none later. At most this many tasks run at
  /// once across all the session's nodes: a task that blocks holds its
  /// thread, and the others wait for a free one (so no task may wait for
  /// another task to make progress). 0: the machine's hardware threads, at
  /// least 4. Sessions whose nodes run elsewhere ignore it.
  size_t worker_threads = 0;
};

class session;

/// Nodes a running job holds on its session (`session::lease_nodes`),
/// until the lease is destroyed. Moves only.
class node_lease {
public:
  node_lease(const node_lease&) = delete;
  node_lease& operator=(const node_lease&) = delete;
  node_lease(node_lease&& other) noexcept;
  node_lease& operator=(node_lease&&) = delete;
  ~node_lease();

private:
  friend class session;

  node_lease(session& owner, std::vector<std::string> nodes);

  session* owner_;
  std::vector<std::string> nodes_;
};

/// Where task groups run (Caffe2's Session): a set of named nodes.
///
/// The blocking calls here are for host threads; never call them from inside
/// an actor. Thread-safe: a job runner calls `node` and
/// `recover_lost_nodes` from a thread of its own while `job_runner::train`
/// waits. A host uses epochrt's sessions (local_session,
/// distributed_session); `node` hands out epochrt's private node handles,
/// so a session of a host's own can only wrap one of those.
class session {
public:
  virtual ~session();

  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// The actor system the session's actors live in.
  virtual caf::actor_system& system() = 0;

  /// The node called `name`, for epochrt's actors. Sessions that create
  /// nodes on demand do so here; an error when the name is invalid or the
  /// node cannot be reached.
  virtual caf::expected<node_handle> node(const std::string& name) = 0;

  /// Replaces the nodes whose connection was lost with fresh ones at the
  /// same place, blocking until they answer or the session gives up. The
  /// replacements start with empty workspaces. Sessions whose nodes cannot
  /// be lost (in-process nodes) return actors_errc::node_lost. Returns in
  /// bounded time (distributed_session: `reconnect_timeout` per lost node),
  /// and a wrapping session must too: the job runner calls it while
  /// `job_runner::train` waits, and neither can end a call that uses the
  /// session before it returns.
  virtual caf::error recover_lost_nodes();

  /// Where node `name` runs ("host:port"), as a rerun names it (`--node`):
  /// `recover_lost_nodes` changes it when it moves a node to a spare.
  /// Empty for a node in this process, and by default.
  virtual std::string address_of(const std::string& name) const;

  /// The ops the session's nodes in this process run, whose code versions
  /// (op_registry::code_version) are part of a job's definition. Null by
  /// default: a session of a host's own may not know them.
  virtual std::shared_ptr<const op_registry> ops() const;

  const session_options& options() const noexcept {
    return options_;
  }

  /// Runs every task of `group` on its node — nodes in parallel, the tasks
  /// of a node concurrently — and blocks until all are done. Returns the
  /// outputs of all tasks, or the first failure. `label` and `epoch` say
  /// where the job was, in errors (e.g. "download group, epoch 4").
  /// `channels` declares the channels the group's tasks may use (a job's
  /// `channels`); this run gets them empty and open, and fails unless it
  /// leaves every one it used closed and empty.
  caf::expected<std::vector<task_output>>
  run(const task_group_def& group, const std::string& label = "group",
      int64_t epoch = 0, const std::vector<channel_def>& channels = {});

  /// A copy of blob `blob` of node `node`.
  caf::expected<tensor> fetch(const std::string& node, const std::string& blob);

  /// Stores `value` as blob `blob` of node `node`.
  caf::error put(const std::string& node, std::string blob, tensor value);

  /// Holds `nodes` for `holder` (e.g. "job 'pipeline'") until the lease
  /// goes: while it lives, another lease or a `run` of a group with a task
  /// on any of them fails with actors_errc::invalid_argument naming the
  /// node and its holder, rather than interleave with the holder's epochs
  /// on the same workspaces. `job_runner::train` holds its job's nodes so;
  /// `fetch` and `put` stay allowed.
  caf::expected<node_lease> lease_nodes(const std::vector<std::string>& nodes,
                                        const std::string& holder);

protected:
  explicit session(session_options options);

private:
  friend class node_lease;

  // An error when a node of `nodes` is leased.
  caf::error check_unleased(const std::vector<std::string>& nodes);
  void release(const std::vector<std::string>& nodes);

  session_options options_;
  annotated_mutex lease_mtx_;
  // Leased node -> its holder.
  std::map<std::string, std::string> leased_ EPOCHRT_GUARDED_BY(lease_mtx_);
};

} // namespace epochrt
