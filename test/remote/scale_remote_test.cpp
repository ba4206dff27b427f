// A data-parallel job over many fresh `epochrt node` daemons (one each of
// its nodes, one worker thread each, as a user starts them on a cluster)
// ends with the bits of the same job in one process: while every daemon
// opens its connections to the others, none may be declared lost. Every
// process real, every socket on 127.0.0.1, every wait bounded.

#define BOOST_TEST_MODULE scale
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"

using namespace std::chrono_literals;
using epochrt::process::node_daemon;
using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::start_daemon;
using epochrt::test::temp_dir;

namespace {

// Enough daemons that each opens a few dozen connections to the others at
// the first epoch (64 made most runs fail with a false node_lost before
// the fix).
constexpr int daemon_count = 64;

// Nodes whose weights the runs print and compare.
constexpr int fetch_every = 8;

std::string node_name(int i) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "n%03d", i);
  return buf;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// Every node: its own gradient g = w * k + b (k and b differ per node and
// per element), averaged over all nodes by one Allreduce, then applied. The
// sums are of floats that differ everywhere, so their bits show the order
// they were added in. Then node n005's weights are broadcast, every node's
// k gathered and a barrier passed: over 64 daemons each goes down (and
// up) a tree of two levels, whose middle processes forward.
std::string scale_job(int nodes, int epochs) {
  constexpr int width = 256;
  std::ostringstream init;
  std::ostringstream epoch;
  for (int i = 0; i < nodes; ++i) {
    auto node = node_name(i);
    std::string bias;
    for (int j = 0; j < width; ++j)
      bias += (j ? "," : "") + number(std::sin(i * 7.3 + j * 0.11));
    init << (i ? "," : "") << R"({"name": "init_)" << node << R"(", "node": ")"
         << node << R"(", "ops": [
      {"type": "ConstantFill", "outputs": ["w"], "args": {"shape": [)"
         << width << R"(], "value": 0.0}},
      {"type": "ConstantFill", "outputs": ["k"], "args": {"value": )"
         << number(0.5 + 0.013 * i) << R"(}},
      {"type": "GivenTensorFill", "outputs": ["b"], "args": {"values": [)"
         << bias << "]}}]}";
    epoch << (i ? "," : "") << R"({"name": "train_)" << node
          << R"(", "node": ")" << node << R"(", "ops": [
      {"type": "Mul", "inputs": ["w", "k"], "outputs": ["wk"]},
      {"type": "Add", "inputs": ["wk", "b"], "outputs": ["g"]},
      {"type": "Allreduce", "inputs": ["g"], "outputs": ["g"], "args": {"collective": "grad", "op": "mean"}},
      {"type": "SGDUpdate", "inputs": ["w", "g"], "outputs": ["w"], "args": {"lr": 0.1}},
      {"type": "Broadcast", "inputs": ["w"], "outputs": ["w_root"], "args": {"collective": "share", "root": "n005"}},
      {"type": "Allgather", "inputs": ["k"], "outputs": ["ks"], "args": {"collective": "gather"}},
      {"type": "Barrier", "args": {"collective": "sync"}}]})";
  }
  return R"({"name": "scale", "epoch_limit": )" + std::to_string(epochs)
    + R"(, "init": [)" + init.str() + R"(], "epoch": [)" + epoch.str() + "]}";
}

std::vector<std::string> fetches(int nodes) {
  std::vector<std::string> args;
  for (int i = 0; i < nodes; i += fetch_every) {
    args.push_back("--fetch");
    args.push_back(node_name(i) + ":w");
  }
  for (auto blob : {"w_root", "ks"}) {
    args.push_back("--fetch");
    args.push_back(node_name(nodes - 1) + ":" + blob);
  }
  return args;
}

process_result run(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, 240s}.run(args);
}

struct many_daemons {
  temp_dir dir;
  std::vector<std::unique_ptr<node_daemon>> daemons;
  std::string job = dir.sub("scale.json");

  many_daemons() {
    std::ofstream{job} << scale_job(daemon_count, 4);
    for (int i = 0; i < daemon_count; ++i)
      daemons.push_back(std::make_unique<node_daemon>(start_daemon(
        dir.str(), "d" + std::to_string(i), {"--worker-threads", "1"})));
  }

  // The job over the daemons, checkpointed into DIR/`ckpt`.
  std::vector<std::string> run_args(const std::string& ckpt,
                                    std::vector<std::string> extra = {}) {
    std::vector<std::string> args{
      "run", job, "--checkpoint-dir", dir.sub(ckpt), "--max-failures", "0"};
    for (int i = 0; i < daemon_count; ++i) {
      args.push_back("--node");
      args.push_back(node_name(i) + "=" + daemons[i]->address());
    }
    for (auto& arg : fetches(daemon_count))
      args.push_back(arg);
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // The same job in one process.
  std::string in_process_result() {
    std::vector<std::string> args{"run", job};
    for (auto& arg : fetches(daemon_count))
      args.push_back(arg);
    auto result = run(args);
    BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
    return result.out;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(scale, many_daemons)

BOOST_AUTO_TEST_CASE(a_job_over_fresh_daemons_ends_as_in_one_process) {
  auto expected = in_process_result();
  auto result = run(run_args("ckpt"));
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  BOOST_TEST(result.out == expected);
  // Daemons that served a job serve the next, with copies on each other.
  result = run(run_args("ckpt2", {"--replicas", "1"}));
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  BOOST_TEST(result.out == expected);
}

BOOST_AUTO_TEST_SUITE_END()
