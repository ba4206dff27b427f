#include <epochrt/actors/core/persistence_actor.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <system_error>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/spawn_detached.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/digest.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/path_guard.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

namespace {

using clock_type = std::chrono::steady_clock;

int64_t micros_since(clock_type::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now()
                                                               - start)
    .count();
}

// Every blob the workspace has now: blobs created after init are saved
// too, so a resumed job sees all of its state. Copy-on-write: taking it
// copies pointers, and the blobs it holds never change however the
// workspace is written afterwards.
caf::expected<std::vector<workspace::named_blob>>
take_snapshot(workspace& ws, const std::string& node, int64_t epoch,
              fault_injector* faults) {
  fault_action action;
  if (auto err = strike_blocking(faults, fault_point::node_snapshot,
                                 fault_site{node, epoch, {}}, action))
    return err;
  return ws.snapshot_all();
}

// What the persistence actor knows of the payloads on disk: the blobs of
// the checkpoint it saved or fully loaded last, at the versions the
// workspace had then. A later save of the same directory reuses the
// payload of every blob still at that version instead of writing it again.
//
// Reuse is safe because a version names one value forever (workspace.hpp),
// the writer checks that the data file it refers to is still the one with
// that id, and the reader checks every payload's digest wherever it lies.
// A payload is read back and checked against its digest once before it is
// first referred to (`verified`: loaded, or checked by an earlier reuse):
// a payload a bad disk damaged must not be passed on from epoch to epoch
// until retention has removed every epoch with a good copy.
struct saved_payloads {
  std::string db; // the database they were saved to or loaded from
  int64_t epoch = -1;
  struct payload {
    uint64_t version = 0;
    blob_entry entry;
    bool verified = false;
  };
  std::map<std::string, payload, std::less<>> blobs;

  // The payload of `blob` if the checkpoint `db` of `epoch` may refer to it.
  const payload* reusable(const workspace::named_blob& blob,
                          const std::string& new_db, int64_t new_epoch) const {
    if (epoch < 0 || epoch >= new_epoch)
      return nullptr;
    auto i = blobs.find(blob.name);
    if (i == blobs.end() || i->second.version != blob.version)
      return nullptr;
    // Only within one directory: the entry names an epoch, not a path.
    auto sibling = db_path_of_epoch(new_db, new_epoch, epoch);
    if (!sibling || *sibling != db)
      return nullptr;
    return &i->second;
  }

  // The payload of `blob`, a blob at a version `access::expose` made, if
  // the checkpoint `db` of `epoch` may refer to it: one of the same name
  // whose content is the same. User code may or may not have written an
  // exposed blob, so its version cannot tell; its digest does, for one
  // pass over its bytes instead of writing them.
  const payload* reusable_content(const workspace::named_blob& blob,
                                  const std::string& new_db,
                                  int64_t new_epoch) const {
    if (epoch < 0 || epoch >= new_epoch || !blob.exposed)
      return nullptr;
    auto i = blobs.find(blob.name);
    if (i == blobs.end())
      return nullptr;
    auto& entry = i->second.entry;
    auto& value = *blob.value;
    if (entry.type != value.type || entry.shape != value.shape)
      return nullptr;
    auto sibling = db_path_of_epoch(new_db, new_epoch, epoch);
    if (!sibling || *sibling != db || payload_digest(value) != entry.digest)
      return nullptr;
    return &i->second;
  }

  // Remembers the payloads of a checkpoint that is now on disk; only those
  // in a data file can be referred to. `verified`: the blobs whose payloads
  // are known to check out on disk; all of them when `all_verified`.
  void remember(const std::string& path, const manifest& written,
                const std::vector<std::string>& names,
                const std::vector<uint64_t>& versions, bool all_verified,
                const std::set<std::string>& verified = {}) {
    db = path;
    epoch = written.epoch;
    blobs.clear();
    auto in_data_file = [](const blob_entry& entry) {
      return entry.data_epoch != inline_payload;
    };
    // Checkpoints of small blobs only (thousands of them) have nothing to
    // remember: spare them the index below.
    if (std::none_of(written.blobs.begin(), written.blobs.end(), in_data_file))
      return;
    std::map<std::string_view, uint64_t> version_of;
    for (size_t i = 0; i < names.size() && i < versions.size(); ++i)
      version_of[names[i]] = versions[i];
    for (auto& entry : written.blobs) {
      auto v = version_of.find(entry.name);
      if (in_data_file(entry) && v != version_of.end())
        blobs.emplace(entry.name,
                      payload{v->second, entry,
                              all_verified || verified.count(entry.name) > 0});
    }
  }

  void forget() {
    db.clear();
    epoch = -1;
    blobs.clear();
  }
};

// Copies a save's database, complete in `sealed_dir` (its writer's partial
// directory), to other daemons.
using copy_function = std::function<caf::error(const std::string& sealed_dir)>;

// Finishes `writer`. With `copy`, its database is copied while another
// thread makes it durable: on hosts with disks of their own a save with
// copies then costs about the longer of the two, not their sum. The
// database is published once durable even when the copy failed, as a
// save without copies would have been; the save fails all the same.
caf::expected<manifest> finish_copying(checkpoint_writer& writer,
                                       const copy_function& copy) {
  if (!copy)
    return writer.finish();
  if (auto sealed = writer.seal(); !sealed)
    return sealed;
  // Taken now: from here on until the join, only the thread uses `writer`.
  auto sealed_dir = writer.partial_path();
  caf::error synced;
  caf::error copied;
  {
    // Joined however the copy ends: the thread uses `writer`.
    struct joined {
      std::thread thread;
      ~joined() {
        if (thread.joinable())
          thread.join();
      }
    } syncer;
    try {
      syncer.thread = std::thread{[&writer, &synced] {
        synced = writer.sync();
      }};
    } catch (const std::system_error&) {
      synced = writer.sync(); // no thread to be had: one after the other
    }
    copied = copy(sealed_dir);
  }
  if (synced)
    return synced;
  auto written = writer.finish();
  if (written && copied)
    return copied;
  return written;
}

caf::expected<checkpoint_stats>
write(const caf::actor_system& sys, const std::string& node, int64_t epoch,
      const std::string& db, bool full,
      const std::vector<workspace::named_blob>& snapshot, saved_payloads& saved,
      clock_type::time_point start, fault_injector* faults,
      const copy_function& copy) {
  // The snapshot was taken between `start` and now.
  auto snapshot_us = micros_since(start);
  writer_options opts;
  opts.faults = faults;
  // Whatever happens below, what was on disk may be gone or replaced.
  auto previous = std::move(saved);
  saved.forget();
  auto writer = checkpoint_writer::create(db, node, epoch, opts);
  if (!writer)
    return std::move(writer.error());
  uint64_t reused = 0;
  uint64_t reused_bytes = 0;
  std::set<std::string> verified; // reused payloads: all checked by now
  for (auto& blob : snapshot) {
    const saved_payloads::payload* earlier = nullptr;
    if (!full) {
      earlier = previous.reusable(blob, db, epoch);
      if (earlier == nullptr)
        earlier = previous.reusable_content(blob, db, epoch);
    }
    if (earlier != nullptr) {
      auto check = earlier->verified ? checkpoint_writer::reuse_check::location
                                     : checkpoint_writer::reuse_check::digest;
      auto err = (*writer)->reuse(earlier->entry, check);
      if (!err) {
        ++reused;
        reused_bytes += earlier->entry.bytes;
        verified.insert(blob.name);
        continue;
      }
      // Gone, rewritten or damaged since: written again below. Anything
      // else failed the writer.
      if (!is_error(err, persistence_errc::not_found))
        return err;
      detail::log(sys).info("writing blob '{}' again: {}", blob.name,
                            error_text(err));
    }
    if (auto err = (*writer)->put(blob.name, *blob.value))
      return err;
  }
  auto written = finish_copying(**writer, copy);
  if (!written)
    return std::move(written.error());
  std::vector<std::string> names;
  std::vector<uint64_t> versions;
  for (auto& blob : snapshot) {
    names.push_back(blob.name);
    versions.push_back(blob.version);
  }
  saved.remember(db, *written, names, versions, false, verified);
  checkpoint_stats stats{node, db, micros_since(start), written->total_bytes,
                         written->blobs.size()};
  stats.written_bytes = written->total_bytes - reused_bytes;
  stats.reused_blobs = reused;
  stats.snapshot_us = snapshot_us;
  stats.sync_us = (*writer)->sync_micros();
  return stats;
}

// Readers report this node at the load.* points, and the epoch when the
// request names it (else the database's name tells).
reader_options read_options(const std::string& node, fault_injector* faults,
                            int64_t epoch = -1) {
  reader_options opts;
  opts.faults = faults;
  opts.node = node;
  opts.epoch = epoch;
  return opts;
}

caf::expected<checkpoint_stats>
load(const std::string& node, workspace& ws, const load_checkpoint& msg,
     saved_payloads& saved, fault_injector* faults) {
  auto start = clock_type::now();
  auto reader
    = checkpoint_reader::open(msg.db, read_options(node, faults, msg.epoch));
  if (!reader)
    return std::move(reader.error());
  auto& listed = (*reader)->get_manifest().blobs;
  std::vector<std::string> names;
  if (msg.blob_names.empty()) {
    for (auto& entry : listed)
      names.push_back(entry.name);
  } else {
    for (auto& name : msg.blob_names) {
      auto found = std::any_of(listed.begin(), listed.end(), [&](auto& e) {
        return e.name == name;
      });
      if (found)
        names.push_back(name);
      else if (!msg.allow_incomplete)
        return make_error(persistence_errc::not_found,
                          msg.db + " has no blob '" + name + "'");
    }
  }
  // Read everything first: the workspace changes only if all of it is good.
  auto values = (*reader)->read_all(names);
  if (!values)
    return std::move(values.error());
  std::vector<std::pair<std::string, tensor>> blobs;
  uint64_t bytes = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    bytes += (*values)[i].byte_size();
    blobs.emplace_back(names[i], std::move((*values)[i]));
  }
  auto count = blobs.size();
  // A full load restores the saved state exactly; a partial one only adds
  // the blobs it was asked for.
  if (msg.blob_names.empty()) {
    auto versions = ws.replace_all(std::move(blobs));
    // The next save may refer to what was just loaded.
    // Every payload was just checked against its digest.
    saved.remember(msg.db, (*reader)->get_manifest(), names, versions, true);
  } else {
    // The blobs set get new versions, so nothing remembered matches them.
    ws.set_all(std::move(blobs));
  }
  return checkpoint_stats{node, msg.db, micros_since(start), bytes, count};
}

caf::expected<blob_names> list_blobs(const std::string& node, workspace& ws,
                                     const init_checkpoint& msg,
                                     fault_injector* faults) {
  if (msg.db.empty())
    return blob_names{ws.names()};
  auto reader = checkpoint_reader::open(msg.db, read_options(node, faults));
  if (!reader)
    return std::move(reader.error());
  blob_names result;
  for (auto& entry : (*reader)->get_manifest().blobs)
    result.names.push_back(entry.name);
  return result;
}

caf::expected<blob_values> read_blobs(const std::string& node,
                                      const read_checkpoint& msg,
                                      fault_injector* faults) {
  auto reader = checkpoint_reader::open(msg.db, read_options(node, faults));
  if (!reader)
    return std::move(reader.error());
  auto& listed = (*reader)->get_manifest().blobs;
  blob_values result;
  for (auto& name : msg.blob_names) {
    auto found = std::any_of(listed.begin(), listed.end(), [&](auto& e) {
      return e.name == name;
    });
    if (!found)
      continue;
    auto value = (*reader)->read(name);
    if (!value)
      return std::move(value.error());
    result.blobs.push_back(blob_value{name, std::move(*value)});
  }
  return result;
}

checkpoint_status check(const std::string& node, const check_checkpoint& msg,
                        fault_injector* faults) {
  checkpoint_status status;
  auto reader = checkpoint_reader::open(msg.db, read_options(node, faults));
  if (!reader) {
    auto& err = reader.error();
    status.exists = !is_error(err, persistence_errc::not_found);
    status.problem = msg.db + ": " + error_text(err);
    return status;
  }
  status.exists = true;
  status.complete = true;
  if (msg.verify_data) {
    auto err = (*reader)->verify();
    status.intact = !err;
    if (err)
      status.problem = msg.db + ": " + error_text(err);
  }
  return status;
}

// A step of a copy (a piece, an offer, a listing) that takes longer than
// this means the other daemon is gone: the copy fails instead of holding
// the save for the whole checkpoint timeout.
constexpr auto copy_step_timeout = std::chrono::seconds(30);

// What copies of this node's databases need (init_checkpoint, and the
// daemon's means).
struct replica_context {
  std::vector<std::string> holders;
  std::vector<std::string> sources;
  // The job's other daemons, which may keep databases of this node from
  // an earlier placement (another --replicas, a node that moved between
  // them): retention prunes there too, until one holds none of the kept
  // ones. Nothing new is copied there, so each leaves for good.
  std::vector<std::string> stale_places;
  store_finder find_store;
  copy_stream_ends streams;
  place_function place; // as the master names a database -> here
  fault_injector* faults = nullptr;
};

bool restorable(const caf::error& err) {
  return is_error(err, persistence_errc::not_found)
    || is_error(err, persistence_errc::incomplete)
    || is_error(err, persistence_errc::corrupt);
}

// Runs `step` against the store at `address`, and once more over a fresh
// connection when it fails: the daemon there may have been restarted.
template <class F>
auto with_store(const replica_context& ctx, const std::string& address, F step)
  -> decltype(step(std::declval<caf::actor>())) {
  auto store = ctx.find_store(address, false);
  if (store) {
    auto result = step(*store);
    if (result)
      return result;
  }
  store = ctx.find_store(address, true);
  if (!store)
    return std::move(store.error());
  return step(*store);
}

// Pushes the database `db` (as the master names it) of `epoch` to every
// holder; the first failure fails the save. `files_at`: as for push_copy.
caf::error push_to_holders(caf::actor_system& sys, const std::string& node,
                           const std::string& db, int64_t epoch,
                           const replica_context& ctx,
                           const std::string& files_at = {}) {
  for (auto& holder : ctx.holders) {
    auto pushed = with_store(ctx, holder, [&](const caf::actor& store) {
      return push_copy(sys, store, node, db, epoch, ctx.place,
                       copy_step_timeout, holder, ctx.streams, files_at);
    });
    if (!pushed)
      return make_error(actors_errc::checkpoint_failed,
                        "the copy of " + db + " to the daemon at " + holder
                          + " failed: " + error_text(pushed.error()));
    detail::log(sys).debug("{} copied to {} ({} databases, {} bytes)", db,
                           holder, pushed->databases, pushed->bytes);
  }
  return {};
}

// Runs `attempt` (a read of the database `db`, as the master names it, of
// `epoch`); when it fails because the database is missing or damaged here,
// pulls it from each source in turn and runs `attempt` again, until one
// succeeds: a damaged copy is skipped for the next. The first error, with
// what each source said, when none does.
template <class F>
auto with_restore(caf::actor_system& sys, const std::string& node,
                  const std::string& db, int64_t epoch,
                  const replica_context& ctx, F attempt)
  -> decltype(attempt()) {
  auto result = attempt();
  if (result || ctx.sources.empty() || !restorable(result.error()))
    return result;
  auto why = error_text(result.error());
  detail::log(sys).warn("{}: {}; restoring it from a copy", db, why);
  for (auto& source : ctx.sources) {
    auto pulled = with_store(ctx, source, [&](const caf::actor& store) {
      return pull_copy(sys, store, node, db, epoch, ctx.place,
                       copy_step_timeout, ctx.faults, source, ctx.streams);
    });
    if (!pulled) {
      why += "; no copy from " + source + ": " + error_text(pulled.error());
      continue;
    }
    auto again = attempt();
    if (again) {
      detail::log(sys).warn("{} restored from the copy at {} ({} databases, "
                            "{} bytes)",
                            db, source, pulled->databases, pulled->bytes);
      return again;
    }
    why += "; the copy from " + source
      + " failed too: " + error_text(again.error());
  }
  return make_error(persistence_errc::corrupt, db + ": " + why);
}

// An older committed database of this node (`db`, as the master names
// it) where it belongs again: here, restored from a copy if it is missing
// or cannot be opened, and on every holder that lacks it.
caf::error rebuild_copies(caf::actor_system& sys, const std::string& node,
                          const std::string& db, const replica_context& ctx) {
  auto epoch = epoch_of_db_path(db);
  if (!epoch)
    return std::move(epoch.error());
  auto placed = ctx.place(db);
  if (!placed)
    return std::move(placed.error());
  auto opened
    = with_restore(sys, node, db, *epoch, ctx, [&]() -> caf::expected<bool> {
        auto reader
          = checkpoint_reader::open(*placed, read_options(node, ctx.faults));
        if (!reader)
          return std::move(reader.error());
        return true;
      });
  if (!opened)
    return std::move(opened.error());
  return push_to_holders(sys, node, db, *epoch, ctx);
}

// Removes the copies of this node at the daemon at `address` but those of
// the databases `kept` (as the master names them).
caf::expected<pruned_checkpoints>
prune_copies_at(caf::actor_system& sys, const std::string& node,
                const std::vector<std::string>& kept,
                const std::string& address, const replica_context& ctx) {
  return with_store(ctx, address, [&](const caf::actor& store) {
    return detail::blocking_request<pruned_checkpoints>(
      sys, store, copy_step_timeout, copy_prune{node, kept});
  });
}

// Whether the daemon at `address`, pruned to `kept`, may still hold one
// of them. Only a database it answers is missing counts as gone.
bool may_hold_any(caf::actor_system& sys, const std::string& node,
                  const std::vector<std::string>& kept,
                  const std::string& address, const replica_context& ctx) {
  for (auto& db : kept) {
    auto epoch = epoch_of_db_path(db);
    if (!epoch)
      return true;
    auto listed = with_store(ctx, address, [&](const caf::actor& store) {
      return detail::blocking_request<copy_listings>(
        sys, store, copy_step_timeout, copy_list{node, db, *epoch});
    });
    if (listed || !is_error(listed.error(), persistence_errc::not_found))
      return true;
  }
  return false;
}

// Retention's part at the daemons: the holders, and the stale places
// while they hold anything. Adds what they removed to `report`.
void prune_copies(caf::actor_system& sys, const std::string& node,
                  const std::vector<std::string>& kept, replica_context& ctx,
                  pruned_checkpoints& report) {
  auto add = [&](pruned_checkpoints& pruned) {
    report.removed.insert(report.removed.end(), pruned.removed.begin(),
                          pruned.removed.end());
    report.bytes += pruned.bytes;
  };
  // A copy left behind costs space, not correctness: the next pruning
  // removes it.
  for (auto& holder : ctx.holders) {
    auto pruned = prune_copies_at(sys, node, kept, holder, ctx);
    if (!pruned) {
      detail::log(sys).warn("old copies of node {} at {} were not removed: {}",
                            node, holder, error_text(pruned.error()));
      continue;
    }
    add(*pruned);
  }
  auto& stale = ctx.stale_places;
  for (auto i = stale.begin(); i != stale.end();) {
    auto pruned = prune_copies_at(sys, node, kept, *i, ctx);
    if (!pruned) {
      // Most likely a daemon whose host is gone; asking again at every
      // commit would hold each one for the connection timeout.
      detail::log(sys).warn(
        "databases of node {} left at {} from an earlier placement were not "
        "removed, and will not be this run: {}",
        node, *i, error_text(pruned.error()));
      i = stale.erase(i);
      continue;
    }
    add(*pruned);
    if (may_hold_any(sys, node, kept, *i, ctx))
      ++i;
    else
      i = stale.erase(i);
  }
}

// The copy a daemon keeps of the master's commit record of `dir`: beside
// the databases, under its root. A node in the master's process has no
// root: the master's own record is the one.
caf::expected<file_metadata_handler>
kept_record(const std::string& root, const std::string& dir,
            std::shared_ptr<fault_injector> faults) {
  if (root.empty())
    return make_error(actors_errc::invalid_argument,
                      "a node in the master's process keeps no copy of its "
                      "commit record");
  auto placed = resolve_under(root, dir);
  if (!placed)
    return std::move(placed.error());
  return file_metadata_handler{std::move(*placed), std::move(faults)};
}

persistence_actor::behavior_type
persistence_behavior(persistence_actor::pointer self, std::string node,
                     std::shared_ptr<workspace> ws, std::string root,
                     std::shared_ptr<fault_injector> faults,
                     store_finder find_store, copy_stream_ends streams) {
  // The handlers below hold `faults` (captured by value); the writers and
  // readers they make borrow it, and end before the handler returns.
  // Outcomes of writes started by begin_save, by epoch and save id, until
  // end_save collects them; `begun` orders them, oldest first.
  using save_key = std::pair<int64_t, uint64_t>;
  struct save_outcome {
    uint64_t begun = 0;
    caf::expected<checkpoint_stats> stats;
  };
  auto written = std::make_shared<std::map<save_key, save_outcome>>();
  auto saves_begun = std::make_shared<uint64_t>(0);
  auto saved = std::make_shared<saved_payloads>();
  auto wrong_node = [node](const std::string& addressed) {
    return make_error(actors_errc::invalid_argument,
                      "a request for node '" + addressed
                        + "' reached the persistence actor of node '" + node
                        + "'");
  };
  // Where a database named by a request really lives (see resolve_under).
  auto locate = [root](const std::string& db) -> caf::expected<std::string> {
    if (root.empty())
      return db;
    return resolve_under(root, db);
  };
  auto place = [locate](std::string& db) -> caf::error {
    auto placed = locate(db);
    if (!placed)
      return std::move(placed.error());
    db = std::move(*placed);
    return {};
  };
  // Set by every init_checkpoint; read by the handlers below.
  auto copies = std::make_shared<replica_context>();
  copies->find_store = std::move(find_store);
  copies->streams = std::move(streams);
  copies->place = locate;
  copies->faults = faults.get();
  // How a save's database (`db`, as the master names it) goes to the
  // holders: none without copies.
  auto copy_of = [self, node, copies](const std::string& db,
                                      int64_t epoch) -> copy_function {
    if (copies->holders.empty())
      return {};
    return [self, node, copies, db, epoch](const std::string& sealed_dir) {
      return push_to_holders(self->system(), node, db, epoch, *copies,
                             sealed_dir);
    };
  };
  return {
    [=](load_checkpoint& msg) -> caf::result<checkpoint_stats> {
      if (msg.node != node)
        return wrong_node(msg.node);
      auto wire_db = msg.db;
      if (auto err = place(msg.db))
        return err;
      auto result
        = with_restore(self->system(), node, wire_db, msg.epoch, *copies, [&] {
            return load(node, *ws, msg, *saved, faults.get());
          });
      if (!result)
        return std::move(result.error());
      return std::move(*result);
    },
    [=](init_checkpoint& msg) -> caf::result<blob_names> {
      if (msg.node != node)
        return wrong_node(msg.node);
      if (!msg.replica_holders.empty() && !copies->find_store)
        return make_error(actors_errc::invalid_argument,
                          "node " + node
                            + " runs in the master's process: its "
                              "checkpoints cannot be copied to other daemons");
      copies->holders = std::move(msg.replica_holders);
      copies->sources = std::move(msg.replica_sources);
      copies->stale_places.clear();
      for (auto& source : copies->sources)
        if (std::find(copies->holders.begin(), copies->holders.end(), source)
            == copies->holders.end())
          copies->stale_places.push_back(source);
      if (msg.db.empty())
        return list_blobs(node, *ws, msg, faults.get());
      auto wire_db = msg.db;
      auto epoch = epoch_of_db_path(wire_db);
      if (!epoch)
        return std::move(epoch.error());
      if (auto err = place(msg.db))
        return err;
      auto result
        = with_restore(self->system(), node, wire_db, *epoch, *copies, [&] {
            return list_blobs(node, *ws, msg, faults.get());
          });
      if (!result)
        return std::move(result.error());
      // The holders may have changed (a node moved) or lost their copies
      // (a host replaced): the checkpoint resumed from gets its copies
      // again, each holder sent only what it lacks. A failure costs no
      // progress (the next commit copies everything it refers to again),
      // so the resume goes on.
      if (auto err
          = push_to_holders(self->system(), node, wire_db, *epoch, *copies))
        detail::log(self->system())
          .warn("{}: its copies are not rebuilt: {}", wire_db, error_text(err));
      for (auto& kept : msg.kept_dbs)
        if (auto err = rebuild_copies(self->system(), node, kept, *copies))
          detail::log(self->system())
            .warn("{}: its copies are not rebuilt: {}", kept, error_text(err));
      return std::move(*result);
    },
    [=](check_checkpoint& msg) -> caf::result<checkpoint_status> {
      if (auto err = place(msg.db))
        return err;
      return check(node, msg, faults.get());
    },
    [=](read_checkpoint& msg) -> caf::result<blob_values> {
      if (msg.node != node)
        return wrong_node(msg.node);
      if (auto err = place(msg.db))
        return err;
      auto result = read_blobs(node, msg, faults.get());
      if (!result)
        return std::move(result.error());
      return std::move(*result);
    },
    [=](begin_save& msg) -> caf::result<snapshot_taken> {
      if (msg.node != node)
        return wrong_node(msg.node);
      auto wire_db = msg.db;
      if (auto err = place(msg.db))
        return err;
      auto start = clock_type::now();
      auto snapshot = take_snapshot(*ws, node, msg.epoch, faults.get());
      if (!snapshot)
        return std::move(snapshot.error());
      // Answer now, so the epoch loop goes on; write while it runs. This
      // actor has a thread of its own, and end_save waits in its mailbox
      // until the write is done.
      auto rp = self->make_response_promise<snapshot_taken>();
      rp.deliver(snapshot_taken{msg.epoch});
      written->insert_or_assign(
        save_key{msg.epoch, msg.id},
        save_outcome{++*saves_begun,
                     write(self->system(), node, msg.epoch, msg.db, msg.full,
                           *snapshot, *saved, start, faults.get(),
                           copy_of(wire_db, msg.epoch))});
      // A manager asks for every outcome it began, right after; only one
      // that is gone leaves its outcomes behind, dropped oldest first.
      constexpr size_t uncollected_limit = 16;
      while (written->size() > uncollected_limit)
        written->erase(std::min_element(
          written->begin(), written->end(), [](auto& x, auto& y) {
            return x.second.begun < y.second.begun;
          }));
      return rp;
    },
    [=](prune_checkpoints& msg) -> caf::result<pruned_checkpoints> {
      if (msg.node != node)
        return wrong_node(msg.node);
      auto wire_kept = msg.kept;
      for (auto& db : msg.kept)
        if (auto err = place(db))
          return err;
      retention_options opts;
      opts.faults = faults.get();
      opts.node = node;
      opts.check_only = msg.check_only;
      auto report = remove_old_databases(msg.kept, opts);
      if (!report)
        return std::move(report.error());
      // The writer would find out too; forgetting is cheaper.
      for (auto& gone : report->removed)
        if (gone == saved->db)
          saved->forget();
      pruned_checkpoints result{std::move(report->removed), report->bytes};
      // The copies go with them.
      if (!msg.check_only)
        prune_copies(self->system(), node, wire_kept, *copies, result);
      return result;
    },
    [=](keep_commit_record& msg) -> caf::result<void> {
      if (msg.node != node)
        return wrong_node(msg.node);
      auto handler = kept_record(root, msg.dir, faults);
      if (!handler)
        return std::move(handler.error());
      if (auto err = handler->write_record(msg.record, {"adopt", -1}))
        return err;
      return caf::unit;
    },
    [=](fetch_commit_record& msg) -> caf::result<checkpoint_metadata> {
      if (msg.node != node)
        return wrong_node(msg.node);
      auto handler = kept_record(root, msg.dir, faults);
      if (!handler)
        return std::move(handler.error());
      auto kept = handler->read_record();
      if (!kept)
        return std::move(kept.error());
      if (!*kept)
        return make_error(persistence_errc::not_found,
                          "no commit record is kept at "
                            + handler->file_path());
      return std::move(**kept);
    },
    [=](end_save& msg) -> caf::result<checkpoint_stats> {
      if (msg.node != node)
        return wrong_node(msg.node);
      auto i = written->find(save_key{msg.epoch, msg.id});
      if (i == written->end())
        return make_error(actors_errc::invalid_argument,
                          "no save of epoch " + std::to_string(msg.epoch)
                            + " (save " + std::to_string(msg.id)
                            + ") was begun on node " + node);
      auto result = std::move(i->second.stats);
      written->erase(i);
      if (!result)
        return std::move(result.error());
      return std::move(*result);
    },
  };
}

} // namespace

persistence_actor
spawn_persistence(caf::actor_system& sys, std::string node,
                  std::shared_ptr<workspace> ws, std::string checkpoint_root,
                  std::shared_ptr<fault_injector> faults,
                  store_finder find_store, copy_stream_ends streams) {
  return detail::spawn_detached(sys, persistence_behavior, std::move(node),
                                std::move(ws), std::move(checkpoint_root),
                                std::move(faults), std::move(find_store),
                                std::move(streams));
}

} // namespace epochrt
