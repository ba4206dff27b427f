#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/task_runner.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt {

// Boost.Test printers, found by ADL.
inline std::ostream& boost_test_print_type(std::ostream& os, dtype x) {
  return os << to_string(x);
}

inline std::ostream& boost_test_print_type(std::ostream& os, const tensor& x) {
  os << to_string(x.type) << '[';
  for (size_t i = 0; i < x.shape.size(); ++i)
    os << (i > 0 ? "," : "") << x.shape[i];
  return os << "]{" << format_values(x) << '}';
}

} // namespace epochrt

namespace epochrt::test {

/// The error text of `x`, empty when it holds a value (Boost evaluates a
/// message even when the check passes).
template <class T>
std::string error_of(const caf::expected<T>& x) {
  return x ? std::string{} : error_text(x.error());
}

inline const op_registry& builtins() {
  static const op_registry registry = [] {
    op_registry result;
    BOOST_REQUIRE(!add_builtin_ops(result));
    return result;
  }();
  return registry;
}

/// Runs `ops` as one GLOBAL task on `ws`; returns the task's error.
inline caf::error run_ops(workspace& ws, std::vector<op_def> ops,
                          const op_registry& registry = builtins()) {
  auto result = run_task(make_task("t", "n", std::move(ops)), ws, registry);
  return result ? caf::error{} : result.error();
}

inline std::vector<int64_t> ints(const tensor& x) {
  std::vector<int64_t> result;
  for (size_t i = 0; i < x.element_count(); ++i)
    result.push_back(static_cast<int64_t>(element_as_double(x, i)));
  return result;
}

inline std::vector<double> doubles(const tensor& x) {
  std::vector<double> result;
  for (size_t i = 0; i < x.element_count(); ++i)
    result.push_back(element_as_double(x, i));
  return result;
}

inline bool is_code(const caf::error& err, runtime_errc code) {
  return is_error(err, code);
}

inline tensor i64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return make_tensor<int64_t>(std::move(shape), values);
}

inline tensor f32s(std::vector<int64_t> shape, std::vector<float> values) {
  return make_tensor<float>(std::move(shape), values);
}

inline tensor str(std::string x) {
  return make_string_tensor({}, {std::move(x)});
}

/// Runs a job as the job runner will, on one workspace per node and one
/// thread: init, epochs until a stop condition holds (at most
/// `max_epochs`), download, exit. Records the task outputs of each epoch.
struct job_simulation {
  std::map<std::string, std::unique_ptr<workspace>> nodes;
  std::vector<std::vector<task_output>> epoch_outputs;
  int64_t epochs = 0;

  workspace& ws(const std::string& node) {
    auto& ptr = nodes[node];
    if (!ptr)
      ptr = std::make_unique<workspace>();
    return *ptr;
  }

  std::vector<task_output> run_group(const task_group_def& group,
                                     const op_registry& registry) {
    std::vector<task_output> outputs;
    for (auto& task : group.tasks) {
      auto result = run_task(task, ws(task.node), registry);
      BOOST_REQUIRE_MESSAGE(result, error_of(result));
      for (auto& out : *result)
        outputs.push_back(out);
    }
    return outputs;
  }

  void run(const job& j, const op_registry& registry = builtins(),
           int64_t max_epochs = 100) {
    auto& def = j.def();
    run_group(def.init_group, registry);
    for (;;) {
      auto outputs = run_group(def.epoch_group, registry);
      ++epochs;
      bool stop = false;
      for (auto& cond : def.stop_conditions) {
        bool seen = false;
        for (auto& task : def.epoch_group.tasks) {
          if (task.node != cond.node)
            continue;
          for (auto& out : outputs) {
            if (out.task == task.name && out.blob == cond.blob) {
              auto value = truth_value(out.value);
              BOOST_REQUIRE(value);
              stop = stop || *value;
              seen = true;
            }
          }
        }
        BOOST_REQUIRE_MESSAGE(
          seen, "no output for stop condition " + cond.node + "/" + cond.blob);
      }
      epoch_outputs.push_back(std::move(outputs));
      if (stop || epochs >= max_epochs)
        break;
    }
    run_group(def.download_group, registry);
    run_group(def.exit_group, registry);
  }
};

} // namespace epochrt::test
