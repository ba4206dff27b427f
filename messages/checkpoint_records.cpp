#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt {

bool operator==(const blob_entry& x, const blob_entry& y) noexcept {
  return x.name == y.name && x.type == y.type && x.shape == y.shape
    && x.bytes == y.bytes && x.digest == y.digest && x.chunks == y.chunks
    && x.data_epoch == y.data_epoch && x.data_id == y.data_id
    && x.offset == y.offset;
}

bool operator==(const manifest& x, const manifest& y) noexcept {
  return x.node == y.node && x.epoch == y.epoch && x.blobs == y.blobs
    && x.total_bytes == y.total_bytes && x.created_unix_ms == y.created_unix_ms;
}

bool operator==(const blob_chunk& x, const blob_chunk& y) noexcept {
  return x.name == y.name && x.index == y.index && x.data == y.data
    && x.strings == y.strings && x.digest == y.digest;
}

bool operator==(const checkpoint_stats& x, const checkpoint_stats& y) noexcept {
  return x.node == y.node && x.db == y.db && x.duration_us == y.duration_us
    && x.bytes == y.bytes && x.blobs == y.blobs
    && x.written_bytes == y.written_bytes && x.reused_blobs == y.reused_blobs
    && x.snapshot_us == y.snapshot_us && x.sync_us == y.sync_us;
}

bool operator==(const checkpoint_metadata& x,
                const checkpoint_metadata& y) noexcept {
  return x.db_prefix == y.db_prefix && x.node_names == y.node_names
    && x.committed_epochs == y.committed_epochs && x.last_stats == y.last_stats
    && x.last_action == y.last_action && x.final_epoch == y.final_epoch
    && x.job_definition == y.job_definition;
}

} // namespace epochrt
