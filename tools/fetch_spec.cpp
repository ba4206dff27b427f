#include "tools/fetch_spec.hpp"

#include <algorithm>

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

bool fetch_spec::resolve(const std::vector<std::string>& nodes) {
  auto known = [&](std::string_view name) {
    return std::find(nodes.begin(), nodes.end(), name) != nodes.end();
  };
  if (known(node))
    return true;
  auto text = str();
  std::optional<fetch_spec> found;
  for (auto colon = text.find(':'); colon != std::string::npos;
       colon = text.find(':', colon + 1)) {
    auto candidate = std::string_view{text}.substr(0, colon);
    auto blob_part = std::string_view{text}.substr(colon + 1);
    if (!known(candidate) || !valid_blob_name(blob_part))
      continue;
    if (found)
      return false; // ambiguous
    found = fetch_spec{std::string{candidate}, std::string{blob_part}};
  }
  if (!found)
    return false;
  *this = std::move(*found);
  return true;
}

} // namespace epochrt::cli
