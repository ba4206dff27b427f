#include <epochrt/persistence/checkpoint_writer.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <epochrt/messages/chunk_codec.hpp>
#include <epochrt/messages/codec.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/detail/data_file.hpp>
#include <epochrt/persistence/detail/disk_damage.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/detail/leveldb_util.hpp>
#include <epochrt/persistence/digest.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

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
  // What is left to do. Any failure, and finish, make it `done`: only
  // destruction is left then.
  enum class stage { writing, sealed, durable, done };
  stage at_stage = stage::writing;
  int data_fd = -1; // the data file, once a payload goes there
  uint64_t data_id = 0;
  uint64_t data_end = 0; // where the next payload goes
  uint64_t unsent = 0;   // of the data file: from here on not sent to disk yet
  // Data files of earlier epochs that `reuse` opened.
  struct earlier_file {
    std::string path;
    uint64_t id = 0;
    uint64_t size = 0;
  };
  std::unordered_map<int64_t, earlier_file> earlier_files; // by epoch
  int64_t sync_us = 0; // see checkpoint_writer::sync_micros

  // Runs `f`, adding the time it takes to `sync_us`.
  template <class F>
  auto synced(F f) -> decltype(f()) {
    auto start = std::chrono::steady_clock::now();
    auto result = f();
    sync_us += std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::steady_clock::now() - start)
                 .count();
    return result;
  }

  // The disk as the fault plan has it, with the writer's node and epoch as
  // the site of its save.* points; null without a plan, and then each point
  // is this null test.
  std::unique_ptr<detail::disk_damage> disk;

  // A save.* point where the step writes nothing: a delay sleeps here, an
  // io_error is the step's error.
  caf::error at(fault_point point) {
    return disk ? disk->at(point) : caf::error{};
  }

  ~impl() {
    if (data_fd >= 0)
      ::close(data_fd);
    db.reset();
    // After a successful finish the partial directory is gone already; after
    // anything else it is removed, best effort: there is no one to tell.
    if (!partial.empty())
      detail::remove_tree(partial);
  }

  caf::error fail(caf::error err) {
    at_stage = stage::done;
    return err;
  }

  // Writes the current batch: chunks, or (`manifest`) the manifest. Nothing
  // is synced here: `sync` makes every file durable before the database is
  // swapped into place, and a crash before that leaves only the partial
  // directory, which the next writer removes.
  caf::error flush(bool manifest) {
    if (batch_bytes == 0 && !manifest)
      return {};
    if (disk)
      if (auto err
          = disk->before_batch(manifest ? fault_point::save_manifest_before
                                        : fault_point::save_batch_before,
                               batch))
        return err;
    auto st = db->Write(leveldb::WriteOptions{}, &batch);
    batch.Clear();
    bytes_written += batch_bytes;
    batch_bytes = 0;
    if (!st.ok())
      return detail::from_status(st, "write to " + partial);
    return at(manifest ? fault_point::save_manifest_after
                       : fault_point::save_batch_after);
  }

  caf::error seal();
  caf::error sync();
  caf::error publish();

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

  std::string data_path() const {
    return detail::data_file_path(partial);
  }

  caf::error open_data_file() {
    auto file = data_path();
    data_fd
      = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (data_fd < 0)
      return detail::io_error("create " + file, errno);
    data_id = detail::new_data_id();
    auto header = detail::data_header(data_id);
    data_end = header.size();
    return detail::pwrite_all(data_fd, header.data(), header.size(), 0, file);
  }

  // The payload of a numeric blob into the data file: hashed and written
  // piece by piece, straight from the tensor's buffer. The save.batch.*
  // points strike once per payload, as once per batch of chunks.
  caf::error put_data(const tensor& value, blob_entry& entry) {
    if (data_fd < 0)
      if (auto err = open_data_file())
        return err;
    if (disk)
      if (auto err = disk->before_payload(fault_point::save_batch_before))
        return err;
    auto file = data_path();
    auto total = value.data.size();
    auto piece = opts.data_piece_bytes;
    payload_hasher whole;
    for (size_t done_bytes = 0; done_bytes < total; done_bytes += piece) {
      auto size = std::min(piece, total - done_bytes);
      auto* bytes = value.data.data() + done_bytes;
      whole.update(bytes, size);
      if (auto err = detail::pwrite_all(data_fd, bytes, size,
                                        data_end + done_bytes, file))
        return err;
      // The disk writes while the rest comes: sync waits for the tail only.
      detail::start_writeback(data_fd, unsent, data_end + done_bytes + size);
    }
    if (disk)
      if (auto err = disk->payload_written(data_fd, data_end, total, file))
        return err;
    entry.digest = whole.digest();
    entry.chunks = 0;
    entry.data_epoch = result.epoch;
    entry.data_id = data_id;
    entry.offset = data_end;
    data_end += total;
    return at(fault_point::save_batch_after);
  }

  // Whether the data file of `entry.data_epoch` beside this database is the
  // one with `entry.data_id` and holds its range, and (with `digest`) whether
  // the range still has the entry's digest: not_found when not.
  caf::error check_earlier_data(const blob_entry& entry, bool digest) {
    auto gone = [&](const std::string& why) {
      return make_error(persistence_errc::not_found,
                        "the payload of blob '" + entry.name + "' in epoch "
                          + std::to_string(entry.data_epoch) + " " + why);
    };
    auto known = earlier_files.find(entry.data_epoch);
    if (known == earlier_files.end()) {
      auto db = db_path_of_epoch(path, result.epoch, entry.data_epoch);
      if (!db)
        return gone("cannot be located from " + path);
      auto file = detail::data_file_path(*db);
      int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
          return gone("is gone (" + file + ")");
        return detail::io_error("open " + file, errno);
      }
      std::string header(detail::data_header_bytes, '\0');
      auto n = ::pread(fd, header.data(), header.size(), 0);
      struct stat st {};
      auto stat_ok = ::fstat(fd, &st) == 0;
      ::close(fd);
      if (n != static_cast<ssize_t>(header.size()) || !stat_ok)
        return gone("is unreadable (" + file + ")");
      auto id = detail::parse_data_header(header, file);
      if (!id)
        return gone("is damaged (" + file + ")");
      // A data file never changes once its save finished: one look is enough.
      known
        = earlier_files
            .emplace(entry.data_epoch,
                     earlier_file{file, *id, static_cast<uint64_t>(st.st_size)})
            .first;
    }
    auto& file = known->second;
    if (file.id != entry.data_id)
      return gone("was rewritten since");
    if (entry.offset < detail::data_header_bytes
        || entry.offset + entry.bytes < entry.offset
        || entry.offset + entry.bytes > file.size)
      return gone("lies beyond the end of its data file");
    if (!digest)
      return {};
    int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return gone("is unreadable (" + file.path + ")");
    payload_hasher hasher;
    std::vector<char> piece(std::min<uint64_t>(
      opts.data_piece_bytes, std::max<uint64_t>(entry.bytes, 1)));
    uint64_t done = 0;
    while (done < entry.bytes) {
      auto want = static_cast<size_t>(
        std::min<uint64_t>(piece.size(), entry.bytes - done));
      auto got = detail::pread_full(fd, piece.data(), want, entry.offset + done,
                                    file.path);
      if (!got || *got == 0)
        break;
      hasher.update(piece.data(), *got);
      done += *got;
    }
    ::close(fd);
    if (done != entry.bytes || hasher.digest() != entry.digest)
      return gone("is damaged: it fails its digest (" + file.path + ")");
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
  opts.data_piece_bytes
    = std::clamp<size_t>(opts.data_piece_bytes, 4096, max_chunk_bytes);
  opts.write_buffer_bytes = std::max<size_t>(opts.write_buffer_bytes, 4 << 20);
  auto self = std::make_unique<impl>();
  self->path = path;
  self->opts = opts;
  self->result.node = std::move(node);
  self->result.epoch = epoch;
  if (opts.faults != nullptr)
    self->disk = std::make_unique<detail::disk_damage>(
      *opts.faults, self->result.node, self->result.epoch);
  if (auto err = self->at(fault_point::save_open))
    return err; // nothing created yet
  auto partial = path + ".partial";
  if (auto err = detail::remove_tree(partial))
    return err;
  if (auto err = detail::create_parent_dirs(path))
    return err;
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
  if (self.at_stage != impl::stage::writing)
    return make_error(persistence_errc::invalid_argument,
                      "put after the writer of " + self.path
                        + " sealed, finished or failed");
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
  caf::error err;
  if (value.type == dtype::string)
    err = self.put_strings(blob_name, value, entry);
  else if (entry.bytes < self.opts.inline_bytes)
    err = self.put_numeric(blob_name, value, entry);
  else
    err = self.put_data(value, entry);
  if (err)
    return self.fail(std::move(err));
  self.result.total_bytes += entry.bytes;
  self.result.blobs.push_back(std::move(entry));
  return {};
}

caf::error checkpoint_writer::reuse(const blob_entry& earlier,
                                    reuse_check check) {
  auto& self = *impl_;
  if (self.at_stage != impl::stage::writing)
    return make_error(persistence_errc::invalid_argument,
                      "reuse after the writer of " + self.path
                        + " sealed, finished or failed");
  if (!valid_blob_name(earlier.name))
    return self.fail(make_error(persistence_errc::invalid_name,
                                "invalid blob name '" + earlier.name + "'"));
  if (earlier.data_epoch == inline_payload || earlier.data_epoch < 0
      || earlier.data_epoch >= self.result.epoch)
    return self.fail(make_error(
      persistence_errc::invalid_argument,
      "blob '" + earlier.name + "' cannot reuse a payload of epoch "
        + std::to_string(earlier.data_epoch) + " in a checkpoint of epoch "
        + std::to_string(self.result.epoch)));
  if (self.names.count(earlier.name) > 0)
    return self.fail(make_error(persistence_errc::invalid_argument,
                                "blob '" + earlier.name + "' put twice"));
  if (auto err = self.check_earlier_data(earlier, check == reuse_check::digest))
    return err; // not_found leaves the writer usable
  self.names.insert(earlier.name);
  self.result.total_bytes += earlier.bytes;
  self.result.blobs.push_back(earlier);
  return {};
}

caf::error checkpoint_writer::impl::seal() {
  if (auto err = flush(false))
    return err;
  result.created_unix_ms = unix_ms_now();
  auto record = detail::manifest_value(encode(result));
  batch.Put(
    leveldb::Slice{detail::manifest_key.data(), detail::manifest_key.size()},
    leveldb::Slice{record.data(), record.size()});
  batch_bytes += record.size();
  if (auto err = flush(true))
    return err;
  if (bytes_written >= opts.write_buffer_bytes / 10 * 9) {
    // The memtable has filled up at least once, so a flush of it into a
    // table may be under way. Closing now would make LevelDB drop that
    // table half done, and every open would replay the whole log and write
    // it again. Compacting an empty key range past every key flushes the
    // memtable and waits, without touching the tables written so far.
    std::string past_end(4, '\xff');
    leveldb::Slice key{past_end};
    db->CompactRange(&key, &key);
  }
  db.reset(); // closes the database and releases its LOCK
  return {};
}

caf::error checkpoint_writer::impl::sync() {
  if (data_fd >= 0) {
    auto fd = std::exchange(data_fd, -1);
    auto sync_errno = synced([fd] {
      return ::fdatasync(fd) == 0 ? 0 : errno;
    });
    auto closed = ::close(fd) == 0 ? 0 : errno;
    if (sync_errno != 0 || closed != 0)
      return detail::io_error("sync " + data_path(),
                              sync_errno != 0 ? sync_errno : closed);
  }
  if (auto err = synced([this] {
        return detail::fsync_dir_files(partial);
      }))
    return err;
  if (disk)
    if (auto err = disk->after_sync(fault_point::save_fsync_after, partial))
      return err;
  return {};
}

caf::error checkpoint_writer::impl::publish() {
  // detail::replace_path, step by step for the save.rename.* and
  // save.dirsync.* points. After a failure past the swap, an exchanged old
  // database is at `partial`, which the destructor removes.
  if (auto err = at(fault_point::save_rename_before))
    return err;
  auto old = detail::swap_into_place(partial, path);
  if (!old)
    return std::move(old.error());
  if (auto err = at(fault_point::save_rename_after))
    return err;
  if (auto err = at(fault_point::save_dirsync_before))
    return err;
  if (auto err = synced([this] {
        return detail::fsync_path(detail::parent_dir(path));
      }))
    return err;
  if (auto err = at(fault_point::save_dirsync_after))
    return err;
  if (!old->empty())
    if (auto err = detail::remove_tree(*old))
      return err;
  return {};
}

caf::expected<manifest> checkpoint_writer::seal() {
  auto& self = *impl_;
  if (self.at_stage != impl::stage::writing)
    return make_error(persistence_errc::invalid_argument,
                      "seal after the writer of " + self.path
                        + " sealed, finished or failed");
  if (auto err = self.seal())
    return self.fail(std::move(err));
  self.at_stage = impl::stage::sealed;
  return self.result;
}

caf::error checkpoint_writer::sync() {
  auto& self = *impl_;
  if (self.at_stage == impl::stage::writing)
    if (auto sealed = seal(); !sealed)
      return std::move(sealed.error());
  if (self.at_stage == impl::stage::durable)
    return {};
  if (self.at_stage != impl::stage::sealed)
    return make_error(persistence_errc::invalid_argument,
                      "sync after the writer of " + self.path
                        + " finished or failed");
  if (auto err = self.sync())
    return self.fail(std::move(err));
  self.at_stage = impl::stage::durable;
  return {};
}

caf::expected<manifest> checkpoint_writer::finish() {
  auto& self = *impl_;
  if (self.at_stage == impl::stage::done)
    return make_error(persistence_errc::invalid_argument,
                      "finish after the writer of " + self.path
                        + " finished or failed");
  if (auto err = sync())
    return err;
  // Whatever happens next, the writer is used up.
  if (auto err = self.fail(self.publish()))
    return err;
  return std::move(self.result);
}

const std::string& checkpoint_writer::partial_path() const noexcept {
  return impl_->partial;
}

int64_t checkpoint_writer::sync_micros() const noexcept {
  return impl_->sync_us;
}

const std::string& checkpoint_writer::path() const noexcept {
  return impl_->path;
}

} // namespace epochrt
