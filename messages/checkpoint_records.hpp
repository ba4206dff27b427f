#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <epochrt/messages/message_fields.hpp>
#include <epochrt/messages/tensor.hpp>

// Records that describe checkpoints: what a node's database holds, what a
// save or load cost, and which epochs are committed.

namespace epochrt {

/// Where a blob entry's payload lives when it is not inline: `data_epoch`
/// of an entry that is.
constexpr int64_t inline_payload = -1;

/// One blob of a node's checkpoint, as listed in its manifest: what it is,
/// and where its payload lives.
///
/// Inline (`data_epoch == inline_payload`): in the database itself, as
/// `chunks` BlobChunk records. Otherwise: `bytes` bytes at `offset` in the
/// data file of the same node's database of epoch `data_epoch` (this
/// checkpoint's own epoch, or an earlier one whose payload this checkpoint
/// reuses because the blob had not changed), whose header carries
/// `data_id`.
struct blob_entry {
  std::string name;
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  uint64_t digest = 0; // XXH3-64 of the blob's payload
  uint32_t chunks = 0;
  int64_t data_epoch = inline_payload;
  uint64_t data_id = 0;
  uint64_t offset = 0;
};

/// The last record written to a node's database; its presence is what makes
/// the database complete.
struct manifest {
  std::string node;
  int64_t epoch = 0;
  std::vector<blob_entry> blobs;
  uint64_t total_bytes = 0;
  int64_t created_unix_ms = 0;
};

/// One stored piece of a blob's payload (the BlobChunk record). A blob of n
/// chunks is stored as chunks 0..n-1; numeric payloads are split into
/// `data` ranges, a string tensor keeps its elements in `strings`. `digest`
/// is the XXH3-64 of this chunk's own bytes, so that a flipped byte is found
/// at the chunk that holds it.
struct blob_chunk {
  std::string name;
  uint32_t index = 0;
  std::vector<char> data;
  std::vector<std::string> strings;
  uint64_t digest = 0;
};

/// What one node's save or load of one checkpoint cost.
struct checkpoint_stats {
  std::string node;
  std::string db;
  int64_t duration_us = 0;
  uint64_t bytes = 0; // payload of every blob saved or loaded
  uint64_t blobs = 0;
  /// Of a save: the payload bytes written by it, and the blobs whose
  /// payload it reused from an earlier epoch instead (unchanged since).
  uint64_t written_bytes = 0;
  uint64_t reused_blobs = 0;
  /// Of a save, parts of `duration_us`: taking the copy-on-write snapshot
  /// of the workspace, and making the checkpoint durable (the fsyncs). The
  /// rest is writing, and the push to other daemons, which overlaps the
  /// fsyncs.
  int64_t snapshot_us = 0;
  int64_t sync_us = 0;
};

/// The durable state kept by the default metadata handler.
struct checkpoint_metadata {
  std::string db_prefix;
  std::vector<std::string> node_names;
  std::vector<int64_t> committed_epochs; // ascending
  std::vector<checkpoint_stats> last_stats;
  std::string last_action;
  /// The epoch after which a stop condition held, or -1. A job resumed from
  /// it has nothing left of its epoch loop.
  int64_t final_epoch = -1;
  /// The definition of the job whose epochs these are
  /// (runtime/job_definition.hpp); empty when it was never recorded.
  std::string job_definition;
};

bool operator==(const blob_entry& x, const blob_entry& y) noexcept;
bool operator==(const manifest& x, const manifest& y) noexcept;
bool operator==(const blob_chunk& x, const blob_chunk& y) noexcept;
bool operator==(const checkpoint_stats& x, const checkpoint_stats& y) noexcept;
bool operator==(const checkpoint_metadata& x,
                const checkpoint_metadata& y) noexcept;

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_CHECKPOINT_RECORD_MESSAGES(X)                                  \
  X(blob_entry, name, type, shape, bytes, digest, chunks, data_epoch, data_id, \
    offset)                                                                    \
  X(manifest, node, epoch, blobs, total_bytes, created_unix_ms)                \
  X(blob_chunk, name, index, data, strings, digest)                            \
  X(checkpoint_stats, node, db, duration_us, bytes, blobs, written_bytes,      \
    reused_blobs, snapshot_us, sync_us)                                        \
  X(checkpoint_metadata, db_prefix, node_names, committed_epochs, last_stats,  \
    last_action, final_epoch, job_definition)

EPOCHRT_CHECKPOINT_RECORD_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

} // namespace epochrt
