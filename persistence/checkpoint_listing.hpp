#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {

/// One checkpoint database found in a checkpoint directory.
struct db_listing {
  std::string node;
  int64_t epoch = 0;
  std::string path;
  bool complete = false; // has a manifest that decodes
  uint64_t bytes = 0;    // size of its files on disk
};

/// Every `<node>.<epoch>` database directly inside `dir`, sorted by node,
/// then epoch. Skips everything else: unfinished `.partial` and `.copying`
/// directories (checkpoint_writer, database_copy), the metadata file,
/// directories that are not LevelDB databases, names that are not a valid
/// node name followed by a non-negative epoch.
/// Errors: not_found (no such directory), io_error.
///
/// Opens each database (on a private view, see checkpoint_reader) to look
/// for its manifest, leaving the directory as it was. Blocks on I/O.
caf::expected<std::vector<db_listing>> list_checkpoints(const std::string& dir);

/// The nodes whose databases make up a committed epoch of a directory: those
/// its record `metadata` names, else every node with a database in
/// `listing`, each once, in the listing's order.
std::vector<std::string>
checkpointed_nodes(const checkpoint_metadata& metadata,
                   const std::vector<db_listing>& listing);

} // namespace epochrt
