#pragma once

// Shared fixtures of the actors suites: an actor system configured for
// epochrt, the built-in ops, a fresh temporary directory, and the example
// jobs.

#include <filesystem>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "test/support/log_capture.hpp"
#include "test/support/temp_dir.hpp"
#include <epochrt/epochrt.hpp>

namespace epochrt::test {

inline std::unique_ptr<caf::actor_system_config>
make_config(const log_options& logging = {}) {
  auto cfg = std::make_unique<caf::actor_system_config>();
  configure(*cfg, logging);
  cfg->set("scheduler.max-threads", 2);
  return cfg;
}

/// Why `x` holds no value; empty when it holds one. (Boost.Test evaluates a
/// message even when the assertion holds, so never call `error()` there.)
template <class T>
std::string why(const caf::expected<T>& x) {
  return x ? std::string{} : error_text(x.error());
}

/// The text of `err`; empty when it is none.
inline std::string why(const caf::error& err) {
  return err ? error_text(err) : std::string{};
}

/// One actor system per test case, whose log lines `logs` keeps; sessions
/// and managers declared after it are destroyed before it.
struct system_fixture {
  log_capture logs;
  std::unique_ptr<caf::actor_system_config> cfg = make_config(logs.options());
  caf::actor_system sys{*cfg};
  std::shared_ptr<op_registry> ops = [] {
    auto result = std::make_shared<op_registry>();
    BOOST_REQUIRE(!add_builtin_ops(*result));
    return result;
  }();
  temp_dir dir;

  job load_example(const std::string& file) {
    auto path = std::string{EPOCHRT_SOURCE_DIR} + "/examples/jobs/" + file;
    auto loaded = load_job_file(path, *ops);
    if (!loaded)
      throw std::runtime_error(error_text(loaded.error()));
    return std::move(*loaded);
  }

  session_options quick_options() {
    session_options opts;
    opts.group_timeout = std::chrono::seconds(60);
    opts.checkpoint_timeout = std::chrono::seconds(60);
    opts.request_timeout = std::chrono::seconds(10);
    return opts;
  }

  std::unique_ptr<local_session> new_session() {
    return std::make_unique<local_session>(sys, ops, quick_options());
  }

  /// Runs pipeline.json to its end with checkpoints of trainer_0 in `dir`:
  /// epochs 0 to 4 committed.
  void checkpoint_whole_pipeline() {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    auto epochs = runner.train(*sess);
    if (!epochs)
      throw std::runtime_error(error_text(epochs.error()));
  }

  /// The single value of a one-element numeric blob.
  double scalar(session& sess, const std::string& node,
                const std::string& blob) {
    auto value = sess.fetch(node, blob);
    if (!value)
      throw std::runtime_error(error_text(value.error()));
    if (value->element_count() != 1)
      throw std::runtime_error(blob + " is not a single value");
    return element_as_double(*value, 0);
  }
};

} // namespace epochrt::test
