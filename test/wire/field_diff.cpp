#include "test/wire/field_diff.hpp"

#include <boost/core/demangle.hpp>

#include <caf/type_nr.hpp>

#include "test/messages/message_samples.hpp"

namespace epochrt::test {

namespace {

// The types of a message's elements: "(epochrt::exchange_put)".
std::string element_types(const caf::message& x) {
  std::string result = "(";
  for (size_t i = 0; i < x.size(); ++i) {
    if (i > 0)
      result += ", ";
    auto rtti = x.type(i);
    if (rtti.first != 0)
      result += caf::numbered_type_names[rtti.first - 1];
    else if (rtti.second != nullptr)
      result += boost::core::demangle(rtti.second->name());
    else
      result += "?";
  }
  return result + ")";
}

} // namespace

std::string field_diff::report(size_t max) const {
  std::string result;
  for (size_t i = 0; i < differences_.size() && i < max; ++i) {
    result += "\n  ";
    result += differences_[i];
  }
  if (differences_.size() > max)
    result
      += "\n  ... and " + std::to_string(differences_.size() - max) + " more";
  return result;
}

void field_diff::differ(const std::string& path, const std::string& x,
                        const std::string& y) {
  differences_.push_back(path + ": " + x + " != " + y);
  if (depth_ > 0)
    differing_top_fields_.insert(current_top_field_);
}

void field_diff::visit(const std::string& path, const std::vector<char>& x,
                       const std::vector<char>& y) {
  if (x == y)
    return;
  size_t i = 0;
  while (i < x.size() && i < y.size() && x[i] == y[i])
    ++i;
  differ(path, std::to_string(x.size()) + " bytes",
         std::to_string(y.size()) + " bytes, first difference at byte "
           + std::to_string(i));
}

void field_diff::visit(const std::string& path, const caf::message& x,
                       const caf::message& y) {
  auto x_types = element_types(x);
  auto y_types = element_types(y);
  if (x_types != y_types) {
    differ(path, x_types, y_types);
    return;
  }
  if (x.empty())
    return;
  bool compared = false;
  for_each_type<all_message_types>([&](auto tag) {
    using type = typename decltype(tag)::type;
    if (compared || !x.match_elements<type>())
      return;
    compared = true;
    // The element types matched: y holds one `type` too.
    std::string name = message_fields<type>::name;
    visit(path + "(" + name.substr(name.rfind(':') + 1) + ")",
          x.get_as<type>(0), y.get_as<type>(0));
  });
  // Unknown content must not pass for equal.
  if (!compared)
    differ(path, x_types + " (field_diff cannot compare it)", y_types);
}

} // namespace epochrt::test
