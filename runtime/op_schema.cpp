#include <epochrt/runtime/op_schema.hpp>

namespace epochrt {

namespace {

bool is_integer(dtype x) noexcept {
  return x == dtype::i32 || x == dtype::i64 || x == dtype::u8;
}

bool is_numeric(dtype x) noexcept {
  return is_integer(x) || x == dtype::f32 || x == dtype::f64;
}

} // namespace

const char* describe(arg_kind x) noexcept {
  switch (x) {
    case arg_kind::integer:
      return "an integer";
    case arg_kind::number:
      return "a number";
    case arg_kind::boolean:
      return "a boolean";
    case arg_kind::string:
      return "a string";
    case arg_kind::integer_list:
      return "a list of integers";
    case arg_kind::number_list:
      return "a list of numbers";
    case arg_kind::string_list:
      return "a list of strings";
    case arg_kind::path:
      return "a path";
  }
  return "an unknown kind";
}

std::string describe_arg(const tensor& x) {
  if (!x.consistent())
    return "a malformed tensor";
  if (x.shape.empty()) {
    if (is_integer(x.type))
      return "an integer";
    if (is_numeric(x.type))
      return "a number";
    if (x.type == dtype::boolean)
      return "a boolean";
    return "a string";
  }
  if (x.shape.size() == 1) {
    if (x.shape[0] == 0)
      return "an empty list";
    if (is_integer(x.type))
      return "a list of integers";
    if (is_numeric(x.type))
      return "a list of numbers";
    if (x.type == dtype::boolean)
      return "a list of booleans";
    return "a list of strings";
  }
  std::string result = "a tensor of shape [";
  for (size_t i = 0; i < x.shape.size(); ++i) {
    if (i > 0)
      result += ',';
    result += std::to_string(x.shape[i]);
  }
  result += ']';
  return result;
}

bool arg_matches(arg_kind kind, const tensor& x) noexcept {
  if (!x.consistent())
    return false;
  bool scalar = x.shape.empty();
  bool list = x.shape.size() == 1;
  bool empty_list = list && x.shape[0] == 0;
  switch (kind) {
    case arg_kind::integer:
      return scalar && is_integer(x.type);
    case arg_kind::number:
      return scalar && is_numeric(x.type);
    case arg_kind::boolean:
      return scalar && x.type == dtype::boolean;
    case arg_kind::string:
    case arg_kind::path:
      return scalar && x.type == dtype::string;
    case arg_kind::integer_list:
      return empty_list || (list && is_integer(x.type));
    case arg_kind::number_list:
      return empty_list || (list && is_numeric(x.type));
    case arg_kind::string_list:
      return empty_list || (list && x.type == dtype::string);
  }
  return false;
}

const arg_spec* op_schema::find_arg(const std::string& name) const noexcept {
  for (auto& spec : args)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

} // namespace epochrt
