#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace epochrt::cli {

/// The arguments of `epochrt sweep`.
struct sweep_options {
  /// The job file.
  std::string job_file;
  /// "NODE:BLOB" blobs that make up the result, as for `run --fetch`.
  std::vector<std::string> fetches;
  /// "NAME=HOST:PORT": node NAME runs on a daemon the user started. Only
  /// the master's faults (its points, its side of the remote path) reach
  /// such a node; the sweep cannot restart or script that daemon.
  std::vector<std::string> remote_nodes;
  /// NAME: the sweep starts a node daemon on 127.0.0.1 for node NAME in
  /// every case, scripts its faults (crash, disk errors, corruption) and
  /// restarts it on the same port whenever it dies.
  std::vector<std::string> daemon_nodes;
  /// The secret shared with the daemons.
  std::optional<std::string> secret_file;
  /// Passed to every run as --max-failures.
  int max_failures = 0;
  /// Passed to every run as --keep-last and --full-every.
  size_t keep_last = 0;
  int64_t full_every = 0;
  /// Passed to every run and daemon: how long a silent peer is given.
  int64_t connection_timeout_ms = 1000;
  /// Cases at most; more are sampled with `seed`, every fault kind kept.
  int64_t max_runs = 200;
  uint64_t seed = 1;
  /// Longest one run of the job may take before it counts as hung.
  int64_t timeout_ms = 60000;
  /// Where cases run; default: a new directory under $TMPDIR, removed at
  /// the end unless a case failed.
  std::optional<std::string> work_dir;
  /// The fault kinds to sweep (crash, io_error, corrupt_write, short_write,
  /// partition); empty: all that apply.
  std::vector<std::string> faults;
};

/// Runs `epochrt sweep` (docs/fault-plans.md): a fault-free reference run
/// of the job and a resumed rerun of it record every injection point
/// reached; then, for each (point, hit) — or a seeded sample of at most
/// `max_runs` —, the job runs with a fault there and is rerun, fault-free,
/// until it ends, and the invariants are checked. Prints a table (case,
/// point, where, fault, outcome) and a last line "sweep: N runs, N
/// recovered, N clear errors, N wrong, N hung"; writes a plan file that
/// reproduces each failing case. Returns exit_ok when no case was wrong or
/// hung, exit_failure otherwise or when the reference run fails,
/// exit_bad_input for bad arguments.
int run_sweep(const sweep_options& opts);

} // namespace epochrt::cli
