// collectives_bench: what epochrt's collectives and channels cost, each
// against a baseline doing the same work in the same run.
//
//   collectives_bench [--sizes LIST] [--procs LIST] [--runs R] [--items N]
//                     [--capacity C] [--epoch-runs E] [--job PATH]
//                     [--only inproc,daemons,gloo,mpi,channel,caf,epoch]
//                     [--epochrt PATH] [--verbose]
//
// 1. All-reduce (sum) of f32 buffers of each size (4 KiB, 1, 16, 64 MiB):
//    - in-process: the 3 nodes of one local_session, one task per node
//      whose step runs Allreduce K times; the time of the group, less the
//      time of a group of one trivial op per node (the set-up), over K.
//      Baseline: memcpy of the same bytes. Tasks with the node's (global)
//      workspace; the same with private workspaces is printed too.
//    - over P `epochrt node` daemons on 127.0.0.1 for each P of --procs
//      (3, 8, 16, 32), the same groups on a distributed_session.
//      Baselines: Gloo's allreduce (TCP transport on 127.0.0.1, P copies
//      of this program, --gloo-worker) and Open MPI's MPI_Allreduce
//      (collectives_mpi under mpirun, P processes, TCP on loopback), each
//      with the whole machine to itself. The ratio is against the faster
//      of the two: of bandwidth (bytes of one node's buffer / time per
//      all-reduce) from 1 MiB up, of latency (time per all-reduce)
//      below.
// 2. Channel throughput: items of f32 [1024] (4 KiB) put by a task on
//    daemon A into a channel hosted by daemon B and taken by a task on B.
//    Baseline: bare CAF request/response of 4 KiB between two processes
//    (this program as --serve-caf-sink and --caf-client), one at a time.
// 3. An epoch of examples/jobs/data_parallel.json over 3 daemons against
//    the sum of the same epoch's compute alone (its collectives replaced by
//    no-ops) and its collectives alone (its compute taken out). No
//    checkpoints in any of the three.
//
// Every figure is the median over R runs (E jobs per variant for the
// epoch). Progress and per-run figures go
// to stderr; stdout gets one line per figure.

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "bench/bench_processes.hpp"
#include "bench/bench_util.hpp"
#include "bench/caf_item_peer.hpp"
#include "bench/command_line.hpp"
#include "bench/gloo_allreduce.hpp"
#include "bench/job_variants.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/logging.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>

#ifndef EPOCHRT_BENCH_SOURCE_DIR
#  define EPOCHRT_BENCH_SOURCE_DIR "."
#endif

namespace {

using namespace epochrt::bench;
using epochrt::process::tail_of;
using std::chrono::milliseconds;
using std::chrono::seconds;

/// The nodes of the in-process, channel and epoch figures.
constexpr int node_count = 3;
constexpr double mb = 1e6;

/// Sizes from this one up are judged by bandwidth, smaller ones by
/// latency.
constexpr int bandwidth_kib = 1024;

struct bench_options {
  /// In KiB.
  std::vector<int> sizes_kib{4, 1024, 16384, 65536};
  /// Processes of the all-reduce over daemons and of its baselines.
  std::vector<int> procs{3, 8, 16, 32};
  int runs = 3;
  /// Items per run of the channel figure and of its CAF baseline.
  int items = 2000;
  /// Jobs per variant of the epoch figure (each is cheap: 11 epochs).
  int epoch_runs = 9;
  /// Capacity of the channel.
  int capacity = 16;
  bool inproc = true;
  bool daemons = true;
  bool gloo = true;
  bool mpi = true;
  bool channel = true;
  bool caf = true;
  bool epoch = true;
  std::string job;
  std::string epochrt;
  bool verbose = false;
};

void usage(const char* argv0) {
  std::fprintf(
    stderr,
    "usage: %s [--sizes LIST] [--procs LIST] [--runs R] [--items N]\n"
    "          [--capacity C] [--epoch-runs E] [--job PATH] [--only "
    "inproc,daemons,gloo,mpi,channel,caf,epoch]\n"
    "          [--epochrt PATH] [--verbose]\n"
    "\n"
    "  --sizes LIST  all-reduce sizes of f32, K for KiB, M or nothing for\n"
    "                MiB (default 4K,1M,16M,64M)\n"
    "  --procs LIST  processes of the all-reduce over daemons, Gloo and MPI\n"
    "                (default 3,8,16,32)\n"
    "  --runs R      repetitions; medians are reported (default 3)\n"
    "  --items N     items per run of the channel figure (default 2000)\n"
    "  --epoch-runs E  jobs per variant of the epoch figure (default 9)\n"
    "  --capacity C  capacity of the channel (default 16)\n"
    "  --job PATH    the job of the epoch figure (default\n"
    "                examples/jobs/data_parallel.json of the source tree)\n"
    "  --only L      measure only the listed parts\n"
    "  --epochrt P   the epochrt program that serves the daemons (default:\n"
    "                the one beside this program)\n"
    "  --verbose     epochrt logs at info level (default: warn)\n"
    "\n"
    "Progress goes to stderr; one line per figure to stdout.\n",
    argv0);
}

bool parse_parts(std::string_view list, bench_options& out) {
  out.inproc = out.daemons = out.gloo = out.mpi = out.channel = out.caf
    = out.epoch = false;
  return for_each_item(list, [&](std::string_view item) {
    if (item == "inproc")
      out.inproc = true;
    else if (item == "daemons")
      out.daemons = true;
    else if (item == "gloo")
      out.gloo = true;
    else if (item == "mpi")
      out.mpi = true;
    else if (item == "channel")
      out.channel = true;
    else if (item == "caf")
      out.caf = true;
    else if (item == "epoch")
      out.epoch = true;
    else
      return false;
    return true;
  });
}

bool parse_options(int argc, char** argv, bench_options& out, int& exit_code) {
  exit_code = 2;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string inline_value;
    bool has_inline = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != arg.npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline)
        return inline_value;
      return i + 1 < argc ? argv[++i] : "";
    };
    if (arg == "-h" || arg == "--help") {
      usage(argv[0]);
      exit_code = 0;
      return false;
    } else if (arg == "--sizes") {
      if (!parse_size_list(value(), out.sizes_kib)) {
        std::fprintf(stderr,
                     "--sizes takes a list of sizes from 1K to 1024M, e.g. "
                     "4K,1M,64M\n");
        return false;
      }
    } else if (arg == "--procs") {
      if (!parse_int_list(value(), out.procs)
          || *std::min_element(out.procs.begin(), out.procs.end()) < 2
          || *std::max_element(out.procs.begin(), out.procs.end()) > 256) {
        std::fprintf(stderr,
                     "--procs takes a list of counts from 2 to 256, e.g. "
                     "3,8\n");
        return false;
      }
    } else if (arg == "--runs") {
      if (!parse_count(value(), 1, 1000, out.runs)) {
        std::fprintf(stderr, "--runs needs a count from 1 to 1000\n");
        return false;
      }
    } else if (arg == "--items") {
      if (!parse_count(value(), 1, 10'000'000, out.items)) {
        std::fprintf(stderr, "--items needs a count from 1 to 10000000\n");
        return false;
      }
    } else if (arg == "--epoch-runs") {
      if (!parse_count(value(), 1, 1000, out.epoch_runs)) {
        std::fprintf(stderr, "--epoch-runs needs a count from 1 to 1000\n");
        return false;
      }
    } else if (arg == "--capacity") {
      if (!parse_count(value(), 1, 1'000'000, out.capacity)) {
        std::fprintf(stderr, "--capacity needs a count from 1 to 1000000\n");
        return false;
      }
    } else if (arg == "--only") {
      if (!parse_parts(value(), out)) {
        std::fprintf(stderr,
                     "--only takes a comma-separated list of inproc, "
                     "daemons, gloo, mpi, channel, caf, epoch\n");
        return false;
      }
    } else if (arg == "--job") {
      out.job = value();
    } else if (arg == "--epochrt") {
      out.epochrt = value();
    } else if (arg == "--verbose" && !has_inline) {
      out.verbose = true;
    } else {
      std::fprintf(stderr, "unknown option: %s\n", argv[i]);
      usage(argv[0]);
      return false;
    }
  }
  if (out.job.empty())
    out.job = EPOCHRT_BENCH_SOURCE_DIR "/examples/jobs/data_parallel.json";
  exit_code = 0;
  return true;
}

/// All-reduces per timing of a size: 128 MiB of every size (at least two
/// calls, at most 256), so that a timing of 1 MiB is not mostly the
/// group's start and its wake-ups, and 64 MiB over daemons stays within
/// seconds.
int iters_for(int kib) {
  return std::clamp((128 * 1024) / kib, 2, 256);
}

/// `xs` as a comma-separated list, each followed by `suffix`.
std::string join(const std::vector<int>& xs, const char* suffix = "") {
  std::string result;
  for (auto x : xs)
    result += (result.empty() ? "" : ",") + std::to_string(x) + suffix;
  return result;
}

/// The iterations of each size, as the workers take them.
std::string iters_list(const std::vector<int>& sizes_kib) {
  std::vector<int> iters;
  for (auto kib : sizes_kib)
    iters.push_back(iters_for(kib));
  return join(iters);
}

/// What every element of an all-reduce (sum) over `nodes` nodes gives,
/// node i contributing i + 1.
double expected_sum(int nodes) {
  return nodes * (nodes + 1) / 2.0;
}

// -- groups ------------------------------------------------------------------

using registry_ptr = std::shared_ptr<const epochrt::op_registry>;

std::string node_name(int i) {
  return "trainer_" + std::to_string(i);
}

std::map<std::string, epochrt::tensor> args_of(
  std::initializer_list<std::pair<const std::string, epochrt::tensor>> xs) {
  return std::map<std::string, epochrt::tensor>{xs};
}

// Node i's "ar_in" on each of `nodes` nodes: `count` floats of value
// i + 1 (the sum is then expected_sum(nodes) at every element).
epochrt::task_group_def fill_group(size_t count, int nodes) {
  epochrt::task_group_def group;
  for (int i = 0; i < nodes; ++i)
    group.tasks.push_back(epochrt::make_task(
      "fill_" + std::to_string(i), node_name(i),
      {epochrt::make_op(
        "ConstantFill", {}, {"ar_in"},
        args_of(
          {{"shape",
            epochrt::make_tensor<int64_t>({1}, {static_cast<int64_t>(count)})},
           {"value", epochrt::make_scalar<double>(i + 1.0)}}))}));
  return group;
}

// One task on each of `nodes` nodes whose one step runs Allreduce(sum) of
// ar_in into `out` `iters` times, in the node's workspace (global) or a
// private one.
epochrt::task_group_def allreduce_group(int iters, const std::string& out,
                                        epochrt::workspace_type ws, int nodes) {
  epochrt::task_group_def group;
  for (int i = 0; i < nodes; ++i) {
    auto task = epochrt::make_task(
      "allreduce_" + std::to_string(i), node_name(i),
      {epochrt::make_op(
        "Allreduce", {"ar_in"}, {out},
        args_of({{"collective", epochrt::make_string_tensor({}, {"bench"})},
                 {"op", epochrt::make_string_tensor({}, {"sum"})}}))},
      {}, ws);
    task.steps[0].num_iter = iters;
    group.tasks.push_back(std::move(task));
  }
  return group;
}

// The set-up of a group: one task of one trivial op on each of `nodes`.
epochrt::task_group_def tick_group(int nodes) {
  epochrt::task_group_def group;
  for (int i = 0; i < nodes; ++i)
    group.tasks.push_back(
      epochrt::make_task("tick_" + std::to_string(i), node_name(i),
                         {epochrt::make_op("ConstantFill", {}, {"bench_tick"})},
                         {}, epochrt::workspace_type::private_scratch));
  return group;
}

const std::string channel_name = "bench_items";

// A producer on trainer_0 puts `items` items of f32 [1024] into a channel
// hosted by trainer_1 and closes it; a consumer on trainer_1 takes them
// until the channel is closed and empty.
epochrt::task_group_def channel_group(int items) {
  epochrt::task_group_def group;
  auto channel_arg = [] {
    return args_of(
      {{"channel", epochrt::make_string_tensor({}, {channel_name})}});
  };
  epochrt::task_def producer;
  producer.name = "producer";
  producer.node = node_name(0);
  producer.workspace = epochrt::workspace_type::private_scratch;
  producer.steps.push_back(epochrt::step_def{
    "fill",
    {epochrt::make_op(
      "ConstantFill", {}, {"item"},
      args_of({{"shape", epochrt::make_tensor<int64_t>({1}, {1024})},
               {"value", epochrt::make_scalar<double>(1.0)}}))},
    1,
    {}});
  producer.steps.push_back(epochrt::step_def{
    "put",
    {epochrt::make_op("EnqueueBlobs", {"item"}, {}, channel_arg())},
    items,
    {}});
  producer.steps.push_back(epochrt::step_def{
    "close",
    {epochrt::make_op("CloseBlobsQueue", {}, {}, channel_arg())},
    1,
    {}});
  epochrt::task_def consumer;
  consumer.name = "consumer";
  consumer.node = node_name(1);
  consumer.workspace = epochrt::workspace_type::private_scratch;
  consumer.steps.push_back(epochrt::step_def{
    "take",
    {epochrt::make_op("SafeDequeueBlobs", {}, {"taken", "items_done"},
                      channel_arg())},
    0,
    "items_done"});
  group.tasks.push_back(std::move(producer));
  group.tasks.push_back(std::move(consumer));
  return group;
}

std::vector<epochrt::channel_def> channel_defs(int capacity) {
  return {epochrt::channel_def{channel_name, node_name(1), capacity, {"x"}}};
}

// Time limits that end a wedged run in seconds rather than hours.
epochrt::session_options bench_timeouts() {
  epochrt::session_options opts;
  opts.group_timeout = seconds(120);
  opts.checkpoint_timeout = seconds(60);
  opts.request_timeout = seconds(30);
  return opts;
}

/// Seconds one run of `group` takes; throws when it fails.
double time_group(epochrt::session& sess, const epochrt::task_group_def& group,
                  const char* what,
                  const std::vector<epochrt::channel_def>& channels = {}) {
  auto start = clock_type::now();
  auto outputs = sess.run(group, what, 0, channels);
  auto elapsed = seconds_since(start);
  if (!outputs)
    throw std::runtime_error(
      std::string{what} + " failed: " + epochrt::error_text(outputs.error()));
  return elapsed;
}

/// The set-up cost of a group over `nodes` nodes: the median of a few.
double setup_seconds(epochrt::session& sess, int nodes) {
  auto group = tick_group(nodes);
  std::vector<double> xs;
  for (int i = 0; i < 7; ++i)
    xs.push_back(time_group(sess, group, "tick group"));
  return median(xs);
}

// -- figures -----------------------------------------------------------------

/// By size in KiB: seconds per all-reduce (or per memcpy), one per run.
using timings = std::map<int, std::vector<double>>;

struct figures {
  timings memcpy_s;
  timings inproc_s;
  timings inproc_private_s;
  // By process count, then size.
  std::map<int, timings> daemons_s;
  std::map<int, timings> gloo_s;
  std::map<int, timings> mpi_s;
  // By process count: why the baseline has no figures.
  std::map<int, std::string> gloo_skipped;
  std::map<int, std::string> mpi_skipped;
  // Items per second, one per run.
  std::vector<double> channel_items_s;
  std::vector<double> caf_items_s;
  std::string caf_skipped;
  // Seconds per epoch, one per run.
  std::vector<double> epoch_full_s;
  std::vector<double> epoch_compute_s;
  std::vector<double> epoch_collectives_s;
};

// Seconds per memcpy of `bytes` between two buffers touched beforehand.
double memcpy_seconds(size_t bytes, int iters) {
  std::vector<char> src(bytes, '\x5a');
  std::vector<char> dst(bytes, '\0');
  std::memcpy(dst.data(), src.data(), bytes); // warm
  auto start = clock_type::now();
  for (int i = 0; i < iters; ++i) {
    src[static_cast<size_t>(i) % bytes] = static_cast<char>(i);
    std::memcpy(dst.data(), src.data(), bytes);
  }
  auto elapsed = seconds_since(start);
  // Keeps the copies from being optimised away.
  if (dst[0] == '\x01' && dst[1] == '\x02')
    progress("(unlikely bytes)");
  return elapsed / iters;
}

// Checks that an all-reduce of `kib` KiB over `nodes` nodes gives
// 1 + 2 + ... + nodes at its first and last element, once per size and
// session; the run also warms up the nodes' buffers.
void check_allreduce(epochrt::session& sess, int kib, int nodes,
                     const char* where) {
  auto group
    = allreduce_group(1, "ar_check", epochrt::workspace_type::global, nodes);
  time_group(sess, group, "all-reduce check");
  auto value = sess.fetch(node_name(0), "ar_check");
  if (!value)
    throw std::runtime_error(std::string{"fetching the all-reduce result: "}
                             + epochrt::error_text(value.error()));
  auto count = value->element_count();
  auto* x = value->values<float>();
  auto want = static_cast<float>(expected_sum(nodes));
  if (count != (static_cast<size_t>(kib) << 8) || x[0] != want
      || x[count - 1] != want)
    throw std::runtime_error(std::string{where} + " all-reduce of "
                             + size_name(kib) + " gave a wrong result");
}

// Seconds per all-reduce of each size on `sess` by tasks of workspace `ws`,
// one figure per run; the set-up of the group (a group of one trivial op
// per node) subtracted.
void measure_allreduce(epochrt::session& sess, const bench_options& opts,
                       const char* where, epochrt::workspace_type ws, int nodes,
                       timings& out, timings* memcpy_out) {
  for (auto kib : opts.sizes_kib) {
    auto count = static_cast<size_t>(kib) << 8;
    auto iters = iters_for(kib);
    time_group(sess, fill_group(count, nodes), "fill");
    check_allreduce(sess, kib, nodes, where);
    auto group = allreduce_group(iters, "ar_out", ws, nodes);
    time_group(sess, group, "all-reduce warm-up");
    for (int r = 0; r < opts.runs; ++r) {
      auto setup = setup_seconds(sess, nodes);
      auto total = time_group(sess, group, "all-reduce");
      auto per = std::max(total - setup, 1e-9) / iters;
      out[kib].push_back(per);
      std::string extra;
      if (memcpy_out != nullptr) {
        auto m = memcpy_seconds(count * sizeof(float), std::max(iters, 8));
        (*memcpy_out)[kib].push_back(m);
        char buf[64];
        std::snprintf(buf, sizeof(buf), ", memcpy %.1f MB/s",
                      count * 4 / m / mb);
        extra = buf;
      }
      progress("  %s %s run %d: %d all-reduces in %.2f ms, set-up "
               "%.2f ms: %.3f ms each, %.1f MB/s%s",
               where, size_name(kib).c_str(), r + 1, iters, total * 1e3,
               setup * 1e3, per * 1e3, count * 4 / per / mb, extra.c_str());
    }
  }
}

void measure_inproc(const bench_options& opts, const registry_ptr& ops,
                    figures& out) {
  progress("in-process all-reduce, %d nodes of one local_session", node_count);
  caf::actor_system_config cfg;
  epochrt::configure(cfg, bench_logging(opts.verbose));
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  epochrt::local_session local{sys, ops, bench_timeouts()};
  measure_allreduce(local, opts, "in-process", epochrt::workspace_type::global,
                    node_count, out.inproc_s, &out.memcpy_s);
  // Private tasks, as data_parallel.json's: the same all-reduce, its
  // result put into a private workspace.
  measure_allreduce(local, opts, "in-process private",
                    epochrt::workspace_type::private_scratch, node_count,
                    out.inproc_private_s, nullptr);
}

// A distributed session over the daemons, in an actor system of its own
// (each part starts from fresh connections and empty workspaces).
class daemon_session {
public:
  daemon_session(const bench_options& opts, const registry_ptr& ops,
                 const std::vector<node_daemon>& daemons)
    : sys_(configured(cfg_, opts.verbose)) {
    std::map<std::string, epochrt::node_address> where;
    for (size_t i = 0; i < daemons.size(); ++i)
      where.emplace(node_name(static_cast<int>(i)),
                    epochrt::node_address{"127.0.0.1", daemons[i].port()});
    epochrt::distributed_session_options dopts;
    dopts.timeouts = bench_timeouts();
    session_ = std::make_unique<epochrt::distributed_session>(
      sys_, ops, std::move(where), std::move(dopts));
    if (auto err = session_->connect_all())
      throw std::runtime_error("connecting to the daemons: "
                               + epochrt::error_text(err));
  }

  epochrt::distributed_session& get() {
    return *session_;
  }

private:
  static caf::actor_system_config& configured(caf::actor_system_config& cfg,
                                              bool verbose) {
    if (auto err = epochrt::configure_network(cfg, {}, bench_logging(verbose)))
      throw std::runtime_error(epochrt::coded_error_text(err));
    epochrt::configure_scheduler(cfg, 2);
    return cfg;
  }

  // The system keeps a reference to its config: declared first, it goes
  // last. The session goes first: its proxies live in the system.
  caf::actor_system_config cfg_;
  caf::actor_system sys_;
  std::unique_ptr<epochrt::distributed_session> session_;
};

void measure_daemons(const bench_options& opts, const registry_ptr& ops,
                     const std::vector<node_daemon>& daemons, figures& out) {
  auto nodes = static_cast<int>(daemons.size());
  progress("all-reduce over %d daemons", nodes);
  daemon_session ds{opts, ops, daemons};
  measure_allreduce(ds.get(), opts, "daemons", epochrt::workspace_type::global,
                    nodes, out.daemons_s[nodes], nullptr);
}

void measure_channel(const bench_options& opts, const registry_ptr& ops,
                     const std::vector<node_daemon>& daemons, figures& out) {
  progress("channel: %d items of f32 [1024] from daemon %s to a channel "
           "(capacity %d) and a consumer on daemon %s",
           opts.items, node_name(0).c_str(), opts.capacity,
           node_name(1).c_str());
  daemon_session ds{opts, ops, daemons};
  auto& sess = ds.get();
  auto channels = channel_defs(opts.capacity);
  time_group(sess, channel_group(std::max(1, opts.items / 10)),
             "channel warm-up", channels);
  auto group = channel_group(opts.items);
  for (int r = 0; r < opts.runs; ++r) {
    auto setup = setup_seconds(sess, 2);
    auto total = time_group(sess, group, "channel", channels);
    auto rate = opts.items / std::max(total - setup, 1e-9);
    out.channel_items_s.push_back(rate);
    progress("  channel run %d: %.1f ms, set-up %.2f ms: %.0f items/s", r + 1,
             total * 1e3, setup * 1e3, rate);
  }
}

// -- the baselines in other processes -----------------------------------------

// Parses the workers' "KIB SECONDS" lines into `out` and checks their
// "check KIB VALUE" lines against `procs` processes' sum; returns an
// error text, empty when fine.
std::string parse_worker_output(const std::string& text, int procs,
                                timings& out) {
  std::istringstream in{text};
  std::string line;
  std::string problem;
  while (std::getline(in, line)) {
    std::istringstream words{line};
    std::string first;
    words >> first;
    if (first == "check") {
      int kib = 0;
      double value = 0;
      words >> kib >> value;
      if (value != expected_sum(procs))
        problem = "its all-reduce of " + size_name(kib) + " gave "
          + std::to_string(value) + ", not "
          + std::to_string(expected_sum(procs));
      continue;
    }
    double s = 0;
    words >> s;
    if (!first.empty() && words)
      out[std::atoi(first.c_str())].push_back(s);
  }
  return problem;
}

/// How long a baseline over `procs` processes may take for all sizes.
seconds baseline_limit(int procs) {
  return seconds(120 + 20 * procs);
}

void measure_gloo(const bench_options& opts, const std::string& self,
                  const std::string& scratch, int procs, figures& out) {
  if (!gloo_available()) {
    out.gloo_skipped[procs]
      = "built without Gloo (install libgloo-dev, reconfigure)";
    return;
  }
  progress("Gloo allreduce: %d processes, TCP on 127.0.0.1", procs);
  auto store = scratch + "/gloo_store";
  remove_tree(store);
  std::filesystem::create_directories(store);
  std::vector<child_process> workers;
  for (int rank = 0; rank < procs; ++rank)
    workers.push_back(start_child(
      {self, "--gloo-worker", std::to_string(rank), std::to_string(procs),
       store, join(opts.sizes_kib, "K"), iters_list(opts.sizes_kib),
       std::to_string(opts.runs)},
      scratch + "/gloo_" + std::to_string(rank) + ".log", rank == 0));
  std::string text;
  std::string ignored;
  bool timed_out
    = !workers[0].read_to_end(baseline_limit(procs), text, ignored);
  int failed = 0;
  for (auto& w : workers)
    if (finish(w, timed_out ? milliseconds{0} : milliseconds{10000}) != 0)
      ++failed;
  if (timed_out || failed > 0) {
    out.gloo_skipped[procs] = std::string{"failed"}
      + (timed_out ? " (timed out)" : "") + "; its log:\n"
      + tail_of(scratch + "/gloo_0.log", 5);
    return;
  }
  auto& figures = out.gloo_s[procs];
  if (auto problem = parse_worker_output(text, procs, figures);
      !problem.empty())
    out.gloo_skipped[procs] = "wrong result: " + problem;
  for (auto& [kib, xs] : figures)
    for (auto s : xs)
      progress("  gloo %s: %.3f ms each, %.1f MB/s", size_name(kib).c_str(),
               s * 1e3, kib * 1024.0 / s / mb);
}

void measure_mpi(const bench_options& opts, const char* argv0,
                 const std::string& scratch, int procs, figures& out) {
#ifdef EPOCHRT_BENCH_MPIEXEC
  auto program = sibling_program(argv0, "collectives_mpi");
  progress("MPI_Allreduce: %d processes, Open MPI TCP on loopback", procs);
  // ob1 with only the self and tcp BTLs: every byte over loopback TCP (UCX
  // or the shared-memory BTL would bypass it). No binding: 3 ranks share 2
  // cores.
  auto mpirun = start_child({EPOCHRT_BENCH_MPIEXEC,
                             "--allow-run-as-root",
                             "--oversubscribe",
                             "-np",
                             std::to_string(procs),
                             "--bind-to",
                             "none",
                             "--mca",
                             "pml",
                             "ob1",
                             "--mca",
                             "btl",
                             "self,tcp",
                             "--mca",
                             "btl_tcp_if_include",
                             "lo",
                             "--mca",
                             "oob_tcp_if_include",
                             "lo",
                             program,
                             join(opts.sizes_kib, "K"),
                             iters_list(opts.sizes_kib),
                             std::to_string(opts.runs)},
                            scratch + "/mpi.log", true);
  std::string text;
  std::string ignored;
  bool timed_out = !mpirun.read_to_end(baseline_limit(procs), text, ignored);
  auto status = finish(mpirun, timed_out ? milliseconds{0} : seconds(10));
  if (timed_out || status != 0) {
    out.mpi_skipped[procs] = "mpirun failed (status " + std::to_string(status)
      + (timed_out ? ", timed out" : "") + "); its log:\n"
      + tail_of(scratch + "/mpi.log", 5);
    return;
  }
  auto& figures = out.mpi_s[procs];
  if (auto problem = parse_worker_output(text, procs, figures);
      !problem.empty())
    out.mpi_skipped[procs] = "wrong result: " + problem;
  for (auto& [kib, xs] : figures)
    for (auto s : xs)
      progress("  mpi  %s: %.3f ms each, %.1f MB/s", size_name(kib).c_str(),
               s * 1e3, kib * 1024.0 / s / mb);
#else
  (void)opts;
  (void)argv0;
  (void)scratch;
  out.mpi_skipped[procs] = "built without MPI (install libopenmpi-dev and "
                           "openmpi-bin, reconfigure)";
#endif
}

void measure_caf(const bench_options& opts, const std::string& self,
                 const std::string& scratch, figures& out) {
  progress("CAF request/response: %d items of 4 KiB between two processes",
           opts.items);
  auto sink = start_listening({self, "--serve-caf-sink"},
                              scratch + "/caf_sink.log", seconds(20));
  auto client = start_child({self, "--caf-client", std::to_string(sink.port()),
                             std::to_string(opts.items),
                             std::to_string(opts.runs), "4096"},
                            scratch + "/caf_client.log", true);
  std::string text;
  std::string ignored;
  bool timed_out = !client.read_to_end(seconds(120), text, ignored);
  auto status = finish(client, timed_out ? milliseconds{0} : seconds(10));
  sink.stop();
  if (timed_out || status != 0) {
    out.caf_skipped = "the CAF client failed (status " + std::to_string(status)
      + "); its log:\n" + tail_of(scratch + "/caf_client.log", 5);
    return;
  }
  std::istringstream in{text};
  double s = 0;
  while (in >> s) {
    out.caf_items_s.push_back(opts.items / s);
    progress("  caf run: %.1f ms: %.0f items/s", s * 1e3, opts.items / s);
  }
}

// -- the epoch of a job ------------------------------------------------------

/// Seconds per epoch of `j` on `sess`, from the end of its first epoch to
/// the end of its last (init and the first epoch's warm-up excluded).
double per_epoch_seconds(epochrt::session& sess, epochrt::job j,
                         const char* what) {
  std::vector<clock_type::time_point> ends;
  epochrt::job_runner_options options;
  // Runs on the job runner's thread after each epoch.
  options.on_epoch = [&](int64_t, const std::vector<epochrt::task_output>&) {
    ends.push_back(clock_type::now());
  };
  epochrt::job_runner runner{
    std::move(j), nullptr, {}, nullptr, std::move(options)};
  auto last = runner.train(sess);
  if (!last)
    throw std::runtime_error(
      std::string{what} + " job failed: " + epochrt::error_text(last.error()));
  if (ends.size() < 2)
    throw std::runtime_error(std::string{what}
                             + " job ran fewer than 2 epochs");
  std::chrono::duration<double> span = ends.back() - ends.front();
  return span.count() / static_cast<double>(ends.size() - 1);
}

// The types and shapes of the collectives' inputs: one epoch of the job
// without its collectives, its epoch tasks writing the nodes' workspaces,
// then a fetch of each input.
std::vector<typed_input> discover_inputs(epochrt::session& sess,
                                         const epochrt::job_def& def) {
  auto probe = without_collectives(def, true);
  auto run = [&](const epochrt::task_group_def& group, const char* label) {
    auto outputs = sess.run(group, label, 0, probe.channels);
    if (!outputs)
      throw std::runtime_error(std::string{"probing the job's "} + label
                               + " group: "
                               + epochrt::error_text(outputs.error()));
  };
  run(probe.init_group, "init");
  run(probe.epoch_group, "epoch");
  std::vector<typed_input> result;
  for (auto& in : collective_inputs(def)) {
    auto value = sess.fetch(in.node, in.blob);
    if (!value)
      throw std::runtime_error("fetching " + in.node + ":" + in.blob + ": "
                               + epochrt::error_text(value.error()));
    result.push_back(typed_input{in, value->type, value->shape});
  }
  return result;
}

void measure_epoch(const bench_options& opts, const registry_ptr& ops,
                   const std::vector<node_daemon>& daemons, figures& out) {
  auto loaded = epochrt::load_job_file(opts.job, *ops);
  if (!loaded)
    throw std::runtime_error(epochrt::error_text(loaded.error()));
  for (auto& node : loaded->nodes())
    if (node != node_name(0) && node != node_name(1) && node != node_name(2))
      throw std::runtime_error(opts.job + ": node '" + node
                               + "' is not one of trainer_0..2, the daemons");
  auto full = loaded->def();
  progress("an epoch of %s over %d daemons", opts.job.c_str(), node_count);
  daemon_session ds{opts, ops, daemons};
  auto& sess = ds.get();
  auto compute = without_collectives(full);
  auto collectives = collectives_only(full, discover_inputs(sess, full));
  auto as_job = [](const epochrt::job_def& def) {
    return epochrt::job::from_def(def);
  };
  per_epoch_seconds(sess, as_job(full), "warm-up");
  for (int r = 0; r < opts.epoch_runs; ++r) {
    auto f = per_epoch_seconds(sess, as_job(full), "full");
    auto c = per_epoch_seconds(sess, as_job(compute), "compute-only");
    auto a = per_epoch_seconds(sess, as_job(collectives), "collectives-only");
    out.epoch_full_s.push_back(f);
    out.epoch_compute_s.push_back(c);
    out.epoch_collectives_s.push_back(a);
    progress("  epoch run %d: %.2f ms; compute alone %.2f ms, collectives "
             "alone %.2f ms",
             r + 1, f * 1e3, c * 1e3, a * 1e3);
  }
}

// -- the report --------------------------------------------------------------

double bandwidth(int kib, double s) {
  return kib * 1024.0 / s / mb;
}

/// "NAME FIGURE" of one implementation's median, or "NAME -".
std::string figure_of(const char* name, const timings* t, int kib,
                      double& value) {
  char buf[96];
  value = 0;
  const std::vector<double>* xs = nullptr;
  if (t != nullptr)
    if (auto it = t->find(kib); it != t->end() && !it->second.empty())
      xs = &it->second;
  if (xs == nullptr) {
    std::snprintf(buf, sizeof(buf), "  %s -", name);
    return buf;
  }
  auto s = median(*xs);
  if (kib >= bandwidth_kib) {
    value = bandwidth(kib, s);
    std::snprintf(buf, sizeof(buf), "  %s %.1f MB/s", name, value);
  } else {
    value = s;
    std::snprintf(buf, sizeof(buf), "  %s %.1f us", name, s * 1e6);
  }
  return buf;
}

template <class Map>
const timings* find_procs(const Map& m, int procs) {
  auto it = m.find(procs);
  return it == m.end() ? nullptr : &it->second;
}

// One line per process count and size: epochrt over daemons, Gloo and MPI.
// From bandwidth_kib up the ratio is of bandwidths against the faster
// peer; below it, of latencies against MPI's.
void report_processes(const bench_options& opts, const figures& f) {
  for (auto procs : opts.procs) {
    if (opts.gloo)
      if (auto it = f.gloo_skipped.find(procs); it != f.gloo_skipped.end())
        std::printf("gloo baseline at %d processes skipped: %s\n", procs,
                    it->second.c_str());
    if (opts.mpi)
      if (auto it = f.mpi_skipped.find(procs); it != f.mpi_skipped.end())
        std::printf("mpi baseline at %d processes skipped: %s\n", procs,
                    it->second.c_str());
    for (auto kib : opts.sizes_kib) {
      double ours = 0;
      double gloo = 0;
      double mpi = 0;
      auto line = "allreduce_" + std::to_string(procs) + "procs_"
        + size_name(kib) + " "
        + figure_of("epochrt", find_procs(f.daemons_s, procs), kib, ours)
        + figure_of("gloo", find_procs(f.gloo_s, procs), kib, gloo)
        + figure_of("mpi", find_procs(f.mpi_s, procs), kib, mpi);
      char buf[128];
      if (kib >= bandwidth_kib) {
        auto best = std::max(gloo, mpi);
        if (ours > 0 && best > 0)
          std::snprintf(buf, sizeof(buf), "  ratio %.2f vs %s (target >= %.1f)",
                        ours / best, gloo >= mpi ? "gloo" : "mpi",
                        procs <= 3 ? 1.0 : 0.8);
        else
          std::snprintf(buf, sizeof(buf), "  ratio -");
      } else {
        if (ours > 0 && mpi > 0)
          std::snprintf(buf, sizeof(buf),
                        "  latency ratio %.2f vs mpi (target <= 2.0)",
                        ours / mpi);
        else
          std::snprintf(buf, sizeof(buf), "  latency ratio -");
      }
      std::printf("%s%s\n", line.c_str(), buf);
    }
  }
}

void report(const bench_options& opts, const figures& f) {
  std::printf("# collectives_bench: in-process, channel and epoch over %d "
              "nodes, all-reduce over %s processes; medians of %d runs (%d "
              "jobs for the epoch); MB/s = 1e6 bytes of one node's buffer "
              "per second\n",
              node_count, join(opts.procs).c_str(), opts.runs, opts.epoch_runs);
  for (auto& [kib, xs] : f.inproc_s) {
    auto bw = bandwidth(kib, median(xs));
    auto m = bandwidth(kib, median(f.memcpy_s.at(kib)));
    std::printf("allreduce_inproc_%s  %.1f MB/s  memcpy %.1f MB/s  ratio "
                "%.2f%s\n",
                size_name(kib).c_str(), bw, m, bw / m,
                kib >= bandwidth_kib ? " (target >= 0.5)" : "");
  }
  for (auto& [kib, xs] : f.inproc_private_s) {
    auto bw = bandwidth(kib, median(xs));
    auto m = bandwidth(kib, median(f.memcpy_s.at(kib)));
    std::printf("allreduce_inproc_private_%s  %.1f MB/s  memcpy %.1f MB/s  "
                "ratio %.2f (tasks with private workspaces)\n",
                size_name(kib).c_str(), bw, m, bw / m);
  }
  report_processes(opts, f);
  if (!f.channel_items_s.empty() || !f.caf_items_s.empty()) {
    std::string line = "channel_daemons_4KiB ";
    char buf[160];
    auto ch = median(f.channel_items_s);
    auto caf = median(f.caf_items_s);
    if (!f.channel_items_s.empty()) {
      std::snprintf(buf, sizeof(buf), " %.0f items/s", ch);
      line += buf;
    } else {
      line += " (not measured)";
    }
    if (!f.caf_items_s.empty()) {
      std::snprintf(buf, sizeof(buf), "  caf %.0f items/s", caf);
      line += buf;
    } else {
      line += "  caf -";
    }
    if (!f.channel_items_s.empty() && !f.caf_items_s.empty()) {
      std::snprintf(buf, sizeof(buf), "  ratio %.2f (target >= 0.5)", ch / caf);
      line += buf;
    }
    std::printf("%s\n", line.c_str());
  }
  if (opts.caf && !f.caf_skipped.empty())
    std::printf("caf baseline skipped: %s\n", f.caf_skipped.c_str());
  if (!f.epoch_full_s.empty()) {
    auto full = median(f.epoch_full_s);
    auto c = median(f.epoch_compute_s);
    auto a = median(f.epoch_collectives_s);
    std::printf("epoch_data_parallel_daemons  %.2f ms  compute %.2f ms + "
                "collectives %.2f ms = %.2f ms  ratio %.2f (target <= 1.2)\n",
                full * 1e3, c * 1e3, a * 1e3, (c + a) * 1e3, full / (c + a));
  }
  std::fflush(stdout);
}

int bench_main(int argc, char** argv) {
  bench_options opts;
  int exit_code = 0;
  if (!parse_options(argc, argv, opts, exit_code))
    return exit_code;
  auto ops = std::make_shared<epochrt::op_registry>();
  if (auto err = epochrt::add_builtin_ops(*ops)) {
    std::fprintf(stderr, "%s\n", epochrt::error_text(err).c_str());
    return 1;
  }
  auto self = sibling_program(argv[0], "collectives_bench");
  figures results;
  std::string scratch;
  int rc = 0;
  // Declared before the sessions' actor systems, hence stopped after them.
  std::vector<node_daemon> daemons;
  auto binary
    = opts.epochrt.empty() ? sibling_program(argv[0], "epochrt") : opts.epochrt;
  auto start_daemons = [&](int count) {
    progress("starting %d node daemons: %s", count, binary.c_str());
    for (int i = 0; i < count; ++i) {
      auto root = scratch + "/" + node_name(i);
      remove_tree(root);
      daemons.push_back(
        start_node_daemon(binary, root, root + ".log", seconds(20)));
      if (opts.verbose)
        progress("  %s on 127.0.0.1:%u (pid %d)", node_name(i).c_str(),
                 daemons.back().port(), static_cast<int>(daemons.back().pid()));
    }
  };
  auto stop_daemons = [&] {
    for (auto& d : daemons)
      d.stop();
    daemons.clear();
  };
  try {
    scratch = make_scratch_dir({});
    if (opts.inproc)
      measure_inproc(opts, ops, results);
    // Each count of processes on its own: epochrt's daemons, then Gloo's
    // and MPI's processes, each with the whole machine.
    for (auto procs : opts.procs) {
      if (opts.daemons) {
        start_daemons(procs);
        measure_daemons(opts, ops, daemons, results);
        stop_daemons();
      }
      if (opts.gloo)
        measure_gloo(opts, self, scratch, procs, results);
      if (opts.mpi)
        measure_mpi(opts, argv[0], scratch, procs, results);
    }
    if (opts.channel || opts.epoch) {
      start_daemons(node_count);
      if (opts.channel)
        measure_channel(opts, ops, daemons, results);
      if (opts.epoch)
        measure_epoch(opts, ops, daemons, results);
      stop_daemons();
    }
    if (opts.caf)
      measure_caf(opts, self, scratch, results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collectives_bench: %s\n", e.what());
    for (int i = 0; i < static_cast<int>(daemons.size()); ++i) {
      auto log = tail_of(scratch + "/" + node_name(i) + ".log", 5);
      if (!log.empty())
        std::fprintf(stderr, "log of daemon %s:\n%s", node_name(i).c_str(),
                     log.c_str());
    }
    rc = 1;
  }
  stop_daemons();
  if (!scratch.empty())
    remove_tree(scratch);
  // What was measured before a failure is worth printing too.
  report(opts, results);
  return rc;
}

} // namespace

int main(int argc, char** argv) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "--serve-caf-sink" && argc == 2)
    return serve_caf_item_sink();
  if (mode == "--caf-client" && argc == 6) {
    int port = 0;
    int items = 0;
    int reps = 0;
    int bytes = 0;
    if (!parse_count(argv[2], 1, 65535, port)
        || !parse_count(argv[3], 1, 10'000'000, items)
        || !parse_count(argv[4], 1, 1000, reps)
        || !parse_count(argv[5], 1, 1 << 30, bytes))
      return 2;
    return run_caf_item_client(static_cast<uint16_t>(port), items, reps, bytes);
  }
  if (mode == "--gloo-worker" && argc == 8) {
    int rank = 0;
    int size = 0;
    allreduce_plan plan;
    if (!parse_count(argv[2], 0, 1023, rank)
        || !parse_count(argv[3], 1, 1024, size) || rank >= size
        || !parse_size_list(argv[5], plan.sizes_kib)
        || !parse_int_list(argv[6], plan.iters)
        || plan.iters.size() != plan.sizes_kib.size()
        || !parse_count(argv[7], 1, 1000, plan.reps))
      return 2;
    return run_gloo_worker(rank, size, argv[4], plan);
  }
  return bench_main(argc, argv);
}
