#include "tools/ckpt_commands.hpp"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "tools/cli_output.hpp"
#include "tools/daemon_checkpoints.hpp"
#include <epochrt/actors/api/checkpoint_contents.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_listing.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/dir_lock.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/persistence/record_keeper.hpp>

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

std::string hex_digest(uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, digest);
  return text;
}

template <class Float>
nlohmann::json json_float(Float x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "Infinity" : "-Infinity";
  // The shortest text that reads back to the same float, as a double: JSON
  // holds 0.1f as 0.1, not 0.10000000149011612, and a reader that narrows
  // it to float again gets the very value saved.
  char text[64];
  auto end = std::to_chars(text, text + sizeof(text), x).ptr;
  *end = '\0';
  return std::strtod(text, nullptr);
}

nlohmann::json json_values(const tensor& x) {
  auto values = nlohmann::json::array();
  auto n = x.type == dtype::string ? x.strings.size() : x.element_count();
  for (size_t i = 0; i < n; ++i) {
    switch (x.type) {
      case dtype::f32:
        values.push_back(json_float(x.values<float>()[i]));
        break;
      case dtype::f64:
        values.push_back(json_float(x.values<double>()[i]));
        break;
      case dtype::i32:
        values.push_back(x.values<int32_t>()[i]);
        break;
      case dtype::i64:
        values.push_back(x.values<int64_t>()[i]);
        break;
      case dtype::u8:
        values.push_back(static_cast<unsigned>(x.values<uint8_t>()[i]));
        break;
      case dtype::boolean:
        values.push_back(x.data[i] != 0);
        break;
      case dtype::string:
        values.push_back(x.strings[i]);
        break;
    }
  }
  return values;
}

/// One line. Dumps with invalid UTF-8 in strings replaced, never thrown: blob
/// and string values come from files nobody here wrote.
void print_json(const nlohmann::json& doc) {
  std::cout << doc.dump(-1, ' ', false,
                        nlohmann::json::error_handler_t::replace)
            << std::endl;
}

/// Opens NODE's checkpoint of `epoch` in `dir`; exit code and message on
/// failure, as ckpt show and ckpt diff report them.
struct opened_reader {
  std::unique_ptr<checkpoint_reader> reader;
  std::string path;
  int exit_code = exit_ok;
};

opened_reader open_checkpoint(const std::string& dir, const std::string& node,
                              int64_t epoch) {
  opened_reader result;
  auto path = checked_db_name(epoch, node, dir);
  if (!path) {
    print_error(describe(path.error()));
    result.exit_code = exit_bad_input;
    return result;
  }
  auto reader = checkpoint_reader::open(*path);
  if (!reader) {
    print_error(describe(reader.error()));
    result.exit_code = exit_failure;
    return result;
  }
  result.reader = std::move(*reader);
  result.path = std::move(*path);
  return result;
}

// The metadata of `dir`; none, with the error printed, when it cannot be
// trusted. When its latest generation is damaged and the previous one is
// read instead, says so and sets `*fell_back`.
std::optional<checkpoint_metadata> read_metadata(const std::string& dir,
                                                 bool* fell_back = nullptr) {
  file_metadata_handler handler{dir};
  std::string damage;
  auto metadata = handler.load(&damage);
  if (!metadata) {
    print_error(handler.file_path() + ": " + describe(metadata.error()));
    return std::nullopt;
  }
  if (!damage.empty()) {
    print_warning(damage + "; reading the previous generation ("
                  + file_metadata_handler::previous_file_name
                  + "), which lacks the last change");
    if (fell_back != nullptr)
      *fell_back = true;
  }
  return std::move(*metadata);
}

} // namespace

int ckpt_ls(const std::string& dir, bool json) {
  if (!check_directory(dir))
    return exit_bad_input;
  auto listing = list_checkpoints(dir);
  if (!listing) {
    print_error(dir + ": " + describe(listing.error()));
    return exit_failure;
  }
  auto metadata = read_metadata(dir);
  if (!metadata)
    return exit_failure;
  auto& committed = metadata->committed_epochs;
  if (json) {
    auto databases = nlohmann::json::array();
    for (auto& db : *listing)
      databases.push_back({{"node", db.node},
                           {"epoch", db.epoch},
                           {"complete", db.complete},
                           {"bytes", db.bytes}});
    nlohmann::json doc;
    doc["databases"] = std::move(databases);
    doc["committed_epochs"] = committed;
    doc["last_committed"] = committed.empty()
      ? nlohmann::json(nullptr)
      : nlohmann::json(committed.back());
    print_json(doc);
    return exit_ok;
  }
  for (auto& db : *listing)
    std::cout << db.node << ' ' << db.epoch << ' '
              << (db.complete ? "complete" : "incomplete") << ' ' << db.bytes
              << '\n';
  std::cout << "last_committed="
            << (committed.empty() ? std::string{"none"}
                                  : std::to_string(committed.back()))
            << std::endl;
  return exit_ok;
}

int ckpt_show(const ckpt_show_options& opts) {
  if (!check_directory(opts.dir))
    return exit_bad_input;
  auto opened = open_checkpoint(opts.dir, opts.node, opts.epoch);
  if (!opened.reader)
    return opened.exit_code;
  auto& manifest = opened.reader->get_manifest();
  auto names = opts.blobs;
  if (names.empty())
    for (auto& entry : manifest.blobs)
      names.push_back(entry.name);
  auto blobs = nlohmann::json::array();
  for (auto& name : names) {
    auto value = opened.reader->read(name);
    if (!value) {
      print_error(opened.path + ": blob '" + name
                  + "': " + describe(value.error()));
      return exit_failure;
    }
    if (!opts.json) {
      std::cout << name << '=' << format_values(*value) << '\n';
      continue;
    }
    auto entry = std::find_if(manifest.blobs.begin(), manifest.blobs.end(),
                              [&](auto& e) {
                                return e.name == name;
                              });
    blobs.push_back({{"name", name},
                     {"type", to_string(value->type)},
                     {"shape", value->shape},
                     {"digest",
                      entry != manifest.blobs.end() ? hex_digest(entry->digest)
                                                    : std::string{}},
                     {"values", json_values(*value)}});
  }
  if (opts.json)
    print_json({{"node", opts.node},
                {"epoch", opts.epoch},
                {"blobs", std::move(blobs)}});
  std::cout.flush();
  return exit_ok;
}

int ckpt_diff(const ckpt_diff_options& opts) {
  if (!check_directory(opts.dir))
    return exit_bad_input;
  auto from = open_checkpoint(opts.dir, opts.node, opts.from_epoch);
  if (!from.reader)
    return from.exit_code;
  auto to = open_checkpoint(opts.dir, opts.node, opts.to_epoch);
  if (!to.reader)
    return to.exit_code;
  std::map<std::string, const blob_entry*> before;
  for (auto& entry : from.reader->get_manifest().blobs)
    before.emplace(entry.name, &entry);
  std::vector<std::string> added, removed, changed, unchanged;
  // The text lines, in E2's manifest order, then E1's for removed blobs.
  std::vector<std::pair<const char*, const std::string*>> lines;
  for (auto& entry : to.reader->get_manifest().blobs) {
    auto i = before.find(entry.name);
    if (i == before.end()) {
      added.push_back(entry.name);
      lines.emplace_back("added", &entry.name);
      continue;
    }
    auto& old = *i->second;
    if (old.digest != entry.digest || old.type != entry.type
        || old.shape != entry.shape || old.bytes != entry.bytes) {
      changed.push_back(entry.name);
      lines.emplace_back("changed", &entry.name);
    } else {
      unchanged.push_back(entry.name);
    }
    before.erase(i);
  }
  for (auto& entry : from.reader->get_manifest().blobs)
    if (before.count(entry.name) > 0) {
      removed.push_back(entry.name);
      lines.emplace_back("removed", &entry.name);
    }
  if (opts.json) {
    print_json({{"node", opts.node},
                {"from", opts.from_epoch},
                {"to", opts.to_epoch},
                {"added", added},
                {"removed", removed},
                {"changed", changed},
                {"unchanged", unchanged}});
    return exit_ok;
  }
  for (auto& [what, name] : lines)
    std::cout << what << ' ' << *name << '\n';
  std::cout << "diff: " << added.size() << " added, " << removed.size()
            << " removed, " << changed.size() << " changed, "
            << unchanged.size() << " unchanged" << std::endl;
  return exit_ok;
}

int ckpt_verify(const ckpt_verify_options& opts) {
  auto& dir = opts.dir;
  if (!check_directory(dir))
    return exit_bad_input;
  if (opts.daemons.replicas > 0 && opts.daemons.remote_nodes.empty()) {
    print_error("--replicas needs --node: copies lie on the daemons");
    return exit_bad_input;
  }
  // A damaged latest generation is damage, even though runs resume from
  // the previous one.
  auto fell_back = false;
  auto metadata = read_metadata(dir, &fell_back);
  if (!metadata)
    return exit_failure;
  if (!opts.daemons.remote_nodes.empty())
    return verify_on_daemons(opts, *metadata, fell_back);
  if (metadata->committed_epochs.empty()) {
    std::cout << "no committed epochs" << std::endl;
    return fell_back ? exit_failure : exit_ok;
  }
  auto epochs = verify_committed(dir, *metadata);
  if (!epochs) {
    print_error(dir + ": " + describe(epochs.error()));
    return exit_failure;
  }
  auto result = fell_back ? exit_failure : exit_ok;
  for (auto& found : *epochs) {
    auto prefix = "epoch " + std::to_string(found.epoch);
    if (found.nodes.empty()) {
      print_error(prefix + ": no node has a database");
      result = exit_failure;
      continue;
    }
    auto intact = true;
    for (auto& [node, problem] : found.nodes)
      if (problem) {
        print_error(prefix + ": " + node + ": " + describe(problem));
        intact = false;
      }
    if (intact)
      std::cout << prefix << " ok\n";
    else
      result = exit_failure;
  }
  std::cout.flush();
  return result;
}

int ckpt_gc(const ckpt_gc_options& opts) {
  auto& dir = opts.dir;
  auto keep_last = opts.keep_last;
  if (!check_directory(dir))
    return exit_bad_input;
  if (keep_last == 0) {
    print_error("--keep-last must be at least 1");
    return exit_bad_input;
  }
  if (opts.daemons.replicas > 0 && opts.daemons.remote_nodes.empty()) {
    print_error("--replicas needs --node: copies lie on the daemons");
    return exit_bad_input;
  }
  // gc rewrites the metadata and removes databases: never beside a job.
  auto lock = dir_lock::acquire(dir);
  if (!lock) {
    print_error("gc: " + describe(lock.error()));
    return is_error(lock.error(), persistence_errc::locked) ? exit_bad_input
                                                            : exit_failure;
  }
  auto metadata = read_metadata(dir);
  if (!metadata)
    return exit_failure;
  auto [dropped, kept] = plan_retention(metadata->committed_epochs, keep_last);
  if (kept.empty()) {
    std::cout << "gc: no committed epochs" << std::endl;
    return exit_ok;
  }
  if (!opts.daemons.remote_nodes.empty())
    return gc_on_daemons(opts, *metadata,
                         std::make_shared<dir_lock>(std::move(*lock)));
  auto listing = list_checkpoints(dir);
  if (!listing) {
    print_error(dir + ": " + describe(listing.error()));
    return exit_failure;
  }
  auto nodes = checkpointed_nodes(*metadata, *listing);
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
  auto handler = std::make_shared<file_metadata_handler>(dir);
  record_keeper keeper{handler};
  for (auto epoch : dropped)
    if (auto err = keeper.uncommit(epoch)) {
      print_error(handler->file_path() + ": " + describe(err));
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
