#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/runtime/op_schema.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

/// What is wrong with one op call, found by `op_registry::check`.
struct op_problem {
  runtime_errc code = runtime_errc::bad_argument;
  /// The field of the op_def at fault, relative to the op: "type",
  /// "inputs", "outputs", "args" or "args.<name>".
  std::string field;
  /// What was expected and what was found, without the field.
  std::string what;
};

/// The op types a host makes available to its jobs. Not a global: the host
/// creates one (usually filled by `add_builtin_ops` plus its own ops) and
/// hands it to whatever validates or runs tasks.
///
/// Thread safety: `add` must not run concurrently with anything else; all
/// const member functions may run concurrently with each other. Populate it
/// first, then share it read-only (e.g. behind a shared_ptr<const>).
class op_registry {
public:
  op_registry() = default;
  op_registry(op_registry&&) = default;
  op_registry& operator=(op_registry&&) = default;
  op_registry(const op_registry&) = delete;
  op_registry& operator=(const op_registry&) = delete;

  /// Registers an op. Fails with `bad_argument` for an empty type, a type
  /// already registered, a missing function, inconsistent arity bounds or
  /// duplicate argument names.
  caf::error add(op_schema schema);

  /// Registers an op whose code can change between two runs of a job
  /// while its type stays (a Python op), with what its code is now: a
  /// digest of its code, or the version its author gave. The code version
  /// is part of a job's definition (runtime/job_definition.hpp), so that a
  /// changed op is named when a job would resume state the old one made.
  /// Builtins and C++ ops have none: their code is the program's.
  caf::error add(op_schema schema, std::string code_version);

  /// The code version `type` was registered with; empty when none.
  std::string code_version(std::string_view type) const;

  /// The schema of `type`, or null. The pointer stays valid until the
  /// registry is destroyed or moved from.
  const op_schema* find(std::string_view type) const;

  /// The first problem of a call, or none: type known, input and output
  /// counts within bounds, every argument declared and of its declared
  /// kind, every required argument given, the schema's own check. A check
  /// that throws is a problem (`op_failed`, naming the op), never an
  /// exception out of here.
  std::optional<op_problem> check(const op_def& op) const;

  /// `check` as an error value: "unknown op 'Foo'", "Add takes 2 inputs,
  /// got 1", "arg 'value': expected a number, got a string", ...
  caf::error validate(const op_def& op) const;

  /// All registered types, sorted.
  std::vector<std::string> types() const;

private:
  std::map<std::string, op_schema, std::less<>> ops_;
  std::map<std::string, std::string, std::less<>> code_versions_;
};

} // namespace epochrt
