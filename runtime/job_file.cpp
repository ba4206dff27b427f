#include "runtime/job_file.hpp"

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

#include <nlohmann/json.hpp>

#include "messages/names.hpp"
#include "runtime/epoch_limiter.hpp"
#include "runtime/op_registry.hpp"
#include "runtime/runtime_errc.hpp"

namespace epochrt {

namespace {

using json = nlohmann::json;

// The first problem found. Thrown inside this file only, to unwind the
// recursive descent; parse_job_json turns it into an error value.
struct failure {
  runtime_errc code;
  std::string path;
  std::string what;
};

[[noreturn]] void fail(std::string path, std::string what,
                       runtime_errc code = runtime_errc::invalid_job) {
  throw failure{code, std::move(path), std::move(what)};
}

std::string field_path(const std::string& path, const std::string& field) {
  return path.empty() ? field : path + "." + field;
}

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// "a string", "an integer", ... for what was found.
std::string found(const json& x) {
  switch (x.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

[[noreturn]] void wrong_type(const std::string& path, const char* expected,
                             const json& x) {
  fail(path, std::string{"expected "} + expected + ", got " + found(x));
}

void check_fields(const json& obj, const std::string& path,
                  std::initializer_list<const char*> allowed) {
  for (auto& item : obj.items()) {
    bool known = false;
    std::string names;
    for (auto* name : allowed) {
      known = known || item.key() == name;
      names += (names.empty() ? "" : ", ") + std::string{name};
    }
    if (!known)
      fail(path,
           "unknown field '" + item.key() + "' (expected one of " + names
             + ")");
  }
}

const json& expect_object(const json& x, const std::string& path) {
  if (!x.is_object())
    wrong_type(path, "an object", x);
  return x;
}

// Member `field` of `obj` or null when absent.
const json* member(const json& obj, const char* field) {
  auto i = obj.find(field);
  return i != obj.end() ? &*i : nullptr;
}

const json& required(const json& obj, const std::string& path,
                     const char* field) {
  auto* x = member(obj, field);
  if (x == nullptr)
    fail(path, std::string{"missing required field '"} + field + "'");
  return *x;
}

std::string as_string(const json& x, const std::string& path) {
  if (!x.is_string())
    wrong_type(path, "a string", x);
  return x.get<std::string>();
}

int64_t as_int(const json& x, const std::string& path) {
  if (!x.is_number_integer())
    wrong_type(path, "an integer", x);
  if (x.is_number_unsigned()
      && x.get<uint64_t>()
        > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(path, "integer " + x.dump() + " is out of range");
  return x.get<int64_t>();
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
    fail(problem->field.empty() ? path : field_path(path, problem->field),
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

job parse_root(const json& root, const op_registry& registry) {
  if (!root.is_object())
    fail({}, "expected an object at the top level, got " + found(root));
  check_fields(root, {},
               {"name", "init", "epoch", "download", "exit", "stop_conditions",
                "nodes_to_checkpoint", "epoch_limit"});
  job_def def;
  def.name = as_string(required(root, {}, "name"), "name");
  if (!valid_blob_name(def.name))
    fail("name",
         "invalid job name '" + def.name
           + "' (1 to 256 printable characters, no spaces)");
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

// Line and column (1-based) of the character at `offset`.
std::pair<size_t, size_t> position(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// The reason of a nlohmann parse error, without its id and position:
// "[json.exception.parse_error.101] parse error at line 3, column 5:
// syntax error while parsing ..." -> "while parsing ...".
std::string syntax_reason(const std::string& what) {
  auto reason = what;
  // "[json.exception.out_of_range.406] number overflow ...": no id.
  if (reason.rfind("[json.exception.", 0) == 0
      && reason.find("] ") != std::string::npos)
    reason = reason.substr(reason.find("] ") + 2);
  auto column = reason.find("column ");
  auto colon = reason.find(": ", column == std::string::npos ? 0 : column);
  if (colon != std::string::npos)
    reason = reason.substr(colon + 2);
  constexpr std::string_view prefix = "syntax error ";
  if (reason.compare(0, prefix.size(), prefix) == 0)
    reason = reason.substr(prefix.size());
  for (auto& c : reason) // one line, always
    if (c == '\n' || c == '\r')
      c = ' ';
  return reason;
}

} // namespace

caf::expected<job> parse_job_json(std::string_view text,
                                  const std::string& source_name,
                                  const op_registry& registry) {
  // nlohmann keeps the last of duplicate keys silently; we reject them,
  // naming the object they are in by its path, like every other error.
  struct frame {
    bool array = false;
    size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<frame> frames;
  std::string duplicate;
  std::string duplicate_in;
  auto element_done = [&] {
    if (!frames.empty() && frames.back().array)
      ++frames.back().index;
  };
  auto current_path = [&] {
    std::string path;
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      if (frames[i].array)
        path += "[" + std::to_string(frames[i].index) + "]";
      else
        path += (path.empty() ? "" : ".") + frames[i].key;
    }
    return path;
  };
  json::parser_callback_t on_event
    = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
          case json::parse_event_t::object_start:
            frames.emplace_back();
            break;
          case json::parse_event_t::array_start:
            frames.emplace_back().array = true;
            break;
          case json::parse_event_t::object_end:
          case json::parse_event_t::array_end:
            if (!frames.empty())
              frames.pop_back();
            element_done();
            break;
          case json::parse_event_t::key:
            if (!frames.empty()) {
              auto& top = frames.back();
              top.key = parsed.get<std::string>();
              if (!top.keys.insert(top.key).second && duplicate.empty()) {
                duplicate = top.key;
                duplicate_in = current_path();
              }
            }
            break;
          case json::parse_event_t::value:
            element_done();
            break;
        }
        return true;
      };
  json root;
  try {
    root = json::parse(text.begin(), text.end(), on_event, true, true);
  } catch (const json::parse_error& ex) {
    auto offset = ex.byte > 0 ? ex.byte - 1 : 0;
    auto [line, column] = position(text, offset);
    return make_error(runtime_errc::invalid_job,
                      source_name + ":" + std::to_string(line) + ":"
                        + std::to_string(column)
                        + ": syntax error: " + syntax_reason(ex.what()));
  } catch (const json::exception& ex) {
    // A number beyond a double (1e999999) is out_of_range, not a
    // parse_error, and comes without a position.
    return make_error(runtime_errc::invalid_job,
                      source_name + ": " + syntax_reason(ex.what()));
  }
  if (!duplicate.empty())
    return make_error(runtime_errc::invalid_job,
                      source_name + ": "
                        + (duplicate_in.empty() ? "" : duplicate_in + ": ")
                        + "duplicate field '" + duplicate + "'");
  try {
    auto result = parse_root(root, registry);
    if (auto err = result.validate(registry, job::path_style::file))
      return make_error(static_cast<runtime_errc>(err.code()),
                        source_name + ": " + error_text(err));
    return result;
  } catch (const failure& f) {
    return make_error(f.code,
                      source_name + ": " + (f.path.empty() ? "" : f.path + ": ")
                        + f.what);
  } catch (const json::exception& ex) {
    return make_error(runtime_errc::invalid_job,
                      source_name + ": " + syntax_reason(ex.what()));
  }
}

caf::expected<job> load_job_file(const std::string& path,
                                 const op_registry& registry) {
  auto cannot_read = [&](int code) {
    return make_error(runtime_errc::unreadable_file,
                      path + ": cannot read: " + std::strerror(code));
  };
  // Non-blocking, so that a FIFO without a writer is refused, not waited on.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return cannot_read(errno);
  std::unique_ptr<int, void (*)(int*)> closer{&fd, [](int* x) {
                                                ::close(*x);
                                              }};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return cannot_read(errno);
  if (!S_ISREG(st.st_mode))
    return make_error(runtime_errc::unreadable_file,
                      path
                        + ": not a regular file (a job file is a JSON "
                          "file)");
  if (static_cast<uint64_t>(st.st_size) > max_job_file_bytes)
    return make_error(
      runtime_errc::unreadable_file,
      path + ": " + std::to_string(st.st_size) + " bytes, more than the "
        + std::to_string(max_job_file_bytes) + " a job file may have");
  std::string text;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return cannot_read(errno);
    if (n == 0)
      break;
    // The file may grow while it is read.
    if (text.size() + static_cast<size_t>(n) > max_job_file_bytes)
      return make_error(runtime_errc::unreadable_file,
                        path + ": more than the "
                          + std::to_string(max_job_file_bytes)
                          + " bytes a job file may have");
    text.append(buf, static_cast<size_t>(n));
  }
  return parse_job_json(text, path, registry);
}

} // namespace epochrt
