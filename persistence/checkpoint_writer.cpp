#include "persistence/checkpoint_writer.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <unordered_set>

#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "messages/chunk_codec.hpp"
#include "messages/codec.hpp"
#include "messages/names.hpp"
#include "persistence/detail/fs_util.hpp"
#include "persistence/detail/leveldb_util.hpp"
#include "persistence/digest.hpp"
#include "persistence/persistence_errc.hpp"

namespace epochrt {

namespace {

// Keeps a chunk record well below Cap'n Proto's 512 MiB Data limit and
// LevelDB's appetite for memory per value.
constexpr size_t max_chunk_bytes = size_t{256} << 20;

int64_t unix_ms_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace

struct checkpoint_writer::impl {
  std::string path;
  std::string partial;
  writer_options opts;
  std::unique_ptr<leveldb::DB> db;
  leveldb::WriteBatch batch;
  size_t batch_bytes = 0;
  size_t bytes_written = 0; // through LevelDB, since the database was opened
  std::string record;       // reused for every chunk, see encode_blob_chunk
  manifest result;
  std::unordered_set<std::string> names;
  bool done = false; // finished, or failed: only destruction is left

  ~impl() {
    db.reset();
    // After a successful finish the partial directory is gone already; after
    // anything else it is removed, best effort: there is no one to tell.
    if (!partial.empty())
      detail::remove_tree(partial);
  }

  caf::error fail(caf::error err) {
    done = true;
    return err;
  }

  caf::error flush(bool sync) {
    if (batch_bytes == 0 && !sync)
      return {};
    leveldb::WriteOptions wopts;
    wopts.sync = sync;
    auto st = db->Write(wopts, &batch);
    batch.Clear();
    bytes_written += batch_bytes;
    batch_bytes = 0;
    if (!st.ok())
      return detail::from_status(st, "write to " + partial);
    return {};
  }

  // Adds one encoded chunk to the current batch; writes the batch when it
  // has grown to the configured size.
  caf::error add(std::string_view name, uint32_t index,
                 const std::string& encoded) {
    auto key = detail::chunk_key(name, index);
    batch.Put(key, leveldb::Slice{encoded.data(), encoded.size()});
    batch_bytes += key.size() + encoded.size();
    if (batch_bytes >= opts.batch_bytes)
      return flush(false);
    return {};
  }

  caf::error put_numeric(std::string_view name, const tensor& value,
                         blob_entry& entry) {
    auto total = value.data.size();
    auto chunk = opts.chunk_bytes;
    auto chunks = std::max<size_t>(1, (total + chunk - 1) / chunk);
    if (chunks > UINT32_MAX)
      return make_error(persistence_errc::invalid_argument,
                        "blob '" + std::string{name}
                          + "' needs too many chunks");
    payload_hasher whole; // fed chunk by chunk while the chunk is in cache
    for (size_t i = 0; i < chunks; ++i) {
      auto offset = i * chunk;
      auto size = std::min(chunk, total - std::min(total, offset));
      std::string_view bytes{value.data.data() + offset, size};
      whole.update(bytes.data(), size);
      encode_blob_chunk(record, name, static_cast<uint32_t>(i), bytes, nullptr,
                        0, digest_bytes(bytes.data(), size));
      if (auto err = add(name, static_cast<uint32_t>(i), record))
        return err;
    }
    entry.digest = whole.digest();
    entry.chunks = static_cast<uint32_t>(chunks);
    return {};
  }

  caf::error put_strings(std::string_view name, const tensor& value,
                         blob_entry& entry) {
    payload_hasher whole;
    uint32_t index = 0;
    auto& strings = value.strings;
    size_t first = 0;
    do {
      // Whole strings, at least one per chunk, about chunk_bytes in total.
      payload_hasher part;
      size_t last = first;
      size_t bytes = 0;
      while (last < strings.size()
             && (last == first
                 || bytes + strings[last].size() <= opts.chunk_bytes)) {
        part.update_string(strings[last]);
        whole.update_string(strings[last]);
        bytes += strings[last].size();
        ++last;
      }
      encode_blob_chunk(record, name, index, {}, strings.data() + first,
                        last - first, part.digest());
      if (auto err = add(name, index, record))
        return err;
      ++index;
      first = last;
    } while (first < strings.size());
    entry.digest = whole.digest();
    entry.chunks = index;
    return {};
  }
};

checkpoint_writer::checkpoint_writer(std::unique_ptr<impl> ptr)
  : impl_(std::move(ptr)) {
  // nop
}

checkpoint_writer::~checkpoint_writer() = default;

caf::expected<std::unique_ptr<checkpoint_writer>>
checkpoint_writer::create(std::string path, std::string node, int64_t epoch,
                          writer_options opts) {
  if (auto problem = node_name_problem(node); !problem.empty())
    return make_error(persistence_errc::invalid_name,
                      "node '" + node + "': " + problem);
  if (epoch < 0)
    return make_error(persistence_errc::invalid_name,
                      "negative epoch " + std::to_string(epoch));
  if (path.empty())
    return make_error(persistence_errc::invalid_name, "empty database path");
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  opts.chunk_bytes = std::clamp<size_t>(opts.chunk_bytes, 1, max_chunk_bytes);
  opts.batch_bytes = std::max<size_t>(opts.batch_bytes, 1);
  opts.write_buffer_bytes = std::max<size_t>(opts.write_buffer_bytes, 4 << 20);
  auto self = std::make_unique<impl>();
  self->path = path;
  self->opts = opts;
  self->result.node = std::move(node);
  self->result.epoch = epoch;
  auto partial = path + ".partial";
  if (auto err = detail::remove_tree(partial))
    return err;
  std::error_code ec;
  std::filesystem::create_directories(detail::parent_dir(path), ec);
  if (ec)
    return make_error(persistence_errc::io_error,
                      "create " + detail::parent_dir(path) + ": "
                        + ec.message());
  // From here on, the destructor of `self` removes the partial directory.
  self->partial = partial;
  leveldb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.paranoid_checks = true;
  options.info_log = detail::silent_info_log();
  options.compression = leveldb::kNoCompression;
  options.write_buffer_size = opts.write_buffer_bytes;
  options.max_file_size = std::max<size_t>(opts.max_file_bytes, 2 << 20);
  leveldb::DB* db = nullptr;
  auto st = leveldb::DB::Open(options, partial, &db);
  if (!st.ok())
    return make_error(persistence_errc::io_error,
                      "create database " + partial + ": " + st.ToString());
  self->db.reset(db);
  return std::unique_ptr<checkpoint_writer>{
    new checkpoint_writer(std::move(self))};
}

caf::error checkpoint_writer::put(std::string_view blob_name,
                                  const tensor& value) {
  auto& self = *impl_;
  if (self.done)
    return make_error(persistence_errc::invalid_argument,
                      "put after the writer of " + self.path
                        + " finished or failed");
  if (!valid_blob_name(blob_name))
    return self.fail(
      make_error(persistence_errc::invalid_name,
                 "invalid blob name '" + std::string{blob_name} + "'"));
  if (!value.consistent())
    return self.fail(make_error(persistence_errc::invalid_argument,
                                "blob '" + std::string{blob_name}
                                  + "' has a payload that does not match its "
                                    "type and shape"));
  if (!self.names.emplace(blob_name).second)
    return self.fail(
      make_error(persistence_errc::invalid_argument,
                 "blob '" + std::string{blob_name} + "' put twice"));
  blob_entry entry;
  entry.name = std::string{blob_name};
  entry.type = value.type;
  entry.shape = value.shape;
  entry.bytes = value.byte_size();
  auto err = value.type == dtype::string
    ? self.put_strings(blob_name, value, entry)
    : self.put_numeric(blob_name, value, entry);
  if (err)
    return self.fail(std::move(err));
  self.result.total_bytes += entry.bytes;
  self.result.blobs.push_back(std::move(entry));
  return {};
}

caf::expected<manifest> checkpoint_writer::finish() {
  auto& self = *impl_;
  if (self.done)
    return make_error(persistence_errc::invalid_argument,
                      "finish after the writer of " + self.path
                        + " finished or failed");
  self.done = true; // whatever happens next, the writer is used up
  if (auto err = self.flush(false))
    return err;
  self.result.created_unix_ms = unix_ms_now();
  auto record = encode(self.result);
  self.batch.Put(
    leveldb::Slice{detail::manifest_key.data(), detail::manifest_key.size()},
    leveldb::Slice{record.data(), record.size()});
  self.batch_bytes += record.size();
  if (auto err = self.flush(true))
    return err;
  if (self.bytes_written >= self.opts.write_buffer_bytes / 10 * 9) {
    // The memtable has filled up at least once, so a flush of it into a
    // table may be under way. Closing now would make LevelDB drop that
    // table half done, and every open would replay the whole log and write
    // it again. Compacting an empty key range past every key flushes the
    // memtable and waits, without touching the tables written so far.
    std::string past_end(4, '\xff');
    leveldb::Slice key{past_end};
    self.db->CompactRange(&key, &key);
  }
  self.db.reset(); // closes the database and releases its LOCK
  if (auto err = detail::fsync_dir_files(self.partial))
    return err;
  if (auto err = detail::replace_path(self.partial, self.path))
    return err;
  return std::move(self.result);
}

const std::string& checkpoint_writer::path() const noexcept {
  return impl_->path;
}

} // namespace epochrt
