#include "bench/bench_util.hpp"

#include "bench/command_line.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

namespace epochrt::bench {

namespace {

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--mib N] [--runs R] [--dir D] [--epochs E]\n"
               "          [--only memcpy,save,load,leveldb,file,stall,small,\n"
               "          incremental]\n"
               "          [--small-count N] [--small-bytes B] [--verbose] "
               "[--keep] [--probe]\n"
               "\n"
               "  --mib N     workspace payload in MiB (default 512)\n"
               "  --runs R    repetitions; medians are reported (default 3)\n"
               "  --dir D     make the scratch directory inside D (default: "
               "the system's\n"
               "              temporary directory); it is removed at the "
               "end\n"
               "  --epochs E  epochs of the stall job, E >= 2 (default 4)\n"
               "  --only L    run only the listed phases (load implies "
               "save)\n"
               "  --small-count N  blobs of the small-blobs checkpoint "
               "(default 10000)\n"
               "  --small-bytes B  bytes of each, a multiple of 4 (default "
               "1024)\n"
               "  --verbose   epochrt logs at info level (default: warn)\n"
               "  --keep      leave the scratch directory in place\n"
               "  --probe     also drive checkpoint_writer/reader directly "
               "and time\n"
               "              their parts (encode, digest, each open)\n"
               "\n"
               "Progress goes to stderr; the results, last on stdout, as "
               "name=value unit.\n",
               argv0);
}

bool parse_phases(std::string_view list, options& out) {
  out.memcpy = out.save = out.load = out.leveldb = out.file = out.stall
    = out.small = out.incremental = false;
  return for_each_item(list, [&](std::string_view item) {
    if (item == "memcpy")
      out.memcpy = true;
    else if (item == "save")
      out.save = true;
    else if (item == "load")
      out.save = out.load = true;
    else if (item == "leveldb")
      out.leveldb = true;
    else if (item == "file")
      out.file = true;
    else if (item == "stall")
      out.stall = true;
    else if (item == "small")
      out.small = true;
    else if (item == "incremental")
      out.incremental = true;
    else
      return false;
    return true;
  });
}

// splitmix64: a tiny, fast generator with a good spread; enough for data
// that must merely look random to a compressor.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void fill_random(float* out, size_t count, uint64_t seed) {
  uint64_t state = seed * 0x2545f4914f6cdd1dULL + 1;
  constexpr float scale = 1.0f / (1 << 20); // 24-bit integers -> [-8, 8)
  size_t i = 0;
  for (; i + 1 < count; i += 2) {
    auto r = splitmix64(state);
    out[i] = static_cast<float>(static_cast<int32_t>(r & 0xffffff) - 0x800000)
      * scale;
    out[i + 1] = static_cast<float>(static_cast<int32_t>((r >> 32) & 0xffffff)
                                    - 0x800000)
      * scale;
  }
  if (i < count)
    out[i] = static_cast<float>(
               static_cast<int32_t>(splitmix64(state) & 0xffffff) - 0x800000)
      * scale;
}

} // namespace

bool parse_options(int argc, char** argv, options& out, int& exit_code) {
  exit_code = 2;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view inline_value;
    bool has_inline = false;
    if (auto eq = arg.find('=');
        arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline)
        return std::string{inline_value};
      if (i + 1 < argc)
        return argv[++i];
      return {};
    };
    long n = 0;
    if (arg == "-h" || arg == "--help") {
      usage(argv[0]);
      exit_code = 0;
      return false;
    } else if (arg == "--mib") {
      if (!parse_count(value(), 1, 1 << 20, n)) {
        std::fprintf(stderr, "--mib needs a whole number of MiB >= 1\n");
        return false;
      }
      out.mib = static_cast<size_t>(n);
    } else if (arg == "--runs") {
      if (!parse_count(value(), 1, 1000, n)) {
        std::fprintf(stderr, "--runs needs a count from 1 to 1000\n");
        return false;
      }
      out.runs = static_cast<int>(n);
    } else if (arg == "--epochs") {
      if (!parse_count(value(), 2, 1000, n)) {
        std::fprintf(stderr, "--epochs needs a count from 2 to 1000\n");
        return false;
      }
      out.epochs = static_cast<int>(n);
    } else if (arg == "--small-count") {
      if (!parse_count(value(), 1, 10'000'000, n)) {
        std::fprintf(stderr,
                     "--small-count needs a count from 1 to 10000000\n");
        return false;
      }
      out.small_count = static_cast<size_t>(n);
    } else if (arg == "--small-bytes") {
      if (!parse_count(value(), 4, 1 << 30, n) || n % 4 != 0) {
        std::fprintf(stderr,
                     "--small-bytes needs a multiple of 4 from 4 to "
                     "1073741824\n");
        return false;
      }
      out.small_bytes = static_cast<size_t>(n);
    } else if (arg == "--dir") {
      out.dir = value();
      if (out.dir.empty()) {
        std::fprintf(stderr, "--dir needs a directory\n");
        return false;
      }
    } else if (arg == "--only") {
      if (!parse_phases(value(), out)) {
        std::fprintf(stderr,
                     "--only takes a comma-separated list of "
                     "memcpy, save, load, leveldb, file, stall, small\n");
        return false;
      }
    } else if (arg == "--verbose" && !has_inline) {
      out.verbose = true;
    } else if (arg == "--probe" && !has_inline) {
      out.probe = true;
    } else if (arg == "--keep" && !has_inline) {
      out.keep = true;
    } else {
      std::fprintf(stderr, "unknown option: %s\n", argv[i]);
      usage(argv[0]);
      return false;
    }
  }
  exit_code = 0;
  return true;
}

std::vector<blob> make_blobs(size_t total_mib) {
  static constexpr size_t cycle[] = {4u << 10, 64u << 10, 256u << 10, 1u << 20,
                                     4u << 20, 16u << 20, 64u << 20};
  std::vector<blob> result;
  uint64_t remaining = static_cast<uint64_t>(total_mib) << 20;
  for (size_t i = 0; remaining > 0; ++i) {
    uint64_t bytes = std::min<uint64_t>(cycle[i % std::size(cycle)], remaining);
    remaining -= bytes;
    auto floats = static_cast<int64_t>(bytes / sizeof(float));
    tensor value;
    value.type = dtype::f32;
    value.shape = {floats / 64, 64}; // every size is a multiple of 256 B
    value.data.resize(bytes);
    fill_random(value.values<float>(), static_cast<size_t>(floats), i + 1);
    char name[32];
    std::snprintf(name, sizeof(name), "blob_%04zu", i);
    result.emplace_back(name, std::move(value));
  }
  return result;
}

std::vector<blob> make_small_blobs(size_t count, size_t bytes) {
  auto floats = static_cast<int64_t>(bytes / sizeof(float));
  std::vector<blob> result;
  result.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    tensor value;
    value.type = dtype::f32;
    value.shape = {floats};
    value.data.resize(static_cast<size_t>(floats) * sizeof(float));
    // Seeds apart from make_blobs' (1, 2, ...), one per blob.
    fill_random(value.values<float>(), static_cast<size_t>(floats),
                (uint64_t{1} << 32) + i);
    char name[32];
    std::snprintf(name, sizeof(name), "small_%06zu", i);
    result.emplace_back(name, std::move(value));
  }
  return result;
}

uint64_t payload_bytes(const std::vector<blob>& blobs) {
  uint64_t total = 0;
  for (auto& [name, value] : blobs)
    total += value.byte_size();
  return total;
}

std::vector<blob_bytes> bytes_of(const std::vector<blob>& blobs) {
  std::vector<blob_bytes> result;
  result.reserve(blobs.size());
  for (auto& [name, value] : blobs)
    result.push_back(blob_bytes{name, value.data.data(), value.data.size()});
  return result;
}

double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec)
    + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> xs) {
  if (xs.empty())
    return std::numeric_limits<double>::quiet_NaN();
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2.0;
}

std::string make_scratch_dir(const std::string& parent) {
  namespace fs = std::filesystem;
  fs::path base = parent.empty() ? fs::temp_directory_path() : fs::path{parent};
  fs::create_directories(base);
  auto pattern = (base / "epochrt-bench-XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(),
                            "mkdtemp " + pattern);
  return buf.data();
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

void progress(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

namespace {

void drop_file_cache(const std::string& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  // Only clean pages can be dropped.
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

} // namespace

void drop_page_cache(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    drop_file_cache(path);
    return;
  }
  for (auto& entry : fs::recursive_directory_iterator(path, ec))
    if (entry.is_regular_file(ec))
      drop_file_cache(entry.path().string());
}

} // namespace epochrt::bench
