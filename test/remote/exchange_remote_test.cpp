// Channels and collectives across node daemons: every daemon a real
// `epochrt node` child process on 127.0.0.1, jobs run through the `epochrt`
// command (and, where a tensor's shape matters, through the C++ API), a
// master of the test's own that talks to a daemon's exchange directly, and
// a fault sweep. Every wait is bounded.

#define BOOST_TEST_MODULE exchange_remote
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/run_events.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/distributed_session.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/job_file.hpp>
#include <epochrt/runtime/op_registry.hpp>

using namespace std::chrono_literals;
using epochrt::process::child_process;
using epochrt::process::node_daemon;
using epochrt::process::read_text;
using epochrt::test::epoch_committed;
using epochrt::test::eventually;
using epochrt::test::node_lost_event;
using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::restart;
using epochrt::test::run_event;
using epochrt::test::run_in_background;
using epochrt::test::start_daemon;
using epochrt::test::stats_reached;
using epochrt::test::temp_dir;

using epochrt::test::value_of;

namespace {

using clock_type = std::chrono::steady_clock;

const std::string jobs = EPOCHRT_SOURCE_DIR "/examples/jobs/";
const std::string data_parallel = jobs + "data_parallel.json";
const std::string reader_pipeline = jobs + "reader_pipeline.json";

const std::vector<std::string> trainers{"trainer_0", "trainer_1", "trainer_2"};

using epochrt::test::contains;
std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos)
    return {};
  auto start = text.rfind('\n', end);
  auto from = start == std::string::npos ? 0 : start + 1;
  return text.substr(from, end - from + 1);
}

int64_t ms_since(clock_type::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now()
                                                               - start)
    .count();
}

process_result cli(const std::vector<std::string>& args,
                   std::chrono::milliseconds limit = 60s) {
  return process_runner{EPOCHRT_CLI, limit}.run(args);
}

std::string show(const process_result& r) {
  return "exit " + std::to_string(r.exit_code)
    + (r.timed_out ? " (timed out)" : "") + "\n--- stdout\n"
    + r.out.substr(r.out.size() > 4000 ? r.out.size() - 4000 : 0)
    + "\n--- stderr\n" + r.err.substr(0, 4000);
}

std::vector<std::string> concat(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> fetch_args(const std::vector<std::string>& specs) {
  std::vector<std::string> result;
  for (auto& spec : specs) {
    result.push_back("--fetch");
    result.push_back(spec);
  }
  return result;
}

// The blobs that show a data_parallel.json run's result: every trainer's
// weights and bias.
std::vector<std::string> data_parallel_fetches() {
  std::vector<std::string> result;
  for (auto& node : trainers) {
    result.push_back(node + ":w");
    result.push_back(node + ":b");
  }
  return result;
}

// reader_pipeline.json's result: the parameters the download group
// collected on the reader, and every trainer's own.
std::vector<std::string> reader_pipeline_fetches() {
  std::vector<std::string> result;
  for (auto& node : trainers) {
    result.push_back("reader:w_" + node);
    result.push_back("reader:b_" + node);
    result.push_back(node + ":w");
  }
  return result;
}

// `epochrt run JOB --fetch ...` in one process, in a checkpoint directory
// of its own; its stdout. The same job and fetches give the same lines, so
// each is run once per test binary.
std::string in_process_result(const std::string& job,
                              const std::vector<std::string>& fetches) {
  static std::map<std::string, std::string> cache;
  std::string key = job;
  for (auto& f : fetches)
    key += " " + f;
  if (auto i = cache.find(key); i != cache.end())
    return i->second;
  temp_dir dir;
  auto r = cli(concat({"run", job, "--checkpoint-dir", dir.sub("ckpt")},
                      fetch_args(fetches)));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, show(r));
  BOOST_REQUIRE(contains(r.out, "epochs="));
  cache.emplace(key, r.out);
  return r.out;
}

std::string write_file(const temp_dir& dir, const std::string& name,
                       const std::string& text) {
  auto path = dir.sub(name);
  std::ofstream{path} << text;
  return path;
}

// Daemons `d0`, `d1`, ... with `extra` flags, and the commands that use
// them.
struct daemons {
  temp_dir dir;
  std::vector<std::unique_ptr<node_daemon>> procs;

  explicit daemons(size_t n, const std::vector<std::string>& extra = {}) {
    for (size_t i = 0; i < n; ++i)
      procs.push_back(std::make_unique<node_daemon>(
        start_daemon(dir.str(), "d" + std::to_string(i), extra)));
  }

  node_daemon& operator[](size_t i) {
    return *procs.at(i);
  }

  // `epochrt run JOB` with node `placement[k].first` on daemon
  // `placement[k].second`, in checkpoint directory `ckpt` of the test's,
  // its stats in `ckpt`.stats.
  std::vector<std::string>
  run_args(const std::string& job,
           const std::vector<std::pair<std::string, size_t>>& placement,
           const std::vector<std::string>& fetches,
           const std::string& ckpt = "ckpt",
           const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"run",
                                  job,
                                  "--checkpoint-dir",
                                  dir.sub(ckpt),
                                  "--stats-json",
                                  dir.sub(ckpt + ".stats")};
    for (auto& [node, i] : placement) {
      args.push_back("--node");
      args.push_back(node + "=" + procs.at(i)->address());
    }
    return concat(concat(args, fetches_of(fetches)), extra);
  }

  static std::vector<std::string>
  fetches_of(const std::vector<std::string>& fetches) {
    return fetch_args(fetches);
  }

  // A run in the background, its stdout and stderr in run.out / run.err.
  std::unique_ptr<child_process>
  start_run(const std::vector<std::string>& args) {
    return std::make_unique<child_process>(run_in_background(
      EPOCHRT_CLI, args, dir.sub("run.out"), dir.sub("run.err")));
  }

  std::string run_err() const {
    return read_text(dir.sub("run.err"));
  }

  std::string run_out() const {
    return read_text(dir.sub("run.out"));
  }

  // Whether the stats of the run in checkpoint directory `ckpt` hold
  // `event` within `timeout`.
  bool reached(const run_event& event, std::chrono::milliseconds timeout,
               const std::string& ckpt = "ckpt") {
    return stats_reached(dir.sub(ckpt + ".stats"), event, timeout);
  }
};

// trainer_i on daemon i.
std::vector<std::pair<std::string, size_t>> one_trainer_per_daemon() {
  return {{"trainer_0", 0}, {"trainer_1", 1}, {"trainer_2", 2}};
}

// data_parallel.json with trainer_1 sleeping `ms` before every all-reduce
// of its gradients: trainer_0 and trainer_2 spend most of each epoch
// waiting for it in all-reduce 'gradients', where a daemon killed or
// frozen then finds them. The values are data_parallel.json's.
std::string write_paced_data_parallel(const temp_dir& dir, int ms) {
  auto text = read_text(data_parallel);
  auto at = text.find("\"name\": \"train_trainer_1\"");
  BOOST_REQUIRE(at != std::string::npos);
  auto op = text.find("{\"type\": \"Allreduce\"", at);
  BOOST_REQUIRE(op != std::string::npos);
  text.insert(op,
              "{\"type\": \"Sleep\", \"args\": {\"ms\": " + std::to_string(ms)
                + "}},\n        ");
  return write_file(dir, "paced_data_parallel.json", text);
}

// -- collectives ---------------------------------------------------------

// One node's task of the collectives job: every collective once, in the
// same order on every node.
std::string collective_task(const std::string& node, int sleep_ms,
                            int barriers = 1) {
  std::string ops;
  if (sleep_ms > 0)
    ops += R"({"type": "Sleep", "args": {"ms": )" + std::to_string(sleep_ms)
      + "}},\n";
  ops += R"(
    {"type": "Allreduce", "inputs": ["x"], "outputs": ["sum"], "args": {"collective": "c_sum", "op": "sum"}},
    {"type": "Allreduce", "inputs": ["x"], "outputs": ["min"], "args": {"collective": "c_min", "op": "min"}},
    {"type": "Allreduce", "inputs": ["x"], "outputs": ["max"], "args": {"collective": "c_max", "op": "max"}},
    {"type": "Allreduce", "inputs": ["f"], "outputs": ["mean"], "args": {"collective": "c_mean", "op": "mean"}},
    {"type": "Broadcast", "inputs": ["x"], "outputs": ["from_b"], "args": {"collective": "c_bcast", "root": "b"}},
    {"type": "Allgather", "inputs": ["x"], "outputs": ["all"], "args": {"collective": "c_gather"}},)";
  for (int i = 0; i < barriers; ++i)
    ops += R"(
    {"type": "Barrier", "args": {"collective": "c_barrier"}},)";
  ops += R"(
    {"type": "ConstantFill", "outputs": ["after_barrier"], "args": {"value": 1, "dtype": "i64"}})";
  return R"({"name": "collect_)" + node + R"(", "node": ")" + node
    + R"(", "ops": [)" + ops + "]}";
}

std::string fill_task(const std::string& node, const std::string& x,
                      const std::string& x_type, const std::string& f) {
  return R"({"name": "init_)" + node + R"(", "node": ")" + node + R"(", "ops": [
    {"type": "GivenTensorFill", "outputs": ["x"], "args": {"values": )"
    + x + R"(, "dtype": ")" + x_type + R"("}},
    {"type": "GivenTensorFill", "outputs": ["f"], "args": {"values": )"
    + f + R"(, "dtype": "f64"}}]})";
}

// Nodes a, b and c, each with an i64 blob x of 3 elements and an f64 blob
// f of 2; a arrives last at every collective (it sleeps first), so that an
// order by arrival would differ from the order by node name.
// With `ab_barriers` 2, a and b wait in a second call of the barrier that c
// never makes.
std::string collectives_job(const std::string& b_values = "[10, -20, 30]",
                            const std::string& b_type = "i64",
                            int ab_barriers = 1) {
  return R"({"name": "collectives", "init": [)"
    + fill_task("a", "[1, 2, 3]", "i64", "[0.5, 1.0]") + ",\n"
    + fill_task("b", b_values, b_type, "[1.5, 2.0]") + ",\n"
    + fill_task("c", "[100, 200, -300]", "i64", "[4.0, 6.0]")
    + R"(], "epoch": [)" + collective_task("a", 300, ab_barriers) + ",\n"
    + collective_task("b", 0, ab_barriers) + ",\n" + collective_task("c", 0)
    + R"(], "epoch_limit": 1})";
}

std::vector<std::pair<std::string, size_t>> abc_on_three_daemons() {
  return {{"a", 0}, {"b", 1}, {"c", 2}};
}

struct network_config : caf::actor_system_config {
  network_config() {
    epochrt::network_options opts;
    opts.heartbeat_interval = 200ms;
    opts.connection_timeout = 2000ms;
    BOOST_REQUIRE(!epochrt::configure_network(*this, opts));
  }
};

std::shared_ptr<epochrt::op_registry> make_ops() {
  auto result = std::make_shared<epochrt::op_registry>();
  BOOST_REQUIRE(!epochrt::add_builtin_ops(*result));
  return result;
}

// Why `x` holds no value; empty when it holds one (Boost.Test evaluates a
// message even when its assertion holds).
template <class T>
std::string why(const caf::expected<T>& x) {
  return x ? std::string{} : epochrt::error_text(x.error());
}

template <class T>
std::vector<T> elements(const epochrt::tensor& x) {
  return std::vector<T>(x.values<T>(), x.values<T>() + x.element_count());
}

} // namespace

// -- 1, 2: the example jobs across daemons --------------------------------

BOOST_AUTO_TEST_SUITE(example_jobs_across_daemons)

BOOST_AUTO_TEST_CASE(data_parallel_over_three_daemons_ends_as_in_process) {
  auto fetches = data_parallel_fetches();
  auto local = in_process_result(data_parallel, fetches);
  BOOST_TEST(value_of(local, "epochs") == "12");
  daemons d{3};
  auto remote
    = cli(d.run_args(data_parallel, one_trainer_per_daemon(), fetches));
  BOOST_REQUIRE_MESSAGE(remote.exit_code == 0, show(remote));
  BOOST_TEST(remote.out == local);
  // All three trainers end with the same weights, bit for bit.
  BOOST_TEST(value_of(remote.out, "trainer_0:w")
             == value_of(remote.out, "trainer_2:w"));
}

// A pair of daemons that exchanged data connects once, opened by the one
// whose address sorts first; their messages then go over that connection,
// not through the master, and the results are those of one process. The
// gradients, a few bytes, are reduced by trainer_0's process alone: d1 and
// d2 exchange nothing, and never connect.
BOOST_AUTO_TEST_CASE(the_daemons_of_a_job_connect_to_each_other_directly) {
  auto fetches = data_parallel_fetches();
  auto local = in_process_result(data_parallel, fetches);
  daemons d{3, {"-v"}};
  auto remote
    = cli(d.run_args(data_parallel, one_trainer_per_daemon(), fetches));
  BOOST_REQUIRE_MESSAGE(remote.exit_code == 0, show(remote));
  BOOST_TEST(remote.out == local);
  auto linked = [&](size_t from, size_t to) {
    return contains(d[from].log(),
                    "connected directly to the daemon at " + d[to].address());
  };
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = i + 1; j < 3; ++j) {
      auto first = d[i].address() < d[j].address() ? i : j;
      auto second = first == i ? j : i;
      BOOST_TEST(linked(first, second) == (i == 0),
                 "d" << first << " -> d" << second);
      BOOST_TEST(!linked(second, first), "d" << second << " -> d" << first);
    }
}

// Regression: a second job on daemons that had served one hung, its
// collectives waiting for exchange state the first run left behind.
BOOST_AUTO_TEST_CASE(a_second_job_on_the_same_daemons_ends_as_the_first) {
  auto fetches = data_parallel_fetches();
  auto local = in_process_result(data_parallel, fetches);
  daemons d{3};
  for (auto ckpt : {"first", "second", "third"}) {
    auto r = cli(
      d.run_args(data_parallel, one_trainer_per_daemon(), fetches, ckpt), 45s);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, ckpt << ": " << show(r));
    BOOST_TEST(r.out == local, ckpt);
  }
}

BOOST_AUTO_TEST_CASE(
  reader_pipeline_with_nodes_sharing_daemons_ends_as_in_process) {
  auto fetches = reader_pipeline_fetches();
  auto local = in_process_result(reader_pipeline, fetches);
  BOOST_TEST(value_of(local, "epochs") == "10");
  // The collected parameters are the trainers' own.
  for (auto& node : trainers)
    BOOST_TEST(value_of(local, "reader:w_" + node)
                 == value_of(local, node + ":w"),
               node);
  daemons d{3};
  using placement = std::vector<std::pair<std::string, size_t>>;
  std::vector<std::pair<std::string, placement>> placements{
    // The reader shares a daemon with trainer_0: batches_trainer_0 and
    // params_trainer_0 stay within it, the others cross daemons through
    // the master.
    {"three daemons",
     {{"reader", 0}, {"trainer_0", 0}, {"trainer_1", 1}, {"trainer_2", 2}}},
    // Two trainers on one daemon, the reader and trainer_0 on another.
    {"two daemons",
     {{"reader", 0}, {"trainer_0", 0}, {"trainer_1", 1}, {"trainer_2", 1}}},
    // The reader in the master's process, the channels it feeds on
    // daemons.
    {"reader in the master",
     {{"trainer_0", 1}, {"trainer_1", 2}, {"trainer_2", 2}}},
  };
  for (size_t i = 0; i < placements.size(); ++i) {
    auto& [what, where] = placements[i];
    auto r = cli(
      d.run_args(reader_pipeline, where, fetches, "ckpt-" + std::to_string(i)),
      45s);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, what << ": " << show(r));
    BOOST_TEST(r.out == local, what);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// -- 3: each collective across daemons -------------------------------------

BOOST_AUTO_TEST_SUITE(collectives_across_daemons)

BOOST_AUTO_TEST_CASE(
  each_collective_gives_exact_values_in_node_order_across_daemons) {
  daemons d{3};
  auto path = write_file(d.dir, "collectives.json", collectives_job());
  auto ops = make_ops();
  auto loaded
    = epochrt::parse_job_json(read_text(path), "collectives.json", *ops);
  BOOST_REQUIRE_MESSAGE(loaded, why(loaded));
  network_config cfg;
  caf::actor_system sys{cfg};
  std::map<std::string, epochrt::tensor> got;
  {
    epochrt::distributed_session_options opts;
    opts.timeouts.group_timeout = 60s;
    opts.timeouts.request_timeout = 10s;
    std::map<std::string, epochrt::node_address> nodes;
    for (auto& [node, i] : abc_on_three_daemons())
      nodes[node] = epochrt::node_address{"127.0.0.1",
                                          static_cast<uint16_t>(d[i].port())};
    epochrt::distributed_session sess{sys, ops, nodes, opts};
    epochrt::job_runner runner{std::move(*loaded)};
    auto epochs = runner.train(sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    for (auto node : {"a", "b", "c"})
      for (auto blob :
           {"sum", "min", "max", "mean", "from_b", "all", "after_barrier"}) {
        auto value = sess.fetch(node, blob);
        BOOST_REQUIRE_MESSAGE(value, node << ":" << blob << ": " << why(value));
        got[std::string{node} + ":" + blob] = std::move(*value);
      }
  }
  using epochrt::dtype;
  using v64 = std::vector<int64_t>;
  for (std::string node : {"a", "b", "c"}) {
    auto& sum = got[node + ":sum"];
    BOOST_TEST((sum.type == dtype::i64), node);
    BOOST_TEST(sum.shape == v64{3}, node);
    BOOST_TEST(elements<int64_t>(sum) == (v64{111, 182, -267}), node);
    BOOST_TEST(elements<int64_t>(got[node + ":min"]) == (v64{1, -20, -300}),
               node);
    BOOST_TEST(elements<int64_t>(got[node + ":max"]) == (v64{100, 200, 30}),
               node);
    auto& mean = got[node + ":mean"];
    BOOST_TEST((mean.type == dtype::f64), node);
    // (0.5 + 1.5 + 4) / 3 and (1 + 2 + 6) / 3: exact in binary.
    BOOST_TEST(elements<double>(mean) == (std::vector<double>{2.0, 3.0}), node);
    auto& from_b = got[node + ":from_b"];
    BOOST_TEST(from_b.shape == v64{3}, node);
    BOOST_TEST(elements<int64_t>(from_b) == (v64{10, -20, 30}), node);
    // Stacked along a new first dimension in node order a, b, c, although
    // a always arrives last.
    auto& all = got[node + ":all"];
    BOOST_TEST((all.type == dtype::i64), node);
    BOOST_TEST(all.shape == (v64{3, 3}), node);
    BOOST_TEST(elements<int64_t>(all)
                 == (v64{1, 2, 3, 10, -20, 30, 100, 200, -300}),
               node);
    BOOST_TEST(elements<int64_t>(got[node + ":after_barrier"]) == v64{1}, node);
  }
}

// Nodes a, b and c each generate X (f32 [rows, 10]) and y (f32 [rows]) from
// a seed of their own, and fill s (f64 [3]); the epoch all-reduces X, y
// and s (sum) and X again (max). With `rows` 250000 (10 MB of X), a
// participant's share between daemons is cut into several pieces, and s
// into fewer elements than there are pieces.
std::string big_all_reduce_job(int64_t b_rows = 250000) {
  auto init = [](const std::string& node, int seed, int64_t rows) {
    return R"({"name": "init_)" + node + R"(", "node": ")" + node
      + R"(", "ops": [
      {"type": "GenerateLinearData", "outputs": ["X", "y"], "args": {"rows": )"
      + std::to_string(rows) + R"(, "features": 10, "seed": )"
      + std::to_string(seed) + R"(}},
      {"type": "GivenTensorFill", "outputs": ["s"], "args": {"values": [)"
      + std::to_string(seed) + R"(.25, -1.5, 3], "dtype": "f64"}}]})";
  };
  auto reduce = [](const std::string& node) {
    return R"({"name": "reduce_)" + node + R"(", "node": ")" + node
      + R"(", "ops": [
      {"type": "Allreduce", "inputs": ["X", "y", "s"], "outputs": ["X_sum", "y_sum", "s_sum"], "args": {"collective": "big_sum"}},
      {"type": "Allreduce", "inputs": ["X"], "outputs": ["X_max"], "args": {"collective": "big_max", "op": "max"}}]})";
  };
  return R"({"name": "big_all_reduce", "init": [)" + init("a", 1, 250000)
    + ",\n" + init("b", 2, b_rows) + ",\n" + init("c", 3, 250000)
    + R"(], "epoch": [)" + reduce("a") + ",\n" + reduce("b") + ",\n"
    + reduce("c") + R"(], "epoch_limit": 1})";
}

// The blobs of `job_text` named `blobs` on every node of `nodes`, after a
// run in `sess`.
std::map<std::string, epochrt::tensor>
run_and_fetch(epochrt::session& sess, const std::string& job_text,
              const std::vector<std::string>& nodes,
              const std::vector<std::string>& blobs) {
  auto ops = make_ops();
  auto loaded = epochrt::parse_job_json(job_text, "job.json", *ops);
  BOOST_REQUIRE_MESSAGE(loaded, why(loaded));
  epochrt::job_runner runner{std::move(*loaded)};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  std::map<std::string, epochrt::tensor> result;
  for (auto& node : nodes)
    for (auto& blob : blobs) {
      auto value = sess.fetch(node, blob);
      BOOST_REQUIRE_MESSAGE(value, node << ":" << blob << ": " << why(value));
      result[node + ":" + blob] = std::move(*value);
    }
  return result;
}

epochrt::distributed_session_options patient_session() {
  epochrt::distributed_session_options opts;
  opts.timeouts.group_timeout = 60s;
  opts.timeouts.request_timeout = 10s;
  return opts;
}

std::map<std::string, epochrt::node_address> abc_addresses(daemons& d) {
  std::map<std::string, epochrt::node_address> nodes;
  for (auto& [node, i] : abc_on_three_daemons())
    nodes[node]
      = epochrt::node_address{"127.0.0.1", static_cast<uint16_t>(d[i].port())};
  return nodes;
}

BOOST_AUTO_TEST_CASE(an_all_reduce_cut_into_pieces_gives_the_in_process_bits) {
  const std::vector<std::string> nodes{"a", "b", "c"};
  const std::vector<std::string> blobs{"X", "X_sum", "y_sum", "s_sum", "X_max"};
  auto job = big_all_reduce_job();
  std::map<std::string, epochrt::tensor> local;
  {
    caf::actor_system_config cfg;
    epochrt::configure(cfg);
    caf::actor_system sys{cfg};
    epochrt::local_session sess{sys, make_ops()};
    local = run_and_fetch(sess, job, nodes, blobs);
  }
  daemons d{3};
  network_config cfg;
  caf::actor_system sys{cfg};
  std::map<std::string, epochrt::tensor> remote;
  {
    epochrt::distributed_session sess{sys, make_ops(), abc_addresses(d),
                                      patient_session()};
    remote = run_and_fetch(sess, job, nodes, blobs);
  }
  // Every element is the sum of the three nodes' (a sum of the wrong
  // elements, or a piece never filled, is not).
  auto& sum = local.at("a:X_sum");
  auto xa = elements<float>(local.at("a:X"));
  auto xb = elements<float>(local.at("b:X"));
  auto xc = elements<float>(local.at("c:X"));
  auto xs = elements<float>(sum);
  BOOST_REQUIRE_EQUAL(xs.size(), size_t{2500000});
  size_t wrong = 0;
  for (size_t i = 0; i < xs.size(); ++i)
    if (std::abs(xs[i] - (xa[i] + xb[i] + xc[i])) > 1e-5f)
      ++wrong;
  BOOST_TEST(wrong == 0u);
  BOOST_TEST(xa != xb);
  // The same bits on every node, across daemons as in one process.
  for (auto& node : nodes)
    for (auto& blob : blobs) {
      auto key = node + ":" + blob;
      auto& want = local.at(blob == "X" ? key : "a:" + blob);
      auto& got = remote.at(key);
      BOOST_TEST((got.type == want.type), key);
      BOOST_TEST(got.shape == want.shape, key);
      BOOST_TEST((got.data == want.data), key);
    }
}

BOOST_AUTO_TEST_CASE(blobs_that_differ_in_size_across_daemons_fail_the_call) {
  // b's X has twice the rows: its share is cut into more pieces than a's
  // and c's, and no piece of it may wait for parts that never come.
  daemons d{3};
  network_config cfg;
  caf::actor_system sys{cfg};
  auto ops = make_ops();
  auto loaded
    = epochrt::parse_job_json(big_all_reduce_job(500000), "job.json", *ops);
  BOOST_REQUIRE_MESSAGE(loaded, why(loaded));
  epochrt::distributed_session sess{sys, ops, abc_addresses(d),
                                    patient_session()};
  epochrt::job_runner runner{std::move(*loaded)};
  auto started = clock_type::now();
  auto epochs = runner.train(sess);
  BOOST_REQUIRE(!epochs);
  auto text = epochrt::error_text(epochs.error());
  BOOST_TEST(ms_since(started) < 20000, text);
  BOOST_TEST(contains(text, "'big_sum'"), text);
  BOOST_TEST(contains(text, "on node b"), text);
  BOOST_TEST((contains(text, "on node a") || contains(text, "on node c")),
             text);
}

BOOST_AUTO_TEST_CASE(the_collectives_job_over_daemons_prints_as_in_process) {
  daemons d{3};
  auto path = write_file(d.dir, "collectives.json", collectives_job());
  std::vector<std::string> fetches;
  for (std::string node : {"a", "b", "c"})
    for (auto blob : {"sum", "min", "max", "mean", "from_b", "all"})
      fetches.push_back(node + ":" + blob);
  auto local = in_process_result(path, fetches);
  BOOST_TEST(value_of(local, "c:all") == "1,2,3,10,-20,30,100,200,-300");
  auto remote = cli(d.run_args(path, abc_on_three_daemons(), fetches));
  BOOST_REQUIRE_MESSAGE(remote.exit_code == 0, show(remote));
  BOOST_TEST(remote.out == local);
}

BOOST_AUTO_TEST_CASE(
  a_shape_or_dtype_mismatch_across_daemons_fails_naming_the_nodes) {
  daemons d{3};
  struct variant {
    std::string what;
    std::string b_values;
    std::string b_type;
  };
  for (auto& v : {variant{"shape", "[10, -20]", "i64"},
                  variant{"dtype", "[10, -20, 30]", "f64"}}) {
    auto path = write_file(d.dir, v.what + ".json",
                           collectives_job(v.b_values, v.b_type));
    auto started = clock_type::now();
    auto r = cli(
      d.run_args(path, abc_on_three_daemons(), {"a:sum"}, "ckpt-" + v.what),
      45s);
    BOOST_TEST(r.exit_code == 1, v.what << ": " << show(r));
    BOOST_TEST(!r.timed_out, v.what);
    BOOST_TEST(ms_since(started) < 20000, v.what);
    BOOST_TEST(contains(r.err, "epochrt: error: "), v.what << ": " << r.err);
    BOOST_TEST(contains(r.err, "'c_sum'"), v.what << ": " << r.err);
    BOOST_TEST(contains(r.err, "on node b"), v.what << ": " << r.err);
    BOOST_TEST((contains(r.err, "on node a") || contains(r.err, "on node c")),
               v.what << ": " << r.err);
    // The daemons serve the next job.
  }
  auto path = write_file(d.dir, "ok.json", collectives_job());
  auto ok = cli(d.run_args(path, abc_on_three_daemons(), {"a:sum"}, "ok"));
  BOOST_REQUIRE_MESSAGE(ok.exit_code == 0, show(ok));
  BOOST_TEST(value_of(ok.out, "a:sum") == "111,182,-267");
}

BOOST_AUTO_TEST_CASE(a_barrier_one_daemon_never_reaches_fails_without_hanging) {
  daemons d{3};
  // a and b call the barrier twice, c once and ends.
  auto path = write_file(d.dir, "no_barrier.json",
                         collectives_job("[10, -20, 30]", "i64", 2));
  auto started = clock_type::now();
  auto r = cli(d.run_args(path, abc_on_three_daemons(), {"a:sum"}), 45s);
  BOOST_TEST(r.exit_code == 1, show(r));
  BOOST_TEST(ms_since(started) < 20000);
  BOOST_TEST(contains(r.err, "'c_barrier'"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()

// -- 4, 5: a daemon lost or frozen in an all-reduce ------------------------

BOOST_AUTO_TEST_SUITE(losing_a_daemon_in_an_all_reduce)

const std::vector<std::string> fast_timeout{"--connection-timeout-ms", "1000"};

BOOST_AUTO_TEST_CASE(a_killed_daemon_fails_the_run_naming_the_all_reduce) {
  daemons d{3, fast_timeout};
  auto job = write_paced_data_parallel(d.dir, 100);
  auto run = d.start_run(d.run_args(job, one_trainer_per_daemon(),
                                    {"trainer_0:w"}, "ckpt", fast_timeout));
  BOOST_REQUIRE_MESSAGE(d.reached(epoch_committed(1), 30s), d.run_err());
  // Within the next epoch: trainer_0 and trainer_2 wait for trainer_1 in
  // all-reduce 'gradients' nearly all of the time.
  std::this_thread::sleep_for(250ms);
  d[1].kill();
  auto killed_at = clock_type::now();
  auto code = run->wait(20s);
  auto took = ms_since(killed_at);
  auto err = d.run_err();
  BOOST_TEST(code == 1, err);
  BOOST_TEST(took < 5000, "the run ended " << took << " ms after the kill");
  BOOST_TEST(contains(err, "node trainer_1"), err);
  // Whichever news comes first names the collective: a surviving daemon's
  // ("waited for node trainer_1 in all-reduce 'gradients'") or the master's
  // own loss of the connection ("node trainer_1 was lost ... while tasks
  // waited in all-reduce 'gradients'").
  BOOST_TEST(contains(err, "all-reduce 'gradients'"), err);
  BOOST_TEST(contains(err, "node_lost"), err);
  // The surviving daemons ended their waits: they serve the next master.
  restart(d[1]);
  auto fetches = data_parallel_fetches();
  auto again
    = cli(d.run_args(data_parallel, one_trainer_per_daemon(), fetches, "next"));
  BOOST_REQUIRE_MESSAGE(again.exit_code == 0, show(again));
  BOOST_TEST(again.out == in_process_result(data_parallel, fetches));
}

BOOST_AUTO_TEST_CASE(
  with_max_failures_a_daemon_killed_in_an_all_reduce_is_recovered_exactly) {
  auto fetches = data_parallel_fetches();
  auto local = in_process_result(data_parallel, fetches);
  daemons d{3, fast_timeout};
  auto job = write_paced_data_parallel(d.dir, 60);
  auto run
    = d.start_run(d.run_args(job, one_trainer_per_daemon(), fetches, "ckpt",
                             concat(fast_timeout, {"--max-failures", "2"})));
  BOOST_REQUIRE_MESSAGE(d.reached(epoch_committed(1), 30s), d.run_err());
  std::this_thread::sleep_for(150ms);
  d[1].kill();
  BOOST_REQUIRE_MESSAGE(d.reached(node_lost_event(1), 10s), d.run_err());
  restart(d[1]);
  auto code = run->wait(60s);
  auto err = d.run_err();
  BOOST_REQUIRE_MESSAGE(code == 0, err);
  BOOST_TEST(contains(err, "all-reduce 'gradients'"), err);
  BOOST_TEST(d.run_out() == local);
}

BOOST_AUTO_TEST_CASE(a_frozen_daemon_ends_every_wait_within_the_timeout) {
  daemons d{3, fast_timeout};
  auto job = write_paced_data_parallel(d.dir, 100);
  auto run = d.start_run(d.run_args(job, one_trainer_per_daemon(),
                                    {"trainer_0:w"}, "ckpt", fast_timeout));
  BOOST_REQUIRE_MESSAGE(d.reached(epoch_committed(1), 30s), d.run_err());
  std::this_thread::sleep_for(250ms);
  d[1].signal(SIGSTOP);
  auto frozen_at = clock_type::now();
  auto code = run->wait(15s);
  auto took = ms_since(frozen_at);
  d[1].signal(SIGCONT);
  d[1].kill();
  auto err = d.run_err();
  BOOST_TEST(code == 1, err);
  // The configured 1 s, a heartbeat and slack; never the 24 h group
  // timeout.
  BOOST_TEST(took < 5000, "the run ended " << took << " ms after the freeze");
  BOOST_TEST(contains(err, "node trainer_1"), err);
  BOOST_TEST(contains(err, "all-reduce 'gradients'"), err);
  // The waits on the other daemons ended too: they serve the next job, with
  // trainer_1 in the master's process.
  auto fetches = data_parallel_fetches();
  auto again = cli(d.run_args(
    data_parallel, {{"trainer_0", 0}, {"trainer_2", 2}}, fetches, "next"));
  BOOST_REQUIRE_MESSAGE(again.exit_code == 0, show(again));
  BOOST_TEST(again.out == in_process_result(data_parallel, fetches));
}

BOOST_AUTO_TEST_SUITE_END()

// -- 6: what a daemon's exchange refuses -----------------------------------

namespace {

namespace ert = epochrt;

// A master of the test's own, in an actor system of the test process: it
// attaches node `node` to a daemon through the daemon's gatekeeper (hello,
// challenge, attach), as a distributed_session does, and so holds the
// node's gate and the daemon's exchange endpoint (remote_attached). The
// daemon keeps the node while the actor that attached it (`self`) lives.
struct raw_master {
  network_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::actor gate;
  caf::actor exchange;
  uint64_t max_tensor_bytes = 0;

  raw_master(int port, const std::string& node) {
    auto keeper
      = ert::connect_actor(sys, "127.0.0.1", static_cast<uint16_t>(port), 5s);
    BOOST_REQUIRE_MESSAGE(keeper, why(keeper));
    std::optional<ert::remote_challenge> challenge;
    caf::error err;
    self
      ->request(*keeper, 5s,
                ert::remote_hello{ert::remote_protocol_version, node,
                                  ert::detail::make_nonce()})
      .receive(
        [&](ert::remote_challenge& ch) {
          challenge = std::move(ch);
        },
        [&](caf::error& e) {
          err = std::move(e);
        });
    BOOST_REQUIRE_MESSAGE(challenge, ert::error_text(err));
    self
      ->request(*keeper, 5s, ert::remote_attach{node, challenge->nonce, {}, {}})
      .receive(
        [&](ert::remote_attached& attached) {
          gate = attached.gate;
          exchange = attached.exchange;
          max_tensor_bytes = attached.max_tensor_bytes;
        },
        [&](caf::error& e) {
          err = std::move(e);
        });
    BOOST_REQUIRE_MESSAGE(gate && exchange, ert::error_text(err));
  }

  // Runs `tasks` on the daemon's node as group run `run` of an epoch; the
  // daemon's answer, or request_timeout after 30 s.
  std::future<caf::expected<ert::tasks_done>>
  run_tasks(std::vector<ert::task_def> tasks, uint64_t run,
            ert::exchange_plan plan) {
    return std::async(
      std::launch::async,
      [this, tasks = std::move(tasks), run, plan = std::move(plan)] {
        caf::scoped_actor self{sys};
        caf::expected<ert::tasks_done> result{
          caf::make_error(caf::sec::request_timeout)};
        self->request(gate, 30s, ert::run_tasks{"epoch", 0, tasks, run, plan})
          .receive(
            [&](ert::tasks_done& done) {
              result = std::move(done);
            },
            [&](caf::error& err) {
              result = std::move(err);
            });
        return result;
      });
  }
};

// The replies an exchange sent to a peer of the test's, by request id.
class reply_box {
public:
  explicit reply_box(caf::scoped_actor& self) : self_(self) {
    // nop
  }

  // The reply to request `op`, if it came within `timeout`.
  std::optional<ert::exchange_reply> await(uint64_t op,
                                           std::chrono::milliseconds timeout) {
    auto deadline = clock_type::now() + timeout;
    while (replies_.count(op) == 0 && clock_type::now() < deadline)
      receive_for(std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now()));
    if (auto i = replies_.find(op); i != replies_.end())
      return i->second;
    return std::nullopt;
  }

  // Everything that arrives within `window`.
  void drain(std::chrono::milliseconds window) {
    auto deadline = clock_type::now() + window;
    while (clock_type::now() < deadline)
      receive_for(std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now()));
  }

  bool got(uint64_t op) const {
    return replies_.count(op) > 0;
  }

private:
  void receive_for(std::chrono::milliseconds left) {
    if (left.count() <= 0)
      return;
    self_->receive(
      [&](ert::exchange_reply& reply) {
        replies_.emplace(reply.op, std::move(reply));
      },
      [](ert::exchange_task_end&) {
        // a task of the run ended: nothing to answer
      },
      [](ert::exchange_node_lost&) {
        // nop
      },
      caf::after(left) >>
        [] {
          // nothing more came
        });
  }

  caf::scoped_actor& self_;
  std::map<uint64_t, ert::exchange_reply> replies_;
};

ert::tensor f32_vector(const std::vector<float>& values) {
  return ert::make_tensor<float>({static_cast<int64_t>(values.size())}, values);
}

std::string status_text(const std::optional<ert::exchange_reply>& reply) {
  if (!reply)
    return "no reply";
  return "status " + std::to_string(static_cast<int>(reply->status)) + ": "
    + reply->error;
}

} // namespace

BOOST_AUTO_TEST_SUITE(a_daemons_exchange_refuses)

BOOST_AUTO_TEST_CASE(
  malformed_and_forged_exchange_messages_and_the_daemon_serves_on) {
  temp_dir dir;
  const uint64_t limit = 65536;
  auto daemon = start_daemon(dir.str(), "d",
                             {"--max-tensor-bytes", std::to_string(limit),
                              "--connection-timeout-ms", "2000"});
  {
    raw_master master{daemon.port(), "host"};
    BOOST_TEST(master.max_tensor_bytes == limit);
    caf::scoped_actor peer{master.sys};
    reply_box box{peer};
    auto peer_endpoint = caf::actor_cast<caf::actor>(peer.ptr());
    // One group run: task t on the daemon's node `host` takes one item from
    // channel q, hosted there; task p of node `peer` (this process) is the
    // channel's only putter.
    const uint64_t run = 0x5eed5eed0001;
    ert::exchange_plan plan;
    ert::channel_plan q;
    q.channel = ert::channel_def{"q", "host", 1, {"x"}};
    q.putters = {ert::task_ref{"peer", "p"}};
    q.takers = {ert::task_ref{"host", "t"}};
    plan.channels = {q};
    plan.peers = {ert::exchange_peer{"host", master.exchange, "", 0},
                  ert::exchange_peer{"peer", peer_endpoint, "", 0}};
    auto task = ert::make_task(
      "t", "host",
      {ert::make_op("DequeueBlobs", {}, {"x"},
                    {{"channel", ert::make_string_tensor({}, {"q"})}})},
      {"x"});
    auto tasks = master.run_tasks({task}, run, plan);
    const ert::task_ref p{"peer", "p"};
    const ert::task_ref t{"host", "t"};
    auto put_in = [&](uint64_t in_run, const std::string& channel, uint64_t op,
                      const ert::task_ref& from,
                      std::vector<ert::tensor> item) {
      peer->send(master.exchange,
                 ert::exchange_put{in_run, channel, op, from, std::move(item)});
    };
    auto put = [&](uint64_t op, const ert::task_ref& from,
                   std::vector<ert::tensor> item) {
      put_in(run, "q", op, from, std::move(item));
    };
    // A put that claims the daemon's own node: no reply, and no item.
    put(1, t, {f32_vector({99, 99, 99})});
    // A tensor over the daemon's --max-tensor-bytes (within what the
    // connection lets through).
    put(2, p, {f32_vector(std::vector<float>(limit / 4 + 1024, 7.0f))});
    // A tensor whose payload does not match its shape.
    auto malformed = f32_vector({1, 2, 3, 4});
    malformed.data.resize(3);
    put(3, p, {malformed});
    // Two blobs for a channel of one.
    put(4, p, {f32_vector({1}), f32_vector({2})});
    // A channel the daemon does not host.
    put_in(run, "nope", 5, p, {f32_vector({1})});
    // A take by a task that is no taker of q.
    peer->send(master.exchange, ert::exchange_take{run, "q", 6, p});
    // The daemon relays for nobody; and a relayed put that did not come
    // through the run's relay (the run has none).
    peer->send(master.exchange,
               ert::exchange_forward{master.exchange,
                                     caf::make_message(ert::exchange_put{
                                       run, "q", 7, p, {f32_vector({98})}})});
    peer->send(master.exchange,
               ert::exchange_relayed{peer_endpoint,
                                     caf::make_message(ert::exchange_put{
                                       run, "q", 8, p, {f32_vector({97})}})});
    // A collective the run does not have.
    peer->send(master.exchange, ert::exchange_part{run, "nope", 0, 0, {}});
    // A put for a run that never begins.
    put_in(run + 1, "q", 9, p, {f32_vector({96})});
    for (uint64_t op : {2, 3, 4, 5, 6}) {
      auto reply = box.await(op, 5s);
      BOOST_TEST((reply && reply->status == ert::exchange_status::failed),
                 "op " << op << ": " << status_text(reply));
    }
    BOOST_TEST(contains(status_text(box.await(2, 1ms)),
                        "over " + std::to_string(limit) + " bytes"));
    BOOST_TEST(contains(status_text(box.await(3, 1ms)), "malformed"));
    BOOST_TEST(contains(status_text(box.await(5, 1ms)), "no channel 'nope'"));
    BOOST_TEST(contains(status_text(box.await(6, 1ms)), "does not take from"));
    // The legitimate putter: its item is the one task t takes.
    put(10, p, {f32_vector({1, 2, 3})});
    auto stored = box.await(10, 5s);
    BOOST_TEST((stored && stored->status == ert::exchange_status::ok),
               status_text(stored));
    peer->send(master.exchange, ert::exchange_close{run, "q", 11, p});
    auto closed = box.await(11, 5s);
    BOOST_TEST((closed && closed->status == ert::exchange_status::ok),
               status_text(closed));
    BOOST_REQUIRE(tasks.wait_for(10s) == std::future_status::ready);
    auto done = tasks.get();
    BOOST_REQUIRE_MESSAGE(done, why(done) << "\n" << daemon.log());
    BOOST_REQUIRE_EQUAL(done->outputs.size(), 1u);
    BOOST_TEST((done->outputs[0].value == f32_vector({1, 2, 3})),
               ert::format_values(done->outputs[0].value));
    // Nothing was answered for the forged, relayed and early messages.
    box.drain(300ms);
    for (uint64_t op : {1, 7, 8, 9})
      BOOST_TEST(!box.got(op), "op " << op << " was answered");
    // The run ends with its channel closed and empty.
    std::optional<ert::exchange_report> report;
    peer->request(master.gate, 10s, ert::exchange_end{run, false})
      .receive(
        [&](ert::exchange_report& r) {
          report = std::move(r);
        },
        [&](caf::error& err) {
          BOOST_FAIL("exchange_end: " << ert::error_text(err));
        });
    BOOST_REQUIRE(report);
    BOOST_REQUIRE_EQUAL(report->channels.size(), 1u);
    BOOST_TEST(report->channels[0].items == 0u);
    BOOST_TEST(report->channels[0].closed);
    // A put into the run that ended is refused.
    put(12, p, {f32_vector({95})});
    auto late = box.await(12, 5s);
    BOOST_TEST((late && late->status == ert::exchange_status::failed),
               status_text(late));
    auto log = daemon.log();
    BOOST_TEST(contains(log, "claims node 'host'"), log);
    BOOST_TEST(contains(log, "does not relay for"), log);
    BOOST_TEST(contains(log, "not the run's relay"), log);
    BOOST_TEST(contains(log, "no collective 'nope'"), log);
  }
  // The test's master is gone; the daemon serves a real one.
  BOOST_TEST(daemon.running());
  BOOST_REQUIRE(eventually(
    [&] {
      return contains(daemon.log(), "the master of node host is gone");
    },
    10s));
  auto fetches = data_parallel_fetches();
  auto r
    = cli(concat({"run", data_parallel, "--checkpoint-dir", dir.sub("ckpt"),
                  "--node", "trainer_1=" + daemon.address()},
                 fetch_args(fetches)));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, show(r));
  BOOST_TEST(r.out == in_process_result(data_parallel, fetches));
}

// A piece of an all-reduce that is not the chunk of the blobs it declares
// (here 5 elements of chunk 0 of a 6-element blob cut in three) fails the
// call at once, naming its node, although another participant's piece of
// that chunk never comes: waiting for it would not mend the one that
// came.
BOOST_AUTO_TEST_CASE(an_all_reduce_piece_cut_wrong_fails_the_call_at_once) {
  temp_dir dir;
  auto daemon
    = start_daemon(dir.str(), "d", {"--connection-timeout-ms", "2000"});
  raw_master master{daemon.port(), "a"};
  caf::scoped_actor peer{master.sys};
  auto peer_endpoint = caf::actor_cast<caf::actor>(peer.ptr());
  // Task t of node a (the daemon) all-reduces a 6-element blob with nodes
  // b and c, both in this process.
  const uint64_t run = 0x5eed5eed0002;
  ert::exchange_plan plan;
  ert::collective_plan g;
  g.name = "g";
  g.kind = ert::collective_kind::all_reduce;
  g.op = ert::reduce_op::sum;
  g.participants = {{"a", "t"}, {"b", "tb"}, {"c", "tc"}};
  plan.collectives = {g};
  plan.peers = {ert::exchange_peer{"a", master.exchange, "", 0},
                ert::exchange_peer{"b", peer_endpoint, "", 0},
                ert::exchange_peer{"c", peer_endpoint, "", 0}};
  auto task = ert::make_task(
    "t", "a",
    {ert::make_op("ConstantFill", {}, {"x"},
                  {{"shape", ert::make_tensor<int64_t>({1}, {6})},
                   {"value", ert::make_tensor<float>({}, {1.0f})}}),
     ert::make_op("Allreduce", {"x"}, {"y"},
                  {{"collective", ert::make_string_tensor({}, {"g"})}})},
    {"y"});
  auto tasks = master.run_tasks({task}, run, plan);
  ert::collective_contribution from_b;
  from_b.participant = 1;
  from_b.types = {ert::dtype::f32};
  from_b.shapes = {{6}};
  from_b.values = {f32_vector({1, 1, 1, 1, 1})};
  peer->send(master.exchange,
             ert::exchange_part{run, "g", 0, 0, {std::move(from_b)}});
  BOOST_REQUIRE(tasks.wait_for(10s) == std::future_status::ready);
  auto done = tasks.get();
  BOOST_REQUIRE(!done);
  auto text = ert::error_text(done.error());
  BOOST_TEST(contains(text, "node b sent chunk 0 of blob 0 in the wrong size"),
             text);
  BOOST_TEST(daemon.running());
}

// Messages for a group run that has not begun on the daemon are kept until
// it begins, within a few tensors' worth of bytes, and dropped when the
// process that sent them goes away: a run that never reaches the daemon
// does not hold its memory for good.
BOOST_AUTO_TEST_CASE(
  messages_for_runs_that_never_begin_are_dropped_with_their_master) {
  temp_dir dir;
  const uint64_t limit = 1 << 20;
  auto daemon = start_daemon(dir.str(), "d",
                             {"--max-tensor-bytes", std::to_string(limit),
                              "--connection-timeout-ms", "2000"});
  auto resident_mib = [&] {
    std::istringstream in{
      read_text("/proc/" + std::to_string(daemon.pid()) + "/status")};
    for (std::string line; std::getline(in, line);)
      if (line.rfind("VmRSS:", 0) == 0)
        return std::stod(line.substr(6)) / 1024.0;
    return 0.0;
  };
  auto before = resident_mib();
  {
    raw_master master{daemon.port(), "host"};
    caf::scoped_actor peer{master.sys};
    // 64 puts of 1 MiB, each for a run of its own that never begins.
    for (uint64_t i = 0; i < 64; ++i)
      peer->send(master.exchange,
                 ert::exchange_put{
                   0xdead0000 + i,
                   "q",
                   i,
                   ert::task_ref{"peer", "p"},
                   {f32_vector(std::vector<float>(limit / 4 - 64, 1.0f))}});
    std::this_thread::sleep_for(1s);
    BOOST_TEST_MESSAGE("resident while attached: " << resident_mib() - before
                                                   << " MiB more");
  }
  BOOST_REQUIRE(eventually(
    [&] {
      return contains(daemon.log(), "the master of node host is gone");
    },
    10s));
  std::this_thread::sleep_for(500ms);
  auto after = resident_mib();
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in quarantine: the daemon's
  // resident size tells nothing about what it still holds.
  BOOST_TEST_MESSAGE("under AddressSanitizer: resident "
                     << before << " MiB before, " << after << " MiB after");
#else
  BOOST_TEST(after - before < 16.0,
             "resident " << before << " MiB before, " << after
                         << " MiB after the master left");
#endif
}

BOOST_AUTO_TEST_CASE(a_plan_that_gives_a_node_an_invalid_daemon_address) {
  temp_dir dir;
  auto daemon = start_daemon(dir.str(), "d", {});
  raw_master master{daemon.port(), "host"};
  caf::scoped_actor self{master.sys};
  auto peer_endpoint = caf::actor_cast<caf::actor>(self.ptr());
  auto task = ert::make_task("t", "host",
                             {ert::make_op("ConstantFill", {}, {"x"})}, {});
  for (auto bad :
       {ert::exchange_peer{"peer", peer_endpoint, std::string(254, 'h'), 7000},
        ert::exchange_peer{"peer", peer_endpoint, "h", 0},
        ert::exchange_peer{"peer", peer_endpoint, "", 7000}}) {
    ert::exchange_plan plan;
    plan.collectives = {ert::collective_plan{
      "g",
      ert::collective_kind::barrier,
      ert::reduce_op::sum,
      "",
      {ert::task_ref{"host", "t"}, ert::task_ref{"peer", "p"}}}};
    plan.peers = {ert::exchange_peer{"host", master.exchange, "", 0}, bad};
    std::string refusal;
    self
      ->request(master.gate, 30s,
                ert::run_tasks{"epoch", 0, {task}, 0x5eed0002, plan})
      .receive(
        [&](ert::tasks_done&) {
          refusal = "(ran)";
        },
        [&](caf::error& err) {
          refusal = ert::error_text(err);
        });
    BOOST_TEST(contains(refusal, "invalid daemon address"), refusal);
  }
  // And it serves on.
  bool ran = false;
  self->request(master.gate, 30s, ert::run_tasks{"epoch", 0, {task}, 0, {}})
    .receive(
      [&](ert::tasks_done&) {
        ran = true;
      },
      [&](caf::error& err) {
        BOOST_FAIL(ert::error_text(err));
      });
  BOOST_TEST(ran);
}

BOOST_AUTO_TEST_SUITE_END()

// -- 7: fault sweeps across two daemons ------------------------------------

namespace {

// How often each injection point was reached in the sweep's fault-free
// reference run, over the traces of the master and of every daemon
// (`<work dir>/reference/*.trace.1`, one hit a line, the point first).
std::map<std::string, int> reference_points(const temp_dir& work) {
  std::map<std::string, int> result;
  namespace fs = std::filesystem;
  for (auto& entry : fs::directory_iterator{work.sub("reference")}) {
    auto name = entry.path().filename().string();
    if (name.size() < 8 || name.compare(name.size() - 8, 8, ".trace.1") != 0)
      continue;
    std::istringstream in{read_text(entry.path().string())};
    for (std::string line; std::getline(in, line);)
      ++result[line.substr(0, line.find('\t'))];
  }
  return result;
}

process_result sweep(const temp_dir& work, const std::string& job,
                     const std::vector<std::string>& flags) {
  auto args = concat({"sweep", job}, flags);
  args = concat(args,
                {"--max-failures", "2", "--max-runs", "12", "--timeout-ms",
                 "60000", "--work-dir", work.str()});
  auto r = cli(args, 150s);
  BOOST_TEST_MESSAGE(job << ":\n" << r.out);
  return r;
}

void check_summary(const process_result& r) {
  BOOST_CHECK_MESSAGE(r.exit_code == 0, show(r));
  auto summary = last_line(r.out);
  BOOST_CHECK_MESSAGE(contains(summary, "sweep: 12 runs, "), summary);
  BOOST_CHECK_MESSAGE(contains(summary, " 0 wrong, 0 hung"), summary);
}

} // namespace

BOOST_AUTO_TEST_SUITE(fault_sweeps)

BOOST_AUTO_TEST_CASE(
  sweep_of_data_parallel_across_two_daemons_has_no_wrong_run) {
  temp_dir work;
  auto r = sweep(work, data_parallel,
                 {"--daemon", "trainer_0", "--daemon", "trainer_1", "--fetch",
                  "trainer_0:w", "--fetch", "trainer_1:w", "--fetch",
                  "trainer_2:w", "--seed", "7"});
  check_summary(r);
  // The collective points are reached (in the master, for trainer_2, and
  // in both daemons), so they are among the cases the sweep samples from.
  auto points = reference_points(work);
  BOOST_TEST(points["collective.send"] > 0);
  BOOST_TEST(points["collective.receive"] > 0);
  // data_parallel.json has no channel.
  BOOST_TEST(points["channel.put"] == 0);
}

BOOST_AUTO_TEST_CASE(
  sweep_of_reader_pipeline_across_two_daemons_has_no_wrong_run) {
  temp_dir work;
  auto r = sweep(work, reader_pipeline,
                 {"--daemon", "reader", "--daemon", "trainer_1", "--fetch",
                  "reader:w_trainer_0", "--fetch", "reader:w_trainer_1",
                  "--fetch", "reader:w_trainer_2", "--seed", "3"});
  check_summary(r);
  auto points = reference_points(work);
  for (auto point : {"channel.put", "channel.take", "channel.close",
                     "collective.send", "collective.receive"})
    BOOST_TEST(points[point] > 0, point);
}

BOOST_AUTO_TEST_SUITE_END()
