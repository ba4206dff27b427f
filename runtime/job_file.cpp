#include <epochrt/runtime/job_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <set>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <epochrt/messages/names.hpp>
#include <epochrt/messages/strict_json.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

using json = strict_json::json;
using namespace strict_json;

// A problem with an error code of its own (an unknown op, a bad argument);
// strict_json::fail throws the others. Thrown inside this file only, to
// unwind the recursive descent; parse_job_json turns it into an error value.
struct failure {
  runtime_errc code;
  std::string path;
  std::string what;
};

[[noreturn]] void fail_with(std::string path, std::string what,
                            runtime_errc code) {
  throw failure{code, std::move(path), std::move(what)};
}

std::string string_field(const json& obj, const std::string& path,
                         const char* field, std::string fallback = {}) {
  auto* x = member(obj, field);
  return x != nullptr ? as_string(*x, field_path(path, field))
                      : std::move(fallback);
}

std::vector<std::string> string_list(const json& obj, const std::string& path,
                                     const char* field) {
  std::vector<std::string> result;
  auto* x = member(obj, field);
  if (x == nullptr)
    return result;
  auto list_path = field_path(path, field);
  if (!x->is_array())
    wrong_type(list_path, "an array of strings", *x);
  for (size_t i = 0; i < x->size(); ++i)
    result.push_back(as_string((*x)[i], index_path(list_path, i)));
  return result;
}

// Names of blobs read from the file, checked where they appear.
void check_blob(const std::string& name, const std::string& path) {
  if (!valid_blob_name(name))
    fail(path,
         "invalid blob name '" + name
           + "' (1 to 256 printable characters, no spaces)");
}

void check_blobs(const std::vector<std::string>& names,
                 const std::string& path) {
  for (size_t i = 0; i < names.size(); ++i)
    check_blob(names[i], index_path(path, i));
}

void check_node(const std::string& name, const std::string& path) {
  auto problem = node_name_problem(name);
  if (!problem.empty())
    fail(path, "invalid node name '" + name + "': " + problem);
}

tensor to_arg(const json& x, const std::string& path) {
  if (x.is_boolean())
    return make_scalar<bool>(x.get<bool>());
  if (x.is_number_integer())
    return make_scalar<int64_t>(as_int(x, path));
  if (x.is_number_float())
    return make_scalar<double>(x.get<double>());
  if (x.is_string())
    return make_string_tensor({}, {x.get<std::string>()});
  if (!x.is_array())
    fail(path, "expected a number, boolean, string or list, got " + found(x));
  auto n = static_cast<int64_t>(x.size());
  if (n == 0)
    return make_tensor<int64_t>({0}, {});
  bool all_ints = true, all_numbers = true, all_strings = true;
  for (auto& e : x) {
    all_ints = all_ints && e.is_number_integer();
    all_numbers = all_numbers && e.is_number();
    all_strings = all_strings && e.is_string();
  }
  if (all_ints) {
    std::vector<int64_t> values;
    for (size_t i = 0; i < x.size(); ++i)
      values.push_back(as_int(x[i], index_path(path, i)));
    return make_tensor<int64_t>({n}, values);
  }
  if (all_numbers) {
    std::vector<double> values;
    for (auto& e : x)
      values.push_back(e.get<double>());
    return make_tensor<double>({n}, values);
  }
  if (all_strings) {
    std::vector<std::string> values;
    for (auto& e : x)
      values.push_back(e.get<std::string>());
    return make_string_tensor({n}, std::move(values));
  }
  fail(path,
       "expected a list of numbers or a list of strings, got a mixed "
       "or nested list");
}

op_def parse_op(const json& x, const std::string& path,
                const op_registry& registry) {
  expect_object(x, path);
  check_fields(x, path, {"type", "inputs", "outputs", "args"});
  op_def op;
  op.type = as_string(required(x, path, "type"), field_path(path, "type"));
  op.inputs = string_list(x, path, "inputs");
  check_blobs(op.inputs, field_path(path, "inputs"));
  op.outputs = string_list(x, path, "outputs");
  check_blobs(op.outputs, field_path(path, "outputs"));
  if (auto* args = member(x, "args")) {
    auto args_path = field_path(path, "args");
    expect_object(*args, args_path);
    for (auto& item : args->items())
      op.args.emplace(item.key(),
                      to_arg(item.value(), field_path(args_path, item.key())));
  }
  if (auto problem = registry.check(op))
    fail_with(problem->field.empty() ? path : field_path(path, problem->field),
              problem->what, problem->code);
  return op;
}

std::vector<op_def> parse_ops(const json& x, const std::string& path,
                              const op_registry& registry) {
  if (!x.is_array())
    wrong_type(path, "an array of ops", x);
  std::vector<op_def> result;
  for (size_t i = 0; i < x.size(); ++i)
    result.push_back(parse_op(x[i], index_path(path, i), registry));
  return result;
}

step_def parse_step(const json& x, const std::string& path,
                    const op_registry& registry) {
  expect_object(x, path);
  check_fields(x, path, {"name", "num_iter", "stop_blob", "ops"});
  step_def step;
  step.name = string_field(x, path, "name");
  if (auto* n = member(x, "num_iter")) {
    step.num_iter = as_int(*n, field_path(path, "num_iter"));
    if (step.num_iter < 0)
      fail(field_path(path, "num_iter"),
           "expected an integer >= 0, got " + std::to_string(step.num_iter));
  }
  step.stop_blob = string_field(x, path, "stop_blob");
  if (member(x, "stop_blob") != nullptr)
    check_blob(step.stop_blob, field_path(path, "stop_blob"));
  if (step.num_iter == 0 && step.stop_blob.empty())
    fail(field_path(path, "num_iter"),
         "0 (run until stopped) needs a stop_blob");
  step.ops
    = parse_ops(required(x, path, "ops"), field_path(path, "ops"), registry);
  return step;
}

task_def parse_task(const json& x, const std::string& path,
                    const op_registry& registry) {
  expect_object(x, path);
  check_fields(x, path,
               {"name", "node", "workspace", "outputs", "steps", "ops"});
  task_def task;
  task.name = string_field(x, path, "name");
  if (member(x, "name") != nullptr && !valid_blob_name(task.name))
    fail(field_path(path, "name"),
         "invalid task name '" + task.name
           + "' (1 to 256 printable characters, no spaces)");
  task.node = as_string(required(x, path, "node"), field_path(path, "node"));
  check_node(task.node, field_path(path, "node"));
  auto ws = string_field(x, path, "workspace", "global");
  if (ws == "global")
    task.workspace = workspace_type::global;
  else if (ws == "private")
    task.workspace = workspace_type::private_scratch;
  else
    fail(field_path(path, "workspace"),
         "expected \"global\" or \"private\", got \"" + ws + "\"");
  task.outputs = string_list(x, path, "outputs");
  check_blobs(task.outputs, field_path(path, "outputs"));
  auto* steps = member(x, "steps");
  auto* ops = member(x, "ops");
  if (steps != nullptr && ops != nullptr)
    fail(path, "give either 'steps' or 'ops', not both");
  if (steps != nullptr) {
    auto steps_path = field_path(path, "steps");
    if (!steps->is_array())
      wrong_type(steps_path, "an array of steps", *steps);
    for (size_t i = 0; i < steps->size(); ++i)
      task.steps.push_back(
        parse_step((*steps)[i], index_path(steps_path, i), registry));
  } else if (ops != nullptr) {
    step_def step;
    step.ops = parse_ops(*ops, field_path(path, "ops"), registry);
    task.steps.push_back(std::move(step));
  }
  return task;
}

void parse_group(const json& root, const char* field, task_group_def& group,
                 const op_registry& registry) {
  auto* x = member(root, field);
  if (x == nullptr)
    return;
  if (!x->is_array())
    wrong_type(field, "an array of tasks", *x);
  for (size_t i = 0; i < x->size(); ++i)
    group.tasks.push_back(parse_task((*x)[i], index_path(field, i), registry));
}

// CHANNEL = {"name": "batches", "node": "reader", "capacity": 4,
//            "blobs": ["x", "y"]}
std::vector<channel_def> parse_channels(const json& root) {
  std::vector<channel_def> result;
  auto* x = member(root, "channels");
  if (x == nullptr)
    return result;
  if (!x->is_array())
    wrong_type("channels", "an array of channels", *x);
  for (size_t i = 0; i < x->size(); ++i) {
    auto path = index_path("channels", i);
    auto& obj = expect_object((*x)[i], path);
    check_fields(obj, path, {"name", "node", "capacity", "blobs"});
    channel_def ch;
    ch.name = as_string(required(obj, path, "name"), field_path(path, "name"));
    ch.node = as_string(required(obj, path, "node"), field_path(path, "node"));
    check_node(ch.node, field_path(path, "node"));
    if (auto* capacity = member(obj, "capacity"))
      ch.capacity = as_int(*capacity, field_path(path, "capacity"));
    if (member(obj, "blobs") == nullptr)
      required(obj, path, "blobs");
    ch.blobs = string_list(obj, path, "blobs");
    check_blobs(ch.blobs, field_path(path, "blobs"));
    result.push_back(std::move(ch));
  }
  return result;
}

job parse_root(const json& root, const op_registry& registry) {
  if (!root.is_object())
    fail({}, "expected an object at the top level, got " + found(root));
  check_fields(root, {},
               {"name", "init", "epoch", "download", "exit", "stop_conditions",
                "nodes_to_checkpoint", "epoch_limit", "channels"});
  job_def def;
  def.name = as_string(required(root, {}, "name"), "name");
  if (!valid_blob_name(def.name))
    fail("name",
         "invalid job name '" + def.name
           + "' (1 to 256 printable characters, no spaces)");
  def.channels = parse_channels(root);
  parse_group(root, "init", def.init_group, registry);
  parse_group(root, "epoch", def.epoch_group, registry);
  parse_group(root, "download", def.download_group, registry);
  parse_group(root, "exit", def.exit_group, registry);
  if (auto* conds = member(root, "stop_conditions")) {
    if (!conds->is_array())
      wrong_type("stop_conditions", "an array", *conds);
    for (size_t i = 0; i < conds->size(); ++i) {
      auto path = index_path("stop_conditions", i);
      auto& cond = expect_object((*conds)[i], path);
      check_fields(cond, path, {"node", "blob"});
      stop_condition sc;
      sc.node
        = as_string(required(cond, path, "node"), field_path(path, "node"));
      check_node(sc.node, field_path(path, "node"));
      sc.blob
        = as_string(required(cond, path, "blob"), field_path(path, "blob"));
      check_blob(sc.blob, field_path(path, "blob"));
      def.stop_conditions.push_back(std::move(sc));
    }
  }
  def.nodes_to_checkpoint = string_list(root, {}, "nodes_to_checkpoint");
  for (size_t i = 0; i < def.nodes_to_checkpoint.size(); ++i)
    check_node(def.nodes_to_checkpoint[i],
               index_path("nodes_to_checkpoint", i));
  auto result = job::from_def(std::move(def));
  if (auto* limit = member(root, "epoch_limit")) {
    auto n = as_int(*limit, "epoch_limit");
    if (n < 1)
      fail("epoch_limit", "expected an integer >= 1, got " + std::to_string(n));
    if (auto err = epoch_limiter(result, n))
      fail("epoch_limit", error_text(err));
  }
  return result;
}

} // namespace

caf::expected<job> parse_job_json(std::string_view text,
                                  const std::string& source_name,
                                  const op_registry& registry) {
  std::string error;
  auto root = strict_json::parse(text, source_name, error);
  if (!root)
    return make_error(runtime_errc::invalid_job, std::move(error));
  try {
    auto result = parse_root(*root, registry);
    if (auto err = result.validate(registry, job::path_style::file))
      return make_error(static_cast<runtime_errc>(err.code()),
                        source_name + ": " + error_text(err));
    return result;
  } catch (const failure& f) {
    return make_error(f.code,
                      source_name + ": " + (f.path.empty() ? "" : f.path + ": ")
                        + f.what);
  } catch (const strict_json::problem& p) {
    return make_error(runtime_errc::invalid_job,
                      source_name + ": " + strict_json::describe(p));
  } catch (const json::exception& ex) {
    return make_error(runtime_errc::invalid_job,
                      source_name + ": " + ex.what());
  }
}

caf::expected<job> load_job_file(const std::string& path,
                                 const op_registry& registry) {
  std::string error;
  auto text
    = strict_json::read_file(path, max_job_file_bytes, "a job file", error);
  if (!text)
    return make_error(runtime_errc::unreadable_file, std::move(error));
  return parse_job_json(*text, path, registry);
}

} // namespace epochrt
