// checkpoint_bench: how fast epochrt saves and loads a node's workspace
// through its checkpoint manager, next to raw LevelDB on the same bytes, and
// how long one checkpoint stalls the epoch loop of a job runner, and what a
// checkpoint of many small blobs costs next to a flat file of the same bytes.
//
//   checkpoint_bench [--mib N] [--runs R] [--dir D] [--epochs E]
//                    [--only memcpy,save,load,leveldb,file,stall,small]
//                    [--small-count N] [--small-bytes B]
//                    [--verbose] [--keep] [--probe]
//
// Every figure is the median of R runs, after one warm-up run that is not
// counted. Progress goes to stderr; stdout
// ends with the summary lines `name=value unit`:
//
//   save_mib_s          save(epoch) + write_checkpoint_metadata(epoch)
//   load_mib_s          load(epoch) into a fresh session's empty node
//   leveldb_write_mib_s open + WriteBatches of <= 64 MiB, each synced + close
//   leveldb_read_mib_s  open + a Get of every value into a reused buffer
//   save_vs_leveldb     save_mib_s / leveldb_write_mib_s
//   load_vs_leveldb     load_mib_s / leveldb_read_mib_s
//   stall_ms            how much longer one epoch of a job runner takes
//                       with a checkpoint manager than without, for epochs
//                       that do more work than a save takes (1.5x this
//                       run's save time, a Sleep): the case the background
//                       write is for; the loop then waits only for the
//                       snapshot. stall_back_to_back_ms, printed before, is
//                       the same for epochs of no work, where every
//                       snapshot waits for the previous epoch's write.
//
// The ratios against the disk itself (issue 10's yardsticks), above them:
//   save_vs_file        save_mib_s / file_write_mib_s: a plain write +
//                       fdatasync of the same bytes to one file
//   file_write_mib_s    the same bytes written to one plain file (a write
//                       per blob, then fdatasync)
//   file_read_mib_s     read back from it with pread into one reused
//                       buffer, with its page cache dropped first
//                       (posix_fadvise DONTNEED), as after a restart
//   load_vs_file        load_cold_mib_s / file_read_mib_s: epochrt's load
//                       measured the same way (page cache dropped)
//   load_vs_file_fresh  load_cold_mib_s / file_read_fresh_cold_mib_s: the
//                       file read into a fresh buffer per blob, as a load
//                       must allocate its tensors (a reference: on a VM,
//                       touching fresh memory varies several-fold)
//   stall_vs_memcpy     stall_ms (median of the runs) over the time one
//                       memcpy of the workspace takes
//
// and, last, the many-small-blobs figures (phase `small`: --small-count
// blobs of --small-bytes each, 10,000 of 1 KiB by default, f32 with
// distinct contents, in a checkpoint of their own). The large workspace
// above says little about a store's cost per blob; these say whether a
// storage format that is fast for large blobs is not slow for many small
// ones, against the disk itself:
//   small_blobs         how many small blobs
//   small_save_ms       save(epoch) + write_checkpoint_metadata(epoch), as
//                       save_mib_s
//   small_load_ms       load(epoch), warm, as load_mib_s
//   small_load_cold_ms  the same with the checkpoint's page cache dropped
//                       first, as after a restart
//   small_file_write_ms the same bytes as one flat file: one write() per
//                       blob, then fdatasync, as file_write_mib_s
//   small_file_read_cold_ms one pread() per blob from that file, its page
//                       cache dropped first
//   small_save_vs_file  small_file_write_ms / small_save_ms: above 1, the
//                       checkpoint saves faster than the file is written
//   small_load_vs_file  small_file_read_cold_ms / small_load_cold_ms: above
//                       1, the checkpoint loads faster than the file reads
//
// The incremental figures (phase `incremental`): 100 blobs of one size
// holding the --mib payload; a full save, then every tenth blob written
// with new contents and the next epoch saved:
//   incremental_full_save_ms, incremental_save_ms   save + commit of each
//   incremental_changed_fraction   payload of the changed blobs over the
//                       full save's: what an ideal incremental save writes
//   incremental_bytes_fraction     payload the second save wrote over the
//                       first's, from the nodes' stats (written_bytes)
//
// Small blobs, times not MiB/s: with about 10 MiB of payload, what they measure
// is mostly the cost per blob, not per byte. Before the summary,
// small_load_init_ms and small_load_cold_init_ms give the untimed
// init(session, {}, epoch) of both loads: the open of the checkpoint, which
// today replays its LevelDB log and so reads every payload byte, cold pages
// included, before load() is timed. A format whose open reads only an index
// moves that read into small_load_cold_ms; compare init + load then.
//
// Before them: the per-run figures (runN_*), and reference lines:
//   memcpy_mib_s        one memcpy of the payload into a reused buffer
//   leveldb_1mib_*      the LevelDB baseline with every blob cut into 1 MiB
//                       values, as the checkpoint writer cuts them; and
//                       save/load_vs_leveldb_1mib, the ratios against it
//   file_read_warm_mib_s the plain file read back at once, its pages still
//                       in the cache
//   file_read_fresh_cold_mib_s the cold read into a fresh buffer per blob
//   *_cpu_mib_s         payload per second of process CPU time (all
//                       threads): steadier than wall time on a busy machine
//   snapshot_ms         a copy-on-write snapshot of the node's workspace:
//                       what the epoch loop would wait for if checkpoints
//                       were written in the background
//   save_init_ms, load_init_ms, leveldb_first_open_ms: the untimed opens
//                       before the timed regions (see below)
// --probe adds probe_* lines: checkpoint_writer/reader driven directly, with
// the parts timed on their own (persistence_probe.hpp).
//
// Fairness:
// - Page cache: each read follows the write it reads within seconds, for
//   both paths, so both read warm pages (this machine reclaims idle pages
//   after about a minute, far longer than a run). Both writes are durable
//   before their clock stops: LevelDB's batches with sync=true, the
//   checkpoint's manifest batch synced and its commit written.
// - Opens: the checkpoint manager's init(session, {}, epoch) opens the
//   checkpoint once before load() is timed; the LevelDB baseline likewise
//   opens (and closes) its database once untimed before the timed open and
//   reads, so that LevelDB's log recovery is outside both timed regions.
//   Both untimed opens are reported.
// - Memory: the checkpoint load must allocate the tensors it fills; the
//   LevelDB baseline reads into one reused buffer, as the brief for this
//   benchmark asks. On this machine fresh memory is far slower to touch than
//   reused memory, which is part of what load_vs_leveldb shows.
// - MiB/s always counts the payload (the blobs' bytes), never what a store
//   writes on top of it (keys, records, LevelDB's log and table copies).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "bench/bench_util.hpp"
#include "bench/epochrt_paths.hpp"
#include "bench/file_baseline.hpp"
#include "bench/leveldb_baseline.hpp"
#include "bench/persistence_probe.hpp"
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/logging.hpp>

namespace {

using namespace epochrt::bench;

// Per-run figures; every vector has one entry per run that measured it.
// *_cpu: payload MiB per second of process CPU time (all threads).
struct figures {
  std::vector<double> memcpy_mib_s;
  std::vector<double> save_mib_s;
  std::vector<double> save_cpu;
  std::vector<double> save_only_mib_s; // save(epoch) without the commit
  std::vector<double> save_init_ms;
  std::vector<double> snapshot_ms;
  std::vector<double> load_mib_s;
  std::vector<double> load_cpu;
  std::vector<double> load_init_ms;
  std::vector<double> load_cold_mib_s; // page cache dropped first
  std::vector<double> leveldb_write_mib_s;
  std::vector<double> leveldb_write_cpu;
  std::vector<double> leveldb_read_mib_s;
  std::vector<double> leveldb_read_cpu;
  std::vector<double> leveldb_first_open_ms;
  std::vector<double> leveldb_1mib_write_mib_s;
  std::vector<double> leveldb_1mib_write_cpu;
  std::vector<double> leveldb_1mib_read_mib_s;
  std::vector<double> leveldb_1mib_read_cpu;
  std::vector<double> file_write_mib_s;
  std::vector<double> file_write_cpu;
  std::vector<double> file_read_mib_s;
  std::vector<double> file_read_cpu;
  std::vector<double> file_read_cold_mib_s; // page cache dropped first
  std::vector<double> file_read_cold_cpu;
  std::vector<double> file_read_fresh_cold_mib_s; // into fresh buffers
  std::vector<double> epoch_ms_plain;             // all intervals, all runs
  std::vector<double> epoch_ms_with_ckpt;         // all intervals, all runs
  std::vector<double> b2b_ms_plain;               // the same, epochs of no work
  std::vector<double> b2b_ms_with_ckpt;
  std::vector<double> stall_ms; // per run: median with - without
  // The many-small-blobs checkpoint and its flat file, in ms.
  std::vector<double> small_save_ms;
  std::vector<double> small_load_ms;
  std::vector<double> small_load_cold_ms;
  std::vector<double> small_load_init_ms; // untimed init of each load
  std::vector<double> small_load_cold_init_ms;
  std::vector<double> small_file_write_ms;
  std::vector<double> small_file_read_cold_ms;
  // Incremental saves: written bytes of the second save over the first's.
  std::vector<double> incremental_bytes_fraction;
  std::vector<double> incremental_changed_fraction;
  std::vector<double> incremental_full_save_ms;
  std::vector<double> incremental_save_ms;
};

// Keeps the copies observable.
volatile char memcpy_sink = 0;

// One pass of memcpy over all blobs into a reused buffer of the largest
// blob's size: the ceiling of any path that must copy the bytes once.
double memcpy_mib_s(const std::vector<blob_bytes>& blobs,
                    std::vector<char>& buffer, double payload_mib) {
  auto start = clock_type::now();
  char acc = 0;
  for (auto& b : blobs) {
    std::memcpy(buffer.data(), b.data, b.size);
    acc ^= buffer[b.size - 1];
  }
  auto secs = seconds_since(start);
  memcpy_sink = acc;
  return payload_mib / secs;
}

void print_line(const char* name, double value, const char* unit,
                int decimals = 1) {
  std::printf("%s=%.*f %s\n", name, decimals, value, unit);
}

void print_per_run(const char* name, const std::vector<double>& xs,
                   const char* unit) {
  for (size_t i = 0; i < xs.size(); ++i) {
    auto label = "run" + std::to_string(i + 1) + "_" + name;
    print_line(label.c_str(), xs[i], unit);
  }
}

// Records MiB/s and MiB per CPU second of one measured region.
void record(double payload_mib, const timing& t, std::vector<double>& rate,
            std::vector<double>& cpu_rate) {
  rate.push_back(payload_mib / t.seconds);
  cpu_rate.push_back(payload_mib / t.cpu_seconds);
}

constexpr size_t incremental_count = 100;
constexpr size_t incremental_change_every = 10;

// One run of the incremental figures in `dir`: a full save of `blobs`,
// then a save after every tenth blob changed.
void run_incremental(caf::actor_system& sys, const registry_ptr& ops,
                     const std::vector<blob>& blobs, const std::string& dir,
                     figures& out) {
  auto saved = incremental_saves(sys, ops, blobs, dir + "/incremental_ckpt",
                                 incremental_change_every);
  auto full = static_cast<double>(saved.full_bytes);
  out.incremental_bytes_fraction.push_back(saved.incremental_bytes / full);
  out.incremental_changed_fraction.push_back(saved.changed_bytes / full);
  out.incremental_full_save_ms.push_back(saved.full_seconds * 1e3);
  out.incremental_save_ms.push_back(saved.incremental_seconds * 1e3);
  progress("  incremental    %8.3f x      (%.1f of %.1f MiB written; full save "
           "%.1f ms, incremental %.1f ms)",
           out.incremental_bytes_fraction.back(), saved.incremental_bytes / mib,
           full / mib, saved.full_seconds * 1e3,
           saved.incremental_seconds * 1e3);
}

// One run of the many-small-blobs figures in `dir`: a checkpoint of `blobs`
// saved, loaded warm and loaded cold, then the same bytes as a flat file
// written and read cold.
void run_small(caf::actor_system& sys, const registry_ptr& ops,
               const std::vector<blob>& blobs, const std::string& dir,
               figures& out) {
  constexpr int64_t epoch = 1;
  auto ckpt = dir + "/small_ckpt";
  auto saved = checkpoint_save(sys, ops, blobs, ckpt, epoch);
  out.small_save_ms.push_back(saved.time.seconds * 1e3);
  progress("  small save     %8.1f ms     (%.3f cpu-s; save %.1f ms + commit "
           "%.1f ms; init %.1f ms; snapshot %.3f ms)",
           out.small_save_ms.back(), saved.time.cpu_seconds,
           saved.save_seconds * 1e3,
           (saved.time.seconds - saved.save_seconds) * 1e3,
           saved.init_seconds * 1e3, saved.snapshot_seconds * 1e3);
  auto loaded = checkpoint_load(sys, ops, blobs, ckpt, epoch);
  out.small_load_ms.push_back(loaded.time.seconds * 1e3);
  out.small_load_init_ms.push_back(loaded.init_seconds * 1e3);
  progress("  small load     %8.1f ms     (%.3f cpu-s; init %.1f ms; verified "
           "%.1f MiB)",
           out.small_load_ms.back(), loaded.time.cpu_seconds,
           loaded.init_seconds * 1e3, loaded.bytes / mib);
  drop_page_cache(ckpt);
  auto cold = checkpoint_load(sys, ops, blobs, ckpt, epoch);
  out.small_load_cold_ms.push_back(cold.time.seconds * 1e3);
  out.small_load_cold_init_ms.push_back(cold.init_seconds * 1e3);
  progress("  small load cold%8.1f ms     (%.3f cpu-s; page cache dropped "
           "first; init %.1f ms)",
           out.small_load_cold_ms.back(), cold.time.cpu_seconds,
           cold.init_seconds * 1e3);
  auto views = bytes_of(blobs);
  auto path = dir + "/small_flat.bin";
  auto written = file_write(path, views);
  out.small_file_write_ms.push_back(written.seconds * 1e3);
  progress("  small file     %8.1f ms     (%.3f cpu-s; one file, a write per "
           "blob + fdatasync)",
           out.small_file_write_ms.back(), written.cpu_seconds);
  drop_page_cache(path);
  auto read = file_read(path, views);
  out.small_file_read_cold_ms.push_back(read.seconds * 1e3);
  progress("  small file cold%8.1f ms     (%.3f cpu-s; a pread per blob; page "
           "cache dropped first)",
           out.small_file_read_cold_ms.back(), read.cpu_seconds);
}

int run(const options& opts, caf::actor_system& sys, const std::string& scratch,
        figures& results) {
  progress("generating %zu MiB of f32 blobs...", opts.mib);
  auto blobs = make_blobs(opts.mib);
  auto views = bytes_of(blobs);
  auto payload = payload_bytes(blobs);
  auto payload_mib = static_cast<double>(payload) / mib;
  size_t largest = 0;
  for (auto& v : views)
    largest = std::max(largest, v.size);
  print_line("size_mib", payload_mib, "MiB");
  std::printf("runs=%d runs\n", opts.runs);
  std::printf("blob_count=%zu blobs\n", blobs.size());
  print_line("largest_blob_mib", largest / mib, "MiB");
  std::fflush(stdout);
  std::vector<blob> small_blobs;
  std::vector<blob> incremental_blobs;
  if (opts.incremental) {
    // The same payload as the workspace above, in blobs of one size, so
    // that a tenth of the blobs is a tenth of the bytes.
    auto each
      = ((static_cast<size_t>(opts.mib) << 20) / incremental_count) / 256 * 256;
    progress("generating %zu f32 blobs of %zu B...", incremental_count, each);
    incremental_blobs
      = make_small_blobs(incremental_count, std::max<size_t>(each, 256));
  }
  if (opts.small) {
    progress("generating %zu f32 blobs of %zu B...", opts.small_count,
             opts.small_bytes);
    small_blobs = make_small_blobs(opts.small_count, opts.small_bytes);
  }
  auto ops = make_registry();
  std::vector<char> buffer;
  if (opts.memcpy) {
    buffer.assign(largest, 1); // touched once: later copies are warm
    memcpy_mib_s(views, buffer, payload_mib);
  }
  constexpr int64_t epoch = 1;
  // Run 0 is a warm-up whose figures are dropped: on a VM, memory and page
  // cache that the guest has not used for a while cost several times more
  // to touch, and the first path to run (a save) would pay for all.
  figures warmup;
  for (int r = 0; r <= opts.runs; ++r) {
    auto& out = r == 0 ? warmup : results;
    auto dir = scratch + "/run" + std::to_string(r);
    if (r == 0)
      progress("warm-up run (not counted)");
    else
      progress("run %d/%d", r, opts.runs);
    std::filesystem::create_directories(dir);
    if (opts.memcpy) {
      out.memcpy_mib_s.push_back(memcpy_mib_s(views, buffer, payload_mib));
      progress("  memcpy         %8.1f MiB/s", out.memcpy_mib_s.back());
    }
    if (opts.save) {
      auto saved = checkpoint_save(sys, ops, blobs, dir + "/ckpt", epoch);
      record(payload_mib, saved.time, out.save_mib_s, out.save_cpu);
      out.save_only_mib_s.push_back(payload_mib / saved.save_seconds);
      out.save_init_ms.push_back(saved.init_seconds * 1e3);
      out.snapshot_ms.push_back(saved.snapshot_seconds * 1e3);
      progress("  ckpt save      %8.1f MiB/s  (%.3f s, %.3f cpu-s; save %.3f "
               "s + commit %.3f s; init %.1f ms; snapshot %.3f ms; stats say "
               "%.1f MiB)",
               out.save_mib_s.back(), saved.time.seconds,
               saved.time.cpu_seconds, saved.save_seconds,
               saved.time.seconds - saved.save_seconds,
               saved.init_seconds * 1e3, saved.snapshot_seconds * 1e3,
               saved.reported_bytes / mib);
      if (opts.load) {
        auto loaded = checkpoint_load(sys, ops, blobs, dir + "/ckpt", epoch);
        record(payload_mib, loaded.time, out.load_mib_s, out.load_cpu);
        out.load_init_ms.push_back(loaded.init_seconds * 1e3);
        progress("  ckpt load      %8.1f MiB/s  (%.3f s, %.3f cpu-s; init "
                 "%.1f ms; verified %.1f MiB)",
                 out.load_mib_s.back(), loaded.time.seconds,
                 loaded.time.cpu_seconds, loaded.init_seconds * 1e3,
                 loaded.bytes / mib);
        // As after a restart: nothing of the checkpoint in the page cache.
        drop_page_cache(dir + "/ckpt");
        auto cold = checkpoint_load(sys, ops, blobs, dir + "/ckpt", epoch);
        out.load_cold_mib_s.push_back(payload_mib / cold.time.seconds);
        progress("  ckpt load cold %8.1f MiB/s  (%.3f s, %.3f cpu-s; page "
                 "cache dropped first)",
                 out.load_cold_mib_s.back(), cold.time.seconds,
                 cold.time.cpu_seconds);
      }
    }
    if (opts.leveldb) {
      auto path = dir + "/leveldb";
      auto written = leveldb_write(path, views, size_t{64} << 20);
      record(payload_mib, written.time, out.leveldb_write_mib_s,
             out.leveldb_write_cpu);
      progress("  leveldb write  %8.1f MiB/s  (%.3f s, %.3f cpu-s; %zu synced "
               "batches)",
               out.leveldb_write_mib_s.back(), written.time.seconds,
               written.time.cpu_seconds, written.batches);
      auto read = leveldb_read(path, views);
      record(payload_mib, read.time, out.leveldb_read_mib_s,
             out.leveldb_read_cpu);
      out.leveldb_first_open_ms.push_back(read.first_open_seconds * 1e3);
      progress("  leveldb read   %8.1f MiB/s  (%.3f s, %.3f cpu-s; first open "
               "%.1f ms)",
               out.leveldb_read_mib_s.back(), read.time.seconds,
               read.time.cpu_seconds, read.first_open_seconds * 1e3);
      // The same with every blob cut into 1 MiB values, as the checkpoint
      // writer cuts them (writer_options::chunk_bytes): LevelDB is much
      // faster with 1 MiB values than with 64 MiB ones.
      path = dir + "/leveldb_1mib";
      constexpr size_t chunk = size_t{1} << 20;
      written = leveldb_write(path, views, size_t{64} << 20, chunk);
      record(payload_mib, written.time, out.leveldb_1mib_write_mib_s,
             out.leveldb_1mib_write_cpu);
      progress("  leveldb 1 MiB  %8.1f MiB/s  (%.3f s, %.3f cpu-s; values cut "
               "to 1 MiB; %zu synced batches)",
               out.leveldb_1mib_write_mib_s.back(), written.time.seconds,
               written.time.cpu_seconds, written.batches);
      read = leveldb_read(path, views, chunk);
      record(payload_mib, read.time, out.leveldb_1mib_read_mib_s,
             out.leveldb_1mib_read_cpu);
      progress("  leveldb 1 MiB  %8.1f MiB/s  (%.3f s, %.3f cpu-s; read; "
               "first open %.1f ms)",
               out.leveldb_1mib_read_mib_s.back(), read.time.seconds,
               read.time.cpu_seconds, read.first_open_seconds * 1e3);
    }
    if (opts.file) {
      auto path = dir + "/flat.bin";
      auto written = file_write(path, views);
      record(payload_mib, written, out.file_write_mib_s, out.file_write_cpu);
      auto read = file_read(path, views);
      record(payload_mib, read, out.file_read_mib_s, out.file_read_cpu);
      progress("  file write     %8.1f MiB/s  (%.3f s, %.3f cpu-s; one file, "
               "write + fdatasync)",
               out.file_write_mib_s.back(), written.seconds,
               written.cpu_seconds);
      progress("  file read      %8.1f MiB/s  (%.3f s, %.3f cpu-s; pread into "
               "a reused buffer)",
               out.file_read_mib_s.back(), read.seconds, read.cpu_seconds);
      drop_page_cache(path);
      auto cold = file_read(path, views);
      record(payload_mib, cold, out.file_read_cold_mib_s,
             out.file_read_cold_cpu);
      progress("  file read cold %8.1f MiB/s  (%.3f s, %.3f cpu-s; page cache "
               "dropped first)",
               out.file_read_cold_mib_s.back(), cold.seconds, cold.cpu_seconds);
      drop_page_cache(path);
      auto fresh = file_read_fresh(path, views);
      out.file_read_fresh_cold_mib_s.push_back(payload_mib / fresh.seconds);
      progress("  file read fresh%8.1f MiB/s  (%.3f s, %.3f cpu-s; cold, into "
               "a fresh buffer per blob)",
               out.file_read_fresh_cold_mib_s.back(), fresh.seconds,
               fresh.cpu_seconds);
    }
    if (opts.small)
      run_small(sys, ops, small_blobs, dir, out);
    if (opts.incremental)
      run_incremental(sys, ops, incremental_blobs, dir, out);
    if (opts.probe) {
      std::filesystem::create_directory(dir + "/probe");
      run_probe(blobs, dir + "/probe");
    }
    if (opts.stall) {
      auto b2b_plain = epoch_intervals_ms(sys, ops, blobs, {}, opts.epochs, 0);
      auto b2b_with = epoch_intervals_ms(sys, ops, blobs, dir + "/stall-b2b",
                                         opts.epochs, 0);
      out.b2b_ms_plain.insert(out.b2b_ms_plain.end(), b2b_plain.begin(),
                              b2b_plain.end());
      out.b2b_ms_with_ckpt.insert(out.b2b_ms_with_ckpt.end(), b2b_with.begin(),
                                  b2b_with.end());
      progress("  stall b2b      %8.1f ms     (epochs of no work)",
               median(b2b_with) - median(b2b_plain));
      // Epochs that outlast a save: 1.5x this run's save, else 2 s.
      auto save_s = out.save_mib_s.empty()
        ? 2.0 / 1.5
        : static_cast<double>(opts.mib) / out.save_mib_s.back();
      auto work_ms = static_cast<int>(std::ceil(1500.0 * save_s));
      auto plain
        = epoch_intervals_ms(sys, ops, blobs, {}, opts.epochs, work_ms);
      auto with = epoch_intervals_ms(sys, ops, blobs, dir + "/stall",
                                     opts.epochs, work_ms);
      out.epoch_ms_plain.insert(out.epoch_ms_plain.end(), plain.begin(),
                                plain.end());
      out.epoch_ms_with_ckpt.insert(out.epoch_ms_with_ckpt.end(), with.begin(),
                                    with.end());
      out.stall_ms.push_back(median(with) - median(plain));
      std::string each;
      for (auto ms : with)
        each += " " + std::to_string(static_cast<int>(ms));
      progress("  stall          %8.1f ms     (epoch %.2f ms without a "
               "checkpoint manager, %.2f ms with; each with:%s ms)",
               out.stall_ms.back(), median(plain), median(with), each.c_str());
    }
    if (!opts.keep)
      remove_tree(dir);
  }
  return 0;
}

void report(const options& opts, const figures& f) {
  // Per-run figures first, then the other medians; the summary comes last.
  print_per_run("save_mib_s", f.save_mib_s, "MiB/s");
  print_per_run("load_mib_s", f.load_mib_s, "MiB/s");
  print_per_run("leveldb_write_mib_s", f.leveldb_write_mib_s, "MiB/s");
  print_per_run("leveldb_read_mib_s", f.leveldb_read_mib_s, "MiB/s");
  print_per_run("stall_ms", f.stall_ms, "ms");
  if (opts.memcpy)
    print_line("memcpy_mib_s", median(f.memcpy_mib_s), "MiB/s");
  if (opts.save) {
    print_line("save_cpu_mib_s", median(f.save_cpu), "MiB/cpu-s");
    print_line("save_without_commit_mib_s", median(f.save_only_mib_s), "MiB/s");
    print_line("save_init_ms", median(f.save_init_ms), "ms");
    print_line("snapshot_ms", median(f.snapshot_ms), "ms", 3);
  }
  if (opts.load) {
    print_line("load_cpu_mib_s", median(f.load_cpu), "MiB/cpu-s");
    print_line("load_init_ms", median(f.load_init_ms), "ms");
  }
  if (opts.leveldb) {
    print_line("leveldb_write_cpu_mib_s", median(f.leveldb_write_cpu),
               "MiB/cpu-s");
    print_line("leveldb_read_cpu_mib_s", median(f.leveldb_read_cpu),
               "MiB/cpu-s");
    print_line("leveldb_first_open_ms", median(f.leveldb_first_open_ms), "ms");
    print_line("leveldb_1mib_write_mib_s", median(f.leveldb_1mib_write_mib_s),
               "MiB/s");
    print_line("leveldb_1mib_write_cpu_mib_s", median(f.leveldb_1mib_write_cpu),
               "MiB/cpu-s");
    print_line("leveldb_1mib_read_mib_s", median(f.leveldb_1mib_read_mib_s),
               "MiB/s");
    print_line("leveldb_1mib_read_cpu_mib_s", median(f.leveldb_1mib_read_cpu),
               "MiB/cpu-s");
    if (opts.save)
      print_line("save_vs_leveldb_1mib",
                 median(f.save_mib_s) / median(f.leveldb_1mib_write_mib_s), "x",
                 2);
    if (opts.load)
      print_line("load_vs_leveldb_1mib",
                 median(f.load_mib_s) / median(f.leveldb_1mib_read_mib_s), "x",
                 2);
  }
  if (opts.file) {
    print_line("file_write_mib_s", median(f.file_write_mib_s), "MiB/s");
    print_line("file_write_cpu_mib_s", median(f.file_write_cpu), "MiB/cpu-s");
    // file_read_mib_s is the cold read, the yardstick of load_vs_file; the
    // warm one is a reference.
    print_line("file_read_warm_mib_s", median(f.file_read_mib_s), "MiB/s");
    print_line("file_read_warm_cpu_mib_s", median(f.file_read_cpu),
               "MiB/cpu-s");
    print_line("file_read_mib_s", median(f.file_read_cold_mib_s), "MiB/s");
    if (opts.load)
      print_line("load_cold_mib_s", median(f.load_cold_mib_s), "MiB/s");
    // The disk is the yardstick: epochrt against a plain write + fsync and
    // a plain read of the same bytes, both from a cold page cache.
    if (opts.save)
      print_line("save_vs_file",
                 median(f.save_mib_s) / median(f.file_write_mib_s), "x", 2);
    if (opts.load)
      print_line("load_vs_file",
                 median(f.load_cold_mib_s) / median(f.file_read_cold_mib_s),
                 "x", 2);
    print_line("file_read_fresh_cold_mib_s",
               median(f.file_read_fresh_cold_mib_s), "MiB/s");
    if (opts.load)
      print_line("load_vs_file_fresh",
                 median(f.load_cold_mib_s)
                   / median(f.file_read_fresh_cold_mib_s),
                 "x", 2);
  }
  if (opts.small) {
    print_line("small_load_init_ms", median(f.small_load_init_ms), "ms");
    print_line("small_load_cold_init_ms", median(f.small_load_cold_init_ms),
               "ms");
  }
  if (opts.stall && opts.memcpy && !f.stall_ms.empty()) {
    // The epoch loop's stall per checkpoint against copying the workspace
    // once. Per run first (each run sizes its epochs to its own save), then
    // the median of the runs.
    auto memcpy_ms
      = static_cast<double>(opts.mib) / median(f.memcpy_mib_s) * 1e3;
    print_line("stall_vs_memcpy", median(f.stall_ms) / memcpy_ms, "x", 3);
  }
  if (opts.stall) {
    print_line("epoch_ms_without_checkpoints", median(f.epoch_ms_plain), "ms",
               2);
    print_line("epoch_ms_with_checkpoints", median(f.epoch_ms_with_ckpt), "ms",
               2);
  }
  auto save = median(f.save_mib_s);
  auto load = median(f.load_mib_s);
  auto lw = median(f.leveldb_write_mib_s);
  auto lr = median(f.leveldb_read_mib_s);
  if (opts.stall)
    print_line("stall_back_to_back_ms",
               median(f.b2b_ms_with_ckpt) - median(f.b2b_ms_plain), "ms");
  if (opts.save)
    print_line("save_mib_s", save, "MiB/s");
  if (opts.load)
    print_line("load_mib_s", load, "MiB/s");
  if (opts.leveldb) {
    print_line("leveldb_write_mib_s", lw, "MiB/s");
    print_line("leveldb_read_mib_s", lr, "MiB/s");
  }
  if (opts.save && opts.leveldb)
    print_line("save_vs_leveldb", save / lw, "x", 2);
  if (opts.load && opts.leveldb)
    print_line("load_vs_leveldb", load / lr, "x", 2);
  if (opts.stall)
    // Each run's epochs are as long as 1.5 of its own save: medians of
    // epochs pooled over runs would mix lengths. The median of the runs'.
    print_line("stall_ms", median(f.stall_ms), "ms");
  if (opts.incremental) {
    std::printf("incremental_blobs=%zu blobs\n", incremental_count);
    std::printf("incremental_changed_blobs=%zu blobs\n",
                incremental_count / incremental_change_every);
    print_line("incremental_full_save_ms", median(f.incremental_full_save_ms),
               "ms");
    print_line("incremental_save_ms", median(f.incremental_save_ms), "ms");
    print_line("incremental_changed_fraction",
               median(f.incremental_changed_fraction), "x", 3);
    print_line("incremental_bytes_fraction",
               median(f.incremental_bytes_fraction), "x", 3);
  }
  if (opts.small) {
    std::printf("small_blobs=%zu blobs\n", opts.small_count);
    auto save_ms = median(f.small_save_ms);
    auto load_cold_ms = median(f.small_load_cold_ms);
    auto write_ms = median(f.small_file_write_ms);
    auto read_cold_ms = median(f.small_file_read_cold_ms);
    print_line("small_save_ms", save_ms, "ms");
    print_line("small_load_ms", median(f.small_load_ms), "ms");
    print_line("small_load_cold_ms", load_cold_ms, "ms");
    print_line("small_file_write_ms", write_ms, "ms");
    print_line("small_file_read_cold_ms", read_cold_ms, "ms");
    print_line("small_save_vs_file", write_ms / save_ms, "x", 2);
    print_line("small_load_vs_file", read_cold_ms / load_cold_ms, "x", 2);
  }
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  options opts;
  int exit_code = 0;
  if (!parse_options(argc, argv, opts, exit_code))
    return exit_code;
  std::string scratch;
  try {
    scratch = make_scratch_dir(opts.dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", e.what());
    return 1;
  }
  progress("checkpoint_bench: %zu MiB, %d run(s), scratch %s", opts.mib,
           opts.runs, scratch.c_str());
  figures results;
  int rc = 0;
  {
    caf::actor_system_config cfg;
    epochrt::configure(cfg, bench_logging(opts.verbose));
    cfg.set("scheduler.max-threads", size_t{2});
    // Declared first, destroyed last: every session, node and manager of
    // the run lives in a scope inside this one and is gone before the
    // system shuts down.
    caf::actor_system sys{cfg};
    try {
      rc = run(opts, sys, scratch, results);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "checkpoint_bench: %s\n", e.what());
      rc = 1;
    }
    progress("shutting down the actor system...");
  }
  if (opts.keep)
    progress("kept %s", scratch.c_str());
  else
    remove_tree(scratch);
  if (rc != 0)
    return rc;
  report(opts, results);
  return 0;
}
