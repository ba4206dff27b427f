#include "tools/ckpt_commands.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "tools/cli_output.hpp"
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_listing.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>

namespace epochrt::cli {

namespace {

/// DIR must be an existing directory: a typo must not read as "empty".
bool check_directory(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec))
    return true;
  print_error(dir + ": not a directory");
  return false;
}

/// The nodes whose databases make up a committed epoch: those recorded in
/// the metadata, else every node that has any database in the directory.
std::vector<std::string> nodes_of(const checkpoint_metadata& metadata,
                                  const std::vector<db_listing>& listing) {
  if (!metadata.node_names.empty())
    return metadata.node_names;
  std::vector<std::string> result;
  for (auto& db : listing)
    if (std::find(result.begin(), result.end(), db.node) == result.end())
      result.push_back(db.node);
  return result;
}

/// Checks one node's database of one epoch: it exists, is complete, and
/// every digest in it checks out. The problem, or an empty string.
std::string check_database(const std::string& dir, const std::string& node,
                           int64_t epoch) {
  auto path = checked_db_name(epoch, node, dir);
  if (!path)
    return describe(path.error());
  auto reader = checkpoint_reader::open(*path);
  if (!reader)
    return describe(reader.error());
  if (auto err = (*reader)->verify())
    return describe(err);
  return {};
}

} // namespace

int ckpt_ls(const std::string& dir) {
  if (!check_directory(dir))
    return exit_bad_input;
  auto listing = list_checkpoints(dir);
  if (!listing) {
    print_error(dir + ": " + describe(listing.error()));
    return exit_failure;
  }
  for (auto& db : *listing)
    std::cout << db.node << ' ' << db.epoch << ' '
              << (db.complete ? "complete" : "incomplete") << ' ' << db.bytes
              << '\n';
  file_metadata_handler handler{dir};
  auto metadata = handler.load();
  if (!metadata) {
    print_error(handler.file_path() + ": " + describe(metadata.error()));
    return exit_failure;
  }
  auto& committed = metadata->committed_epochs;
  std::cout << "last_committed="
            << (committed.empty() ? std::string{"none"}
                                  : std::to_string(committed.back()))
            << std::endl;
  return exit_ok;
}

int ckpt_show(const ckpt_show_options& opts) {
  if (!check_directory(opts.dir))
    return exit_bad_input;
  auto path = checked_db_name(opts.epoch, opts.node, opts.dir);
  if (!path) {
    print_error(describe(path.error()));
    return exit_bad_input;
  }
  auto reader = checkpoint_reader::open(*path);
  if (!reader) {
    print_error(describe(reader.error()));
    return exit_failure;
  }
  auto names = opts.blobs;
  if (names.empty())
    for (auto& entry : (*reader)->get_manifest().blobs)
      names.push_back(entry.name);
  for (auto& name : names) {
    auto value = (*reader)->read(name);
    if (!value) {
      print_error(*path + ": blob '" + name + "': " + describe(value.error()));
      return exit_failure;
    }
    std::cout << name << '=' << format_values(*value) << '\n';
  }
  std::cout.flush();
  return exit_ok;
}

int ckpt_verify(const std::string& dir) {
  if (!check_directory(dir))
    return exit_bad_input;
  file_metadata_handler handler{dir};
  auto metadata = handler.load();
  if (!metadata) {
    print_error(handler.file_path() + ": " + describe(metadata.error()));
    return exit_failure;
  }
  if (metadata->committed_epochs.empty()) {
    std::cout << "no committed epochs" << std::endl;
    return exit_ok;
  }
  auto listing = list_checkpoints(dir);
  if (!listing) {
    print_error(dir + ": " + describe(listing.error()));
    return exit_failure;
  }
  auto nodes = nodes_of(*metadata, *listing);
  auto result = exit_ok;
  for (auto epoch : metadata->committed_epochs) {
    auto prefix = "epoch " + std::to_string(epoch);
    if (nodes.empty()) {
      print_error(prefix + ": no node has a database");
      result = exit_failure;
      continue;
    }
    auto intact = true;
    for (auto& node : nodes) {
      auto problem = check_database(dir, node, epoch);
      if (!problem.empty()) {
        print_error(prefix + ": " + node + ": " + problem);
        intact = false;
      }
    }
    if (intact)
      std::cout << prefix << " ok\n";
    else
      result = exit_failure;
  }
  std::cout.flush();
  return result;
}

int ckpt_gc(const std::string& dir, size_t keep_last) {
  if (!check_directory(dir))
    return exit_bad_input;
  if (keep_last == 0) {
    print_error("--keep-last must be at least 1");
    return exit_bad_input;
  }
  file_metadata_handler handler{dir};
  auto metadata = handler.load();
  if (!metadata) {
    print_error(handler.file_path() + ": " + describe(metadata.error()));
    return exit_failure;
  }
  auto [dropped, kept] = plan_retention(metadata->committed_epochs, keep_last);
  if (kept.empty()) {
    std::cout << "gc: no committed epochs" << std::endl;
    return exit_ok;
  }
  auto listing = list_checkpoints(dir);
  if (!listing) {
    print_error(dir + ": " + describe(listing.error()));
    return exit_failure;
  }
  auto nodes = nodes_of(*metadata, *listing);
  // Every kept database must be readable before anything is dropped: its
  // references decide what may go.
  std::vector<std::vector<std::string>> kept_dbs;
  for (auto& node : nodes) {
    std::vector<std::string> dbs;
    for (auto epoch : kept) {
      auto path = checked_db_name(epoch, node, dir);
      if (!path) {
        print_error(describe(path.error()));
        return exit_failure;
      }
      auto reader = checkpoint_reader::open(*path);
      if (!reader) {
        print_error("epoch " + std::to_string(epoch) + ": " + node + ": "
                    + describe(reader.error()) + "; nothing was removed");
        return exit_failure;
      }
      dbs.push_back(std::move(*path));
    }
    kept_dbs.push_back(std::move(dbs));
  }
  // Uncommit first: a crash after this leaves old databases of uncommitted
  // epochs, which the next gc removes, never a committed epoch without them.
  for (auto epoch : dropped)
    if (auto err = handler.uncommit(epoch)) {
      print_error(handler.file_path() + ": " + describe(err));
      return exit_failure;
    }
  size_t removed = 0;
  uint64_t bytes = 0;
  for (auto& dbs : kept_dbs) {
    auto report = remove_old_databases(dbs);
    if (!report) {
      print_error(describe(report.error()));
      return exit_failure;
    }
    for (auto& path : report->removed)
      std::cout << "removed " << path << "\n";
    for (auto& path : report->referenced)
      std::cout << "referenced " << path << "\n";
    removed += report->removed.size();
    bytes += report->bytes;
  }
  std::cout << "gc: kept epochs " << kept.front() << ".." << kept.back()
            << ", removed " << removed << " databases, freed " << bytes
            << " bytes" << std::endl;
  return exit_ok;
}

} // namespace epochrt::cli
