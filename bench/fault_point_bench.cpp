// What an injection point costs when no fault plan is active.
//
// Two figures, each beside its baseline from the same run:
//  1. one point in a tight loop, with no injector (a null test) and with an
//     injector whose plan is about other points (a flag test), against the
//     same loop without the point;
//  2. whole epochs of a job of trivial ops (every job runner, task and op
//     point on the path, about a dozen per epoch), without an injector and
//     with that injector, against each other.
// Medians of --runs runs. Usage: fault_point_bench [--runs N] [--epochs N]

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "bench/bench_util.hpp"
#include <epochrt/epochrt.hpp>
#include <epochrt/faults/fault_injector.hpp>

using namespace epochrt;
using epochrt::bench::median;
using epochrt::bench::seconds_since;
using clock_type = std::chrono::steady_clock;

namespace {

// Read through an atomic so that the compiler cannot fold the test away.
std::atomic<fault_injector*> current{nullptr};

double loop_ns(uint64_t iterations, bool with_point) {
  uint64_t struck = 0;
  auto start = clock_type::now();
  for (uint64_t i = 0; i < iterations; ++i) {
    auto* faults = current.load(std::memory_order_relaxed);
    if (with_point)
      struck += strike(faults, fault_point::node_op,
                       {"trainer_0", static_cast<int64_t>(i), "Add"})
        ? 1
        : 0;
    else
      struck += faults != nullptr ? 1 : 0;
  }
  auto ns = seconds_since(start) * 1e9 / static_cast<double>(iterations);
  if (struck != 0)
    std::abort(); // no plan strikes here
  return ns;
}

// A job of `epochs` epochs, one task of four trivial ops per epoch.
job trivial_job(int epochs, const op_registry& ops) {
  std::string text = R"({"name": "trivial",
    "init": [{"node": "n", "ops": [
      {"type": "CreateCounter", "outputs": ["counter"],
       "args": {"init_count": )"
    + std::to_string(epochs - 1) + R"(}},
      {"type": "ConstantFill", "outputs": ["x"], "args": {"value": 0}},
      {"type": "ConstantFill", "outputs": ["one"], "args": {"value": 1}}]}],
    "epoch": [{"node": "n", "outputs": ["done"], "ops": [
      {"type": "Add", "inputs": ["x", "one"], "outputs": ["x"]},
      {"type": "Copy", "inputs": ["x"], "outputs": ["y"]},
      {"type": "Mul", "inputs": ["y", "one"], "outputs": ["z"]},
      {"type": "CountDown", "inputs": ["counter"], "outputs": ["done"]}]}],
    "stop_conditions": [{"node": "n", "blob": "done"}]})";
  auto parsed = parse_job_json(text, "trivial", ops);
  if (!parsed) {
    std::fprintf(stderr, "fault_point_bench: %s\n",
                 error_text(parsed.error()).c_str());
    std::exit(1);
  }
  return std::move(*parsed);
}

double epoch_us(caf::actor_system& sys, std::shared_ptr<op_registry> ops,
                int epochs, std::shared_ptr<fault_injector> faults) {
  session_options opts;
  opts.faults = std::move(faults);
  local_session sess{sys, ops, opts};
  job_runner runner{trivial_job(epochs, *ops)};
  auto start = clock_type::now();
  auto done = runner.train(sess);
  auto us = seconds_since(start) * 1e6 / epochs;
  if (!done) {
    std::fprintf(stderr, "fault_point_bench: %s\n",
                 error_text(done.error()).c_str());
    std::exit(1);
  }
  return us;
}

} // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int epochs = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0)
      runs = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--epochs") == 0)
      epochs = std::max(10, std::atoi(argv[i + 1]));
  }
  // A plan about another point: every point on the path is disarmed.
  fault_plan other;
  fault_rule rule;
  rule.point = fault_point::remote_heartbeat;
  rule.kind = fault_kind::delay;
  rule.ms = 1;
  other.faults.push_back(rule);
  auto disarmed = std::make_shared<fault_injector>(other);

  constexpr uint64_t iterations = 50'000'000;
  std::vector<double> bare, none, flag;
  for (int r = 0; r < runs; ++r) {
    current = nullptr;
    bare.push_back(loop_ns(iterations, false));
    none.push_back(loop_ns(iterations, true));
    current = disarmed.get();
    flag.push_back(loop_ns(iterations, true));
  }
  std::printf("one point, %d runs of %llu calls (median ns per call):\n", runs,
              static_cast<unsigned long long>(iterations));
  std::printf("  loop without the point (baseline)  %6.2f ns\n", median(bare));
  std::printf("  point, no injector                 %6.2f ns  (+%.2f ns)\n",
              median(none), median(none) - median(bare));
  std::printf("  point, plan about other points     %6.2f ns  (+%.2f ns)\n",
              median(flag), median(flag) - median(bare));

  caf::actor_system_config cfg;
  configure(cfg, bench::bench_logging(false));
  caf::actor_system sys{cfg};
  auto ops = std::make_shared<op_registry>();
  if (auto err = add_builtin_ops(*ops)) {
    std::fprintf(stderr, "fault_point_bench: %s\n", error_text(err).c_str());
    return 1;
  }
  std::vector<double> plain, planned, ratio;
  epoch_us(sys, ops, epochs / 4, nullptr); // warm-up: threads, allocator
  for (int r = 0; r < runs; ++r) {
    auto a = epoch_us(sys, ops, epochs, nullptr);
    auto b = epoch_us(sys, ops, epochs, disarmed);
    plain.push_back(a);
    planned.push_back(b);
    ratio.push_back(b / a);
  }
  std::printf("an epoch of 4 ops on an in-process node, %d runs of %d epochs "
              "(median us per epoch):\n",
              runs, epochs);
  std::printf("  no injector (baseline)             %8.1f us\n", median(plain));
  std::printf("  plan about other points            %8.1f us  (ratio %.3f)\n",
              median(planned), median(ratio));
  return 0;
}
