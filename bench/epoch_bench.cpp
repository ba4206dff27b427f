// epoch_bench: what the runtime adds to every epoch, as opposed to the work
// an epoch does. One "empty epoch" is an epoch of a job whose epoch group
// has one task per node and no ops (plus the epoch limiter's task that ends
// the job): the path every epoch of a job takes -- the job runner actor,
// one run_tasks request per node, the node actors, their tasks on the
// worker pool, the replies gathered -- timed over a whole job_runner::train
// and divided by its epochs. The blocking facade, session::run, which a
// host program calls once per group, is measured too (run_us_*).
//
//   epoch_bench [--nodes N] [--scale-nodes LIST] [--ops N] [--rounds R]
//               [--caf-rounds C] [--remote-rounds M] [--runs K]
//               [--budget-ms B] [--only caf,local,remote]
//               [--epochrt PATH] [--verbose]
//
// Every figure is the median over K runs of the mean per round of one run.
// A timing ends after its rounds or after B ms, whichever comes first, so
// that a busy machine does fewer rounds rather than take minutes (a job is
// stopped gracefully, job_runner::request_stop, once B ms have passed).
// Progress goes to stderr; stdout ends with the summary lines
// `name=value unit`:
//
//   caf_fanout_us        the baseline: one event-based actor sends a request
//                        to each of N in-process actors that reply at once
//                        and waits for all N replies; per round, C rounds.
//                        This is the floor of any actor design that fans an
//                        epoch out to N nodes and gathers their answers.
//                        Every request has a finite timeout, as every
//                        request of epochrt has one (CAF would wait for ever
//                        for a reply from a dead remote node otherwise).
//   caf_fanout_untimed_us the same without timeouts: a timeout costs a trip
//                        through CAF's clock thread per request
//   epoch_us_local       an empty epoch of a job on a local_session: N node
//                        actors in this process; a job of R epochs
//   run_us_local         one session::run of the empty epoch's group from
//                        the host thread: the same fan-out plus a blocking
//                        round trip from a thread outside CAF; R calls
//   epoch_us_remote      an empty epoch of a job on a distributed_session
//                        whose N nodes live on N `epochrt node` daemons on
//                        127.0.0.1, started by the benchmark; M epochs
//   run_us_remote        one session::run over those daemons; M calls
//   caf_remote_fanout_us the remote baseline: the same fan-out to N actors
//                        published by N other processes on 127.0.0.1 with
//                        CAF's own middleman (no epochrt in them), started by
//                        the benchmark; M rounds
//   epoch_local_vs_caf   epoch_us_local / caf_fanout_us
//   epoch_remote_vs_caf  epoch_us_remote / caf_fanout_us
//   epoch_remote_vs_caf_remote epoch_us_remote / caf_remote_fanout_us
//   epoch_remote_vs_local epoch_us_remote / epoch_us_local
//   epoch_local_vs_caf_S for each S of --scale-nodes (default 16,64): the
//                        same with S in-process nodes, as a ratio
//                        (caf_fanout_us_S, epoch_us_local_S and
//                        run_us_local_S too)
//   epoch_ops_us_16x100  an epoch of real ops: 16 in-process nodes, one task
//                        each of 100 small ops (--ops), ConstantFill then
//                        Adds over 16 floats, as session::run runs it
//
// Before them: the per-run figures (runN_*). Every run starts its actor
// systems afresh (the daemons stay up). The baseline is timed inside its
// actor, as a job's epochs are driven by the job runner actor: the gap
// between the two is what the runtime costs on top of bare messaging.

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/duration.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/response_promise.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <csignal>
#include <pthread.h>

#include "bench/bench_processes.hpp"
#include "bench/bench_util.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/logging.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/messages/job_def.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace {

using namespace epochrt::bench;
using epochrt::process::tail_of;
using std::chrono::milliseconds;

struct epoch_options {
  int nodes = 3;
  /// In-process node counts measured after the main run; empty: none.
  std::vector<int> scale_nodes{16, 64};
  /// Ops per task of the real-ops epoch (16 nodes); 0: not measured.
  int ops = 100;
  /// Rounds of local epochs.
  int rounds = 2000;
  /// Rounds of the CAF baseline: far more, as each is far shorter. With as
  /// few as the local epochs, one timing lasted under 0.1 s and caught the
  /// transients of processes and systems just started or stopped (2-4x
  /// slower rounds).
  int caf_rounds = 10000;
  /// Rounds of remote epochs: each costs several loopback round trips.
  int remote_rounds = 300;
  int runs = 5;
  /// Longest one timing may take, in ms; it then ends after fewer rounds.
  /// Keeps the default run short on a busy machine. 0: no limit.
  int budget_ms = 1000;
  bool caf = true;
  bool local = true;
  bool remote = true;
  /// The `epochrt` program; empty: the one beside this program.
  std::string epochrt;
  bool verbose = false;
};

void usage(const char* argv0) {
  std::fprintf(
    stderr,
    "usage: %s [--nodes N] [--scale-nodes LIST] [--ops N] [--rounds R]\n"
    "          [--caf-rounds C] [--remote-rounds M] [--runs K] [--budget-ms "
    "B]\n"
    "          [--only caf,local,remote] [--epochrt PATH] [--verbose]\n"
    "\n"
    "  --nodes N          nodes of every epoch, 1 to 64 (default 3)\n"
    "  --scale-nodes L    also measure caf and local with each of these\n"
    "                     in-process node counts, 1 to 256 (default 16,64;\n"
    "                     'none' for none)\n"
    "  --ops N            ops per task of the real-ops epoch over 16 nodes,\n"
    "                     0 to 10000 (default 100; 0: not measured)\n"
    "  --rounds R         rounds of local epochs (default 2000)\n"
    "  --caf-rounds C     rounds of the CAF baseline (default 10000)\n"
    "  --remote-rounds M  rounds of remote epochs (default 300)\n"
    "  --runs K           repetitions; medians are reported (default 5)\n"
    "  --budget-ms B      end each timing after B ms even if it has done\n"
    "                     fewer rounds; 0: no limit (default 1000)\n"
    "  --only L           measure only the listed parts\n"
    "  --epochrt PATH     the epochrt program that serves the remote nodes\n"
    "                     (default: the one beside this program)\n"
    "  --verbose          epochrt logs at info level (default: warn)\n"
    "\n"
    "Progress goes to stderr; the results, last on stdout, as name=value "
    "unit.\n",
    argv0);
}

bool parse_int(const std::string& text, long min, long max, int& out) {
  if (text.empty())
    return false;
  char* end = nullptr;
  errno = 0;
  auto value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max)
    return false;
  out = static_cast<int>(value);
  return true;
}

bool parse_parts(std::string_view list, epoch_options& out) {
  out.caf = out.local = out.remote = false;
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    if (item == "caf")
      out.caf = true;
    else if (item == "local")
      out.local = true;
    else if (item == "remote")
      out.remote = true;
    else
      return false;
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
  }
  return out.caf || out.local || out.remote;
}

bool parse_node_list(std::string_view list, std::vector<int>& out) {
  out.clear();
  if (list == "none")
    return true;
  while (!list.empty()) {
    auto comma = list.find(',');
    int n = 0;
    if (!parse_int(std::string{list.substr(0, comma)}, 1, 256, n))
      return false;
    out.push_back(n);
    if (comma == std::string_view::npos)
      return true;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// An option that takes one integer within bounds.
struct count_option {
  const char* name;
  const char* what;
  long min;
  long max;
  int* target;
};

// The integer option `arg` names, if it names one.
std::optional<count_option> find_count_option(const std::string& arg,
                                              epoch_options& out) {
  const count_option options[] = {
    {"--nodes", "a count", 1, 64, &out.nodes},
    {"--ops", "a count", 0, 10000, &out.ops},
    {"--rounds", "a count", 1, 10'000'000, &out.rounds},
    {"--caf-rounds", "a count", 1, 100'000'000, &out.caf_rounds},
    {"--remote-rounds", "a count", 1, 10'000'000, &out.remote_rounds},
    {"--budget-ms", "a number of milliseconds", 0, 3'600'000, &out.budget_ms},
    {"--runs", "a count", 1, 1000, &out.runs},
  };
  for (auto& option : options)
    if (arg == option.name)
      return option;
  return std::nullopt;
}

bool parse_options(int argc, char** argv, epoch_options& out, int& exit_code) {
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
    } else if (auto count = find_count_option(arg, out)) {
      if (!parse_int(value(), count->min, count->max, *count->target)) {
        std::fprintf(stderr, "%s needs %s from %ld to %ld\n", arg.c_str(),
                     count->what, count->min, count->max);
        return false;
      }
    } else if (arg == "--scale-nodes") {
      if (!parse_node_list(value(), out.scale_nodes)) {
        std::fprintf(stderr,
                     "--scale-nodes takes 'none' or a comma-separated "
                     "list of counts from 1 to 256\n");
        return false;
      }
    } else if (arg == "--only") {
      if (!parse_parts(value(), out)) {
        std::fprintf(stderr,
                     "--only takes a comma-separated list of caf, "
                     "local, remote\n");
        return false;
      }
    } else if (arg == "--epochrt") {
      out.epochrt = value();
      if (out.epochrt.empty()) {
        std::fprintf(stderr, "--epochrt needs a path\n");
        return false;
      }
    } else if (arg == "--verbose" && !has_inline) {
      out.verbose = true;
    } else {
      std::fprintf(stderr, "unknown option: %s\n", argv[i]);
      usage(argv[0]);
      return false;
    }
  }
  exit_code = 0;
  return true;
}

/// The mean time per round of one timing, and how many rounds it took.
struct rounds_timing {
  double us = 0;
  int64_t rounds = 0;
};

/// When a timing of at most `budget_ms` that starts at `start` ends; never
/// for a budget of 0.
clock_type::time_point deadline_after(clock_type::time_point start,
                                      int64_t budget_ms) {
  if (budget_ms <= 0)
    return clock_type::time_point::max();
  return start + std::chrono::milliseconds{budget_ms};
}

// -- the CAF baseline ---------------------------------------------------------

using ping_atom = caf::atom_constant<caf::atom("eb_ping")>;
using fanout_atom = caf::atom_constant<caf::atom("eb_fanout")>;

// Generous: only a wedged run ever reaches it.
constexpr auto baseline_timeout = std::chrono::seconds(10);

// A class rather than a function of no arguments: CAF 0.17 spawns such a
// function by dereferencing a null argument tuple, which UBSan rejects.
class echo_peer : public caf::event_based_actor {
public:
  using caf::event_based_actor::event_based_actor;

  caf::behavior make_behavior() override {
    return {
      [](ping_atom, int64_t round) {
        return round;
      },
    };
  }
};

struct fanout_run {
  std::vector<caf::actor> peers;
  caf::response_promise promise;
  caf::duration timeout;
  int64_t rounds_left = 0;
  int64_t rounds_done = 0;
  size_t pending = 0;
  bool failed = false;
  clock_type::time_point start;
  clock_type::time_point deadline;
};

void fanout_round(caf::event_based_actor* self,
                  const std::shared_ptr<fanout_run>& run) {
  run->pending = run->peers.size();
  for (auto& peer : run->peers)
    self->request(peer, run->timeout, ping_atom::value, run->rounds_left)
      .then(
        [self, run](int64_t) {
          if (run->failed || --run->pending > 0)
            return;
          ++run->rounds_done;
          auto now = clock_type::now();
          if (--run->rounds_left > 0 && now < run->deadline) {
            fanout_round(self, run);
            return;
          }
          std::chrono::duration<double, std::micro> elapsed = now - run->start;
          run->promise.deliver(elapsed.count() / run->rounds_done,
                               run->rounds_done);
        },
        [run](caf::error& err) {
          if (run->failed)
            return;
          run->failed = true;
          run->promise.deliver(std::move(err));
        });
}

// Answers (fanout_atom, rounds, budget, timed) with the microseconds per
// round of `rounds` rounds of fan-out and gather, or of those that fit in
// `budget` (ms, 0: no limit), measured inside the actor, and the rounds
// done; `timed` gives every request a timeout.
caf::behavior fanout_driver(caf::event_based_actor* self,
                            std::vector<caf::actor> peers) {
  return {
    [=](fanout_atom, int64_t rounds, int64_t budget,
        bool timed) -> caf::result<double, int64_t> {
      auto run = std::make_shared<fanout_run>();
      run->peers = peers;
      // A default duration is CAF's "no timeout".
      if (timed)
        run->timeout = caf::duration{baseline_timeout};
      run->promise = self->make_response_promise();
      run->rounds_left = rounds;
      run->start = clock_type::now();
      run->deadline = deadline_after(run->start, budget);
      fanout_round(self, run);
      return run->promise;
    },
  };
}

// The peers and the driver of the baseline, stopped when it goes out of
// scope so that nothing outlives the actor system.
class fanout_baseline {
public:
  fanout_baseline(caf::actor_system& sys, int nodes) : sys_(sys) {
    for (int i = 0; i < nodes; ++i)
      peers_.push_back(sys.spawn<echo_peer>());
    owns_peers_ = true;
    driver_ = sys.spawn(fanout_driver, peers_);
  }

  /// Over peers that live elsewhere (other processes), which it leaves be.
  fanout_baseline(caf::actor_system& sys, std::vector<caf::actor> peers)
    : sys_(sys), peers_(std::move(peers)) {
    driver_ = sys.spawn(fanout_driver, peers_);
  }

  ~fanout_baseline() {
    caf::anon_send_exit(driver_, caf::exit_reason::user_shutdown);
    if (owns_peers_)
      for (auto& peer : peers_)
        caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
  }

  /// Microseconds per round of `rounds` rounds or of those that fit in
  /// `budget_ms`, with or without a timeout on every request.
  rounds_timing per_round_us(int rounds, int budget_ms, bool timed) {
    caf::scoped_actor self{sys_};
    rounds_timing result;
    caf::error failure;
    self
      ->request(driver_, std::chrono::minutes(10), fanout_atom::value,
                int64_t{rounds}, int64_t{budget_ms}, timed)
      .receive(
        [&](double us, int64_t done) {
          result = rounds_timing{us, done};
        },
        [&](caf::error& err) {
          failure = std::move(err);
        });
    // Thrown out here, not from the handler, which runs inside CAF.
    if (failure)
      throw std::runtime_error("CAF fan-out: " + epochrt::error_text(failure));
    return result;
  }

private:
  caf::actor_system& sys_;
  std::vector<caf::actor> peers_;
  bool owns_peers_ = false;
  caf::actor driver_;
};

using registry_ptr = std::shared_ptr<const epochrt::op_registry>;

// -- empty epochs -------------------------------------------------------------

std::string node_name(int i) {
  return "bench_" + std::to_string(i);
}

// One task per node and no steps at all: nothing but the runtime's own
// path. `with_op` adds one step of one trivial op instead, for a runtime
// that refuses empty tasks.
epochrt::task_group_def empty_epoch(int nodes, bool with_op) {
  epochrt::task_group_def group;
  for (int i = 0; i < nodes; ++i) {
    epochrt::task_def task;
    task.name = "empty_" + std::to_string(i);
    task.node = node_name(i);
    if (with_op)
      task.steps.push_back(epochrt::step_def{
        "tick", {epochrt::make_op("ConstantFill", {}, {"bench_tick"})}, 1, {}});
    group.tasks.push_back(std::move(task));
  }
  return group;
}

// The epoch of real ops: per node one task of `ops` small ops, a
// ConstantFill of 16 floats then Adds of it to itself, each holding the
// node's workspace as every op that names a blob does.
epochrt::task_group_def ops_epoch(int nodes, int ops) {
  epochrt::task_group_def group;
  for (int i = 0; i < nodes; ++i) {
    std::vector<epochrt::op_def> list;
    list.push_back(
      epochrt::make_op("ConstantFill", {}, {"a"},
                       {{"shape", epochrt::make_tensor<int64_t>({1}, {16})},
                        {"value", epochrt::make_scalar<double>(1.0)}}));
    for (int k = 1; k < ops; ++k)
      list.push_back(epochrt::make_op("Add", {"a", "a"}, {"b"}));
    epochrt::task_def task;
    task.name = "ops_" + std::to_string(i);
    task.node = node_name(i);
    task.steps.push_back(epochrt::step_def{"ops", std::move(list), 1, {}});
    group.tasks.push_back(std::move(task));
  }
  return group;
}

void run_epoch(epochrt::session& sess, const epochrt::task_group_def& group,
               const char* where) {
  auto outputs = sess.run(group, "epoch");
  if (!outputs)
    throw std::runtime_error(std::string{where} + " epoch failed: "
                             + epochrt::error_text(outputs.error()));
}

/// Microseconds per epoch of `rounds` epochs or of those that fit in
/// `budget_ms`, after a few untimed ones.
rounds_timing per_epoch_us(epochrt::session& sess,
                           const epochrt::task_group_def& group, int rounds,
                           int budget_ms, const char* where) {
  for (int i = 0; i < std::min(rounds, 20); ++i)
    run_epoch(sess, group, where);
  auto start = clock_type::now();
  auto deadline = deadline_after(start, budget_ms);
  int64_t done = 0;
  do {
    run_epoch(sess, group, where);
    ++done;
  } while (done < rounds && clock_type::now() < deadline);
  return rounds_timing{seconds_since(start) * 1e6 / done, done};
}

/// Microseconds per epoch of a job whose epoch group is `group`, run for
/// `epochs` epochs or for those that fit in `budget_ms` (then stopped
/// gracefully), after a short job that warms the nodes up.
rounds_timing per_job_epoch_us(epochrt::session& sess,
                               const epochrt::task_group_def& group, int epochs,
                               int budget_ms, const char* where) {
  auto train = [&](int limit, int budget) {
    epochrt::job j{"epoch_bench"};
    for (auto& task : group.tasks)
      j.add_task(j.epoch_group(), task);
    if (auto err = epochrt::epoch_limiter(j, limit))
      throw std::runtime_error(std::string{where}
                               + " job: " + epochrt::error_text(err));
    int64_t done = 0;
    epochrt::job_runner* stoppable = nullptr;
    auto start = clock_type::now();
    auto deadline = deadline_after(start, budget);
    epochrt::job_runner_options options;
    // Counts the epochs, and stops the job once its budget is spent: the
    // observer runs on the job runner's thread, and request_stop only sets
    // a flag.
    options.on_epoch = [&](int64_t, const std::vector<epochrt::task_output>&) {
      ++done;
      if (clock_type::now() >= deadline)
        stoppable->request_stop();
    };
    epochrt::job_runner runner{
      std::move(j), nullptr, {}, nullptr, std::move(options)};
    stoppable = &runner;
    auto last = runner.train(sess);
    auto elapsed = seconds_since(start);
    if (!last
        && !epochrt::is_error(last.error(), epochrt::actors_errc::stopped))
      throw std::runtime_error(std::string{where} + " job failed: "
                               + epochrt::error_text(last.error()));
    if (done == 0)
      throw std::runtime_error(std::string{where} + " job ran no epoch");
    return rounds_timing{elapsed * 1e6 / done, done};
  };
  train(std::min(epochs, 20), 0); // warm-up
  return train(epochs, budget_ms);
}

// Time limits that end a wedged run in seconds rather than hours.
epochrt::session_options bench_timeouts() {
  epochrt::session_options opts;
  opts.group_timeout = std::chrono::seconds(30);
  opts.checkpoint_timeout = std::chrono::seconds(30);
  opts.request_timeout = std::chrono::seconds(10);
  return opts;
}

// -- the run ------------------------------------------------------------------

struct figures {
  std::vector<double> caf_fanout_us;
  std::vector<double> caf_fanout_untimed_us;
  std::vector<double> epoch_us_local;
  std::vector<double> run_us_local;
  std::vector<double> epoch_us_remote;
  std::vector<double> run_us_remote;
  std::vector<double> caf_remote_fanout_us;
  /// Per count of --scale-nodes: the CAF fan-out and the local epoch.
  std::map<int, std::vector<double>> scale_caf_us;
  std::map<int, std::vector<double>> scale_local_us;
  std::map<int, std::vector<double>> scale_run_us;
  std::vector<double> ops_epoch_us;
  /// The empty epoch, once the first session has been asked.
  std::optional<epochrt::task_group_def> group;
  bool task_has_op = false;
};

void print_line(const std::string& name, double value, const char* unit,
                int decimals = 1) {
  std::printf("%s=%.*f %s\n", name.c_str(), decimals, value, unit);
}

void print_per_run(const char* name, const std::vector<double>& xs,
                   const char* unit) {
  for (size_t i = 0; i < xs.size(); ++i)
    print_line("run" + std::to_string(i + 1) + "_" + name, xs[i], unit);
}

// What an empty epoch is: one task without ops per node, unless the
// runtime refuses those; then every task gets one trivial op. Asked of the
// first session of the run.
const epochrt::task_group_def&
epoch_group(const epoch_options& opts, epochrt::session& sess, figures& out) {
  if (!out.group) {
    out.group = empty_epoch(opts.nodes, false);
    if (auto outputs = sess.run(*out.group, "epoch"); !outputs) {
      progress("a task without ops was refused (%s); every task gets one "
               "trivial op",
               epochrt::error_text(outputs.error()).c_str());
      out.group = empty_epoch(opts.nodes, true);
      out.task_has_op = true;
    }
  }
  return *out.group;
}

// Every repetition builds its actor systems afresh, so that repetitions are
// independent: the baseline and the local epochs in a system without the
// middleman, as in a host without remote nodes, the remote epochs in one
// with it.
void measure_in_process(const epoch_options& opts, const registry_ptr& ops,
                        figures& out) {
  caf::actor_system_config cfg;
  epochrt::configure(cfg, bench_logging(opts.verbose));
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  if (opts.caf) {
    fanout_baseline baseline{sys, opts.nodes};
    // Untimed first: it warms the peers for the timed figure.
    auto untimed
      = baseline.per_round_us(opts.caf_rounds, opts.budget_ms, false);
    auto timed = baseline.per_round_us(opts.caf_rounds, opts.budget_ms, true);
    out.caf_fanout_untimed_us.push_back(untimed.us);
    out.caf_fanout_us.push_back(timed.us);
    progress("  caf fan-out    %9.2f us per round, %" PRId64
             " rounds (%.2f us without timeouts, %" PRId64 " rounds)",
             timed.us, timed.rounds, untimed.us, untimed.rounds);
  }
  if (opts.local) {
    epochrt::local_session local{sys, ops, bench_timeouts()};
    auto& group = epoch_group(opts, local, out);
    auto t
      = per_job_epoch_us(local, group, opts.rounds, opts.budget_ms, "local");
    out.epoch_us_local.push_back(t.us);
    progress("  local epoch    %9.2f us, %" PRId64 " epochs", t.us, t.rounds);
    auto r = per_epoch_us(local, group, opts.rounds, opts.budget_ms, "local");
    out.run_us_local.push_back(r.us);
    progress("  local run      %9.2f us, %" PRId64 " calls", r.us, r.rounds);
  }
}

// The in-process figures at `nodes` nodes, in a system of their own: the
// timed CAF fan-out and the local empty epoch (a task without ops per
// node, or with one trivial op if `with_op`).
void measure_scale(const epoch_options& opts, const registry_ptr& ops,
                   int nodes, bool with_op, figures& out) {
  caf::actor_system_config cfg;
  epochrt::configure(cfg, bench_logging(opts.verbose));
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  {
    fanout_baseline baseline{sys, nodes};
    baseline.per_round_us(opts.caf_rounds, opts.budget_ms, false); // warm-up
    auto timed = baseline.per_round_us(opts.caf_rounds, opts.budget_ms, true);
    out.scale_caf_us[nodes].push_back(timed.us);
    progress("  caf fan-out %3d %9.2f us per round, %" PRId64 " rounds", nodes,
             timed.us, timed.rounds);
  }
  epochrt::local_session local{sys, ops, bench_timeouts()};
  auto group = empty_epoch(nodes, with_op);
  auto t = per_job_epoch_us(local, group, opts.rounds, opts.budget_ms, "local");
  out.scale_local_us[nodes].push_back(t.us);
  progress("  local epoch %3d %9.2f us, %" PRId64 " epochs", nodes, t.us,
           t.rounds);
  auto r = per_epoch_us(local, group, opts.rounds, opts.budget_ms, "local");
  out.scale_run_us[nodes].push_back(r.us);
  progress("  local run   %3d %9.2f us, %" PRId64 " calls", nodes, r.us,
           r.rounds);
}

// The epoch of real ops over 16 in-process nodes.
void measure_ops(const epoch_options& opts, const registry_ptr& ops,
                 figures& out) {
  caf::actor_system_config cfg;
  epochrt::configure(cfg, bench_logging(opts.verbose));
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  epochrt::local_session local{sys, ops, bench_timeouts()};
  auto group = ops_epoch(16, opts.ops);
  auto t = per_epoch_us(local, group, opts.rounds, opts.budget_ms, "ops");
  out.ops_epoch_us.push_back(t.us);
  progress("  16 x %d ops   %9.2f us, %" PRId64 " rounds", opts.ops, t.us,
           t.rounds);
}

// The remote baseline: the fan-out to actors published by other processes.
void measure_caf_remote(const epoch_options& opts, caf::actor_system& sys,
                        const std::vector<child_process>& peers, figures& out) {
  std::vector<caf::actor> remote;
  for (auto& peer : peers) {
    auto handle = sys.middleman().remote_actor("127.0.0.1", peer.port());
    if (!handle)
      throw std::runtime_error("connecting to the CAF peer on port "
                               + std::to_string(peer.port()) + ": "
                               + epochrt::coded_error_text(handle.error()));
    remote.push_back(std::move(*handle));
  }
  fanout_baseline baseline{sys, std::move(remote)};
  auto t = baseline.per_round_us(opts.remote_rounds, opts.budget_ms, true);
  out.caf_remote_fanout_us.push_back(t.us);
  progress("  caf remote     %9.2f us per round, %" PRId64 " rounds", t.us,
           t.rounds);
}

void measure_remote(const epoch_options& opts, const registry_ptr& ops,
                    const std::vector<node_daemon>& daemons,
                    const std::vector<child_process>& caf_peers, figures& out) {
  caf::actor_system_config cfg;
  if (auto err
      = epochrt::configure_network(cfg, {}, bench_logging(opts.verbose)))
    throw std::runtime_error(epochrt::coded_error_text(err));
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  std::map<std::string, epochrt::node_address> where;
  for (int i = 0; i < opts.nodes; ++i)
    where.emplace(node_name(i),
                  epochrt::node_address{"127.0.0.1", daemons.at(i).port()});
  epochrt::distributed_session_options dopts;
  dopts.timeouts = bench_timeouts();
  epochrt::distributed_session remote{sys, ops, std::move(where),
                                      std::move(dopts)};
  if (auto err = remote.connect_all())
    throw std::runtime_error("connecting to the daemons: "
                             + epochrt::error_text(err));
  auto& group = epoch_group(opts, remote, out);
  auto t = per_job_epoch_us(remote, group, opts.remote_rounds, opts.budget_ms,
                            "remote");
  out.epoch_us_remote.push_back(t.us);
  progress("  remote epoch   %9.2f us, %" PRId64 " epochs", t.us, t.rounds);
  auto r
    = per_epoch_us(remote, group, opts.remote_rounds, opts.budget_ms, "remote");
  out.run_us_remote.push_back(r.us);
  progress("  remote run     %9.2f us, %" PRId64 " calls", r.us, r.rounds);
  measure_caf_remote(opts, sys, caf_peers, out);
}

void measure(const epoch_options& opts, const std::vector<node_daemon>& daemons,
             const std::vector<child_process>& caf_peers, figures& out) {
  auto ops = std::make_shared<epochrt::op_registry>();
  if (auto err = epochrt::add_builtin_ops(*ops))
    throw std::runtime_error(epochrt::error_text(err));
  for (int r = 1; r <= opts.runs; ++r) {
    progress("run %d/%d", r, opts.runs);
    if (opts.caf || opts.local)
      measure_in_process(opts, ops, out);
    if (opts.remote)
      measure_remote(opts, ops, daemons, caf_peers, out);
  }
  for (auto nodes : opts.scale_nodes) {
    if (!opts.caf || !opts.local)
      break;
    progress("%d in-process nodes", nodes);
    for (int r = 1; r <= opts.runs; ++r)
      measure_scale(opts, ops, nodes, out.task_has_op, out);
  }
  if (opts.local && opts.ops > 0) {
    progress("16 nodes x %d ops", opts.ops);
    for (int r = 1; r <= opts.runs; ++r)
      measure_ops(opts, ops, out);
  }
}

void report(const epoch_options& opts, const figures& f) {
  print_per_run("caf_fanout_us", f.caf_fanout_us, "us");
  print_per_run("epoch_us_local", f.epoch_us_local, "us");
  print_per_run("run_us_local", f.run_us_local, "us");
  print_per_run("epoch_us_remote", f.epoch_us_remote, "us");
  print_per_run("run_us_remote", f.run_us_remote, "us");
  std::printf("nodes=%d nodes\n", opts.nodes);
  std::printf("runs=%d runs\n", opts.runs);
  if (opts.caf)
    std::printf("caf_rounds=%d rounds\n", opts.caf_rounds);
  if (opts.local)
    std::printf("rounds=%d rounds\n", opts.rounds);
  if (opts.remote)
    std::printf("remote_rounds=%d rounds\n", opts.remote_rounds);
  std::printf("budget_ms=%d ms\n", opts.budget_ms);
  if (opts.local || opts.remote)
    std::printf("ops_per_task=%d ops\n", f.task_has_op ? 1 : 0);
  auto caf_us = median(f.caf_fanout_us);
  auto local_us = median(f.epoch_us_local);
  auto remote_us = median(f.epoch_us_remote);
  if (opts.caf) {
    print_line("caf_fanout_untimed_us", median(f.caf_fanout_untimed_us), "us",
               2);
    print_line("caf_fanout_us", caf_us, "us", 2);
  }
  if (opts.local) {
    print_line("epoch_us_local", local_us, "us", 1);
    print_line("run_us_local", median(f.run_us_local), "us", 1);
  }
  if (opts.remote) {
    print_line("epoch_us_remote", remote_us, "us", 1);
    print_line("run_us_remote", median(f.run_us_remote), "us", 1);
  }
  if (opts.caf && opts.local)
    print_line("epoch_local_vs_caf", local_us / caf_us, "x", 1);
  if (opts.caf && opts.remote)
    print_line("epoch_remote_vs_caf", remote_us / caf_us, "x", 1);
  if (opts.local && opts.remote)
    print_line("epoch_remote_vs_local", remote_us / local_us, "x", 2);
  if (opts.remote) {
    auto caf_remote_us = median(f.caf_remote_fanout_us);
    print_line("caf_remote_fanout_us", caf_remote_us, "us", 2);
    print_line("epoch_remote_vs_caf_remote", remote_us / caf_remote_us, "x", 1);
  }
  for (auto& [nodes, caf] : f.scale_caf_us) {
    auto n = std::to_string(nodes);
    auto caf_n = median(caf);
    auto local_n = median(f.scale_local_us.at(nodes));
    print_line("caf_fanout_us_" + n, caf_n, "us", 2);
    print_line("epoch_us_local_" + n, local_n, "us", 1);
    print_line("run_us_local_" + n, median(f.scale_run_us.at(nodes)), "us", 1);
    print_line("epoch_local_vs_caf_" + n, local_n / caf_n, "x", 1);
  }
  if (!f.ops_epoch_us.empty())
    print_line("epoch_ops_us_16x" + std::to_string(opts.ops),
               median(f.ops_epoch_us), "us", 1);
  std::fflush(stdout);
}

// Stops every daemon and says how each ended: `epochrt node` must exit 0 on
// SIGTERM.
bool stop_daemons(std::vector<node_daemon>& daemons) {
  bool clean = true;
  for (size_t i = 0; i < daemons.size(); ++i) {
    auto status = daemons[i].stop();
    if (status != 0) {
      progress("daemon %zu ended with status %d after SIGTERM (expected 0)", i,
               status);
      clean = false;
    }
  }
  return clean;
}

} // namespace

// --serve-caf-peer: one echo actor published with CAF's own middleman on a
// free loopback port, printed as "listening on 127.0.0.1:PORT", until SIGTERM
// or SIGINT. The remote baseline's peer: nothing of epochrt's on the path.
int serve_caf_peer() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr); // before any thread starts
  caf::actor_system_config cfg;
  if (auto err = epochrt::configure_network(cfg)) {
    std::fprintf(stderr, "%s\n", epochrt::coded_error_text(err).c_str());
    return 1;
  }
  epochrt::configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  auto peer = sys.spawn<echo_peer>();
  auto port = sys.middleman().publish(peer, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "publish: %s\n",
                 epochrt::coded_error_text(port.error()).c_str());
    caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  int received = 0;
  sigwait(&stop, &received);
  caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view{argv[1]} == "--serve-caf-peer")
    return serve_caf_peer();
  epoch_options opts;
  int exit_code = 0;
  if (!parse_options(argc, argv, opts, exit_code))
    return exit_code;
  progress("epoch_bench: %d node(s), %d run(s) of %d CAF / %d local / %d "
           "remote round(s)",
           opts.nodes, opts.runs, opts.caf_rounds, opts.rounds,
           opts.remote_rounds);
  std::string scratch;
  figures results;
  int rc = 0;
  // Declared before the actor system, hence stopped after it: the session
  // detaches its nodes from the daemons before they go.
  std::vector<node_daemon> daemons;
  std::vector<child_process> caf_peers;
  try {
    if (opts.remote) {
      scratch = make_scratch_dir({});
      auto binary = opts.epochrt.empty() ? sibling_program(argv[0], "epochrt")
                                         : opts.epochrt;
      progress("starting %d node daemon(s): %s", opts.nodes, binary.c_str());
      for (int i = 0; i < opts.nodes; ++i) {
        auto root = scratch + "/" + node_name(i);
        daemons.push_back(start_node_daemon(binary, root, root + ".log",
                                            std::chrono::seconds(20)));
        progress("  %s on 127.0.0.1:%u (pid %d)", node_name(i).c_str(),
                 daemons.back().port(), static_cast<int>(daemons.back().pid()));
      }
      // The remote baseline's peers: this program again, serving a bare
      // CAF actor each.
      auto self_path = sibling_program(argv[0], "epoch_bench");
      for (int i = 0; i < opts.nodes; ++i) {
        caf_peers.push_back(
          start_listening({self_path, "--serve-caf-peer"},
                          scratch + "/caf_peer_" + std::to_string(i) + ".log",
                          std::chrono::seconds(20)));
        progress("  CAF peer %d on 127.0.0.1:%u", i, caf_peers.back().port());
      }
    }
    measure(opts, daemons, caf_peers, results);
    progress("shutting down...");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "epoch_bench: %s\n", e.what());
    for (size_t i = 0; i < daemons.size(); ++i) {
      auto log
        = tail_of(scratch + "/" + node_name(static_cast<int>(i)) + ".log", 5);
      if (!log.empty())
        std::fprintf(stderr, "log of daemon %s:\n%s",
                     node_name(static_cast<int>(i)).c_str(), log.c_str());
    }
    rc = 1;
  }
  if (!stop_daemons(daemons) && rc == 0)
    rc = 1;
  for (auto& peer : caf_peers)
    peer.stop();
  if (!scratch.empty())
    remove_tree(scratch);
  if (rc != 0)
    return rc;
  report(opts, results);
  return 0;
}
