#pragma once

#include <cstddef>

namespace epochrt {

class fault_injector;

/// Tuning of a checkpoint_writer. The defaults suit checkpoints from a few
/// bytes to several GiB; tests shrink `chunk_bytes` and `inline_bytes` to
/// exercise chunking and the data file.
struct writer_options {
  /// Numeric blobs of at least this many payload bytes go to the database's
  /// data file (key/value separation); smaller ones, and every string
  /// tensor, are stored inline as LevelDB records. Inline records cost a
  /// copy into LevelDB's log, which large payloads cannot afford and small
  /// ones barely notice; the data file costs an entry's offset, which small
  /// payloads would not gain from. 0: every numeric blob goes to the file.
  size_t inline_bytes = size_t{64} << 10;
  /// Payloads are written to the data file, and hashed, in pieces of this
  /// size, so that each piece is still in the cache when hashed.
  size_t data_piece_bytes = size_t{1} << 20;
  /// Largest payload of one chunk record. Clamped to [1, 256 MiB]: Cap'n
  /// Proto Data ends below 512 MiB, and LevelDB holds a value several times
  /// in memory while writing it. Measured on 512 MiB of f32 (2 cores): with
  /// 1-4 MiB chunks a save ran at the speed of raw LevelDB writing 1 MiB
  /// values, with 64 MiB chunks (and raw LevelDB with 64 MiB values) about
  /// 2.5 times slower: LevelDB copies and checksums large values in
  /// cache-cold passes.
  size_t chunk_bytes = size_t{1} << 20;
  /// Chunks are gathered into unsynced LevelDB write batches of about this
  /// many bytes.
  size_t batch_bytes = size_t{64} << 20;
  /// LevelDB's memtable size. Data beyond it is flushed into table files in
  /// the background, which writes it a second time; a large buffer keeps
  /// most checkpoints in the log alone.
  size_t write_buffer_bytes = size_t{128} << 20;
  /// LevelDB's target table file size.
  size_t max_file_bytes = size_t{64} << 20;
  /// The fault plan consulted at the save.* points (faults/fault_point.hpp),
  /// with the writer's node and epoch as the site. Borrowed: it must outlive
  /// the writer. Null: no faults, and each point costs a null test.
  fault_injector* faults = nullptr;
};

} // namespace epochrt
