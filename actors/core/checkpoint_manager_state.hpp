#pragma once

// The checkpoint manager actor's state and the steps its parts share
// (checkpoint_manager_actor.cpp, checkpoint_manager_retention.cpp). Not
// part of the API: the actor's protocol is messages/manager_protocol.hpp.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/messages/actor_protocols.hpp>
#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/persistence/record_keeper.hpp>

namespace epochrt {

struct manager_state {
  std::string db_prefix;
  std::string path_prefix;
  // The commit record, read and changed through the host's handler (with
  // its exceptions as errors: guarded_metadata).
  std::unique_ptr<record_keeper> metadata;
  std::chrono::milliseconds timeout;
  int64_t full_every = 0; // checkpoint_policy
  size_t keep_last = 0;
  size_t replicas = 0;                 // checkpoint_policy
  std::vector<std::string> node_names; // from set_params
  std::vector<node_ref> nodes;         // from init
  std::vector<checkpoint_stats> last_stats;
  size_t pending_commits = 0;                       // ckpt_save_async writes
  std::vector<caf::response_promise> flush_waiters; // ckpt_flush requests
  std::vector<int64_t> flush_epochs;                // their last_epoch
  // Epochs whose commit failed because a node was lost, until saved again.
  std::map<int64_t, caf::error> lost_commits;
  // The daemons (addresses) that keep the commit record, once every other
  // daemon of the job was told to forget the one it kept (share_record).
  std::vector<std::string> record_keepers;
  uint64_t last_save_id = 0;          // write_checkpoints' transactions
  std::shared_ptr<job_events> events; // checkpoint_policy::events
};

using manager_self = checkpoint_manager_actor::stateful_pointer<manager_state>;

// A node's error, other than a timeout or a node that is down (the gather
// makes those node_lost): a remote node's proxy already says which node was
// lost and how; anything else is a failed checkpoint on that node.
inline caf::error failure_on(const std::string& node, caf::error err) {
  if (is_node_lost(err))
    return err;
  return make_error(actors_errc::checkpoint_failed,
                    "node " + node + ": " + error_text(err));
}

// Sends make(node) to the persistence actor of every node at once and calls
// done once every node has answered, or the one timeout of the fan-out has
// passed: with all replies, in node order, or with a failure. done never
// runs while a node may still be working on the request: a load that went
// on after the job was told it failed would write an old state into a
// workspace the job has since reset (or loaded an earlier epoch into). A
// lost node's failure wins over a bad checkpoint's, since only the latter
// may be answered by falling back (detail::gather_policy::settle_all).
template <class Reply, class MakeRequest>
void fan_out(manager_self self, const std::vector<node_ref>& nodes,
             std::chrono::milliseconds timeout, detail::gather_site site,
             MakeRequest make,
             std::function<void(caf::expected<std::vector<Reply>>)> done) {
  std::vector<detail::gather_target<persistence_actor>> targets;
  targets.reserve(nodes.size());
  for (auto& node : nodes)
    targets.push_back({node.name, node.persistence});
  detail::gather_options opts;
  opts.site = std::move(site);
  opts.policy = detail::gather_policy::settle_all;
  opts.timeout = timeout;
  // make() is called once per node, in node order, before gather returns.
  detail::gather<Reply>(
    self, targets, std::move(opts),
    [&nodes, &make, i = size_t{0}](const auto&) mutable {
      return make(nodes[i++]);
    },
    failure_on, std::move(done));
}

// The database of `node` for `epoch`, under the manager's directory (and
// `path_prefix`, when not empty, instead of the manager's).
caf::expected<std::string> db_of(const manager_state& st,
                                 const std::string& node, int64_t epoch,
                                 const std::string& path_prefix);

// With copies on: every daemon keeps the commit record as it is now, so
// that a master host lost with its disk loses no commit. Best effort (a
// daemon that did not take it costs a warning: the next commit sends it
// again); calls `done` at the end.
void share_record(manager_self self, std::function<void()> done);

} // namespace epochrt
