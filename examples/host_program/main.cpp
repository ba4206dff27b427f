// A host program that embeds epochrt: it owns its actor system, registers an
// op of its own beside the built-ins, builds a job in code, and runs it with
// checkpoints. Run it twice with the same directory and the second run
// resumes from the last committed epoch instead of starting over.
//
//   host_program [CHECKPOINT_DIR]

#include <cstdio>
#include <filesystem>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <epochrt/epochrt.hpp>

namespace {

// The host's own op: every element of input 0 times the `factor` argument,
// written to output 0 (which may be the input itself).
caf::error scale(epochrt::op_context& ctx) {
  auto factor = ctx.number_arg("factor", 1.0);
  auto result = ctx.input(0);
  if (result.type != epochrt::dtype::f32)
    return ctx.fail(epochrt::runtime_errc::type_mismatch,
                    "Scale takes f32 tensors");
  auto* values = result.values<float>();
  for (size_t i = 0; i < result.element_count(); ++i)
    values[i] = static_cast<float>(values[i] * factor);
  ctx.set_output(0, std::move(result));
  return {};
}

epochrt::op_schema scale_schema() {
  epochrt::op_schema schema;
  schema.type = "Scale";
  schema.doc = "Multiplies every element by `factor`.";
  schema.min_inputs = schema.max_inputs = 1;
  schema.min_outputs = schema.max_outputs = 1;
  schema.args.push_back(
    {"factor", epochrt::arg_kind::number, true, "the multiplier"});
  schema.fn = scale;
  return schema;
}

// Five epochs; each doubles the weights of node "worker".
epochrt::job build_job() {
  using epochrt::make_op;
  using epochrt::make_scalar;
  using epochrt::make_task;
  using epochrt::make_tensor;
  epochrt::job job{"host_example"};
  job.add_task(job.init_group(),
               make_task("init", "worker",
                         {make_op("ConstantFill", {}, {"weights"},
                                  {{"shape", make_tensor<int64_t>({1}, {3})},
                                   {"value", make_scalar(1.5)}})}));
  job.add_task(job.epoch_group(),
               make_task("grow", "worker",
                         {make_op("Scale", {"weights"}, {"weights"},
                                  {{"factor", make_scalar(2.0)}})},
                         {"weights"}));
  // Cannot fail here: the job has a task and 5 >= 1.
  [[maybe_unused]] auto err = epochrt::epoch_limiter(job, 5);
  return job;
}

} // namespace

int main(int argc, char** argv) {
  auto dir = argc > 1
    ? std::string{argv[1]}
    : (std::filesystem::temp_directory_path() / "epochrt-host-example")
        .string();
  caf::actor_system_config cfg;
  epochrt::configure(cfg);
  caf::actor_system sys{cfg};

  auto ops = std::make_shared<epochrt::op_registry>();
  auto registered = epochrt::add_builtin_ops(*ops);
  if (!registered)
    registered = ops->add(scale_schema());
  if (registered) {
    std::fprintf(stderr, "%s\n", epochrt::error_text(registered).c_str());
    return 1;
  }
  auto job = build_job();
  if (auto err = job.validate(*ops)) {
    std::fprintf(stderr, "invalid job: %s\n", epochrt::error_text(err).c_str());
    return 1;
  }

  // Declared after the system, so they stop their actors before it goes.
  epochrt::local_session session{sys, ops};
  epochrt::checkpoint_manager ckpt{sys, dir, "worker"};
  epochrt::job_runner runner{job, &ckpt};
  auto last_epoch = runner.train(session);
  if (!last_epoch) {
    std::fprintf(stderr, "job failed: %s\n",
                 epochrt::error_text(last_epoch.error()).c_str());
    return 1;
  }
  auto weights = session.fetch("worker", "weights");
  if (!weights) {
    std::fprintf(stderr, "%s\n", epochrt::error_text(weights.error()).c_str());
    return 1;
  }
  std::printf("checkpoints in %s\n", dir.c_str());
  std::printf("weights after epoch %lld: %s\n",
              static_cast<long long>(*last_epoch),
              epochrt::format_values(*weights).c_str());
  return 0;
}
