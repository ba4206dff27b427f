#pragma once

// The baseline: the same bytes written to and read from a plain LevelDB
// database the way a careful user would, with no epochrt in between.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"

namespace epochrt::bench {

struct leveldb_write_result {
  timing time;        // open (create) + every batch written and synced + close
  uint64_t bytes = 0; // value bytes written
  size_t batches = 0;
};

/// Creates the database `path` (which must not exist) and writes every blob
/// as one value under its name — or, when `chunk_bytes` is not 0, as values
/// of at most `chunk_bytes` under "<name>#<index>" — in WriteBatches of at
/// most `batch_bytes` (a larger value gets a batch of its own), each written
/// with sync=true. Throws std::runtime_error on any LevelDB error.
leveldb_write_result leveldb_write(const std::string& path,
                                   const std::vector<blob_bytes>& blobs,
                                   size_t batch_bytes, size_t chunk_bytes = 0);

struct leveldb_read_result {
  timing time;                   // open + a Get of every blob + close
  double first_open_seconds = 0; // the untimed open before (log recovery)
  uint64_t bytes = 0;            // value bytes read
};

/// Reads back what `leveldb_write` wrote: opens and closes the database once
/// untimed (as the checkpoint manager's init opens the checkpoint before a
/// load: the first open replays the log), then times a fresh open and a
/// Get of every blob (every chunk, with the `chunk_bytes` given to
/// `leveldb_write`) into one reused buffer. Throws std::runtime_error on
/// any error or when a value's size or edges differ from `blobs`.
leveldb_read_result leveldb_read(const std::string& path,
                                 const std::vector<blob_bytes>& blobs,
                                 size_t chunk_bytes = 0);

} // namespace epochrt::bench
