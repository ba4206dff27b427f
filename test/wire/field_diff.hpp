#pragma once

// Field-by-field comparison of message values, by the fields of each type's
// list (message_fields.hpp): "job_def.init_group.tasks[1].steps[0].num_iter:
// 7 != 8". Unlike a comparison of what CAF's inspectors print, it names the
// field that changed, and it looks inside the messages that exchange_forward
// and exchange_relayed carry.

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/deep_to_string.hpp>
#include <caf/message.hpp>
#include <caf/typed_actor.hpp>

#include <epochrt/messages/message_list.hpp>

namespace epochrt::test {

/// Compares two values of one type field by field and records where they
/// differ.
class field_diff {
public:
  template <class T>
  void compare(const std::string& root, const T& x, const T& y) {
    visit(root, x, y);
  }

  /// Every path that differs, with both values.
  const std::vector<std::string>& differences() const noexcept {
    return differences_;
  }

  /// The names of the top-level fields the comparison visited.
  const std::vector<std::string>& top_fields() const noexcept {
    return top_fields_;
  }

  /// True when some difference lies in top-level field `name`.
  bool differs_in(const std::string& name) const {
    return differing_top_fields_.count(name) > 0;
  }

  /// The differences as one text, at most `max` of them.
  std::string report(size_t max = 20) const;

private:
  template <class T>
  struct is_typed_actor : std::false_type {};

  template <class... Sigs>
  struct is_typed_actor<caf::typed_actor<Sigs...>> : std::true_type {};

  void differ(const std::string& path, const std::string& x,
              const std::string& y);

  // Compares member `name` of a struct at `path`.
  template <class T>
  void
  field(const std::string& path, const char* name, const T& x, const T& y) {
    if (depth_ == 0) {
      top_fields_.emplace_back(name);
      current_top_field_ = name;
    }
    ++depth_;
    visit(path + "." + name, x, y);
    --depth_;
  }

  template <class T>
  void visit(const std::string& path, const T& x, const T& y) {
    if constexpr (
      std::is_arithmetic_v<
        T> || std::is_same_v<T, std::string> || std::is_same_v<T, caf::actor>) {
      if (x != y)
        differ(path, caf::deep_to_string(x), caf::deep_to_string(y));
    } else if constexpr (std::is_enum_v<T>) {
      if (x != y)
        differ(path, std::to_string(static_cast<int>(x)),
               std::to_string(static_cast<int>(y)));
    } else if constexpr (is_typed_actor<T>::value) {
      visit(path, caf::actor_cast<caf::actor>(x),
            caf::actor_cast<caf::actor>(y));
    } else {
      message_fields<T>::for_each([&](const char* name, auto member) {
        field(path, name, x.*member, y.*member);
      });
    }
  }

  template <class T>
  void visit(const std::string& path, const std::vector<T>& x,
             const std::vector<T>& y) {
    if (x.size() != y.size())
      differ(path + ".size()", std::to_string(x.size()),
             std::to_string(y.size()));
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      visit(path + "[" + std::to_string(i) + "]", x[i], y[i]);
  }

  template <class V>
  void visit(const std::string& path, const std::map<std::string, V>& x,
             const std::map<std::string, V>& y) {
    for (auto& [key, value] : x) {
      auto i = y.find(key);
      if (i == y.end())
        differ(path + "[\"" + key + "\"]", "present", "missing");
      else
        visit(path + "[\"" + key + "\"]", value, i->second);
    }
    for (auto& kvp : y)
      if (x.count(kvp.first) == 0)
        differ(path + "[\"" + kvp.first + "\"]", "missing", "present");
  }

  // Payloads: one entry for the whole buffer, not one per byte.
  void visit(const std::string& path, const std::vector<char>& x,
             const std::vector<char>& y);

  // A message inside a message (exchange_forward, exchange_relayed): the
  // types of its elements, then the fields of the one message value it
  // holds. Any other content always differs.
  void visit(const std::string& path, const caf::message& x,
             const caf::message& y);

  std::vector<std::string> differences_;
  std::vector<std::string> top_fields_;
  std::set<std::string> differing_top_fields_;
  std::string current_top_field_;
  int depth_ = 0;
};

} // namespace epochrt::test
