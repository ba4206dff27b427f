#include <epochrt/messages/error_text.hpp>

#include <caf/error.hpp>
#include <caf/message.hpp>

namespace epochrt {

std::string error_text(const caf::error& err) {
  if (!err)
    return {};
  const auto& ctx = err.context();
  if (ctx.match_elements<std::string>())
    return ctx.get_as<std::string>(0);
  return caf::to_string(err);
}

bool in_category(const caf::error& err, caf::atom_value category) noexcept {
  return err && err.category() == category;
}

} // namespace epochrt
