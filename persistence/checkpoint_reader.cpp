#include <epochrt/persistence/checkpoint_reader.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leveldb/db.h>
#include <leveldb/options.h>

#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/chunk_codec.hpp>
#include <epochrt/messages/codec.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/detail/data_file.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/detail/leveldb_util.hpp>
#include <epochrt/persistence/digest.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt {

namespace {

// Sum of the sizes of the LevelDB logs in `dir`: what opening replays.
uint64_t log_bytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator{dir, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    std::error_code size_ec;
    if (it->path().extension() == ".log" && it->is_regular_file(size_ec)) {
      auto size = it->file_size(size_ec);
      if (!size_ec)
        total += size;
    }
  }
  return total;
}

caf::error corrupt(std::string what) {
  return make_error(persistence_errc::corrupt, std::move(what));
}

// LevelDB never changes a table file once written, it only deletes it:
// such a file can be shared with a private view through a hard link.
bool is_table_file(const fs::path& file) {
  auto ext = file.extension();
  return ext == ".ldb" || ext == ".sst";
}

// A private view of the database at `path` that LevelDB may change at will:
// a fresh directory under the temporary directory ($TMPDIR) with hard
// links to the table files (copies where linking fails, e.g. across
// filesystems) and copies of everything else LevelDB reads and may rewrite
// or delete (CURRENT, MANIFEST-*, logs). LOCK and the info logs are left
// out. DB::Open in LevelDB 1.23 is not read-only: it replays the log into a
// new table or manifest and deletes files it considers obsolete (a stray
// table file); on the view, none of it reaches `path`. Returns the view's
// directory; the caller removes it.
caf::expected<std::string> make_private_view(const std::string& path) {
  std::error_code ec;
  auto tmp = fs::temp_directory_path(ec);
  if (ec)
    tmp = "/tmp";
  auto templ = (tmp / "epochrt-read-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    return make_error(
      persistence_errc::io_error,
      detail::errno_text("create a view of " + path + " in " + tmp.string(),
                         errno));
  auto view = templ;
  auto fail = [&](const std::string& what, const std::error_code& err) {
    detail::remove_tree(view);
    return make_error(persistence_errc::io_error, what + ": " + err.message());
  };
  for (auto it = fs::directory_iterator{path, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    auto name = it->path().filename();
    std::error_code entry_ec;
    // The data file is read where it is: LevelDB never opens it.
    if (!it->is_regular_file(entry_ec) || name == "LOCK" || name == "LOG"
        || name == "LOG.old" || name == detail::data_file_name)
      continue;
    auto to = fs::path{view} / name;
    if (is_table_file(name)) {
      fs::create_hard_link(it->path(), to, entry_ec);
      if (!entry_ec)
        continue;
      entry_ec.clear();
    }
    fs::copy_file(it->path(), to, entry_ec);
    if (entry_ec)
      return fail("copy " + it->path().string() + " to " + to.string(),
                  entry_ec);
  }
  if (ec)
    return fail("list " + path, ec);
  return view;
}

// The node and epoch of a database named `<node>.<epoch>` (db_name), for
// the sites of fault points; empty and -1 where the name does not tell.
std::pair<std::string, int64_t> site_of_path(const std::string& path) {
  auto leaf = fs::path{path}.filename().string();
  auto dot = leaf.rfind('.');
  if (dot == std::string::npos || dot + 1 == leaf.size()
      || dot + 19 < leaf.size()
      || !std::all_of(leaf.begin() + static_cast<ptrdiff_t>(dot) + 1,
                      leaf.end(), [](char c) {
                        return c >= '0' && c <= '9';
                      }))
    return {std::string{}, -1};
  // Nineteen digits may still be more than an int64_t holds: no epoch then
  // (std::stoll would throw, here on a persistence actor's thread).
  int64_t epoch = -1;
  auto digits = std::string_view{leaf}.substr(dot + 1);
  auto [end, ec]
    = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
  if (ec != std::errc{} || end != digits.data() + digits.size())
    return {std::string{}, -1};
  return {leaf.substr(0, dot), epoch};
}

} // namespace

struct checkpoint_reader::impl {
  std::string path;
  std::unique_ptr<leveldb::DB> db;
  manifest man;
  std::unordered_map<std::string, size_t> index; // blob name -> man.blobs
  std::string value; // reused across Gets: large buffers are slow to touch
  std::string view;  // the private view LevelDB opened (make_private_view)
  fault_injector* faults = nullptr;
  std::string site_node; // set only with faults
  int64_t site_epoch = -1;
  size_t piece_bytes = size_t{1} << 20;
  std::vector<char> bounce; // read_data's pieces, reused

  // A data file opened for reading: this database's or an earlier epoch's.
  struct data_file {
    int fd = -1;
    uint64_t id = 0;
    uint64_t size = 0;
    std::string path;
    std::string layout_problem; // empty when the manifest's ranges fit
  };
  static constexpr size_t max_open_data_files = 64;

  // The payloads the manifest places in the data file of `epoch` must lie
  // inside it and never overlap: a manifest whose entries share one range
  // would make a load allocate the same bytes again and again.
  std::string layout_problem(int64_t epoch, const data_file& file) const {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (auto& entry : man.blobs)
      if (entry.data_epoch == epoch && entry.data_id == file.id)
        ranges.emplace_back(entry.offset, entry.bytes);
    std::sort(ranges.begin(), ranges.end());
    uint64_t end = detail::data_header_bytes;
    for (auto& [offset, bytes] : ranges) {
      if (offset < end || offset + bytes < offset || offset + bytes > file.size)
        return "the manifest places payloads in " + file.path
          + " that overlap or lie beyond its end";
      end = offset + bytes;
    }
    return {};
  }
  std::unordered_map<int64_t, data_file> data_files; // by epoch

  ~impl() {
    for (auto& kvp : data_files)
      if (kvp.second.fd >= 0)
        ::close(kvp.second.fd);
    db.reset(); // closes the files of the view before it goes
    if (!view.empty())
      detail::remove_tree(view);
  }

  leveldb::ReadOptions read_options() const {
    leveldb::ReadOptions ropts;
    ropts.verify_checksums = true;
    ropts.fill_cache = false; // chunks are read once; keep the cache small
    return ropts;
  }

  // Chunks skip LevelDB's block checksums: every chunk carries an XXH3
  // digest of its payload and is checked against its name and index, which
  // catches the same damage at several times the speed (Debian's LevelDB
  // computes CRC32C in software; it was a fifth of a load's CPU).
  leveldb::ReadOptions chunk_read_options() const {
    auto ropts = read_options();
    ropts.verify_checksums = false;
    return ropts;
  }

  // The load.chunk fault point, for blob `entry`.
  caf::error strike_load_chunk(const blob_entry& entry) {
    if (faults == nullptr)
      return {};
    fault_action action;
    return strike_blocking(faults, fault_point::load_chunk,
                           fault_site{site_node, site_epoch, entry.name},
                           action);
  }

  // Fetches chunk `i` of `entry` into `value`.
  caf::error get_chunk(const blob_entry& entry, uint32_t i) {
    if (auto err = strike_load_chunk(entry))
      return err;
    auto key = detail::chunk_key(entry.name, i);
    auto st = db->Get(chunk_read_options(), key, &value);
    if (st.IsNotFound())
      return corrupt(path + ": chunk " + std::to_string(i) + " of blob '"
                     + entry.name + "' is missing");
    if (!st.ok())
      return detail::from_status(st, "read " + path);
    return {};
  }

  caf::error check_chunk(const blob_entry& entry, uint32_t i,
                         const blob_chunk_view& chunk) {
    if (chunk.name != entry.name || chunk.index != i)
      return corrupt(path + ": chunk " + std::to_string(i) + " of blob '"
                     + entry.name + "' holds another chunk");
    uint64_t digest;
    if (entry.type == dtype::string) {
      if (!chunk.data.empty())
        return corrupt(path + ": blob '" + entry.name
                       + "' has bytes in a string chunk");
      payload_hasher hasher;
      for (auto& str : chunk.strings)
        hasher.update_string(str);
      digest = hasher.digest();
    } else {
      if (!chunk.strings.empty())
        return corrupt(path + ": blob '" + entry.name
                       + "' has strings in a numeric chunk");
      digest = digest_bytes(chunk.data.data(), chunk.data.size());
    }
    if (digest != chunk.digest)
      return corrupt(path + ": chunk " + std::to_string(i) + " of blob '"
                     + entry.name + "' fails its digest");
    return {};
  }

  caf::error decoded(const caf::error& err, const blob_entry& entry,
                     uint32_t i) {
    if (in_category(err, persistence_category))
      return err;
    return corrupt(path + ": chunk " + std::to_string(i) + " of blob '"
                   + entry.name + "' does not decode");
  }

  // The data file of `epoch` (this database's own, or the same node's of an
  // earlier epoch), opened once and checked against the id `entry` names.
  caf::expected<data_file*> open_data(const blob_entry& entry) {
    auto epoch = entry.data_epoch;
    auto i = data_files.find(epoch);
    if (i == data_files.end()) {
      data_file file;
      if (epoch == man.epoch) {
        file.path = detail::data_file_path(path);
      } else {
        if (epoch > man.epoch)
          return corrupt(path + ": blob '" + entry.name
                         + "' refers to a later epoch "
                         + std::to_string(epoch));
        auto db = db_path_of_epoch(path, man.epoch, epoch);
        if (!db)
          return std::move(db.error());
        file.path = detail::data_file_path(*db);
      }
      file.fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (file.fd < 0) {
        auto err = errno;
        if (err == ENOENT || err == ENOTDIR)
          return corrupt(path + ": the data file " + file.path + " of blob '"
                         + entry.name + "' is missing");
        return make_error(persistence_errc::io_error,
                          detail::errno_text("open " + file.path, err));
      }
      std::string header(detail::data_header_bytes, '\0');
      struct stat st {};
      auto n = ::pread(file.fd, header.data(), header.size(), 0);
      if (::fstat(file.fd, &st) != 0) {
        auto err = errno;
        ::close(file.fd);
        return make_error(persistence_errc::io_error,
                          detail::errno_text("stat " + file.path, err));
      }
      file.size = static_cast<uint64_t>(st.st_size);
      auto id = n == static_cast<ssize_t>(header.size())
        ? detail::parse_data_header(header, file.path)
        : caf::expected<uint64_t>{corrupt(file.path + " is too short")};
      if (!id) {
        ::close(file.fd);
        return std::move(id.error());
      }
      file.id = *id;
      file.layout_problem = layout_problem(epoch, file);
      // Cold loads read the whole file front to back.
      ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      // Bounds the descriptors a manifest can make us hold (one per epoch
      // it refers to): past the cap, the files open so far are closed.
      if (data_files.size() >= max_open_data_files) {
        for (auto& kvp : data_files)
          ::close(kvp.second.fd);
        data_files.clear();
      }
      i = data_files.emplace(epoch, std::move(file)).first;
    }
    auto& file = i->second;
    if (!file.layout_problem.empty())
      return corrupt(path + ": " + file.layout_problem);
    if (file.id != entry.data_id)
      return corrupt(path + ": blob '" + entry.name + "' refers to a data file "
                     + file.path + " that was rewritten since");
    if (entry.offset < detail::data_header_bytes
        || entry.offset + entry.bytes < entry.offset
        || entry.offset + entry.bytes > file.size)
      return corrupt(path + ": blob '" + entry.name
                     + "' lies beyond the end of " + file.path);
    return &file;
  }

  // A numeric payload from a data file into the tensor's buffer, piece by
  // piece, each hashed while hot. Large buffers ask for transparent huge pages:
  // a 2 MiB page costs one fault where 512 small ones would. Measured on this
  // 2-core VM, touching 256 MiB of fresh memory took 146-190 ms in 4 KiB pages
  // and 38-84 ms in huge pages (once the VM's memory had been touched at all;
  // the very first touch costs several times more either way).
  caf::error read_data(const blob_entry& entry, tensor& result) {
    auto file = open_data(entry);
    if (!file)
      return std::move(file.error());
    return read_payload(**file, entry, result, bounce);
  }

  // Reads the payload of `entry` from `file` into `result`. Touches nothing
  // but its arguments (pread on a shared descriptor is safe): loads run it
  // on several threads at once, each with its own `buffer`.
  caf::error read_payload(const data_file& file, const blob_entry& entry,
                          tensor& result, std::vector<char>& buffer) const {
    auto total = static_cast<size_t>(entry.bytes);
    // The whole payload will be read: from a cold cache, the disk works on
    // all of it while the pieces before are copied and hashed.
    ::posix_fadvise(file.fd, static_cast<off_t>(entry.offset),
                    static_cast<off_t>(total), POSIX_FADV_WILLNEED);
    try {
      result.data.reserve(total);
      buffer.resize(piece_bytes);
    } catch (const std::exception&) { // bad_alloc, length_error
      return make_error(persistence_errc::io_error,
                        path + ": no memory for the " + std::to_string(total)
                          + " bytes of blob '" + entry.name + "'");
    }
    advise_huge_pages(result.data.data(), total);
    payload_hasher whole;
    // Through a small buffer that stays in the cache: pread fills it, the
    // hash reads it hot, and appending it is the only pass over the
    // tensor's fresh memory (a pread straight into the tensor needs it
    // zero-filled first, by resize: one pass more; measured slower).
    for (size_t done = 0; done < total;) {
      auto size = std::min(piece_bytes, total - done);
      auto got = detail::pread_full(file.fd, buffer.data(), size,
                                    entry.offset + done, file.path);
      if (!got)
        return std::move(got.error());
      if (*got < size)
        return corrupt(path + ": blob '" + entry.name + "' is cut short in "
                       + file.path);
      whole.update(buffer.data(), size);
      result.data.insert(result.data.end(), buffer.data(),
                         buffer.data() + size);
      done += size;
    }
    if (whole.digest() != entry.digest)
      return corrupt(path + ": blob '" + entry.name
                     + "' fails the digest of its manifest");
    return {};
  }

  // What every read of a payload in a data file checks first, and its
  // load.chunk point. `result` gets the type and shape.
  caf::error prepare_data(const blob_entry& entry, tensor& result) {
    result.type = entry.type;
    result.shape = entry.shape;
    if (entry.type == dtype::string)
      return corrupt(path + ": string blob '" + entry.name
                     + "' is listed in a data file");
    if (entry.bytes != result.element_count() * element_size(entry.type))
      return corrupt(path + ": the manifest entry of blob '" + entry.name
                     + "' does not match its shape");
    return strike_load_chunk(entry);
  }

  // Payloads of at least this many bytes in all are read by two threads
  // (measured on 2 cores: a cold load is bound by the CPU that copies,
  // hashes and first touches the tensors' memory, and one core idles).
  static constexpr uint64_t parallel_bytes = uint64_t{16} << 20;

  caf::expected<std::vector<tensor>>
  read_all(const std::vector<const blob_entry*>& entries) {
    std::vector<tensor> results(entries.size());
    std::vector<size_t> jobs; // indexes of payloads in data files
    std::unordered_set<int64_t> epochs;
    uint64_t data_bytes = 0;
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i]->data_epoch != inline_payload) {
        jobs.push_back(i);
        epochs.insert(entries[i]->data_epoch);
        data_bytes += entries[i]->bytes;
      }
    // One at a time when the files would not all stay open (they may be
    // closed under us), or when there is too little to share.
    if (jobs.size() < 2 || data_bytes < parallel_bytes
        || epochs.size() > max_open_data_files) {
      for (size_t i = 0; i < entries.size(); ++i) {
        auto value = read(*entries[i]);
        if (!value)
          return std::move(value.error());
        results[i] = std::move(*value);
      }
      return results;
    }
    // In manifest order on this thread: inline blobs, every check, every
    // fault point and every open, so that they happen as in a plain read.
    std::vector<const data_file*> files(entries.size(), nullptr);
    for (size_t i = 0; i < entries.size(); ++i) {
      auto& entry = *entries[i];
      if (entry.data_epoch == inline_payload) {
        auto value = read(entry);
        if (!value)
          return std::move(value.error());
        results[i] = std::move(*value);
        continue;
      }
      if (auto err = prepare_data(entry, results[i]))
        return err;
      auto file = open_data(entry);
      if (!file)
        return std::move(file.error());
      files[i] = *file;
    }
    // The payloads, largest first, each to the thread with less so far.
    std::sort(jobs.begin(), jobs.end(), [&](size_t x, size_t y) {
      return entries[x]->bytes > entries[y]->bytes;
    });
    std::vector<size_t> shares[2];
    uint64_t load[2] = {0, 0};
    for (auto i : jobs) {
      auto k = load[0] <= load[1] ? 0 : 1;
      shares[k].push_back(i);
      load[k] += entries[i]->bytes;
    }
    caf::error errors[2];
    auto work = [&](int k) {
      std::vector<char> buffer;
      for (auto i : shares[k])
        if (auto err
            = read_payload(*files[i], *entries[i], results[i], buffer)) {
          errors[k] = std::move(err);
          return;
        }
    };
    std::thread helper;
    try {
      helper = std::thread{work, 1};
    } catch (const std::system_error&) {
      work(1); // no thread to be had: this one does it all
    }
    work(0);
    if (helper.joinable())
      helper.join();
    for (auto& err : errors)
      if (err)
        return std::move(err);
    return results;
  }

  static void advise_huge_pages(char* data, size_t size) {
    constexpr uintptr_t huge = uintptr_t{2} << 20;
    if (size < 2 * huge)
      return;
    auto begin = (reinterpret_cast<uintptr_t>(data) + huge - 1) & ~(huge - 1);
    auto end = (reinterpret_cast<uintptr_t>(data) + size) & ~(huge - 1);
    if (end > begin)
      ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }

  // Reads the chunks of an inline blob in order and hands each to `take`,
  // once it is known to be the chunk the manifest names.
  template <class Take>
  caf::error for_each_chunk(const blob_entry& entry, Take&& take) {
    for (uint32_t i = 0; i < entry.chunks; ++i) {
      if (auto err = get_chunk(entry, i))
        return err;
      auto err = decode_blob_chunk(value, [&](const blob_chunk_view& c) {
        if (auto err = check_chunk(entry, i, c))
          return err;
        return take(c);
      });
      if (err)
        return decoded(err, entry, i);
    }
    return caf::error{};
  }

  caf::expected<tensor> read(const blob_entry& entry) {
    tensor result;
    result.type = entry.type;
    result.shape = entry.shape;
    if (entry.data_epoch != inline_payload) {
      if (auto err = prepare_data(entry, result))
        return err;
      if (auto err = read_data(entry, result))
        return err;
      return result;
    }
    if (entry.chunks == 0)
      return corrupt(path + ": blob '" + entry.name + "' has no chunks");
    payload_hasher whole;
    if (entry.type == dtype::string) {
      // The manifest's byte count bounds what a corrupt record can make us
      // allocate before the digests are checked.
      auto err = for_each_chunk(entry, [&](const blob_chunk_view& c) {
        for (auto& str : c.strings) {
          whole.update_string(str);
          result.strings.emplace_back(str);
        }
        return caf::error{};
      });
      if (err)
        return err;
      if (result.byte_size() != entry.bytes)
        return corrupt(path + ": blob '" + entry.name
                       + "' has another size than its manifest says");
    } else {
      // Size first, from the manifest, so that every chunk is copied once,
      // straight into place.
      auto expected_bytes = result.element_count() * element_size(entry.type);
      if (entry.bytes != expected_bytes)
        return corrupt(path + ": the manifest entry of blob '" + entry.name
                       + "' does not match its shape");
      // Reserved, not resized: zero-filling first would touch every page
      // twice. Each chunk is appended straight from LevelDB's buffer.
      try {
        result.data.reserve(expected_bytes);
      } catch (const std::exception&) { // bad_alloc, length_error
        return make_error(persistence_errc::io_error,
                          path + ": no memory for the "
                            + std::to_string(expected_bytes)
                            + " bytes of blob '" + entry.name + "'");
      }
      size_t offset = 0;
      auto err = for_each_chunk(entry, [&](const blob_chunk_view& c) {
        if (c.data.size() > expected_bytes - offset)
          return corrupt(path + ": blob '" + entry.name
                         + "' has more bytes than its manifest says");
        result.data.insert(result.data.end(), c.data.begin(), c.data.end());
        whole.update(c.data.data(), c.data.size());
        offset += c.data.size();
        return caf::error{};
      });
      if (err)
        return err;
      if (offset != expected_bytes)
        return corrupt(path + ": blob '" + entry.name
                       + "' has fewer bytes than its manifest says");
    }
    if (whole.digest() != entry.digest)
      return corrupt(path + ": blob '" + entry.name
                     + "' fails the digest of its manifest");
    if (!result.consistent())
      return corrupt(path + ": blob '" + entry.name
                     + "' does not match its type and shape");
    return result;
  }
};

checkpoint_reader::checkpoint_reader(std::unique_ptr<impl> ptr)
  : impl_(std::move(ptr)) {
  // nop
}

checkpoint_reader::~checkpoint_reader() = default;

caf::expected<std::unique_ptr<checkpoint_reader>>
checkpoint_reader::open(std::string path, reader_options opts) {
  if (opts.faults != nullptr) {
    auto [node, epoch] = site_of_path(path);
    if (!opts.node.empty())
      node = std::string{opts.node};
    if (opts.epoch >= 0)
      epoch = opts.epoch;
    fault_action action;
    if (auto err = strike_blocking(opts.faults, fault_point::load_open,
                                   fault_site{node, epoch, {}}, action))
      return err;
  }
  std::error_code ec;
  if (!fs::is_directory(path, ec)
      || !fs::exists(fs::path{path} / "CURRENT", ec))
    return make_error(persistence_errc::not_found,
                      "no checkpoint database at " + path);
  auto self = std::make_unique<impl>();
  self->path = std::move(path);
  leveldb::Options options;
  self->faults = opts.faults;
  options.create_if_missing = false;
  options.paranoid_checks = true;
  options.info_log = detail::silent_info_log();
  options.compression = leveldb::kNoCompression;
  // Room for the whole log, so that replaying it does not write tables, and
  // reuse_logs so that the replayed log is kept rather than converted.
  options.write_buffer_size = static_cast<size_t>(
    std::max<uint64_t>(4 << 20, log_bytes(self->path) * 2 + (1 << 20)));
  options.reuse_logs = true;
  // Never DB::Open on `path` itself: see make_private_view.
  auto view = make_private_view(self->path);
  if (!view)
    return std::move(view.error());
  self->view = std::move(*view);
  leveldb::DB* db = nullptr;
  auto st = leveldb::DB::Open(options, self->view, &db);
  if (!st.ok()) {
    if (st.IsInvalidArgument())
      return make_error(persistence_errc::not_found,
                        "no checkpoint database at " + self->path + ": "
                          + st.ToString());
    return detail::from_status(st, "open " + self->path);
  }
  self->db.reset(db);
  std::string record;
  st = self->db->Get(
    self->read_options(),
    leveldb::Slice{detail::manifest_key.data(), detail::manifest_key.size()},
    &record);
  if (st.IsNotFound())
    return make_error(persistence_errc::incomplete,
                      self->path + " has no manifest: its save did not finish");
  if (!st.ok())
    return detail::from_status(st, "read the manifest of " + self->path);
  auto checked = detail::manifest_record(record);
  if (!checked)
    return make_error(persistence_errc::corrupt,
                      "the manifest of " + self->path + " fails its digest");
  auto man = decode<manifest>(*checked);
  if (!man)
    return make_error(persistence_errc::corrupt,
                      "the manifest of " + self->path + " does not decode");
  self->man = std::move(*man);
  if (self->faults != nullptr) {
    // As at load.open; what the name does not tell, the manifest does.
    auto [node, epoch] = site_of_path(self->path);
    self->site_node = !opts.node.empty() ? std::string{opts.node}
      : !node.empty()                    ? node
                                         : self->man.node;
    self->site_epoch = opts.epoch >= 0 ? opts.epoch
      : epoch >= 0                     ? epoch
                                       : self->man.epoch;
  }
  for (size_t i = 0; i < self->man.blobs.size(); ++i)
    if (!self->index.emplace(self->man.blobs[i].name, i).second)
      return make_error(persistence_errc::corrupt,
                        "the manifest of " + self->path + " lists blob '"
                          + self->man.blobs[i].name + "' twice");
  return std::unique_ptr<checkpoint_reader>{
    new checkpoint_reader(std::move(self))};
}

const manifest& checkpoint_reader::get_manifest() const noexcept {
  return impl_->man;
}

caf::expected<tensor> checkpoint_reader::read(std::string_view blob_name) {
  auto& self = *impl_;
  auto i = self.index.find(std::string{blob_name});
  if (i == self.index.end())
    return make_error(persistence_errc::not_found,
                      self.path + " has no blob '" + std::string{blob_name}
                        + "'");
  return self.read(self.man.blobs[i->second]);
}

caf::expected<std::vector<tensor>>
checkpoint_reader::read_all(const std::vector<std::string>& blob_names) {
  auto& self = *impl_;
  std::vector<const blob_entry*> entries;
  entries.reserve(blob_names.size());
  for (auto& name : blob_names) {
    auto i = self.index.find(name);
    if (i == self.index.end())
      return make_error(persistence_errc::not_found,
                        self.path + " has no blob '" + name + "'");
    entries.push_back(&self.man.blobs[i->second]);
  }
  return self.read_all(entries);
}

caf::error checkpoint_reader::verify() {
  auto& self = *impl_;
  for (auto& entry : self.man.blobs) {
    auto value = self.read(entry);
    if (!value)
      return std::move(value.error());
  }
  return {};
}

const std::string& checkpoint_reader::path() const noexcept {
  return impl_->path;
}

} // namespace epochrt
