#pragma once

#include <caf/error.hpp>

namespace epochrt {

class op_registry;

/// Registers epochrt's builtin ops in `registry`:
///
/// | op | inputs -> outputs | what |
/// |---|---|---|
/// | ConstantFill | -> out | a tensor of `shape` filled with `value` |
/// | GivenTensorFill | -> out | a tensor of `shape` holding `values` |
/// | Add, Mul | a, b -> out | elementwise; a one-element operand broadcasts |
/// | Copy | x -> out | a copy |
/// | Sum | x -> out | scalar sum of all elements |
/// | CreateCounter | -> counter | i64 scalar `init_count` |
/// | CountDown | counter -> done | Caffe2's CountDown |
/// | CreateCursor | -> cursor | i64 scalar 0 |
/// | ReadNext | cursor, data... -> batch..., finished | next records |
/// | GenerateLinearData | -> X, y | deterministic synthetic regression data |
/// | LinearRegressionSGD | w, b, X, y -> w, b, loss | one SGD step of MSE |
///
/// Each schema's `doc` has the details. A type that `registry` already has
/// is not replaced: the result is then `runtime_errc::bad_argument` naming
/// the first such type ("cannot register op 'Add': already registered"),
/// in every build type; the other builtins are registered all the same.
[[nodiscard]] caf::error add_builtin_ops(op_registry& registry);

} // namespace epochrt
