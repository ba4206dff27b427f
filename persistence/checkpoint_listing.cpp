#include <epochrt/persistence/checkpoint_listing.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <tuple>

#include <epochrt/messages/names.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt {

namespace {

// Splits "<node>.<epoch>" at its last dot; false for anything else.
bool parse_db_name(const std::string& name, std::string& node, int64_t& epoch) {
  auto dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size())
    return false;
  auto digits = std::string_view{name}.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))
    return false;
  auto res
    = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
  if (res.ec != std::errc{} || res.ptr != digits.data() + digits.size())
    return false;
  node = name.substr(0, dot);
  return valid_node_name(node);
}

} // namespace

caf::expected<std::vector<db_listing>>
list_checkpoints(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error(persistence_errc::not_found,
                      "no checkpoint directory " + dir);
  std::vector<db_listing> result;
  for (auto it = fs::directory_iterator{dir, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_directory(entry_ec))
      continue;
    db_listing item;
    if (!parse_db_name(it->path().filename().string(), item.node, item.epoch))
      continue;
    if (!fs::exists(it->path() / "CURRENT", entry_ec))
      continue; // not a LevelDB database
    item.path = it->path().string();
    item.complete = static_cast<bool>(checkpoint_reader::open(item.path));
    item.bytes = detail::tree_bytes(item.path);
    result.push_back(std::move(item));
  }
  if (ec)
    return make_error(persistence_errc::io_error,
                      "list " + dir + ": " + ec.message());
  std::sort(result.begin(), result.end(), [](auto& x, auto& y) {
    return std::tie(x.node, x.epoch) < std::tie(y.node, y.epoch);
  });
  return result;
}

std::vector<std::string>
checkpointed_nodes(const checkpoint_metadata& metadata,
                   const std::vector<db_listing>& listing) {
  if (!metadata.node_names.empty())
    return metadata.node_names;
  std::vector<std::string> result;
  for (auto& db : listing)
    if (std::find(result.begin(), result.end(), db.node) == result.end())
      result.push_back(db.node);
  return result;
}

} // namespace epochrt
