#pragma once

// The measured epochrt paths: save and load through a checkpoint manager,
// and the epoch loop of a job runner with and without checkpoints. Kept
// apart from main so that CAF's headers are compiled in one place.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "bench/bench_util.hpp"

namespace epochrt {
class op_registry;
}

namespace epochrt::bench {

/// The node the benchmark saves and loads.
inline const std::string bench_node = "bench_0";

using registry_ptr = std::shared_ptr<const op_registry>;

/// The builtin ops, as a host program would register them.
registry_ptr make_registry();

struct save_result {
  timing time;             // save(epoch) + write_checkpoint_metadata(epoch)
  double save_seconds = 0; // save(epoch) alone
  double init_seconds = 0; // init(session), untimed in `time`
  // A copy-on-write snapshot of the node's workspace (what the epoch loop
  // would wait for if checkpoints were written in the background).
  double snapshot_seconds = 0;
  uint64_t reported_bytes = 0; // what the manager's stats say it wrote
};

/// Seeds node `bench_node` of a fresh local session with copies of `blobs`,
/// makes a checkpoint_manager over `db_prefix`, inits it, and times the save
/// and commit of `epoch`. Throws std::runtime_error on any error.
save_result checkpoint_save(caf::actor_system& sys, const registry_ptr& ops,
                            const std::vector<blob>& blobs,
                            const std::string& db_prefix, int64_t epoch);

struct load_result {
  timing time;             // load(epoch)
  double init_seconds = 0; // init(session, {}, epoch), untimed in `time`
  uint64_t bytes = 0;      // payload found in the workspace afterwards
};

/// Loads the checkpoint of `epoch` under `db_prefix` into the empty node of
/// a fresh local session through a fresh checkpoint_manager, timing
/// load(epoch), then checks (untimed) that the workspace holds exactly
/// `blobs`. Throws std::runtime_error on any error or difference.
load_result checkpoint_load(caf::actor_system& sys, const registry_ptr& ops,
                            const std::vector<blob>& blobs,
                            const std::string& db_prefix, int64_t epoch);

struct incremental_result {
  uint64_t full_bytes = 0;        // payload the first (full) save wrote
  uint64_t incremental_bytes = 0; // payload the second save wrote
  uint64_t changed_bytes = 0;     // payload of the blobs that changed
  double full_seconds = 0;        // save + commit of each
  double incremental_seconds = 0;
};

/// Seeds node `bench_node` of a fresh local session with copies of `blobs`
/// and saves and commits epoch 1 through a checkpoint_manager over
/// `db_prefix`; then writes every `change_every`-th blob (new contents) and
/// saves and commits epoch 2. The bytes come from the nodes' stats
/// (checkpoint_stats::written_bytes). Throws std::runtime_error on any
/// error.
incremental_result
incremental_saves(caf::actor_system& sys, const registry_ptr& ops,
                  const std::vector<blob>& blobs, const std::string& db_prefix,
                  size_t change_every);

/// Runs a small job of `epochs` epochs (init: a counter; epoch: `work_ms`
/// of work, one trivial op and a countdown) through job_runner on a fresh local
/// session whose node `bench_node` is seeded with `blobs`, with a checkpoint
/// manager over `db_prefix` when it is not empty and without one otherwise.
/// Returns the intervals between the ends of consecutive epochs, in
/// milliseconds, as seen by the job runner's epoch observer. Throws on any
/// error.
std::vector<double>
epoch_intervals_ms(caf::actor_system& sys, const registry_ptr& ops,
                   const std::vector<blob>& blobs, const std::string& db_prefix,
                   int epochs, int work_ms);

} // namespace epochrt::bench
