#include <epochrt/actors/api/error_codes.hpp>

#include <caf/error.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/messages/codec_errc.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

template <class Enum>
std::string name_of(uint8_t code) {
  return to_string(static_cast<Enum>(code));
}

struct category_entry {
  caf::atom_value category;
  std::string (*name)(uint8_t code);
};

// The one list of error categories whose codes have names.
const category_entry known_categories[] = {
  {codec_category, name_of<codec_errc>},
  {fault_category, name_of<fault_errc>},
  {runtime_category, name_of<runtime_errc>},
  {persistence_category, name_of<persistence_errc>},
  {actors_category, name_of<actors_errc>},
  {caf::atom("system"), name_of<caf::sec>},
};

} // namespace

std::string error_code_name(const caf::error& err) {
  // CAF 0.17's category() of no error reads through a null pointer.
  if (!err)
    return {};
  for (auto& entry : known_categories)
    if (entry.category == err.category())
      return entry.name(err.code());
  return {};
}

std::string coded_error_text(const caf::error& err) {
  auto text = error_code_name(err);
  if (text.empty())
    return err ? caf::to_string(err) : std::string{};
  const auto& ctx = err.context();
  auto detail = ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0)
    : ctx.empty()                                 ? std::string{}
                                                  : caf::to_string(ctx);
  if (!detail.empty()) {
    text += ": ";
    text += detail;
  }
  return text;
}

namespace detail {

const std::vector<caf::atom_value>& epochrt_error_categories() {
  static const std::vector<caf::atom_value> categories = [] {
    std::vector<caf::atom_value> result;
    for (auto& entry : known_categories)
      if (entry.category != caf::atom("system"))
        result.push_back(entry.category);
    return result;
  }();
  return categories;
}

} // namespace detail

} // namespace epochrt
