#include <epochrt/actors/api/checkpoint_contents.hpp>

#include <memory>

#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/db_name.hpp>

namespace epochrt {

namespace {

caf::expected<std::unique_ptr<checkpoint_reader>>
open_database(const std::string& dir, const std::string& node, int64_t epoch) {
  auto path = checked_db_name(epoch, node, dir);
  if (!path)
    return std::move(path.error());
  return checkpoint_reader::open(*path);
}

} // namespace

caf::expected<std::vector<std::pair<std::string, tensor>>>
read_checkpoint_blobs(const std::string& dir, const std::string& node,
                      int64_t epoch, const std::vector<std::string>& blobs) {
  auto reader = open_database(dir, node, epoch);
  if (!reader)
    return std::move(reader.error());
  auto names = blobs;
  if (names.empty())
    for (auto& entry : (*reader)->get_manifest().blobs)
      names.push_back(entry.name);
  auto values = (*reader)->read_all(names);
  if (!values)
    return std::move(values.error());
  std::vector<std::pair<std::string, tensor>> result;
  result.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    result.emplace_back(std::move(names[i]), std::move((*values)[i]));
  return result;
}

caf::error verify_checkpoint(const std::string& dir, const std::string& node,
                             int64_t epoch) {
  auto reader = open_database(dir, node, epoch);
  if (!reader)
    return std::move(reader.error());
  return (*reader)->verify();
}

} // namespace epochrt
