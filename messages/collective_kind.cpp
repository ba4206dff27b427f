#include <epochrt/messages/collective_kind.hpp>

namespace epochrt {

const char* describe(collective_kind x) noexcept {
  switch (x) {
    case collective_kind::all_reduce:
      return "all-reduce";
    case collective_kind::broadcast:
      return "broadcast";
    case collective_kind::all_gather:
      return "all-gather";
    case collective_kind::barrier:
      return "barrier";
  }
  return "collective";
}

std::string describe_one(collective_kind x) {
  auto vowel
    = x == collective_kind::all_reduce || x == collective_kind::all_gather;
  return std::string{vowel ? "an " : "a "} + describe(x);
}

const char* to_string(reduce_op x) noexcept {
  switch (x) {
    case reduce_op::sum:
      return "sum";
    case reduce_op::mean:
      return "mean";
    case reduce_op::min:
      return "min";
    case reduce_op::max:
      return "max";
  }
  return "?";
}

std::optional<reduce_op> reduce_op_from_name(std::string_view name) noexcept {
  for (auto op :
       {reduce_op::sum, reduce_op::mean, reduce_op::min, reduce_op::max})
    if (name == to_string(op))
      return op;
  return std::nullopt;
}

} // namespace epochrt
