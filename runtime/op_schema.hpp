#pragma once

#include <functional>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

class op_context;

/// The code of an op. Returns an error value for bad runtime input instead
/// of throwing or crashing. A call that names a blob (an input or an
/// output) runs with the node's workspace locked (see `op_context`), so it
/// holds up the node's other tasks and should not block; a call that names
/// none runs unlocked and must not touch a blob (Sleep, CopyDirectory).
/// Either way, an op that waits should poll `op_context::cancelled`.
using op_function = std::function<caf::error(op_context&)>;

/// What an argument of an op holds. Arguments are tensors: a scalar for the
/// first four kinds, a 1-D tensor for the lists.
enum class arg_kind : uint8_t {
  /// A scalar of an integer dtype (i32, i64, u8).
  integer,
  /// A scalar of any numeric dtype (integers accepted).
  number,
  /// A bool scalar.
  boolean,
  /// A string scalar.
  string,
  /// A 1-D integer tensor; an empty 1-D tensor of any dtype.
  integer_list,
  /// A 1-D numeric tensor; an empty 1-D tensor of any dtype.
  number_list,
  /// A 1-D string tensor; an empty 1-D tensor of any dtype.
  string_list,
  /// A string scalar naming a file or directory on the node. A node daemon
  /// places it under its checkpoint root before the op runs, so an op with
  /// path arguments never touches files outside that root.
  path,
};

/// "an integer", "a list of numbers", ... as used in error messages.
const char* describe(arg_kind x) noexcept;

/// What a tensor looks like as an argument: "an integer", "a string",
/// "a list of numbers", "an empty list", "a tensor of shape [2,3]", ...
std::string describe_arg(const tensor& x);

/// True when `x` is a valid value for an argument of kind `kind`.
bool arg_matches(arg_kind kind, const tensor& x) noexcept;

/// One declared argument of an op.
struct arg_spec {
  std::string name;
  arg_kind kind = arg_kind::number;
  bool required = false;
  std::string doc;
};

/// The declaration and code of an op type.
struct op_schema {
  std::string type;
  std::string doc;
  /// Bounds on the number of inputs and outputs; -1 = unbounded.
  int min_inputs = 0;
  int max_inputs = -1;
  int min_outputs = 0;
  int max_outputs = -1;
  std::vector<arg_spec> args;
  op_function fn;
  /// Optional extra static check of a call beyond arity and argument kinds
  /// (e.g. "as many outputs as inputs", "batch_size >= 1"). Returns an
  /// empty string when the call is fine, else what is wrong.
  std::function<std::string(const op_def&)> check;

  /// The spec of argument `name`, or null when the op has none.
  const arg_spec* find_arg(const std::string& name) const noexcept;
};

} // namespace epochrt
