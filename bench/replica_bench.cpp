// replica_bench: what copies of checkpoints on other hosts (`--replicas`)
// cost, against the same work without them and a plain file copy.
//
//   commit_ms_r0         saving and committing MIB MiB of checkpoints of two
//                        nodes on two `epochrt node` daemons (MIB/2 each),
//                        every save full, without copies
//   commit_ms_r1         the same with --replicas 1: each node's database
//                        also copied to the other daemon before it commits
//   commit_r1_vs_r0      their ratio within each epoch, the median of those
//                        (issue 21's target: at most 1.5)
//   load_ms_own          loading one node's checkpoint (MIB/2) on its own
//                        daemon, from its own disk
//   load_ms_restored     the same node loaded on a new daemon that has no
//                        checkpoint: restored from the copy, then loaded
//   restore_ms           the restore alone: a resume's init (the step that
//                        restores) of that node on the new daemon, timed by
//                        itself, with the node's database missing there and
//                        every other copy already in place; what it does
//                        besides the restore is reading each node's
//                        manifest
//   file_copy_ms         the same database copied by hand between the two
//                        roots: read, write, fdatasync, file by file
//   restore_vs_file_copy file_copy_ms / restore_ms within each run, the
//                        median (target: at least 0.5)
//   disk_ms_2_files      the disk alone, beside each epoch's commits: MIB/2
//                        MiB written to each of two files at once (4 MiB
//                        writes, fdatasync), what a commit without copies
//                        makes durable
//   disk_ms_4_files      the same with four files: what a commit with one
//                        copy of each node's database makes durable
//   disk_4_vs_2          their ratio within each epoch, the median: the
//                        least commit_r1_vs_r0 can be when the disk bounds
//                        the commit. With one copy every disk writes twice
//                        the bytes, whether the daemons share it (here) or
//                        each has its own: each holds its node's database
//                        and a copy of another's
//   copies_vs_disk       commit_r1_vs_r0 / disk_4_vs_2 within each epoch,
//                        the median: what copies cost beyond their bytes
//                        on the disk (1: nothing)
//
// Each figure is the median of --runs runs; the daemons are real processes
// on 127.0.0.1 sharing this machine's disk and cores.

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <epochrt/epochrt.hpp>

#include "bench/bench_processes.hpp"
#include "bench/bench_util.hpp"

namespace fs = std::filesystem;

namespace {

using namespace epochrt::bench;

struct replica_options {
  size_t mib = 256;
  int runs = 3;
  bool verbose = false;
};

bool parse(int argc, char** argv, replica_options& opts) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--mib")
      opts.mib = std::stoul(value());
    else if (arg == "--runs")
      opts.runs = std::stoi(value());
    else if (arg == "--verbose")
      opts.verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: replica_bench [--mib N (256)] [--runs N (3)] "
                   "[--verbose]\n");
      return false;
    }
  }
  return opts.mib >= 2 && opts.runs >= 1;
}

void check(const caf::error& err, const char* what) {
  if (err)
    throw std::runtime_error(std::string{what} + ": "
                             + epochrt::error_text(err));
}

const std::vector<std::string> nodes{"trainer_0", "trainer_1"};

// A session on the daemons at `ports` (trainer_i on ports[i]).
std::unique_ptr<epochrt::distributed_session>
connect(caf::actor_system& sys, const std::vector<uint16_t>& ports) {
  std::map<std::string, epochrt::node_address> where;
  for (size_t i = 0; i < nodes.size(); ++i)
    where.emplace(nodes[i], epochrt::node_address{"127.0.0.1", ports[i]});
  auto ops = std::make_shared<epochrt::op_registry>();
  check(epochrt::add_builtin_ops(*ops), "ops");
  auto sess = std::make_unique<epochrt::distributed_session>(
    sys, std::move(ops), std::move(where));
  if (auto err = sess->connect_all())
    throw std::runtime_error("connecting: " + epochrt::error_text(err));
  return sess;
}

std::unique_ptr<epochrt::multi_node_checkpoint_manager>
make_manager(caf::actor_system& sys, const std::string& dir, size_t replicas) {
  epochrt::checkpoint_options opts;
  opts.full_every = 1; // every save writes (and copies) every byte
  opts.replicas = replicas;
  return std::make_unique<epochrt::multi_node_checkpoint_manager>(sys, dir,
                                                                  opts);
}

// Plain copy of every file of `from` into `to`: read, write, fdatasync.
double file_copy_ms(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  std::vector<char> buffer(size_t{4} << 20);
  stopwatch watch;
  for (auto& entry : fs::directory_iterator(from)) {
    if (!entry.is_regular_file())
      continue;
    int in = ::open(entry.path().c_str(), O_RDONLY);
    int out = ::open((to + "/" + entry.path().filename().string()).c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0)
      throw std::runtime_error("file copy: cannot open "
                               + entry.path().string());
    ssize_t n = 0;
    while ((n = ::read(in, buffer.data(), buffer.size())) > 0)
      if (::write(out, buffer.data(), static_cast<size_t>(n)) != n)
        throw std::runtime_error("file copy: short write");
    ::fdatasync(out);
    ::close(in);
    ::close(out);
  }
  int dir = ::open(to.c_str(), O_RDONLY | O_DIRECTORY);
  ::fsync(dir);
  ::close(dir);
  return watch.elapsed().seconds * 1000;
}

// Writes `mib` MiB of non-zero bytes to each of `files` new files in the
// new directory `dir` at once, one thread each, and fdatasyncs them: the
// time until the last is durable. The files stay, as a commit's do: on
// this VM a write into memory the guest freed seconds ago is several times
// faster than one into memory it has not touched for a while (free pages
// are handed back to the host), and a disk figure that reused its own
// freed pages would flatter the disk. Throws when a file cannot be
// written whole: a figure of less than every byte would flatter it too.
double parallel_write_ms(const std::string& dir, int files, size_t mib) {
  fs::create_directories(dir);
  std::vector<char> buffer(size_t{4} << 20, 'x');
  std::vector<std::thread> writers;
  std::atomic<int> failed{0};
  stopwatch watch;
  for (int i = 0; i < files; ++i)
    writers.emplace_back([&, i] {
      auto path = dir + "/f" + std::to_string(i);
      int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0) {
        ++failed;
        return;
      }
      for (size_t done = 0; done < (mib << 20); done += buffer.size())
        if (::write(out, buffer.data(), buffer.size())
            != static_cast<ssize_t>(buffer.size())) {
          ++failed;
          break;
        }
      if (::fdatasync(out) != 0)
        ++failed;
      ::close(out);
    });
  for (auto& writer : writers)
    writer.join();
  auto ms = watch.elapsed().seconds * 1000;
  if (failed > 0)
    throw std::runtime_error("the disk alone: " + std::to_string(failed.load())
                             + " of " + std::to_string(files)
                             + " files could not be written whole under "
                             + dir);
  return ms;
}

struct figures {
  std::vector<double> commit_r0, commit_r1, load_own, load_restored, restore,
    file_copy;
  std::vector<double> disk_2, disk_4;
};

// Saves and commits --runs + 1 epochs (the first a warm-up) of both nodes
// on daemons 0 and 1, each epoch twice: without copies into `dir_r0`, then
// with one copy into `dir_r1`; then the disk alone writes the same bytes
// (disk_2, disk_4). The four are timed back to back, epoch after epoch,
// and compared within the epoch: on this shared virtual disk every write
// slows the ones that follow it for a while (the host absorbs only so
// much), so two series run one after the other measured their order (the
// ratio ranged from 0.9x to 6x with the order alone), and a disk measured
// minutes later measured another disk.
void measure_commits(caf::actor_system& sys, const replica_options& opts,
                     const std::vector<blob>& blobs, const std::string& dir_r0,
                     const std::string& dir_r1, const std::string& scratch,
                     std::vector<node_daemon>& daemons, figures& out) {
  auto sess = connect(sys, {daemons[0].port(), daemons[1].port()});
  for (auto& node : nodes)
    for (auto& b : blobs)
      check(sess->put(node, b.first, b.second), "put");
  auto r0 = make_manager(sys, dir_r0, 0);
  auto r1 = make_manager(sys, dir_r1, 1);
  auto commit = [&](epochrt::multi_node_checkpoint_manager& manager, int run) {
    // Binds the nodes to this manager's directory and copies (holders);
    // restores and writes nothing.
    check(manager.init(*sess, nodes), "init");
    stopwatch watch;
    check(manager.save(run), "save");
    check(manager.write_checkpoint_metadata(run), "commit");
    return watch.elapsed().seconds * 1000;
  };
  int disk_runs = 0;
  auto disk = [&](int files) {
    return parallel_write_ms(scratch + "/disk/" + std::to_string(disk_runs++),
                             files, opts.mib / 2);
  };
  for (int run = 0; run <= opts.runs; ++run) {
    // Each of the four follows a write of the same size as the one its
    // counterpart follows: the commit without copies and the two files the
    // largest write (the four files of the epoch before, the commit with
    // copies), the other two half of it.
    auto ms_r0 = commit(*r0, run);
    auto ms_r1 = commit(*r1, run);
    auto ms_2 = disk(2);
    auto ms_4 = disk(4);
    progress("  epoch %d: commit %.1f ms, with copies %.1f ms (%.2fx); disk "
             "alone 2 files %.1f ms, 4 files %.1f ms (%.2fx)",
             run, ms_r0, ms_r1, ms_r1 / ms_r0, ms_2, ms_4, ms_4 / ms_2);
    if (run == 0)
      continue;
    out.commit_r0.push_back(ms_r0);
    out.commit_r1.push_back(ms_r1);
    out.disk_2.push_back(ms_2);
    out.disk_4.push_back(ms_4);
  }
}

// Loads epoch `epoch` of `dir` with trainer_1 on the daemon at `port`; the
// time the load took.
double timed_load(caf::actor_system& sys, const std::string& dir, int epoch,
                  std::vector<node_daemon>& daemons, uint16_t port) {
  auto sess = connect(sys, {daemons[0].port(), port});
  auto manager = make_manager(sys, dir, 1);
  check(manager->init(*sess, nodes), "init");
  stopwatch watch;
  check(manager->load(epoch), "load");
  return watch.elapsed().seconds * 1000;
}

// Restores trainer_1's database of `epoch` of `dir` on the spare (daemon
// 2), from its copy on daemon 0; the time that took. The restore happens
// in the init of a resume, which also puts every missing copy in place:
// a first init puts trainer_0's copy on the spare (its holder now), so
// that in the timed one the restore is the only data that moves.
double timed_restore(caf::actor_system& sys, const std::string& dir, int epoch,
                     std::vector<node_daemon>& daemons) {
  auto sess = connect(sys, {daemons[0].port(), daemons[2].port()});
  auto manager = make_manager(sys, dir, 1);
  check(manager->init(*sess, nodes, epoch), "init");
  auto restored
    = daemons[2].root() + dir + "/trainer_1." + std::to_string(epoch);
  remove_tree(restored);
  stopwatch watch;
  check(manager->init(*sess, nodes, epoch), "init");
  auto ms = watch.elapsed().seconds * 1000;
  if (!fs::is_directory(restored))
    throw std::runtime_error("the spare holds no restored database");
  return ms;
}

void measure(const replica_options& opts, const std::string& scratch,
             std::vector<node_daemon>& daemons, figures& out) {
  caf::actor_system_config cfg;
  check(epochrt::configure_network(cfg, {}, bench_logging(opts.verbose)),
        "configure");
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  auto blobs = make_blobs(opts.mib / 2);
  auto dir = scratch + "/ckpt_r1";
  measure_commits(sys, opts, blobs, scratch + "/ckpt_r0", dir, scratch, daemons,
                  out);
  // trainer_1 from its own disk (daemon 1), then on the spare (daemon 2),
  // which has no checkpoint: restored from the copy on daemon 0.
  auto last = opts.runs;
  auto db = dir + "/trainer_1." + std::to_string(last);
  for (int run = 0; run < opts.runs; ++run) {
    out.load_own.push_back(
      timed_load(sys, dir, last, daemons, daemons[1].port()));
    remove_tree(daemons[2].root() + db);
    out.load_restored.push_back(
      timed_load(sys, dir, last, daemons, daemons[2].port()));
    if (!fs::is_directory(daemons[2].root() + db))
      throw std::runtime_error("the spare holds no restored database");
    out.restore.push_back(timed_restore(sys, dir, last, daemons));
    auto copy = scratch + "/file_copy";
    remove_tree(copy);
    out.file_copy.push_back(file_copy_ms(daemons[1].root() + db, copy));
    progress("  load own %.1f ms, restored %.1f ms, restore alone %.1f ms, "
             "file copy %.1f ms",
             out.load_own.back(), out.load_restored.back(), out.restore.back(),
             out.file_copy.back());
  }
}

void print(const char* name, double value, const char* unit) {
  std::printf("%s=%.2f %s\n", name, value, unit);
}

void report(const replica_options& opts, const figures& f) {
  std::printf("mib=%zu MiB\nruns=%d runs\n", opts.mib, opts.runs);
  // Ratios within an epoch, then their median (see measure_commits).
  std::vector<double> copies, disk, over_disk;
  for (size_t i = 0; i < f.commit_r0.size(); ++i) {
    copies.push_back(f.commit_r1[i] / f.commit_r0[i]);
    disk.push_back(f.disk_4[i] / f.disk_2[i]);
    over_disk.push_back(copies.back() / disk.back());
  }
  print("commit_ms_r0", median(f.commit_r0), "ms");
  print("commit_ms_r1", median(f.commit_r1), "ms");
  print("commit_r1_vs_r0", median(copies), "x");
  // The restore and the file copy of the same run, as a ratio, then the
  // median: the disk's speed varies from minute to minute.
  std::vector<double> vs_copy;
  for (size_t i = 0; i < f.restore.size(); ++i)
    vs_copy.push_back(f.file_copy[i] / f.restore[i]);
  print("load_ms_own", median(f.load_own), "ms");
  print("load_ms_restored", median(f.load_restored), "ms");
  print("restore_ms", median(f.restore), "ms");
  print("file_copy_ms", median(f.file_copy), "ms");
  print("restore_vs_file_copy", median(vs_copy), "x");
  print("disk_ms_2_files", median(f.disk_2), "ms");
  print("disk_ms_4_files", median(f.disk_4), "ms");
  print("disk_4_vs_2", median(disk), "x");
  print("copies_vs_disk", median(over_disk), "x");
}

} // namespace

int main(int argc, char** argv) {
  replica_options opts;
  try {
    if (!parse(argc, argv, opts))
      return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replica_bench: %s\n", e.what());
    return 2;
  }
  auto scratch = make_scratch_dir({});
  figures results;
  int rc = 0;
  // Declared before the actor system, hence stopped after it.
  std::vector<node_daemon> daemons;
  try {
    auto binary = sibling_program(argv[0], "epochrt");
    for (int i = 0; i < 3; ++i) {
      auto root = scratch + "/d" + std::to_string(i);
      daemons.push_back(start_node_daemon(binary, root, root + ".log",
                                          std::chrono::seconds(20)));
    }
    progress("replica_bench: %zu MiB over 2 daemons (+1 spare), %d runs",
             opts.mib, opts.runs);
    measure(opts, scratch, daemons, results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replica_bench: %s\n", e.what());
    rc = 1;
  }
  for (auto& daemon : daemons)
    daemon.stop();
  remove_tree(scratch);
  if (rc == 0)
    report(opts, results);
  return rc;
}
