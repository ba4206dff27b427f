#include "bench/persistence_probe.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <epochrt/messages/chunk_codec.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/digest.hpp>
#include <epochrt/persistence/writer_options.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt::bench {

namespace {

namespace fs = std::filesystem;

void check(const caf::error& err, const std::string& what) {
  if (err)
    throw std::runtime_error(what + ": " + error_text(err));
}

struct dir_usage {
  double log_mib = 0;
  double table_mib = 0;
};

dir_usage usage_of(const std::string& dir) {
  dir_usage result;
  for (auto& entry : fs::directory_iterator{dir}) {
    auto ext = entry.path().extension();
    if (ext == ".log")
      result.log_mib += entry.file_size() / mib;
    else if (ext == ".ldb" || ext == ".sst")
      result.table_mib += entry.file_size() / mib;
  }
  return result;
}

timing write_checkpoint(const std::vector<blob>& blobs, const std::string& path,
                        writer_options opts) {
  stopwatch watch;
  auto writer = checkpoint_writer::create(path, "bench_0", 1, opts);
  if (!writer)
    check(writer.error(), "checkpoint_writer::create");
  for (auto& [name, value] : blobs)
    check((*writer)->put(name, value), "checkpoint_writer::put");
  auto done = (*writer)->finish();
  if (!done)
    check(done.error(), "checkpoint_writer::finish");
  return watch.elapsed();
}

timing open_once(const std::string& path) {
  stopwatch watch;
  auto reader = checkpoint_reader::open(path);
  if (!reader)
    check(reader.error(), "checkpoint_reader::open");
  return watch.elapsed();
}

// Open + read every blob into a tensor, as the persistence actor's load.
timing read_all(const std::vector<blob>& blobs, const std::string& path) {
  stopwatch watch;
  auto reader = checkpoint_reader::open(path);
  if (!reader)
    check(reader.error(), "checkpoint_reader::open");
  for (auto& [name, value] : blobs) {
    auto loaded = (*reader)->read(name);
    if (!loaded)
      check(loaded.error(), "checkpoint_reader::read");
    if (loaded->data.size() != value.data.size())
      throw std::runtime_error("blob " + name + " read back another size");
  }
  return watch.elapsed();
}

void line(const std::string& name, double value, const char* unit) {
  std::printf("probe_%s=%.1f %s\n", name.c_str(), value, unit);
}

void variant(const std::vector<blob>& blobs, const std::string& path,
             const std::string& label, writer_options opts,
             double payload_mib) {
  auto written = write_checkpoint(blobs, path, opts);
  auto after_write = usage_of(path);
  auto open1 = open_once(path);
  auto after_open = usage_of(path);
  auto open2 = open_once(path);
  auto read = read_all(blobs, path);
  progress("  probe %-10s write %7.1f MiB/s (%.3f s, %.3f cpu-s) -> log "
           "%.1f MiB, tables %.1f MiB; open #1 %.1f ms (%.3f cpu-s) -> log "
           "%.1f MiB, tables %.1f MiB; open #2 %.1f ms; open + read all "
           "%.1f MiB/s (%.3f s, %.3f cpu-s)",
           label.c_str(), payload_mib / written.seconds, written.seconds,
           written.cpu_seconds, after_write.log_mib, after_write.table_mib,
           open1.seconds * 1e3, open1.cpu_seconds, after_open.log_mib,
           after_open.table_mib, open2.seconds * 1e3,
           payload_mib / read.seconds, read.seconds, read.cpu_seconds);
  line(label + "_write_mib_s", payload_mib / written.seconds, "MiB/s");
  line(label + "_write_cpu_mib_s", payload_mib / written.cpu_seconds,
       "MiB/cpu-s");
  line(label + "_log_mib_after_write", after_write.log_mib, "MiB");
  line(label + "_table_mib_after_write", after_write.table_mib, "MiB");
  line(label + "_first_open_ms", open1.seconds * 1e3, "ms");
  line(label + "_table_mib_after_first_open", after_open.table_mib, "MiB");
  line(label + "_second_open_ms", open2.seconds * 1e3, "ms");
  line(label + "_read_all_mib_s", payload_mib / read.seconds, "MiB/s");
  line(label + "_read_all_cpu_mib_s", payload_mib / read.cpu_seconds,
       "MiB/cpu-s");
}

} // namespace

void run_probe(const std::vector<blob>& blobs, const std::string& dir) {
  auto payload_mib = static_cast<double>(payload_bytes(blobs)) / mib;
  writer_options defaults;
  // Encoding alone: what building the chunk records costs (a fresh string
  // per chunk, as the writer does).
  {
    stopwatch watch;
    size_t sink = 0;
    for (auto& [name, value] : blobs) {
      auto total = value.data.size();
      for (size_t off = 0, i = 0; off < total || i == 0;
           off += defaults.chunk_bytes, ++i) {
        auto size = std::min(defaults.chunk_bytes, total - off);
        auto record = encode_blob_chunk(
          name, static_cast<uint32_t>(i),
          std::string_view{value.data.data() + off, size}, nullptr, 0, 0);
        sink += record.size();
      }
    }
    auto t = watch.elapsed();
    progress("  probe encode     %7.1f MiB/s (%.3f cpu-s, %zu bytes of "
             "records)",
             payload_mib / t.seconds, t.cpu_seconds, sink);
    line("encode_mib_s", payload_mib / t.seconds, "MiB/s");
    line("encode_cpu_mib_s", payload_mib / t.cpu_seconds, "MiB/cpu-s");
  }
  // Hashing alone: the writer hashes every byte twice (per chunk and per
  // blob), the reader twice again.
  {
    stopwatch watch;
    uint64_t acc = 0;
    for (auto& [name, value] : blobs)
      acc ^= digest_bytes(value.data.data(), value.data.size());
    auto t = watch.elapsed();
    progress("  probe digest     %7.1f MiB/s (one pass; %016llx)",
             payload_mib / t.seconds, static_cast<unsigned long long>(acc));
    line("digest_mib_s", payload_mib / t.seconds, "MiB/s");
  }
  variant(blobs, dir + "/default", "default", defaults, payload_mib);
  auto big = defaults;
  big.write_buffer_bytes = payload_bytes(blobs) + (size_t{64} << 20);
  variant(blobs, dir + "/bigbuffer", "bigbuffer", big, payload_mib);
}

} // namespace epochrt::bench
