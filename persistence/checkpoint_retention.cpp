#include <epochrt/persistence/checkpoint_retention.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt {

namespace {

constexpr std::string_view deleting_suffix = ".deleting";

// The epoch at the end of a database path ("<family>.<epoch>"), or -1.
int64_t epoch_of(std::string_view path) {
  auto dot = path.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == path.size())
    return -1;
  auto digits = path.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))
    return -1;
  int64_t epoch = -1;
  auto [end, ec]
    = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
  if (ec != std::errc{} || end != digits.data() + digits.size())
    return -1;
  return epoch;
}

caf::error invalid(std::string what) {
  return make_error(persistence_errc::invalid_argument, std::move(what));
}

} // namespace

retention_plan plan_retention(std::vector<int64_t> committed, size_t keep_last,
                              int64_t upto) {
  std::sort(committed.begin(), committed.end());
  committed.erase(std::unique(committed.begin(), committed.end()),
                  committed.end());
  auto end = std::upper_bound(committed.begin(), committed.end(), upto);
  auto first_kept = keep_last == 0
      || end - committed.begin() <= static_cast<ptrdiff_t>(keep_last)
    ? committed.begin()
    : end - static_cast<ptrdiff_t>(keep_last);
  return retention_plan{{committed.begin(), first_kept},
                        {first_kept, committed.end()}};
}

caf::expected<retention_report>
remove_old_databases(const std::vector<std::string>& kept,
                     retention_options opts) {
  if (kept.empty())
    return invalid("retention needs at least one epoch to keep");
  // The family: every kept path minus its ".<epoch>", which must agree.
  std::string family;
  int64_t oldest_kept = -1;
  for (auto& path : kept) {
    auto epoch = epoch_of(path);
    if (epoch < 0)
      return invalid("the database path " + path + " does not end in an epoch");
    auto this_family = path.substr(0, path.rfind('.'));
    if (family.empty())
      family = this_family;
    else if (family != this_family)
      return invalid("the databases " + kept.front() + " and " + path
                     + " are not of one node and directory");
    oldest_kept = oldest_kept < 0 ? epoch : std::min(oldest_kept, epoch);
  }
  // Every epoch whose data a kept checkpoint refers to.
  std::set<int64_t> referenced;
  for (auto& path : kept) {
    auto reader = checkpoint_reader::open(path);
    if (!reader && opts.kept_may_be_missing
        && is_error(reader.error(), persistence_errc::not_found))
      continue;
    if (!reader)
      return std::move(reader.error());
    for (auto& entry : (*reader)->get_manifest().blobs)
      if (entry.data_epoch != inline_payload)
        referenced.insert(entry.data_epoch);
  }
  if (opts.check_only)
    return retention_report{};
  // The node's databases older than every kept one, and leftovers of
  // removals a crash cut short.
  auto dir = detail::parent_dir(family);
  auto leaf = fs::path{family}.filename().string() + ".";
  std::map<int64_t, std::string> old_dbs;
  std::vector<std::string> leftovers;
  std::error_code ec;
  for (auto it = fs::directory_iterator{dir, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.compare(0, leaf.size(), leaf) != 0)
      continue;
    std::string_view rest{name};
    rest.remove_prefix(leaf.size());
    bool deleting = rest.size() > deleting_suffix.size()
      && rest.substr(rest.size() - deleting_suffix.size()) == deleting_suffix;
    if (deleting)
      rest.remove_suffix(deleting_suffix.size());
    // Digits only: node names may hold dots, and "<node>.1.5" is epoch 5 of
    // node "<node>.1", never anything of node "<node>".
    auto digits_only
      = !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
          return c >= '0' && c <= '9';
        });
    if (!digits_only)
      continue;
    auto epoch = epoch_of("." + std::string{rest});
    if (epoch < 0 || epoch >= oldest_kept)
      continue;
    if (deleting)
      leftovers.push_back(it->path().string());
    else
      old_dbs.emplace(epoch, it->path().string());
  }
  if (ec == std::errc::no_such_file_or_directory && opts.kept_may_be_missing)
    return retention_report{};
  if (ec)
    return make_error(persistence_errc::io_error,
                      "list " + dir + ": " + ec.message());
  retention_report report;
  for (auto& path : leftovers) {
    report.bytes += detail::tree_bytes(path);
    if (auto err = detail::remove_tree(path))
      return err;
  }
  for (auto& [epoch, path] : old_dbs) {
    if (referenced.count(epoch) > 0) {
      report.referenced.push_back(path);
      continue;
    }
    fault_site site{opts.node, epoch, path};
    fault_action action;
    if (auto err = strike_blocking(opts.faults, fault_point::gc_remove_before,
                                   site, action))
      return err;
    auto doomed = path + std::string{deleting_suffix};
    if (auto err = detail::rename_durably(path, doomed))
      return err;
    auto bytes = detail::tree_bytes(doomed);
    if (auto err = detail::remove_tree(doomed))
      return err;
    report.bytes += bytes;
    report.removed.push_back(path);
    if (auto err = strike_blocking(opts.faults, fault_point::gc_remove_after,
                                   site, action))
      return err;
  }
  return report;
}

} // namespace epochrt
