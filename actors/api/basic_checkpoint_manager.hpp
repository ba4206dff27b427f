#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {

class dir_lock;
class fault_injector;
class job_events;
class metadata_handler;
class session;
class workspace;

/// What a check of every node's checkpoint of an epoch found
/// (`check_db_exists`, `check_db_intact`): the worst of the nodes'.
enum class checkpoint_state {
  /// Every node's checkpoint exists and is complete (and, when digests
  /// were checked, every digest checks out): it can be loaded.
  usable,
  /// Some node's checkpoint does not exist.
  missing,
  /// Some node's checkpoint exists but cannot be opened as a complete
  /// checkpoint: its save never finished, or what records its manifest is
  /// damaged.
  incomplete,
  /// Some node's checkpoint is complete but a digest fails.
  corrupt,
};

/// "usable", "missing", "incomplete" or "corrupt".
std::string to_string(checkpoint_state x);

/// Options of a checkpoint manager.
struct checkpoint_options {
  /// Where committed epochs and stats are kept. Default (null): a durable
  /// file in the checkpoint directory (`<db_prefix>/epochrt.metadata`).
  std::shared_ptr<metadata_handler> metadata;
  /// Longest one node may take for one checkpoint operation.
  std::chrono::milliseconds timeout = std::chrono::hours(1);
  /// Consulted at the commit and metadata points when the default metadata
  /// file is used. Null: no faults.
  std::shared_ptr<fault_injector> faults;
  /// Checkpoints are incremental: a blob unchanged since the node's last
  /// checkpoint is not written again, its entry refers to the earlier
  /// payload. Every save of an epoch divisible by `full_every` writes every
  /// payload, so that no checkpoint depends on one older than `full_every`
  /// epochs. 0: never forced; 1: every save is full.
  int64_t full_every = 0;
  /// Retention (Orbax's max_to_keep): after each commit, epochs older than
  /// the last `keep_last` committed ones are uncommitted and their
  /// databases removed — never the last committed epoch, and never a
  /// payload a kept checkpoint still refers to. 0: keep every checkpoint.
  size_t keep_last = 0;
  /// Told of every node's write of a checkpoint and of every commit (see
  /// `job_events` for the thread it is called on). Null: nobody.
  std::shared_ptr<job_events> events;
  /// Copies on other hosts (`--replicas`): every database of a node on a
  /// daemon is copied to this many other daemons, daemon to daemon, and an
  /// epoch commits only once its copies are durable too, so a committed
  /// epoch survives the loss of any `replicas` hosts with their disks. A
  /// database missing or damaged where its node runs is restored from a
  /// copy before an older epoch is tried. Needs at least `replicas` + 1
  /// daemons; nodes in this process get no copies. 0: none.
  size_t replicas = 0;
  /// The lock of the checkpoint directory (`db_prefix`), when the caller
  /// took it before making the manager (as `epochrt run` does, before it
  /// reads the metadata); the manager holds it from then on. Null: the
  /// manager takes it itself (see `basic_checkpoint_manager`).
  std::shared_ptr<dir_lock> lock;
};

/// One node's database of one epoch at one place, as
/// `basic_checkpoint_manager::verify_copies` found it.
struct database_report {
  std::string node;
  /// The daemon it lies on ("host:port"); empty: this process's disk.
  std::string daemon;
  /// The node's own database; false: a copy another daemon holds.
  bool own = false;
  bool exists = false;
  /// Complete, and every digest in it checks out.
  bool intact = false;
  /// Why it is not intact, when it is not; for a database that does not
  /// exist, the error of the attempt to open it.
  std::string problem;
};

/// What `basic_checkpoint_manager::remove_old_checkpoints` kept and
/// removed. (Not persistence's retention_report, which one node's removal
/// fills: two types of one name broke the program that linked both.)
struct gc_report {
  /// The committed epochs kept, ascending; empty when none is committed.
  std::vector<int64_t> kept;
  /// The databases removed (copies included), each by its path where it
  /// lay: on a daemon, under that daemon's root.
  std::vector<std::string> removed;
  /// The bytes their removal freed.
  uint64_t bytes = 0;
};

/// What CheckpointManager and MultiNodeCheckpointManager share: Caffe2's
/// checkpoint operations over the nodes bound by `init`, carried out by a
/// checkpoint manager actor that fans out to the nodes' persistence actors.
///
/// Checkpoints of node N and epoch E live at `db_name(E, N, db_prefix,
/// path_prefix)`. Blocking calls, for host threads; one thread at a time.
/// The manager owns its actor and stops it when destroyed; it borrows the
/// actor system, which must outlive it.
///
/// One job per directory: before its first write the manager locks
/// `db_prefix` (`<db_prefix>/LOCK`, see `dir_lock`; `lock_directory`) and
/// holds the lock until it is destroyed, or its process dies (a lock the
/// caller took already comes in `checkpoint_options::lock`). `set_params`
/// (which `job_runner::train` calls first, so a job is refused before
/// anything runs), `save`, `write_checkpoint_metadata` and
/// `report_checkpoint_stats` of an action other than a load take it, so a
/// second manager on a locked directory, in this process or another,
/// fails them with persistence_errc::locked naming the holder's pid.
/// Reads take no lock: `init` (which writes nothing), `load`,
/// `load_blobs_locally`, `read_blobs`, the checks, `cp_accessible` and
/// `get_resume_from_epoch_id` work beside a job that holds it. (Databases
/// a `path_prefix` places outside `db_prefix` are not covered.)
class basic_checkpoint_manager {
public:
  virtual ~basic_checkpoint_manager();

  basic_checkpoint_manager(const basic_checkpoint_manager&) = delete;
  basic_checkpoint_manager& operator=(const basic_checkpoint_manager&) = delete;

  const std::string& db_prefix() const noexcept {
    return db_prefix_;
  }

  /// Takes the lock of the checkpoint directory, creating the directory
  /// when missing, and keeps it until the manager is destroyed; nothing
  /// when it holds it already. The writing calls take it themselves (and,
  /// when the directory cannot be made or locked, log that and go on: the
  /// write fails on it too); a host calls it to be refused before anything
  /// runs. Errors: persistence_errc::locked (another manager, `epochrt ckpt
  /// gc` or a daemon holds it; the text names its pid), io_error.
  caf::error lock_directory();

  /// Binds the manager to `nodes` of `session` and lists the blobs their
  /// checkpoints hold: the blobs of their workspaces now, or those of the
  /// checkpoints of `retrieve_from_epoch`. May be called again (by another
  /// job runner, with another session) with the same nodes. Nodes the
  /// manager cannot checkpoint are refused (see `check_nodes`). Takes no
  /// lock: it writes nothing, and a reader binds with it too. Errors:
  /// actors_errc::unknown_node (a node the session lacks), node_lost (a
  /// node does not answer within the manager's timeout),
  /// checkpoint_failed / persistence_errc (the checkpoints of
  /// `retrieve_from_epoch` cannot be read).
  caf::error init(session& sess, const std::vector<std::string>& nodes,
                  std::optional<int64_t> retrieve_from_epoch = {},
                  std::string path_prefix = {});

  /// Blobs listed by the last `init` for `node`.
  std::vector<std::string> blob_list(const std::string& node) const;

  /// Loads every blob of the checkpoints of `epoch` into the nodes, every
  /// digest checked; a node's workspace is written only when all its blobs
  /// check out. Errors: actors_errc::not_initialized (no `init`), node_lost,
  /// persistence_errc::not_found / incomplete / corrupt (naming the node and
  /// database).
  caf::error load(int64_t epoch, std::string path_prefix = {});

  /// Loads only `blob_names` from every node's checkpoint of `epoch` into
  /// that node, skipping names a checkpoint lacks; binds the manager to
  /// `nodes` first if `init` was not called. persistence_errc::not_found,
  /// with nothing loaded, when some node's checkpoint of `epoch` does not
  /// exist; persistence_errc::incomplete when one is incomplete (the log
  /// names the node).
  caf::error
  load_blobs_locally(session& sess, const std::vector<std::string>& nodes,
                     const std::vector<std::string>& blob_names, int64_t epoch);

  /// Reads `blob_names` from every bound node's checkpoint of `epoch` —
  /// wherever the node runs — and stores them in `into`, a workspace of
  /// this process (the master's). Names no checkpoint holds are skipped; a
  /// name two nodes' checkpoints both hold is actors_errc::invalid_argument
  /// and nothing is stored. Returns how many blobs were stored. Needs `init`.
  caf::expected<size_t> read_blobs(const std::vector<std::string>& blob_names,
                                   int64_t epoch, workspace& into);

  /// Whether every node's checkpoint of `epoch` exists and is complete:
  /// checkpoint_state::usable, missing or incomplete (never corrupt).
  caf::expected<checkpoint_state> check_db_exists(int64_t epoch);

  /// Whether every node's checkpoint of `epoch` is complete and every
  /// digest in it checks out: checkpoint_state::usable, missing,
  /// incomplete or corrupt.
  caf::expected<checkpoint_state> check_db_intact(int64_t epoch);

  /// Checks every bound node's checkpoint of `epoch` where it runs and,
  /// for nodes on daemons, on every other daemon of the bound nodes, where
  /// a copy (`checkpoint_options::replicas`) may lie: one report per node
  /// and place, the node's own first, then the other daemons in node
  /// order. Reads every payload of every database found; restores and
  /// repairs nothing, takes no lock. A daemon that lacks a copy reports it
  /// as not existing: which daemons ought to hold one is the caller's
  /// judgement. Errors: actors_errc::not_initialized, node_lost (a daemon
  /// that does not answer within the timeout), invalid_name.
  caf::expected<std::vector<database_report>> verify_copies(int64_t epoch);

  /// Retention by hand, as `checkpoint_options::keep_last` does after each
  /// commit: keeps the last `keep_last` committed epochs, uncommits the
  /// older ones, then removes every bound node's databases of them, except
  /// those whose payloads a kept checkpoint refers to, and their copies on
  /// the node's holders (`checkpoint_options::replicas`) and on the other
  /// daemons of the job (copies left by an earlier placement; a daemon no
  /// longer in the job keeps its own). Every kept database is read first: if
  /// one cannot be, nothing changes. Takes the directory's lock. Errors:
  /// persistence_errc::locked, actors_errc::not_initialized,
  /// invalid_argument (`keep_last` 0), node_lost, checkpoint_failed naming
  /// the step and node that failed (epochs uncommitted before a removal
  /// failed stay uncommitted; a later call removes what is left).
  caf::expected<gc_report> remove_old_checkpoints(size_t keep_last);

  /// Saves every node's checkpoint of `epoch`. Does not commit the epoch:
  /// `write_checkpoint_metadata` does (`job_runner::save_checkpoints` does
  /// both). Errors: persistence_errc::locked (see `lock_directory`),
  /// actors_errc::not_initialized, node_lost,
  /// persistence_errc::io_error / invalid_name (naming the node); a failed
  /// save leaves no committed epoch behind.
  caf::error save(int64_t epoch);

  /// Stats of the last save or load, one entry per node.
  const std::vector<checkpoint_stats>& last_stats() const noexcept {
    return last_stats_;
  }

  /// Hands the stats of the last save or load — the manager's own or the
  /// job runner's — to the metadata handler under `action`, and returns
  /// them, one entry per node: durations (with the snapshot and sync parts
  /// of a save), bytes, blobs written and reused. An error when the handler
  /// cannot keep them, or persistence_errc::locked (see `lock_directory`;
  /// not for an action naming a load, which writes nothing). (Unlike
  /// Caffe2's, it returns the figures: test the result with `if (!stats)`,
  /// not `if (auto err = ...)`.)
  caf::expected<std::vector<checkpoint_stats>>
  report_checkpoint_stats(const std::string& action);

  /// Records `epoch` as committed. Errors: persistence_errc::locked (see
  /// `lock_directory`), those of the metadata handler.
  caf::error write_checkpoint_metadata(int64_t epoch);

  /// The epoch to resume from: `user_epoch` when given (persistence_errc::
  /// not_committed when it is not committed), else the last committed
  /// epoch, else none (nullopt). An error when the metadata cannot be read:
  /// never "none", which would restart a job over its checkpoints.
  caf::expected<std::optional<int64_t>>
  get_resume_from_epoch_id(std::optional<int64_t> user_epoch = {});

  /// Sets the nodes and path prefix, and passes them to the metadata handler.
  /// The job runner calls it with the job's nodes to checkpoint, before
  /// anything runs: nodes the manager cannot checkpoint (see `check_nodes`)
  /// and a directory another job holds (persistence_errc::locked, see
  /// `lock_directory`) are refused there, so such a job fails at once.
  ///
  /// With a `job_definition` (runtime/job_definition.hpp; the job runner
  /// gives its job's), every commit records it, and checkpoints that
  /// another definition committed are refused with actors_errc::job_changed
  /// naming the first difference, unless `allow_job_change`.
  caf::error set_params(const std::vector<std::string>& nodes,
                        std::string path_prefix = {},
                        std::string job_definition = {},
                        bool allow_job_change = false);

  /// Caffe2's question, answered yes or no. Without an epoch: can the
  /// checkpoint directory be written? With one: is that epoch committed?
  /// False also when there is no answer (metadata that cannot be read or
  /// trusted, a manager that does not answer); `check_writable` and
  /// `check_committed` tell the two apart.
  bool cp_accessible(std::optional<int64_t> epoch = {});

  /// None when checkpoints can be written: the checkpoint directory exists
  /// or can be created, can be written, and holds metadata that can be
  /// trusted. persistence_errc::not_writable when it cannot be written (the
  /// log says why); corrupt when the metadata cannot be trusted;
  /// caf::sec::request_timeout when the manager does not answer.
  caf::error check_writable();

  /// None when `epoch` is committed; persistence_errc::not_committed when it
  /// is not; corrupt, or caf::sec::request_timeout, when there is no answer.
  caf::error check_committed(int64_t epoch);

  /// The database path of `node`'s checkpoint of `epoch`.
  std::string get_ckpt_db_name(const std::string& node, int64_t epoch) const;

  /// Longest one node may take for one checkpoint operation.
  std::chrono::milliseconds timeout() const noexcept {
    return options_.timeout;
  }

  /// The nodes given to the last `set_params` or `init`.
  const std::vector<std::string>& nodes() const noexcept {
    return nodes_;
  }

protected:
  basic_checkpoint_manager(caf::actor_system& sys, std::string db_prefix,
                           checkpoint_options options);

  caf::expected<checkpoint_state> check(int64_t epoch, bool verify_data);

  /// None when `check_db_exists` finds the checkpoints of `epoch` usable,
  /// else the error `load_blobs_locally` returns for what it found.
  caf::error check_usable(int64_t epoch);

  /// An error when this manager cannot checkpoint `nodes`; `init`,
  /// `set_params` and `load_blobs_locally` return it before doing anything.
  /// Default: any nodes.
  virtual caf::error check_nodes(const std::vector<std::string>& nodes) const;

private:
  // `lock_directory` for the writing calls: only persistence_errc::locked
  // refuses; a directory that cannot be made or locked is logged and left
  // to the write, which fails on it too.
  caf::error lock_for_writing();

  // Hands the manager's actor to the job runner actor, which talks to it
  // directly.
  friend class job_runner;

  caf::actor_system& sys_;
  std::string db_prefix_;
  std::string path_prefix_;
  checkpoint_options options_;
  // Spawned as a checkpoint_manager_actor; untyped here so that the
  // protocol stays out of the API.
  caf::actor actor_;
  std::vector<std::string> nodes_;
  std::map<std::string, std::vector<std::string>> blob_lists_;
  std::vector<checkpoint_stats> last_stats_;
  // Held from the first write (`lock_directory`), or from construction
  // (`checkpoint_options::lock`), until destruction.
  std::shared_ptr<dir_lock> lock_;
  bool lock_warned_ = false;
};

} // namespace epochrt
