#include <epochrt/actors/core/checkpoint_manager_actor.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/job_events.hpp>
#include <epochrt/actors/core/checkpoint_manager_retention.hpp>
#include <epochrt/actors/core/checkpoint_manager_state.hpp>
#include <epochrt/actors/core/guarded_metadata.hpp>
#include <epochrt/actors/core/replica_plan.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/notify.hpp>
#include <epochrt/actors/detail/spawn_detached.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/metadata_handler.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/job_definition.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

caf::expected<std::string> db_of(const manager_state& st,
                                 const std::string& node, int64_t epoch,
                                 const std::string& path_prefix) {
  return checked_db_name(epoch, node, st.db_prefix,
                         path_prefix.empty() ? st.path_prefix : path_prefix);
}

namespace {

using clock_type = std::chrono::steady_clock;

caf::error not_initialized() {
  return make_error(actors_errc::not_initialized,
                    "the checkpoint manager must be initialized with its "
                    "nodes first");
}

// Resolves every node's database name first, so that a bad node name fails
// the whole request before any node does anything; not_initialized before
// the first ckpt_init.
caf::expected<std::vector<std::string>>
dbs_of(const manager_state& st, int64_t epoch, const std::string& prefix) {
  if (st.nodes.empty())
    return not_initialized();
  std::vector<std::string> result;
  for (auto& node : st.nodes) {
    auto db = db_of(st, node.name, epoch, prefix);
    if (!db)
      return std::move(db.error());
    result.push_back(std::move(*db));
  }
  return result;
}

// Stats go to the metadata handler as they come; a handler that cannot take
// them costs a warning, never the checkpoint.
void report(manager_self self, const char* action) {
  auto& st = self->state;
  if (auto err = st.metadata->report(action, st.last_stats))
    detail::log(self->system())
      .warn("could not report {} stats: {}", action, error_text(err));
}

// What ckpt_flush{epoch} replies once no write is pending: the loss that
// cut the commit of `epoch` short, if one did; unit otherwise.
void reply_flush(caf::response_promise& rp, const manager_state& st,
                 int64_t epoch) {
  if (auto i = st.lost_commits.find(epoch); i != st.lost_commits.end())
    rp.deliver(i->second);
  else
    rp.deliver(caf::unit);
}

// One write begun by ckpt_save_async has ended; wakes ckpt_flush waiters
// when none is left.
void commit_done(manager_self self) {
  auto& st = self->state;
  if (st.pending_commits > 0 && --st.pending_commits == 0) {
    for (size_t i = 0; i < st.flush_waiters.size(); ++i)
      reply_flush(st.flush_waiters[i], st, st.flush_epochs[i]);
    st.flush_waiters.clear();
    st.flush_epochs.clear();
  }
}

bool is_full(const manager_state& st, int64_t epoch) {
  return st.full_every > 0 && epoch % st.full_every == 0;
}

// One node on each daemon (in node order): each daemon keeps one copy of
// the commit record, however many of the job's nodes it hosts.
std::vector<node_ref> one_per_daemon(const std::vector<node_ref>& nodes) {
  std::vector<node_ref> result;
  std::set<std::string> seen;
  for (auto& node : nodes)
    if (!node.address.empty() && seen.insert(node.address).second)
      result.push_back(node);
  return result;
}

// The daemons that keep the commit record: the first replicas + 1 in node
// order. A record lost with the master's host is then lost only with
// `replicas` daemons more, as an epoch's databases are (copies, too, count
// daemons, not hosts: replica_plan.hpp). Sent to every daemon, an O(n)
// record (node names, stats, the job) made the master send O(n^2) bytes a
// commit: 25 KiB to each of 32 daemons, about 100 KiB to each of 128.
std::vector<node_ref> record_keepers(const std::vector<node_ref>& nodes,
                                     size_t replicas) {
  auto daemons = one_per_daemon(nodes);
  if (daemons.size() > replicas + 1)
    daemons.resize(replicas + 1);
  return daemons;
}

} // namespace

void share_record(manager_self self, std::function<void()> done) {
  auto& st = self->state;
  auto keepers = record_keepers(st.nodes, st.replicas);
  if (st.replicas == 0 || keepers.empty()) {
    done();
    return;
  }
  std::vector<std::string> keeper_addresses;
  for (auto& node : keepers)
    keeper_addresses.push_back(node.address);
  // A daemon that kept the record of an earlier run (other keepers then, or
  // a run --from-scratch since) would otherwise keep it for ever, and a
  // master that lost its directory could adopt that stale record: every
  // other daemon is told once, with a record of no epochs, to forget it.
  bool tell_others = keeper_addresses != st.record_keepers;
  auto daemons = tell_others ? one_per_daemon(st.nodes) : keepers;
  auto record = st.metadata->read();
  if (!record || !*record) {
    if (!record)
      detail::log(self->system())
        .warn("the commit record was not sent to the node daemons: {}",
              error_text(record.error()));
    done();
    return;
  }
  checkpoint_metadata forgotten;
  if (tell_others) {
    forgotten = **record;
    forgotten.committed_epochs.clear();
    forgotten.last_stats.clear();
    forgotten.final_epoch = -1;
  }
  fan_out<caf::unit_t>(
    self, daemons, st.timeout, {"commit record", -1},
    [record = std::move(**record), forgotten = std::move(forgotten),
     keepers = keeper_addresses, dir = st.db_prefix](const node_ref& node) {
      bool keeper = std::find(keepers.begin(), keepers.end(), node.address)
        != keepers.end();
      return keep_commit_record{node.name, dir, keeper ? record : forgotten};
    },
    [self, done, keeper_addresses,
     tell_others](caf::expected<std::vector<caf::unit_t>> kept) {
      if (!kept)
        detail::log(self->system())
          .warn("not every node daemon keeps the commit record: {}",
                error_text(kept.error()));
      else if (tell_others)
        self->state.record_keepers = keeper_addresses;
      done();
    });
}

namespace {

// Tells the observer, if any, of every node's write of `epoch` and of its
// commit (from `start`, the metadata's write, to now), or why it failed.
void notify_commit(manager_self self, int64_t epoch,
                   const std::vector<checkpoint_stats>& stats,
                   job_event::clock::time_point start, const caf::error& err) {
  auto& st = self->state;
  auto* events = st.events.get();
  if (events == nullptr)
    return;
  // A write is placed where the manager heard of its end: the node's own
  // clock may be another machine's.
  job_event event;
  event.epoch = epoch;
  event.end = start;
  event.what = job_event::kind::write;
  for (auto& node : stats) {
    event.node = node.node;
    event.stats = node;
    event.start = start - std::chrono::microseconds(node.duration_us);
    detail::notify(self->system(), events, event);
  }
  event = job_event{};
  event.what = job_event::kind::commit;
  event.epoch = epoch;
  event.start = start;
  event.end = job_event::clock::now();
  event.ok = !err;
  if (err)
    event.detail = error_text(err);
  detail::notify(self->system(), events, event);
}

// Commits an epoch whose every node finished writing; a failure is logged
// (as Caffe2 did for a failed save), never committed.
void commit_async(manager_self self, int64_t epoch, bool final,
                  caf::expected<std::vector<checkpoint_stats>> stats) {
  auto& st = self->state;
  caf::error err;
  auto start = job_event::clock::now();
  if (!stats) {
    err = std::move(stats.error());
    notify_commit(self, epoch, {}, start, err);
  } else {
    st.last_stats = std::move(*stats);
    err = st.metadata->commit_save(epoch, final, st.last_stats);
    notify_commit(self, epoch, st.last_stats, start, err);
  }
  if (err) {
    detail::log(self->system())
      .warn("unable to write checkpoint for epoch {}: {}", epoch,
            error_text(err));
    if (is_node_lost(err))
      st.lost_commits.insert_or_assign(epoch, err);
  } else {
    st.lost_commits.erase(epoch);
    // With copies on, an epoch is committed once the daemons keep the
    // record too: a master host lost before then resumes from the epoch
    // before. Part of the commit for ckpt_flush: a job that ends after its
    // last commit leaves no old epoch behind, and the record the daemons
    // keep lists only epochs whose databases are kept.
    share_record(self, [self, epoch] {
      detail::log(self->system())
        .info("checkpoint of epoch {} committed", epoch);
      apply_retention(self, epoch, [self] {
        commit_done(self);
      });
    });
    return;
  }
  commit_done(self);
}

// A master on a new host: its checkpoint directory holds no record at all
// (not even an empty one: `--from-scratch` writes one), and its nodes run
// on daemons that keep copies of one. The newest record any daemon keeps
// (the most committed epochs; a daemon that missed the last commit keeps
// an older one) becomes the directory's. Then `done`; a daemon that keeps
// none, or cannot be asked, is passed over.
void adopt_kept_record(manager_self self, const std::vector<node_ref>& nodes,
                       std::function<void()> done) {
  auto& st = self->state;
  auto daemons = one_per_daemon(nodes.empty() ? st.nodes : nodes);
  if (st.replicas == 0 || daemons.empty()) {
    done();
    return;
  }
  auto own = st.metadata->read();
  if (!own || *own) {
    done(); // unreadable (resume says so) or present: the master's own
    return;
  }
  std::vector<detail::gather_target<persistence_actor>> targets;
  for (auto& node : daemons)
    targets.push_back({node.name, node.persistence});
  // Each daemon answers on its own: one that keeps no record (or is
  // gone) must not hide the others' records.
  auto records = std::make_shared<std::vector<checkpoint_metadata>>();
  auto pending = std::make_shared<size_t>(daemons.size());
  auto finish = [self, records, done] {
    auto& st = self->state;
    const checkpoint_metadata* best = nullptr;
    for (auto& x : *records)
      if (!x.committed_epochs.empty()
          && (best == nullptr
              || x.committed_epochs.back() > best->committed_epochs.back()))
        best = &x;
    if (best != nullptr) {
      if (auto err = st.metadata->adopt(*best))
        detail::log(self->system())
          .warn("the commit record the node daemons keep was not adopted: {}",
                error_text(err));
      else
        detail::log(self->system())
          .warn("checkpoint directory {} holds no commit record; the node "
                "daemons keep one: its last committed epoch is {}",
                st.db_prefix, best->committed_epochs.back());
    }
    done();
  };
  for (auto& node : daemons)
    self
      ->request(node.persistence, st.timeout,
                fetch_commit_record{node.name, st.db_prefix})
      .then(
        [records, pending, finish](checkpoint_metadata& x) {
          records->push_back(std::move(x));
          if (--*pending == 0)
            finish();
        },
        [pending, finish](caf::error&) {
          if (--*pending == 0)
            finish();
        });
}

// What every save does first: checks that it can be written, resolves each
// node's database, and uncommits the epoch, which must not count as
// committed while its databases are being replaced.
caf::expected<std::vector<std::string>> prepare_save(manager_state& st,
                                                     int64_t epoch) {
  if (st.nodes.empty())
    return not_initialized();
  // (A not_writable error names the directory already.)
  if (auto err = st.metadata->check_writable())
    return make_error(actors_errc::checkpoint_failed,
                      is_error(err, persistence_errc::not_writable)
                        ? error_text(err)
                        : "checkpoint directory " + st.db_prefix + ": "
                          + error_text(err));
  auto dbs = dbs_of(st, epoch, {});
  if (!dbs)
    return dbs;
  if (auto err = st.metadata->uncommit(epoch))
    return err;
  return dbs;
}

// How long each step of a save may take. Either way the snapshot step
// waits the whole timeout before it calls a node lost, and a save whose
// snapshots are not all taken within the timeout of its request (its
// metadata's uncommit counts) fails without a commit: the epoch loop may
// not wait for it.
enum class save_timing {
  // A blocking save: its caller waits one timeout, so the write has what
  // is left of it.
  one_deadline,
  // The epoch loop's: the write goes on in the background, and the next
  // epoch's snapshot queues behind it on each node, so the write has the
  // whole timeout of its own.
  timeout_per_step,
};

std::chrono::milliseconds policy_timeout(const manager_state& st) {
  return std::min(st.timeout, detail::never);
}

// Whether a save requested at `started` has outlasted its timeout.
bool outlasted(const manager_state& st, clock_type::time_point started) {
  auto timeout = policy_timeout(st);
  return timeout != detail::never && clock_type::now() > started + timeout;
}

// The timeout of a save's write step; never none, so that a step begun
// late still asks and is answered at once by its timer.
std::chrono::milliseconds write_timeout(const manager_state& st,
                                        save_timing timing,
                                        clock_type::time_point started) {
  auto timeout = policy_timeout(st);
  if (timing == save_timing::timeout_per_step || timeout == detail::never)
    return timeout;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
    started + timeout - clock_type::now());
  return std::max(left, std::chrono::milliseconds(1));
}

caf::error snapshots_outlasted(int64_t epoch) {
  return make_error(actors_errc::checkpoint_failed,
                    "the snapshots of epoch " + std::to_string(epoch)
                      + " outlasted their timeout");
}

// The one way a checkpoint of `epoch` is written, for a blocking save and
// for the epoch loop's: a transaction of two steps on the nodes bound now,
// for a request that came at `started`, timed as `timing` says.
//
// 1. Every node snapshots its workspace and starts writing the snapshot
//    into its database of `dbs` (begin_save). `snapshotted` hears once:
//    none when every node took its snapshot in time, else why not.
// 2. Every node, whether or not its snapshot was taken, is asked for the
//    outcome of its write (end_save, asked before `snapshotted` runs, so
//    that it queues before any later request to the node). `written` hears
//    once every node has answered or the time is up: whether the snapshots
//    were taken, and every node's stats or the first failure (the
//    snapshots' own when they were not).
//
// So when `written` runs, nothing the transaction began is still being
// written, unless a node stopped answering. Each transaction has an id of
// its own, so that the outcome a node keeps for it is never another's.
template <class Snapshotted, class Written>
void write_checkpoints(manager_self self, std::vector<std::string> dbs,
                       int64_t epoch, bool full, save_timing timing,
                       clock_type::time_point started, Snapshotted snapshotted,
                       Written written) {
  auto& st = self->state;
  if (outlasted(st, started)) {
    // Too late to snapshot what the requester stands for.
    snapshotted(snapshots_outlasted(epoch));
    written(false, snapshots_outlasted(epoch));
    return;
  }
  auto id = ++st.last_save_id;
  fan_out<snapshot_taken>(
    self, st.nodes, policy_timeout(st), {"checkpoint snapshot", epoch},
    [dbs = std::move(dbs), epoch, id, full,
     i = size_t{0}](const node_ref& node) mutable {
      return begin_save{node.name, epoch, id, dbs[i++], full};
    },
    [self, nodes = st.nodes, epoch, id, timing, started,
     snapshotted = std::move(snapshotted), written = std::move(written)](
      caf::expected<std::vector<snapshot_taken>> snapshots) mutable {
      caf::error not_taken;
      if (!snapshots)
        not_taken = std::move(snapshots.error());
      else if (outlasted(self->state, started))
        not_taken = snapshots_outlasted(epoch);
      fan_out<checkpoint_stats>(
        self, nodes, write_timeout(self->state, timing, started),
        {"checkpoint write", epoch},
        [epoch, id](const node_ref& node) {
          return end_save{node.name, epoch, id};
        },
        [not_taken, written = std::move(written)](
          caf::expected<std::vector<checkpoint_stats>> stats) mutable {
          if (not_taken)
            written(false, not_taken);
          else
            written(true, std::move(stats));
        });
      snapshotted(std::move(not_taken));
    });
}

checkpoint_manager_actor::behavior_type
manager_behavior(manager_self self, std::string db_prefix,
                 std::shared_ptr<metadata_handler> metadata,
                 checkpoint_policy policy) {
  auto& st = self->state;
  st.db_prefix = std::move(db_prefix);
  st.metadata = std::make_unique<record_keeper>(
    std::make_shared<guarded_metadata>(std::move(metadata)));
  st.timeout = policy.timeout;
  st.full_every = policy.full_every;
  st.keep_last = policy.keep_last;
  st.replicas = policy.replicas;
  st.events = std::move(policy.events);
  std::random_device random;
  st.last_save_id = (uint64_t{random()} << 32) | random();
  return {
    [=](ckpt_set_params& msg) -> caf::result<void> {
      auto& st = self->state;
      st.node_names = std::move(msg.node_names);
      if (!msg.path_prefix.empty())
        st.path_prefix = std::move(msg.path_prefix);
      st.metadata->set_params(st.db_prefix, st.node_names);
      if (msg.job_definition.empty())
        return caf::unit;
      if (!msg.allow_job_change) {
        // A record without a definition (or without a commit) was written
        // before definitions were recorded, or by no run yet: this job's.
        auto recorded = st.metadata->read();
        if (!recorded)
          return std::move(recorded.error());
        if (*recorded && !(*recorded)->committed_epochs.empty()
            && !(*recorded)->job_definition.empty())
          if (auto difference = first_difference((*recorded)->job_definition,
                                                 msg.job_definition);
              !difference.empty())
            return make_error(
              actors_errc::job_changed,
              "the checkpoints in " + st.db_prefix
                + " were committed by another definition of the job ("
                + difference
                + "); allow the change to resume them anyway, or start "
                  "over in another directory");
      }
      st.metadata->set_job_definition(msg.job_definition);
      return caf::unit;
    },
    [=](ckpt_init& msg) -> caf::result<ckpt_result> {
      auto& st = self->state;
      if (!msg.path_prefix.empty())
        st.path_prefix = msg.path_prefix;
      std::vector<std::string> dbs;
      for (auto& node : msg.nodes) {
        if (msg.retrieve_from_epoch < 0) {
          dbs.emplace_back();
          continue;
        }
        auto db = db_of(st, node.name, msg.retrieve_from_epoch, {});
        if (!db)
          return std::move(db.error());
        dbs.push_back(std::move(*db));
      }
      auto copies = plan_replicas(msg.nodes, st.replicas);
      if (!copies)
        return std::move(copies.error());
      // A resume with copies on: every other committed epoch gets its
      // copies again too, since a node that moved or a holder that was
      // replaced left them short (see init_checkpoint::kept_dbs).
      std::vector<int64_t> others;
      if (msg.retrieve_from_epoch >= 0 && st.replicas > 0) {
        auto committed = st.metadata->committed_epochs();
        if (!committed)
          detail::log(self->system())
            .warn("the copies of older epochs are not rebuilt: {}",
                  error_text(committed.error()));
        else
          for (auto epoch : *committed)
            if (epoch != msg.retrieve_from_epoch)
              others.push_back(epoch);
      }
      std::vector<std::vector<std::string>> kept_dbs;
      for (auto& node : msg.nodes) {
        auto& node_dbs = kept_dbs.emplace_back();
        for (auto epoch : others) {
          auto db = db_of(st, node.name, epoch, {});
          if (!db)
            return std::move(db.error());
          node_dbs.push_back(std::move(*db));
        }
      }
      st.nodes = std::move(msg.nodes);
      auto rp = self->make_response_promise<ckpt_result>();
      fan_out<blob_names>(
        self, st.nodes, st.timeout,
        {"checkpoint init", msg.retrieve_from_epoch},
        [dbs, kept_dbs, copies = std::move(*copies),
         i = size_t{0}](const node_ref& node) mutable {
          auto& plan = copies[i];
          auto& db = dbs[i];
          auto& kept = kept_dbs[i++];
          return init_checkpoint{
            node.name, db, plan.holders, plan.sources,
            plan.holders.empty() ? std::vector<std::string>{} : kept};
        },
        [self, rp](caf::expected<std::vector<blob_names>> lists) mutable {
          if (!lists) {
            rp.deliver(std::move(lists.error()));
            return;
          }
          ckpt_result result;
          for (size_t i = 0; i < lists->size(); ++i) {
            result.node_names.push_back(self->state.nodes[i].name);
            result.blob_lists.push_back(std::move((*lists)[i].names));
          }
          rp.deliver(std::move(result));
        });
      return rp;
    },
    [=](ckpt_save_async& msg) -> caf::result<void> {
      auto started = clock_type::now();
      auto& st = self->state;
      auto dbs = prepare_save(st, msg.epoch);
      if (!dbs)
        return std::move(dbs.error());
      st.lost_commits.erase(msg.epoch);
      auto rp = self->make_response_promise();
      auto epoch = msg.epoch;
      auto final = msg.final;
      // The last epoch's checkpoint stands alone: it is what an upload
      // copies (the directory of that epoch only), and what is left when
      // the job is done.
      auto full = is_full(st, epoch) || final;
      ++st.pending_commits;
      write_checkpoints(
        self, std::move(*dbs), epoch, full, save_timing::timeout_per_step,
        started,
        [rp](caf::error err) mutable {
          // Never committed on an error; the pending commit ends once
          // every node's write has (below).
          if (err)
            rp.deliver(std::move(err));
          else
            rp.deliver(caf::unit);
        },
        [self, epoch,
         final](bool snapshots_taken,
                caf::expected<std::vector<checkpoint_stats>> stats) {
          // Without every snapshot there is nothing to commit; the
          // requester heard why.
          if (!snapshots_taken)
            commit_done(self);
          else
            commit_async(self, epoch, final, std::move(stats));
        });
      return rp;
    },
    [=](ckpt_flush& msg) -> caf::result<void> {
      auto& st = self->state;
      auto rp = self->make_response_promise();
      if (st.pending_commits == 0) {
        reply_flush(rp, st, msg.last_epoch);
        return rp;
      }
      st.flush_waiters.push_back(rp);
      st.flush_epochs.push_back(msg.last_epoch);
      return rp;
    },
    // A blocking save (Caffe2's save): the epoch loop's, without the
    // commit, answered once every node has written its checkpoint.
    [=](ckpt_save& msg) -> caf::result<ckpt_result> {
      auto started = clock_type::now();
      auto& st = self->state;
      auto dbs = prepare_save(st, msg.epoch);
      if (!dbs)
        return std::move(dbs.error());
      auto rp = self->make_response_promise<ckpt_result>();
      auto epoch = msg.epoch;
      write_checkpoints(
        self, std::move(*dbs), epoch, is_full(st, epoch),
        save_timing::one_deadline, started,
        [](const caf::error&) {
          // Answered below, once every node's write has ended.
        },
        [self, rp](bool,
                   caf::expected<std::vector<checkpoint_stats>> stats) mutable {
          if (!stats) {
            rp.deliver(std::move(stats.error()));
            return;
          }
          self->state.last_stats = *stats;
          report(self, "checkpoint_save");
          rp.deliver(ckpt_result{std::move(*stats), {}, {}});
        });
      return rp;
    },
    [=](ckpt_load& msg) -> caf::result<ckpt_result> {
      auto& st = self->state;
      auto dbs = dbs_of(st, msg.epoch, msg.path_prefix);
      if (!dbs)
        return std::move(dbs.error());
      auto rp = self->make_response_promise<ckpt_result>();
      fan_out<checkpoint_stats>(
        self, st.nodes, st.timeout, {"checkpoint load", msg.epoch},
        [dbs = *dbs, msg, i = size_t{0}](const node_ref& node) mutable {
          return load_checkpoint{node.name, msg.epoch, dbs[i++], msg.blob_names,
                                 msg.partial};
        },
        [self, rp, partial = msg.partial](
          caf::expected<std::vector<checkpoint_stats>> stats) mutable {
          if (!stats) {
            rp.deliver(std::move(stats.error()));
            return;
          }
          self->state.last_stats = *stats;
          report(self, partial ? "checkpoint_partial_load" : "checkpoint_load");
          rp.deliver(ckpt_result{std::move(*stats), {}, {}});
        });
      return rp;
    },
    [=](ckpt_read& msg) -> caf::result<blob_values> {
      auto& st = self->state;
      auto dbs = dbs_of(st, msg.epoch, {});
      if (!dbs)
        return std::move(dbs.error());
      auto rp = self->make_response_promise<blob_values>();
      fan_out<blob_values>(
        self, st.nodes, st.timeout, {"checkpoint read", msg.epoch},
        [dbs = *dbs, names = msg.blob_names,
         i = size_t{0}](const node_ref& node) mutable {
          return read_checkpoint{node.name, dbs[i++], names};
        },
        [rp, nodes = st.nodes](
          caf::expected<std::vector<blob_values>> per_node) mutable {
          if (!per_node) {
            rp.deliver(std::move(per_node.error()));
            return;
          }
          // One workspace receives them all: a name two nodes share would
          // silently take one node's value.
          std::map<std::string, std::string> owner;
          blob_values merged;
          for (size_t i = 0; i < per_node->size(); ++i) {
            for (auto& blob : (*per_node)[i].blobs) {
              auto [it, fresh] = owner.emplace(blob.name, nodes[i].name);
              if (!fresh) {
                rp.deliver(make_error(
                  actors_errc::invalid_argument,
                  "blob '" + blob.name + "' is in the checkpoints of both "
                    + it->second + " and " + nodes[i].name));
                return;
              }
              merged.blobs.push_back(std::move(blob));
            }
          }
          rp.deliver(std::move(merged));
        });
      return rp;
    },
    [=](ckpt_exists& msg) -> caf::result<checkpoint_status> {
      auto& st = self->state;
      auto dbs = dbs_of(st, msg.epoch, {});
      if (!dbs)
        return std::move(dbs.error());
      auto rp = self->make_response_promise<checkpoint_status>();
      fan_out<checkpoint_status>(
        self, st.nodes, st.timeout, {"checkpoint check", msg.epoch},
        [dbs = *dbs, verify = msg.verify_data,
         i = size_t{0}](const node_ref&) mutable {
          return check_checkpoint{dbs[i++], verify};
        },
        [rp](caf::expected<std::vector<checkpoint_status>> all) mutable {
          if (!all) {
            rp.deliver(std::move(all.error()));
            return;
          }
          checkpoint_status result{true, true, true, {}};
          for (auto& status : *all) {
            result.exists = result.exists && status.exists;
            result.complete = result.complete && status.complete;
            result.intact = result.intact && status.intact;
            if (result.problem.empty())
              result.problem = status.problem;
          }
          rp.deliver(std::move(result));
        });
      return rp;
    },
    [=](ckpt_retain& msg) -> caf::result<retention_result> {
      if (self->state.nodes.empty())
        return not_initialized();
      if (msg.keep_last == 0)
        return make_error(actors_errc::invalid_argument,
                          "retention keeps at least one epoch");
      auto rp = self->make_response_promise<retention_result>();
      retain(self, std::numeric_limits<int64_t>::max(), msg.keep_last,
             [rp](caf::expected<retention_result> result) mutable {
               if (result)
                 rp.deliver(std::move(*result));
               else
                 rp.deliver(std::move(result.error()));
             });
      return rp;
    },
    [=](ckpt_verify_copies& msg) -> caf::result<database_checks> {
      auto& st = self->state;
      auto dbs = dbs_of(st, msg.epoch, {});
      if (!dbs)
        return std::move(dbs.error());
      // One persistence actor per daemon reads for it: a daemon places
      // every database it holds (its nodes' and the copies) under one root,
      // by the names the master gives them.
      auto daemons = one_per_daemon(st.nodes);
      // Each node's own place, then every other daemon, in that order.
      database_checks planned;
      std::vector<node_ref> readers;
      std::vector<std::string> read_dbs;
      for (size_t i = 0; i < st.nodes.size(); ++i) {
        auto& node = st.nodes[i];
        planned.checks.push_back(
          database_check{node.name, node.address, true, {}});
        readers.push_back(node);
        read_dbs.push_back((*dbs)[i]);
        for (auto& daemon : daemons) {
          if (daemon.address == node.address)
            continue;
          planned.checks.push_back(
            database_check{node.name, daemon.address, false, {}});
          readers.push_back(daemon);
          read_dbs.push_back((*dbs)[i]);
        }
      }
      auto rp = self->make_response_promise<database_checks>();
      fan_out<checkpoint_status>(
        self, readers, st.timeout, {"checkpoint verify", msg.epoch},
        [read_dbs, i = size_t{0}](const node_ref&) mutable {
          return check_checkpoint{read_dbs[i++], true};
        },
        [rp, planned = std::move(planned)](
          caf::expected<std::vector<checkpoint_status>> all) mutable {
          if (!all) {
            rp.deliver(std::move(all.error()));
            return;
          }
          for (size_t i = 0; i < all->size(); ++i)
            planned.checks[i].status = std::move((*all)[i]);
          rp.deliver(std::move(planned));
        });
      return rp;
    },
    [=](ckpt_resume_epoch& msg) -> caf::result<resume_point> {
      if (msg.user_epoch < 0 && msg.before_epoch >= 0) {
        // Unreadable metadata is an error here, never "nothing committed":
        // that would restart the job from scratch over its checkpoints.
        auto committed = self->state.metadata->committed_epochs();
        if (!committed)
          return std::move(committed.error());
        int64_t found = -1;
        for (auto epoch : *committed)
          if (epoch < msg.before_epoch)
            found = std::max(found, epoch);
        auto final = self->state.metadata->final_epoch();
        if (!final)
          return std::move(final.error());
        return resume_point{found, found >= 0 && *final == found};
      }
      auto rp = self->make_response_promise<resume_point>();
      auto answer = [self, msg, rp]() mutable {
        auto user = msg.user_epoch < 0 ? std::optional<int64_t>{}
                                       : std::optional<int64_t>{msg.user_epoch};
        auto last = self->state.metadata->resume_epoch(user);
        if (!last) {
          rp.deliver(std::move(last.error()));
          return;
        }
        auto epoch = last->value_or(-1);
        auto final = self->state.metadata->final_epoch();
        if (!final) {
          rp.deliver(std::move(final.error()));
          return;
        }
        rp.deliver(resume_point{epoch, epoch >= 0 && *final == epoch});
      };
      if (msg.user_epoch >= 0)
        answer();
      else
        adopt_kept_record(self, msg.nodes, std::move(answer));
      return rp;
    },
    [=](ckpt_write_metadata& msg) -> caf::result<void> {
      if (auto err = self->state.metadata->commit(msg.epoch))
        return err;
      auto rp = self->make_response_promise();
      auto epoch = msg.epoch;
      share_record(self, [self, rp, epoch]() mutable {
        apply_retention(self, epoch, [rp]() mutable {
          rp.deliver(caf::unit);
        });
      });
      return rp;
    },
    [=](ckpt_report& msg) -> caf::result<ckpt_result> {
      if (auto err
          = self->state.metadata->report(msg.action, self->state.last_stats))
        return err;
      ckpt_result reported;
      reported.stats = self->state.last_stats;
      return reported;
    },
    [=](ckpt_accessible& msg) -> caf::result<bool> {
      auto& metadata = *self->state.metadata;
      if (msg.epoch < 0) {
        auto err = metadata.check_writable();
        if (is_error(err, persistence_errc::not_writable)) {
          // The reason goes no further than this: the reply says no.
          detail::log(self->system()).warn("{}", error_text(err));
          return false;
        }
        if (err)
          return err;
        return true;
      }
      auto epochs = metadata.committed_epochs();
      if (!epochs)
        return std::move(epochs.error());
      return std::binary_search(epochs->begin(), epochs->end(), msg.epoch);
    },
  };
}

} // namespace

checkpoint_manager_actor
spawn_checkpoint_manager(caf::actor_system& sys, std::string db_prefix,
                         std::shared_ptr<metadata_handler> metadata,
                         checkpoint_policy policy) {
  return detail::spawn_detached(sys, manager_behavior, std::move(db_prefix),
                                std::move(metadata), policy);
}

} // namespace epochrt
