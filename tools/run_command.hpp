#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <epochrt/logging.hpp>

#include "tools/network_flags.hpp"

namespace epochrt::cli {

/// The arguments of `epochrt run`.
struct run_options {
  /// The job file (JSON, see docs/job-file.md).
  std::string job_file;
  /// Where checkpoints go; none: the job runs without checkpoints.
  std::optional<std::string> checkpoint_dir;
  /// The committed epoch to resume from; none: the last committed epoch
  /// whose checkpoints load (or from scratch). Needs `checkpoint_dir`.
  std::optional<int64_t> resume_from;
  /// Start over in `checkpoint_dir`: its metadata (missing, corrupt or
  /// not) is replaced by an empty one, so nothing counts as committed and
  /// the databases there get overwritten. Without it a run refuses a
  /// directory whose metadata cannot be trusted.
  bool from_scratch = false;
  /// Resume checkpoints that another job definition committed (a job file
  /// edited since); without it such a run is refused.
  bool allow_job_change = false;
  /// Every epoch divisible by this is saved in full; the others only write
  /// the blobs that changed (checkpoint_options::full_every). 0: never.
  int64_t full_every = 0;
  /// Keep the last K committed epochs, remove older checkpoints
  /// (checkpoint_options::keep_last). 0: keep all.
  size_t keep_last = 0;
  /// Copies of every node's checkpoints on this many other daemons
  /// (checkpoint_options::replicas). 0: none.
  size_t replicas = 0;
  /// Where the checkpoints of the last epoch are copied after the loop
  /// (directory_upload_builder). Needs `checkpoint_dir`.
  std::optional<std::string> upload_dir;
  /// "NODE:BLOB" blobs printed after the job, in this order.
  std::vector<std::string> fetches;
  /// "NAME=HOST:PORT": node NAME runs on the daemon at HOST:PORT; the
  /// others in this process.
  std::vector<std::string> remote_nodes;
  /// The secret shared with the daemons.
  std::optional<std::string> secret_file;
  /// Lost nodes the job survives (reconnecting, reloading the last
  /// committed epoch).
  int max_failures = 0;
  /// A daemon silent this long is lost (heartbeats every fifth of it).
  int64_t connection_timeout_ms = 5000;
  /// How long a lost node's address is retried before giving up.
  int64_t reconnect_timeout_ms = 30000;
  /// "HOST:PORT": daemons a node moves to when its own does not come back
  /// within reconnect_timeout_ms (distributed_session_options::spares).
  std::vector<std::string> spares;
  /// Mutual TLS with the daemons.
  tls_flags tls;
  /// A fault plan (docs/fault-plans.md) for this process's nodes, job
  /// runner, checkpoints and its side of the remote path.
  std::optional<std::string> fault_plan;
  /// Appends a line for every injection point this process reaches to
  /// FILE (created or appended): what `epochrt sweep` records.
  std::optional<std::string> fault_trace;
  /// Threads that run the tasks of the job's in-process nodes; 0: the
  /// default (session_options::worker_threads).
  size_t worker_threads = 0;
  /// Appends what every epoch cost to FILE, one JSON object per line
  /// (stats_json_writer.hpp).
  std::optional<std::string> stats_json;
  /// Epoch task outputs that are metrics in the stats lines (--metric).
  std::vector<std::string> metrics;
  /// Writes the job's timeline to FILE in the Chrome trace-event format
  /// (trace_writer.hpp).
  std::optional<std::string> trace;
  /// Shows one live progress line on stderr (a terminal) instead of the
  /// info log lines.
  bool progress = false;
  /// Log lines below this level are dropped (-q, -v); with `progress`, at
  /// least warn: the live line replaces the info lines.
  log_level log = log_level::info;
};

/// Runs `epochrt run`: checks every argument and loads the job before
/// anything runs or is written, runs the job — on a local session, or on a
/// distributed session when nodes are remote — then prints
/// one "NODE:BLOB=v1,v2,..." line per fetch and a last "epochs=N" line to
/// stdout. Returns the process exit code (cli_output.hpp): exit_bad_input
/// for bad arguments, a bad job file or an epoch that is not committed;
/// exit_failure when the job fails or a fetched blob does not exist.
int run_job(const run_options& opts);

} // namespace epochrt::cli
