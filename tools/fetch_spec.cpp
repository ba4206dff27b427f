#include "tools/fetch_spec.hpp"

#include <epochrt/messages/names.hpp>

namespace epochrt::cli {

std::string fetch_spec::str() const {
  return node + ":" + blob;
}

std::optional<fetch_spec> fetch_spec::parse(std::string_view text,
                                            std::string* problem) {
  auto fail = [&](std::string why) -> std::optional<fetch_spec> {
    if (problem != nullptr)
      *problem = "--fetch '" + std::string{text} + "': " + std::move(why);
    return std::nullopt;
  };
  auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return fail("expected NODE:BLOB");
  auto node = text.substr(0, colon);
  auto blob = text.substr(colon + 1);
  if (auto why = node_name_problem(node); !why.empty())
    return fail(why);
  if (!valid_blob_name(blob))
    return fail("a blob name must be 1 to 256 printable characters without "
                "whitespace");
  return fetch_spec{std::string{node}, std::string{blob}};
}

} // namespace epochrt::cli
