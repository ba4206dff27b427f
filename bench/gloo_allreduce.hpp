#pragma once

// The Gloo baseline of collectives_bench: a worker that all-reduces f32
// buffers with Gloo's TCP transport on 127.0.0.1. collectives_bench starts
// `size` copies of itself in this mode; they meet through a Gloo FileStore
// in a scratch directory.

#include <string>
#include <vector>

namespace epochrt::bench {

/// What one worker does: for each size (KiB), `reps` timings of `iters`
/// all-reduces (sum) of that many bytes of f32, after one untimed call.
struct allreduce_plan {
  std::vector<int> sizes_kib;
  std::vector<int> iters;
  int reps = 3;
};

/// True when collectives_bench was built with Gloo.
bool gloo_available() noexcept;

/// The worker: rank `rank` of `size`. Rank 0 prints, per size and rep,
/// "KIB SECONDS" (seconds per all-reduce) and once per size "check KIB
/// VALUE" (the first element of the result: size * (size + 1) / 2 when
/// correct). Returns the exit code.
int run_gloo_worker(int rank, int size, const std::string& store_dir,
                    const allreduce_plan& plan);

} // namespace epochrt::bench
