#include <epochrt/runtime/builtin_ops.hpp>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <thread>

#include <epochrt/runtime/exchange_ops.hpp>
#include <epochrt/runtime/op_context.hpp>
#include <epochrt/runtime/op_registry.hpp>

namespace epochrt {

namespace {

// -- helpers ------------------------------------------------------------------

// Upper bound on the elements an op may create from its arguments: catches
// absurd shapes (and overflowing products) with an error, not a bad_alloc.
constexpr uint64_t max_elements = uint64_t{1} << 36;

bool is_integer(dtype x) noexcept {
  return x == dtype::i32 || x == dtype::i64 || x == dtype::u8;
}

bool is_numeric(dtype x) noexcept {
  return is_integer(x) || x == dtype::f32 || x == dtype::f64;
}

// Calls `f(T{})` with the C++ type of a numeric dtype; false for bool and
// string.
template <class F>
bool visit_numeric(dtype type, F&& f) {
  switch (type) {
    case dtype::f32:
      f(float{});
      return true;
    case dtype::f64:
      f(double{});
      return true;
    case dtype::i32:
      f(int32_t{});
      return true;
    case dtype::i64:
      f(int64_t{});
      return true;
    case dtype::u8:
      f(uint8_t{});
      return true;
    default:
      return false;
  }
}

// What is wrong with a shape given as an argument (a negative dimension,
// too many elements), or empty.
std::string shape_problem(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (auto dim : shape) {
    if (dim < 0)
      return "shape " + format_shape(shape) + " has a negative dimension";
    if (dim != 0 && count > max_elements / static_cast<uint64_t>(dim))
      return "shape " + format_shape(shape) + " is too large";
    count *= static_cast<uint64_t>(dim);
  }
  return {};
}

caf::error check_shape(op_context& ctx, const std::vector<int64_t>& shape) {
  if (auto problem = shape_problem(shape); !problem.empty())
    return ctx.fail(runtime_errc::bad_argument, problem);
  return caf::none;
}

// What is wrong with a fill's `dtype` argument, `name`, or empty: a
// numeric type or bool.
std::string fill_dtype_problem(const std::string& name, dtype& out) {
  if (!from_string(name, out) || out == dtype::string)
    return "arg 'dtype': expected one of f32, f64, i32, i64, u8, bool, got '"
      + name + "'";
  return {};
}

caf::error fill_dtype(op_context& ctx, dtype& out) {
  auto problem = fill_dtype_problem(ctx.string_arg("dtype", "f32"), out);
  if (!problem.empty())
    return ctx.fail(runtime_errc::bad_argument, problem);
  return caf::none;
}

// The static check of ConstantFill and GivenTensorFill: what their run
// would refuse, refused when the job is validated instead, so that a bad
// fill in an epoch task fails before the first epoch, not deep in a run.
// The argument kinds were checked before.
std::string fill_problem(const op_def& op, bool given) {
  std::vector<int64_t> shape;
  auto shape_arg = op.args.find("shape");
  if (shape_arg != op.args.end())
    for (size_t k = 0; k < shape_arg->second.element_count(); ++k)
      shape.push_back(element_as_int(shape_arg->second, k));
  if (auto problem = shape_problem(shape); !problem.empty())
    return op.type + ": " + problem;
  auto dtype_arg = op.args.find("dtype");
  if (dtype_arg != op.args.end() && dtype_arg->second.strings.size() == 1) {
    dtype type;
    auto problem = fill_dtype_problem(dtype_arg->second.strings[0], type);
    if (!problem.empty())
      return op.type + ": " + problem;
  }
  auto values = op.args.find("values");
  if (given && shape_arg != op.args.end() && values != op.args.end()) {
    uint64_t count = 1;
    for (auto dim : shape)
      count *= static_cast<uint64_t>(dim);
    if (count != values->second.element_count())
      return op.type + ": shape " + format_shape(shape) + " holds "
        + std::to_string(count) + " values, got "
        + std::to_string(values->second.element_count());
  }
  return {};
}

// Stores element `i` of `src` (numeric) into element `i` of `dst`,
// converting; integers stay exact between integer types.
void convert_element(const tensor& src, size_t i, tensor& dst) {
  switch (dst.type) {
    case dtype::boolean:
      dst.data[i] = element_as_double(src, i) != 0 ? 1 : 0;
      break;
    case dtype::f32:
      dst.values<float>()[i] = static_cast<float>(element_as_double(src, i));
      break;
    case dtype::f64:
      dst.values<double>()[i] = element_as_double(src, i);
      break;
    case dtype::i32:
      dst.values<int32_t>()[i] = static_cast<int32_t>(element_as_int(src, i));
      break;
    case dtype::i64:
      dst.values<int64_t>()[i] = element_as_int(src, i);
      break;
    case dtype::u8:
      dst.values<uint8_t>()[i] = static_cast<uint8_t>(element_as_int(src, i));
      break;
    case dtype::string:
      assert(false); // excluded by fill_dtype
      break;
  }
}

// True when `x` holds exactly one element in a shape of rank 0 or 1: the
// operands that broadcast in Add and Mul, and the accepted counters.
bool single(const tensor& x) {
  return x.shape.size() <= 1 && x.element_count() == 1;
}

caf::error require_dtype(op_context& ctx, size_t input, const tensor& x,
                         dtype expected) {
  if (x.type == expected)
    return caf::none;
  return ctx.fail(runtime_errc::type_mismatch,
                  "input " + std::to_string(input) + " '"
                    + ctx.def().inputs[input] + "' must be "
                    + to_string(expected) + ", got " + to_string(x.type));
}

// -- fills --------------------------------------------------------------------

caf::error constant_fill(op_context& ctx) {
  // A blob that a checkpoint of an earlier definition of the job lacks is
  // made; one that the checkpoint has keeps its value.
  if (ctx.bool_arg("if_missing", false) && ctx.has_output(0))
    return caf::none;
  auto shape = ctx.int_list_arg("shape");
  if (auto err = check_shape(ctx, shape))
    return err;
  dtype type;
  if (auto err = fill_dtype(ctx, type))
    return err;
  // The value as a one-element tensor, so that integers stay exact.
  tensor value = make_scalar<double>(0);
  auto i = ctx.def().args.find("value");
  if (i != ctx.def().args.end())
    value = i->second;
  auto result = make_zero_tensor(type, std::move(shape));
  auto n = result.element_count();
  if (n > 0) {
    convert_element(value, 0, result);
    auto width = element_size(type);
    for (size_t k = 1; k < n; ++k)
      std::memcpy(result.data.data() + k * width, result.data.data(), width);
  }
  ctx.set_output(0, std::move(result));
  return caf::none;
}

caf::error given_tensor_fill(op_context& ctx) {
  auto& values = ctx.def().args.at("values"); // required: checked
  auto count = values.element_count();
  auto shape = ctx.int_list_arg("shape", {static_cast<int64_t>(count)});
  if (auto err = check_shape(ctx, shape))
    return err;
  dtype type;
  if (auto err = fill_dtype(ctx, type))
    return err;
  auto result = make_zero_tensor(type, std::move(shape));
  if (result.element_count() != count)
    return ctx.fail(runtime_errc::shape_mismatch,
                    "shape " + format_shape(result.shape) + " holds "
                      + std::to_string(result.element_count()) + " values, got "
                      + std::to_string(count));
  if (values.type != dtype::string) // an empty list may come as any dtype
    for (size_t k = 0; k < count; ++k)
      convert_element(values, k, result);
  ctx.set_output(0, std::move(result));
  return caf::none;
}

// -- arithmetic ---------------------------------------------------------------

template <class Fn>
caf::error elementwise(op_context& ctx, Fn fn) {
  auto& a = ctx.input(0);
  auto& b = ctx.input(1);
  if (a.type != b.type)
    return ctx.fail(runtime_errc::type_mismatch,
                    "inputs '" + ctx.def().inputs[0] + "' (" + to_string(a.type)
                      + ") and '" + ctx.def().inputs[1] + "' ("
                      + to_string(b.type) + ") differ in dtype");
  if (!is_numeric(a.type))
    return ctx.fail(runtime_errc::type_mismatch,
                    std::string{"not defined for dtype "} + to_string(a.type));
  std::vector<int64_t> shape;
  if (a.shape == b.shape || single(b))
    shape = a.shape;
  else if (single(a))
    shape = b.shape;
  else
    return ctx.fail(runtime_errc::shape_mismatch,
                    "shapes " + format_shape(a.shape) + " and "
                      + format_shape(b.shape)
                      + " differ and neither is a single element");
  auto result = make_zero_tensor(a.type, std::move(shape));
  auto n = result.element_count();
  size_t step_a = a.element_count() == n ? 1 : 0;
  size_t step_b = b.element_count() == n ? 1 : 0;
  visit_numeric(a.type, [&](auto tag) {
    using T = decltype(tag);
    auto* x = a.values<T>();
    auto* y = b.values<T>();
    auto* out = result.values<T>();
    for (size_t k = 0; k < n; ++k)
      out[k] = static_cast<T>(fn(x[k * step_a], y[k * step_b]));
  });
  // Inputs are no longer read: the output may replace one of them.
  ctx.set_output(0, std::move(result));
  return caf::none;
}

caf::error add_op(op_context& ctx) {
  return elementwise(ctx, [](auto x, auto y) {
    return x + y;
  });
}

caf::error mul_op(op_context& ctx) {
  return elementwise(ctx, [](auto x, auto y) {
    return x * y;
  });
}

caf::error copy_op(op_context& ctx) {
  if (ctx.def().inputs[0] == ctx.def().outputs[0])
    return caf::none;
  tensor result = ctx.input(0);
  ctx.set_output(0, std::move(result));
  return caf::none;
}

caf::error sum_op(op_context& ctx) {
  auto& x = ctx.input(0);
  if (!is_numeric(x.type))
    return ctx.fail(runtime_errc::type_mismatch,
                    std::string{"not defined for dtype "} + to_string(x.type));
  auto n = x.element_count();
  tensor result;
  visit_numeric(x.type, [&](auto tag) {
    using T = decltype(tag);
    using acc_type
      = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    acc_type acc = 0;
    auto* values = x.values<T>();
    for (size_t k = 0; k < n; ++k)
      acc += values[k];
    result = make_scalar<T>(static_cast<T>(acc));
  });
  ctx.set_output(0, std::move(result));
  return caf::none;
}

// -- counters -----------------------------------------------------------------

caf::error create_counter(op_context& ctx) {
  ctx.set_output(0, make_scalar<int64_t>(ctx.int_arg("init_count", 0)));
  return caf::none;
}

caf::error check_counter(op_context& ctx, size_t input, const char* what) {
  auto& x = ctx.input(input);
  if (auto err = require_dtype(ctx, input, x, dtype::i64))
    return err;
  if (!single(x))
    return ctx.fail(runtime_errc::shape_mismatch,
                    std::string{what} + " '" + ctx.def().inputs[input]
                      + "' must hold one element, got shape "
                      + format_shape(x.shape));
  return caf::none;
}

caf::error count_down(op_context& ctx) {
  if (auto err = check_counter(ctx, 0, "counter"))
    return err;
  auto& counter = ctx.mutable_input(0);
  auto* count = counter.values<int64_t>();
  bool done = *count <= 0;
  if (!done)
    --*count;
  ctx.set_output(0, make_scalar<bool>(done));
  return caf::none;
}

caf::error epoch_limit_op(op_context& ctx) {
  if (auto err = check_counter(ctx, 0, "counter"))
    return err;
  auto& counter = ctx.mutable_input(0);
  auto* count = counter.values<int64_t>();
  ++*count;
  ctx.set_output(0, make_scalar<bool>(*count >= ctx.int_arg("limit", 1)));
  return caf::none;
}

caf::error create_cursor(op_context& ctx) {
  ctx.set_output(0, make_scalar<int64_t>(0));
  return caf::none;
}

// -- reading ------------------------------------------------------------------

caf::error read_next(op_context& ctx) {
  auto batch_size = ctx.int_arg("batch_size", 1);
  if (batch_size < 1)
    return ctx.fail(runtime_errc::bad_argument,
                    "arg 'batch_size' must be at least 1, got "
                      + std::to_string(batch_size));
  bool wrap = ctx.bool_arg("wrap", false);
  if (auto err = check_counter(ctx, 0, "cursor"))
    return err;
  auto datasets = ctx.input_count() - 1;
  if (ctx.output_count() != datasets + 1)
    return ctx.fail(runtime_errc::bad_argument,
                    "expected " + std::to_string(datasets + 1)
                      + " outputs (a batch per dataset, then finished), got "
                      + std::to_string(ctx.output_count()));
  int64_t records = -1;
  for (size_t d = 1; d <= datasets; ++d) {
    auto& x = ctx.input(d);
    if (x.shape.empty())
      return ctx.fail(runtime_errc::shape_mismatch,
                      "dataset '" + ctx.def().inputs[d]
                        + "' is a scalar; it needs a first dimension of "
                          "records");
    if (records < 0)
      records = x.shape[0];
    else if (x.shape[0] != records)
      return ctx.fail(runtime_errc::shape_mismatch,
                      "datasets hold different numbers of records: '"
                        + ctx.def().inputs[1] + "' " + std::to_string(records)
                        + ", '" + ctx.def().inputs[d] + "' "
                        + std::to_string(x.shape[0]));
  }
  auto cursor = ctx.input(0).values<int64_t>()[0];
  if (cursor < 0 || cursor > records)
    return ctx.fail(runtime_errc::bad_argument,
                    "cursor " + std::to_string(cursor)
                      + " is outside the dataset of " + std::to_string(records)
                      + " records");
  auto count = std::min(batch_size, records - cursor);
  std::vector<tensor> batches;
  batches.reserve(datasets);
  for (size_t d = 1; d <= datasets; ++d) {
    auto& x = ctx.input(d);
    auto shape = x.shape;
    shape[0] = count;
    auto batch = make_zero_tensor(x.type, shape);
    auto per_record = batch.element_count() / (count > 0 ? count : 1);
    auto first = static_cast<size_t>(cursor) * per_record;
    if (x.type == dtype::string) {
      std::copy_n(x.strings.begin() + first, batch.strings.size(),
                  batch.strings.begin());
    } else if (!batch.data.empty()) {
      auto width = element_size(x.type);
      std::memcpy(batch.data.data(), x.data.data() + first * width,
                  batch.data.size());
    }
    batches.push_back(std::move(batch));
  }
  auto next = cursor + count;
  bool finished = next == records;
  if (finished && wrap)
    next = 0;
  // All inputs read; now write.
  ctx.mutable_input(0).values<int64_t>()[0] = next;
  for (size_t d = 0; d < datasets; ++d)
    ctx.set_output(d, std::move(batches[d]));
  ctx.set_output(datasets, make_scalar<bool>(finished));
  return caf::none;
}

// -- linear regression --------------------------------------------------------

// Uniform in [0, 1) from the top 53 bits: independent of the standard
// library's distributions, which may differ between implementations.
double uniform01(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

// A standard normal sample (Box-Muller, cosine branch).
double standard_normal(std::mt19937_64& gen) {
  constexpr double two_pi = 6.283185307179586476925286766559;
  double u1 = 1.0 - uniform01(gen); // (0, 1]: log(0) never happens
  double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

caf::error generate_linear_data(op_context& ctx) {
  auto rows = ctx.int_arg("rows");
  auto features = ctx.int_arg("features");
  if (rows < 0 || features < 1)
    return ctx.fail(runtime_errc::bad_argument,
                    "needs rows >= 0 and features >= 1, got rows "
                      + std::to_string(rows) + " and features "
                      + std::to_string(features));
  if (auto err = check_shape(ctx, {rows, features}))
    return err;
  auto weights = ctx.number_list_arg(
    "weights", std::vector<double>(static_cast<size_t>(features), 1.0));
  if (weights.size() != static_cast<size_t>(features))
    return ctx.fail(runtime_errc::bad_argument,
                    "arg 'weights' must hold " + std::to_string(features)
                      + " values (one per feature), got "
                      + std::to_string(weights.size()));
  auto bias = ctx.number_arg("bias", 0.0);
  auto noise = ctx.number_arg("noise", 0.1);
  std::mt19937_64 gen{static_cast<uint64_t>(ctx.int_arg("seed", 0))};
  auto x = make_zero_tensor(dtype::f32, {rows, features});
  auto y = make_zero_tensor(dtype::f32, {rows});
  auto* xs = x.values<float>();
  auto* ys = y.values<float>();
  auto n = static_cast<size_t>(features);
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
    double target = bias;
    for (size_t f = 0; f < n; ++f) {
      auto value = static_cast<float>(2.0 * uniform01(gen) - 1.0);
      xs[r * n + f] = value;
      target += weights[f] * value;
    }
    ys[r] = static_cast<float>(target + noise * standard_normal(gen));
  }
  ctx.set_output(0, std::move(x));
  ctx.set_output(1, std::move(y));
  return caf::none;
}

// The mean squared error of a linear model on a batch and the sums its
// gradient is made of (error times feature, error), accumulated in double
// in row order.
struct linear_gradient {
  std::vector<double> w;
  double b = 0;
  double loss = 0;
  size_t rows = 0;
};

// Checks the inputs w (f32 [features]), b (f32, one element), X (f32 [k,
// features]) and y (f32 [k]) and computes the gradient of the MSE at w, b.
caf::expected<linear_gradient> mse_gradient(op_context& ctx) {
  for (size_t i = 0; i < 4; ++i)
    if (auto err = require_dtype(ctx, i, ctx.input(i), dtype::f32))
      return err;
  auto& w = ctx.input(0);
  auto& b = ctx.input(1);
  auto& x = ctx.input(2);
  auto& y = ctx.input(3);
  if (w.shape.size() != 1)
    return ctx.fail(runtime_errc::shape_mismatch,
                    "weights must be 1-D, got shape " + format_shape(w.shape));
  if (!single(b))
    return ctx.fail(runtime_errc::shape_mismatch,
                    "bias must hold one element, got shape "
                      + format_shape(b.shape));
  auto features = w.shape[0];
  if (x.shape.size() != 2 || x.shape[1] != features)
    return ctx.fail(runtime_errc::shape_mismatch,
                    "X must have shape [k," + std::to_string(features)
                      + "], got " + format_shape(x.shape));
  auto k = x.shape[0];
  if (y.shape != std::vector<int64_t>{k})
    return ctx.fail(runtime_errc::shape_mismatch,
                    "y must have shape [" + std::to_string(k) + "], got "
                      + format_shape(y.shape));
  auto n = static_cast<size_t>(features);
  linear_gradient result;
  result.rows = static_cast<size_t>(k);
  result.w.assign(n, 0.0);
  auto* ws = w.values<float>();
  auto bias = static_cast<double>(b.values<float>()[0]);
  auto* xs = x.values<float>();
  auto* ys = y.values<float>();
  for (size_t r = 0; r < result.rows; ++r) {
    double pred = bias;
    for (size_t f = 0; f < n; ++f)
      pred += static_cast<double>(ws[f]) * xs[r * n + f];
    double err = pred - ys[r];
    result.loss += err * err;
    for (size_t f = 0; f < n; ++f)
      result.w[f] += err * xs[r * n + f];
    result.b += err;
  }
  if (result.rows > 0)
    result.loss /= static_cast<double>(result.rows);
  return result;
}

// The gradient's scale: d/dw of the mean of squares is 2/k times the sums.
double gradient_scale(const linear_gradient& grad) {
  return grad.rows > 0 ? 2.0 / static_cast<double>(grad.rows) : 0.0;
}

caf::error linear_regression_sgd(op_context& ctx) {
  auto grad = mse_gradient(ctx);
  if (!grad)
    return std::move(grad.error());
  auto lr = ctx.number_arg("lr", 0.01);
  tensor new_w = ctx.input(0);
  tensor new_b = ctx.input(1);
  if (grad->rows > 0) {
    auto scale = gradient_scale(*grad);
    auto* out = new_w.values<float>();
    for (size_t f = 0; f < grad->w.size(); ++f)
      out[f] = static_cast<float>(out[f] - lr * scale * grad->w[f]);
    auto bias = static_cast<double>(new_b.values<float>()[0]);
    new_b.values<float>()[0] = static_cast<float>(bias - lr * scale * grad->b);
  }
  ctx.set_output(0, std::move(new_w));
  ctx.set_output(1, std::move(new_b));
  ctx.set_output(2, make_scalar<float>(static_cast<float>(grad->loss)));
  return caf::none;
}

caf::error linear_regression_gradient(op_context& ctx) {
  auto grad = mse_gradient(ctx);
  if (!grad)
    return std::move(grad.error());
  auto scale = gradient_scale(*grad);
  std::vector<float> w(grad->w.size());
  for (size_t f = 0; f < w.size(); ++f)
    w[f] = static_cast<float>(scale * grad->w[f]);
  ctx.set_output(0, make_tensor<float>({static_cast<int64_t>(w.size())}, w));
  ctx.set_output(1,
                 make_tensor<float>(ctx.input(1).shape,
                                    {static_cast<float>(scale * grad->b)}));
  ctx.set_output(2, make_scalar<float>(static_cast<float>(grad->loss)));
  return caf::none;
}

// param -= lr * grad, elementwise, in f32 or f64.
caf::error sgd_update(op_context& ctx) {
  auto& param = ctx.input(0);
  auto& grad = ctx.input(1);
  if (param.type != dtype::f32 && param.type != dtype::f64)
    return ctx.fail(runtime_errc::type_mismatch,
                    std::string{"param must be f32 or f64, got "}
                      + to_string(param.type));
  if (grad.type != param.type)
    return ctx.fail(runtime_errc::type_mismatch,
                    std::string{"grad is "} + to_string(grad.type) + ", param "
                      + to_string(param.type));
  if (grad.shape != param.shape)
    return ctx.fail(runtime_errc::shape_mismatch,
                    "grad has shape " + format_shape(grad.shape) + ", param "
                      + format_shape(param.shape));
  auto lr = ctx.number_arg("lr", 0.01);
  tensor result = param;
  auto n = result.element_count();
  if (result.type == dtype::f32) {
    auto* out = result.values<float>();
    auto* g = grad.values<float>();
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(out[i] - lr * g[i]);
  } else {
    auto* out = result.values<double>();
    auto* g = grad.values<double>();
    for (size_t i = 0; i < n; ++i)
      out[i] = out[i] - lr * g[i];
  }
  ctx.set_output(0, std::move(result));
  return caf::none;
}

// -- host effects
// ---------------------------------------------------------------

// Copies a file or directory tree, replacing what is at the destination. Used
// by upload builders; the copy lands beside the destination first and is
// renamed into place, so a reader never sees half a copy.
caf::error copy_directory(op_context& ctx) {
  namespace fs = std::filesystem;
  auto source = fs::path{ctx.string_arg("source")};
  auto destination = fs::path{ctx.string_arg("destination")};
  if (source.empty() || destination.empty())
    return ctx.fail(runtime_errc::bad_argument,
                    "source and destination must not be empty");
  std::error_code ec;
  if (!fs::exists(source, ec))
    return ctx.fail(runtime_errc::op_failed,
                    "cannot copy " + source.string() + ": it does not exist");
  if (destination.has_parent_path())
    fs::create_directories(destination.parent_path(), ec);
  auto staging = destination;
  staging += ".copying";
  fs::remove_all(staging, ec);
  fs::copy(source, staging, fs::copy_options::recursive, ec);
  if (!ec) {
    fs::remove_all(destination, ec);
    fs::rename(staging, destination, ec);
  }
  if (ec) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    return ctx.fail(runtime_errc::op_failed,
                    "cannot copy " + source.string() + " to "
                      + destination.string() + ": " + ec.message());
  }
  return {};
}

// Waits `ms` milliseconds: paces a job in tests and demos, stands in for
// work. It names no blob, so it runs without holding the workspace. Ends
// early (failing) once its task is cancelled: a failed job's process must
// not wait out an hour's sleep.
caf::error sleep_op(op_context& ctx) {
  auto ms = ctx.int_arg("ms", 0);
  if (ms < 0 || ms > 3'600'000)
    return ctx.fail(runtime_errc::bad_argument,
                    "ms must be between 0 and 3600000");
  auto deadline
    = std::chrono::steady_clock::now() + std::chrono::milliseconds{ms};
  constexpr auto slice = std::chrono::milliseconds{20};
  for (auto now = std::chrono::steady_clock::now(); now < deadline;
       now = std::chrono::steady_clock::now()) {
    if (ctx.cancelled())
      return ctx.fail(runtime_errc::cancelled, "cancelled");
    std::this_thread::sleep_for(
      std::min<std::chrono::steady_clock::duration>(slice, deadline - now));
  }
  return {};
}

// -- registration -------------------------------------------------------------

arg_spec arg(std::string name, arg_kind kind, bool required, std::string doc) {
  return arg_spec{std::move(name), kind, required, std::move(doc)};
}

// Where the builtins go, and the first registration that failed: a type the
// host registered first is an error in every build type (an assert would
// vanish under NDEBUG and leave the host's op under a builtin's name).
struct builtin_target {
  op_registry& ops;
  caf::error first;
};

void must_add(builtin_target& registry, op_schema schema) {
  if (auto err = registry.ops.add(std::move(schema)); err && !registry.first)
    registry.first = std::move(err);
}

const char* dtype_doc = "element type: f32 (default), f64, i32, i64, u8, bool";

} // namespace

caf::error add_builtin_ops(op_registry& ops) {
  builtin_target registry{ops, {}};
  must_add(
    registry,
    {"ConstantFill",
     "Outputs a tensor of `shape` (default: a scalar) and `dtype` with every "
     "element set to `value` (default 0; for bool, true when non-zero). "
     "With `if_missing`, an output that exists already is left as it is.",
     0,
     0,
     1,
     1,
     {arg("shape", arg_kind::integer_list, false, "dimensions; [] = scalar"),
      arg("value", arg_kind::number, false, "fill value, default 0"),
      arg("dtype", arg_kind::string, false, dtype_doc),
      arg("if_missing", arg_kind::boolean, false,
          "fill only an output that does not exist (default false)")},
     constant_fill,
     [](const op_def& op) {
       return fill_problem(op, false);
     }});
  must_add(registry,
           {"GivenTensorFill",
            "Outputs a tensor of `shape` (default: [number of values]) and "
            "`dtype` holding `values` in row-major order; the shape must hold "
            "exactly that many values.",
            0,
            0,
            1,
            1,
            {arg("shape", arg_kind::integer_list, false, "dimensions"),
             arg("values", arg_kind::number_list, true, "the elements"),
             arg("dtype", arg_kind::string, false, dtype_doc)},
            given_tensor_fill,
            [](const op_def& op) {
              return fill_problem(op, true);
            }});
  const char* broadcast_doc
    = "Both inputs must have the same numeric dtype and either the same shape "
      "or one of them a single element (a scalar or shape [1]), which is "
      "broadcast to the other's shape; two single elements give the first "
      "input's shape. The output may be one of the inputs.";
  must_add(registry,
           {"Add",
            std::string{"Elementwise a + b. "} + broadcast_doc,
            2,
            2,
            1,
            1,
            {},
            add_op,
            {}});
  must_add(registry,
           {"Mul",
            std::string{"Elementwise a * b. "} + broadcast_doc,
            2,
            2,
            1,
            1,
            {},
            mul_op,
            {}});
  must_add(registry,
           {"Copy",
            "Outputs a copy of the input (any dtype).",
            1,
            1,
            1,
            1,
            {},
            copy_op,
            {}});
  must_add(registry,
           {"Sum",
            "Outputs the sum of all elements of a numeric input as a scalar of "
            "the same dtype; 0 for an empty input. Integers accumulate in i64.",
            1,
            1,
            1,
            1,
            {},
            sum_op,
            {}});
  must_add(
    registry,
    {"CreateCounter",
     "Outputs an i64 scalar counter set to `init_count`.",
     0,
     0,
     1,
     1,
     {arg("init_count", arg_kind::integer, false, "initial count, default 0")},
     create_counter,
     {}});
  must_add(registry,
           {"CountDown",
            "Input: an i64 counter (one element), updated in place. When the "
            "count is > 0, decrements it and outputs false; otherwise outputs "
            "true. The output is a bool scalar (Caffe2's CountDown).",
            1,
            1,
            1,
            1,
            {},
            count_down,
            [](const op_def& op) -> std::string {
              if (op.outputs[0] == op.inputs[0])
                return "CountDown must not write its result over its counter";
              return {};
            }});
  must_add(
    registry,
    {"EpochLimit",
     "Input: an i64 counter of the epochs run (one element), updated in "
     "place: incremented by one. Outputs true (a bool scalar) once it "
     "reaches `limit`. What epoch_limiter adds to a job's epoch group: the "
     "limit is an argument of the job, not state in its checkpoints, so a "
     "job given more epochs trains on.",
     1,
     1,
     1,
     1,
     {arg("limit", arg_kind::integer, true, "the number of epochs, >= 1")},
     epoch_limit_op,
     [](const op_def& op) -> std::string {
       if (op.outputs[0] == op.inputs[0])
         return "EpochLimit must not write its result over its counter";
       auto i = op.args.find("limit");
       if (i != op.args.end() && element_as_int(i->second, 0) < 1)
         return "EpochLimit: limit must be at least 1";
       return {};
     }});
  must_add(registry,
           {"CreateCursor",
            "Outputs an i64 scalar cursor at record 0.",
            0,
            0,
            1,
            1,
            {},
            create_cursor,
            {}});
  must_add(
    registry,
    {"ReadNext",
     "Inputs: a cursor (i64, one element), then one or more datasets whose "
     "first dimension (records) agrees. Outputs: one batch per dataset, "
     "then `finished`. Reads up to `batch_size` records from the cursor "
     "and advances it; a batch has shape [k, rest of the dataset's "
     "dimensions] with 0 <= k <= batch_size. `finished` (bool scalar) is "
     "true when no record remains after this read. With `wrap`, the "
     "cursor then restarts at record 0, and `finished` marks the end of "
     "each pass.",
     2,
     -1,
     2,
     -1,
     {arg("batch_size", arg_kind::integer, false,
          "records per read, >= 1, "
          "default 1"),
      arg("wrap", arg_kind::boolean, false,
          "restart at the end, default "
          "false")},
     read_next,
     [](const op_def& op) -> std::string {
       if (op.outputs.size() != op.inputs.size())
         return "ReadNext takes one output per dataset plus finished ("
           + std::to_string(op.inputs.size()) + " outputs for "
           + std::to_string(op.inputs.size()) + " inputs), got "
           + std::to_string(op.outputs.size());
       auto i = op.args.find("batch_size");
       if (i != op.args.end() && element_as_int(i->second, 0) < 1)
         return "ReadNext: batch_size must be at least 1";
       return {};
     }});
  must_add(
    registry,
    {"GenerateLinearData",
     "Outputs X (f32 [rows, features], uniform in [-1, 1)) and y (f32 "
     "[rows]) with y = X . weights + bias + noise * N(0, 1), "
     "deterministic for a `seed` on every platform (mt19937_64 and "
     "Box-Muller).",
     0,
     0,
     2,
     2,
     {arg("rows", arg_kind::integer, true, "number of records"),
      arg("features", arg_kind::integer, true, "features per record, >= 1"),
      arg("seed", arg_kind::integer, false, "random seed, default 0"),
      arg("noise", arg_kind::number, false, "noise stddev, default 0.1"),
      arg("weights", arg_kind::number_list, false,
          "true weights, one per feature, default all 1"),
      arg("bias", arg_kind::number, false, "true bias, default 0")},
     generate_linear_data,
     {}});
  must_add(registry,
           {"LinearRegressionSGD",
            "Inputs: w (f32 [features]), b (f32, one element), X (f32 [k, "
            "features]), y (f32 [k]). Outputs: w, b (updated by one gradient "
            "step of the mean squared error with learning rate `lr`) and loss "
            "(f32 scalar, the MSE on the batch before the update). With k = 0 "
            "nothing changes and the loss is 0.",
            4,
            4,
            3,
            3,
            {arg("lr", arg_kind::number, false, "learning rate, default 0.01")},
            linear_regression_sgd,
            {}});
  must_add(registry,
           {"LinearRegressionGradient",
            "Inputs: w (f32 [features]), b (f32, one element), X (f32 [k, "
            "features]), y (f32 [k]). Outputs: grad_w (f32 [features]) and "
            "grad_b (b's shape), the gradient of the mean squared error on "
            "the batch at w, b, and loss (f32 scalar, that error). With k = "
            "0 the gradient and the loss are 0. For data-parallel training: "
            "average the gradients with Allreduce, then SGDUpdate.",
            4,
            4,
            3,
            3,
            {},
            linear_regression_gradient,
            {}});
  must_add(registry,
           {"SGDUpdate",
            "Inputs: param, grad (f32 or f64, one dtype and shape). Output: "
            "param - lr * grad.",
            2,
            2,
            1,
            1,
            {arg("lr", arg_kind::number, false, "learning rate, default 0.01")},
            sgd_update,
            {}});
  must_add(registry,
           {"CopyDirectory",
            "Copies the file or directory tree `source` to `destination` on "
            "the node's file system, replacing it (staged beside it, then "
            "renamed). No blobs.",
            0,
            0,
            0,
            0,
            {arg("source", arg_kind::path, true, "path to copy"),
             arg("destination", arg_kind::path, true, "path to create")},
            copy_directory,
            {}});
  must_add(registry,
           {"Sleep",
            "Waits `ms` milliseconds (at most an hour). No blobs.",
            0,
            0,
            0,
            0,
            {arg("ms", arg_kind::integer, true, "milliseconds to wait")},
            sleep_op,
            {}});
  if (auto err = add_exchange_ops(ops); err && !registry.first)
    registry.first = std::move(err);
  return std::move(registry.first);
}

} // namespace epochrt
