#include <epochrt/runtime/op_registry.hpp>

#include <exception>
#include <set>

namespace epochrt {

namespace {

std::string plural(int n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "2 inputs", "at least 2 inputs", "1 to 3 outputs".
std::string bounds_text(int lo, int hi, const char* noun) {
  if (hi < 0)
    return "at least " + plural(lo, noun);
  if (lo == hi)
    return plural(lo, noun);
  return std::to_string(lo) + " to " + plural(hi, noun);
}

bool within(size_t n, int lo, int hi) {
  return n >= static_cast<size_t>(lo)
    && (hi < 0 || n <= static_cast<size_t>(hi));
}

} // namespace

caf::error op_registry::add(op_schema schema) {
  auto fail = [&](const std::string& what) {
    return make_error(runtime_errc::bad_argument,
                      "cannot register op '" + schema.type + "': " + what);
  };
  if (schema.type.empty())
    return fail("empty type name");
  if (ops_.count(schema.type) > 0)
    return fail("already registered");
  if (!schema.fn)
    return fail("no function");
  if (schema.min_inputs < 0 || schema.min_outputs < 0
      || (schema.max_inputs >= 0 && schema.max_inputs < schema.min_inputs)
      || (schema.max_outputs >= 0 && schema.max_outputs < schema.min_outputs))
    return fail("inconsistent input or output bounds");
  std::set<std::string> names;
  for (auto& spec : schema.args)
    if (spec.name.empty() || !names.insert(spec.name).second)
      return fail("empty or duplicate argument name '" + spec.name + "'");
  auto key = schema.type;
  ops_.emplace(std::move(key), std::move(schema));
  return caf::none;
}

caf::error op_registry::add(op_schema schema, std::string code_version) {
  auto type = schema.type;
  if (auto err = add(std::move(schema)))
    return err;
  if (!code_version.empty())
    code_versions_.emplace(std::move(type), std::move(code_version));
  return caf::none;
}

std::string op_registry::code_version(std::string_view type) const {
  auto i = code_versions_.find(type);
  return i != code_versions_.end() ? i->second : std::string{};
}

const op_schema* op_registry::find(std::string_view type) const {
  auto i = ops_.find(type);
  return i != ops_.end() ? &i->second : nullptr;
}

std::optional<op_problem> op_registry::check(const op_def& op) const {
  auto* schema = find(op.type);
  if (schema == nullptr)
    return op_problem{runtime_errc::unknown_op, "type",
                      "unknown op '" + op.type + "'"};
  if (!within(op.inputs.size(), schema->min_inputs, schema->max_inputs))
    return op_problem{
      runtime_errc::bad_argument, "inputs",
      op.type + " takes "
        + bounds_text(schema->min_inputs, schema->max_inputs, "input")
        + ", got " + std::to_string(op.inputs.size())};
  if (!within(op.outputs.size(), schema->min_outputs, schema->max_outputs))
    return op_problem{
      runtime_errc::bad_argument, "outputs",
      op.type + " takes "
        + bounds_text(schema->min_outputs, schema->max_outputs, "output")
        + ", got " + std::to_string(op.outputs.size())};
  for (auto& [name, value] : op.args) {
    auto* spec = schema->find_arg(name);
    if (spec == nullptr) {
      std::string known;
      for (auto& s : schema->args)
        known += (known.empty() ? "" : ", ") + s.name;
      return op_problem{
        runtime_errc::bad_argument, "args." + name,
        "unknown argument '" + name + "' of " + op.type
          + (known.empty() ? " (it takes none)" : " (it takes " + known + ")")};
    }
    if (!arg_matches(spec->kind, value))
      return op_problem{runtime_errc::bad_argument, "args." + name,
                        std::string{"expected "} + describe(spec->kind)
                          + ", got " + describe_arg(value)};
  }
  for (auto& spec : schema->args)
    if (spec.required && op.args.count(spec.name) == 0)
      return op_problem{runtime_errc::bad_argument, "args",
                        op.type + " requires argument '" + spec.name + "' ("
                          + describe(spec.kind) + ")"};
  if (schema->check) {
    // Host code: an exception escaping here would end whatever actor
    // validates the call (a node's gate, a node) instead of failing the call.
    std::string what;
    try {
      what = schema->check(op);
    } catch (const std::exception& ex) {
      return op_problem{runtime_errc::op_failed,
                        {},
                        "the check of op '" + op.type
                          + "' threw an exception: " + ex.what()};
    } catch (...) {
      return op_problem{runtime_errc::op_failed,
                        {},
                        "the check of op '" + op.type
                          + "' threw an unknown exception"};
    }
    if (!what.empty())
      return op_problem{runtime_errc::bad_argument, {}, std::move(what)};
  }
  return std::nullopt;
}

caf::error op_registry::validate(const op_def& op) const {
  auto problem = check(op);
  if (!problem)
    return caf::none;
  std::string text;
  if (problem->field.compare(0, 5, "args.") == 0
      && problem->what.compare(0, 8, "expected") == 0)
    text = "arg '" + problem->field.substr(5) + "': " + problem->what;
  else
    text = problem->what;
  return make_error(problem->code, std::move(text));
}

std::vector<std::string> op_registry::types() const {
  std::vector<std::string> result;
  result.reserve(ops_.size());
  for (auto& kvp : ops_)
    result.push_back(kvp.first);
  return result;
}

} // namespace epochrt
