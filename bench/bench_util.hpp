#pragma once

// Helpers of checkpoint_bench that know nothing of actors or LevelDB: the
// command line, the synthetic blobs, clocks, medians, scratch directories.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <epochrt/logging.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt::bench {

/// epochrt's logging in a benchmark: info with --verbose, warn otherwise
/// (info lines between the figures are noise).
inline log_options bench_logging(bool verbose) {
  log_options result;
  result.level = verbose ? log_level::info : log_level::warn;
  return result;
}

constexpr double mib = 1024.0 * 1024.0;

/// What the command line asks for.
struct options {
  /// Payload of the workspace, in MiB.
  size_t mib = 512;
  /// Repetitions of every measurement; the median is reported.
  int runs = 3;
  /// Where the scratch directory goes (a fresh one is made inside it and
  /// removed at the end). Empty: the system's temporary directory.
  std::string dir;
  /// Epochs of the job that measures the stall (intervals = epochs - 1).
  int epochs = 4;
  /// Phases to run; all by default.
  bool memcpy = true;
  bool save = true;
  bool load = true;
  bool leveldb = true;
  bool file = true;
  bool stall = true;
  bool small = true;
  bool incremental = true;
  /// The many-small-blobs checkpoint: how many blobs, of how many bytes
  /// each (a multiple of 4: they are f32).
  size_t small_count = 10000;
  size_t small_bytes = 1024;
  /// Keep epochrt's own log at info level instead of warn.
  bool verbose = false;
  /// Also run the persistence probe (persistence_probe.hpp) in every run.
  bool probe = false;
  /// Leave the scratch directory (and each run's databases) in place.
  bool keep = false;
};

/// Parses argv; on a bad or `--help` command line prints usage to stderr
/// and returns false with `exit_code` set.
bool parse_options(int argc, char** argv, options& out, int& exit_code);

/// A named blob of the benchmark's workspace.
using blob = std::pair<std::string, tensor>;

/// f32 blobs cycling through 4 KiB, 64 KiB, 256 KiB, 1 MiB, 4 MiB, 16 MiB
/// and 64 MiB (the last one cut so the total is exactly `total_mib` MiB),
/// shaped {n/64, 64}, named "blob_0000", ... Their contents are
/// deterministic pseudo-random floats in [-8, 8): no zeros, no runs,
/// nothing a compressor or a sparse store could exploit.
std::vector<blob> make_blobs(size_t total_mib);

/// `count` f32 blobs of `bytes` bytes each (a multiple of 4), shaped
/// {bytes/4}, named "small_000000", ..., with contents as random as
/// make_blobs' and distinct from blob to blob.
std::vector<blob> make_small_blobs(size_t count, size_t bytes);

/// Sum of the blobs' payload bytes.
uint64_t payload_bytes(const std::vector<blob>& blobs);

/// A view of a blob's bytes, for code that should not see tensors.
struct blob_bytes {
  std::string_view name;
  const char* data;
  size_t size;
};
std::vector<blob_bytes> bytes_of(const std::vector<blob>& blobs);

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// CPU time of the whole process (all threads, user + system) so far. On a
/// machine shared with other work, CPU seconds per MiB are steadier than
/// wall-clock MiB/s.
double process_cpu_seconds();

/// Wall-clock and process CPU time of one measured region.
struct timing {
  double seconds = 0;
  double cpu_seconds = 0;
};

/// Starts at construction; `elapsed()` gives the timing since then.
class stopwatch {
public:
  stopwatch() : wall_(clock_type::now()), cpu_(process_cpu_seconds()) {}
  timing elapsed() const {
    return timing{seconds_since(wall_), process_cpu_seconds() - cpu_};
  }

private:
  clock_type::time_point wall_;
  double cpu_;
};

/// The median (the mean of the two middle values for an even count); NaN
/// for none.
double median(std::vector<double> xs);

/// Creates a fresh directory "epochrt-bench-XXXXXX" inside `parent` (the
/// system's temporary directory when empty) and returns its path.
std::string make_scratch_dir(const std::string& parent);

/// Removes `path` and everything below it; quiet about failures.
void remove_tree(const std::string& path);

/// Drops the page cache of `path`, a file or every regular file below a
/// directory (fdatasync, then posix_fadvise DONTNEED): the next read comes
/// from the disk, as after a restart. Best effort; nothing is thrown.
void drop_page_cache(const std::string& path);

/// printf-style to stderr, flushed: the benchmark's progress lines.
void progress(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace epochrt::bench
