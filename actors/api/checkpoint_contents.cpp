#include <epochrt/actors/api/checkpoint_contents.hpp>

#include <memory>

#include <epochrt/persistence/checkpoint_listing.hpp>
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

caf::expected<std::vector<epoch_verification>>
verify_committed(const std::string& dir, const checkpoint_metadata& metadata) {
  std::vector<epoch_verification> result;
  if (metadata.committed_epochs.empty())
    return result;
  auto listing = list_checkpoints(dir);
  if (!listing)
    return std::move(listing.error());
  auto nodes = checkpointed_nodes(metadata, *listing);
  for (auto epoch : metadata.committed_epochs) {
    auto& found = result.emplace_back();
    found.epoch = epoch;
    for (auto& node : nodes)
      found.nodes.emplace_back(node, verify_checkpoint(dir, node, epoch));
  }
  return result;
}

} // namespace epochrt
