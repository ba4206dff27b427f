#include <epochrt/persistence/checkpoint_copy.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/codec.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/db_name.hpp>
#include <epochrt/persistence/detail/data_file.hpp>
#include <epochrt/persistence/detail/disk_damage.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt {

namespace {

// `finish` reads the files back in pieces of this size: large enough for
// sequential reads at the disk's speed, small enough to stay in the cache
// while hashed.
constexpr size_t check_piece_bytes = size_t{4} << 20;

caf::error corrupt(std::string what) {
  return make_error(persistence_errc::corrupt, std::move(what));
}

caf::error invalid_argument(std::string what) {
  return make_error(persistence_errc::invalid_argument, std::move(what));
}

// A name that stays inside the database directory.
bool plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".."
    && name.find_first_of(std::string_view{"/\0", 2}) == std::string_view::npos;
}

caf::error check_file_name(std::string_view name) {
  if (plain_file_name(name))
    return {};
  return make_error(persistence_errc::invalid_name,
                    "'" + std::string{name}
                      + "' is not the name of a file in a database");
}

// Files that belong to whoever has the database open, never to a copy.
bool copied(const std::string& name) {
  return name != "LOCK" && name != "LOG" && name != "LOG.old";
}

// The id in the header of `db`'s data file; 0 when there is none.
// Errors: corrupt (a header that does not check out), io_error.
caf::expected<uint64_t> data_id_of(const std::string& db) {
  auto file = detail::data_file_path(db);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return uint64_t{0};
    return detail::io_error("open " + file, errno);
  }
  std::string header(detail::data_header_bytes, '\0');
  auto got = detail::pread_full(fd, header.data(), header.size(), 0, file);
  ::close(fd);
  if (!got)
    return std::move(got.error());
  if (*got != header.size())
    return corrupt(file + " is too short");
  return detail::parse_data_header(header, file);
}

// The listing of the database directory `db` of `epoch`, from the disk.
// Errors: not_found (no database directory), corrupt, io_error.
caf::expected<database_listing> list_database(const std::string& db,
                                              int64_t epoch) {
  std::error_code ec;
  if (!fs::is_directory(db, ec) || !fs::exists(fs::path{db} / "CURRENT", ec))
    return make_error(persistence_errc::not_found,
                      "no checkpoint database at " + db);
  database_listing result;
  result.epoch = epoch;
  for (auto it = fs::directory_iterator{db, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    auto name = it->path().filename().string();
    std::error_code entry_ec;
    if (!copied(name) || !it->is_regular_file(entry_ec))
      continue;
    auto bytes = it->file_size(entry_ec);
    if (entry_ec)
      return make_error(persistence_errc::io_error,
                        "stat " + it->path().string() + ": "
                          + entry_ec.message());
    result.files.push_back(database_file{std::move(name), bytes});
  }
  if (ec)
    return make_error(persistence_errc::io_error,
                      "list " + db + ": " + ec.message());
  std::sort(result.files.begin(), result.files.end(),
            [](const database_file& x, const database_file& y) {
              return x.name < y.name;
            });
  auto id = data_id_of(db);
  if (!id)
    return std::move(id.error());
  result.data_id = *id;
  return result;
}

} // namespace

// -- list_for_copy and holds_database -----------------------------------------

namespace {

// What tells one write of a database from another: its manifest, which
// holds every payload's digest and the time of the write.
uint64_t manifest_digest(const manifest& man) {
  auto bytes = encode(man);
  return digest_bytes(bytes.data(), bytes.size());
}

} // namespace

caf::expected<std::vector<database_listing>>
list_for_copy(const std::string& db, int64_t epoch,
              const std::string& files_at) {
  const auto& own_files = files_at.empty() ? db : files_at;
  // The data files the manifest refers to, by epoch, with their ids.
  std::map<int64_t, uint64_t> referenced;
  uint64_t own_manifest = 0;
  {
    auto reader = checkpoint_reader::open(own_files);
    if (!reader)
      return std::move(reader.error());
    auto& man = (*reader)->get_manifest();
    own_manifest = manifest_digest(man);
    if (man.epoch != epoch)
      return corrupt("the manifest of " + db + " is of epoch "
                     + std::to_string(man.epoch) + ", not "
                     + std::to_string(epoch));
    for (auto& entry : man.blobs) {
      if (entry.data_epoch == inline_payload)
        continue;
      if (entry.data_epoch < 0 || entry.data_epoch > epoch)
        return corrupt(db + ": blob '" + entry.name
                       + "' refers to the data of epoch "
                       + std::to_string(entry.data_epoch));
      auto [it, added] = referenced.emplace(entry.data_epoch, entry.data_id);
      if (!added && it->second != entry.data_id)
        return corrupt(db + ": blobs refer to two data files of epoch "
                       + std::to_string(entry.data_epoch));
    }
  } // the reader's private view goes before the files are listed
  std::vector<database_listing> result;
  for (auto [data_epoch, data_id] : referenced) {
    if (data_epoch == epoch)
      break; // its own data file, checked below
    auto path = db_path_of_epoch(db, epoch, data_epoch);
    if (!path)
      return std::move(path.error());
    auto listing = list_database(*path, data_epoch);
    if (!listing) {
      if (is_error(listing.error(), persistence_errc::not_found))
        return corrupt(db + " refers to the data of " + *path
                       + ", which is missing");
      return std::move(listing.error());
    }
    if (listing->data_id != data_id)
      return corrupt(db + " refers to a data file of " + *path
                     + (listing->data_id == 0 ? " that is missing"
                                              : " that was rewritten since"));
    result.push_back(std::move(*listing));
  }
  auto own = list_database(own_files, epoch);
  if (!own)
    return std::move(own.error());
  own->manifest_digest = own_manifest;
  if (auto it = referenced.find(epoch);
      it != referenced.end() && it->second != own->data_id)
    return corrupt(db + ": its manifest refers to a data file "
                   + (own->data_id == 0 ? std::string{"it does not have"}
                                        : std::string{"other than its own"}));
  result.push_back(std::move(*own));
  return result;
}

bool holds_database(const std::string& db, const database_listing& listing) {
  // The cheap checks first: the reader builds a private view of the log.
  for (auto& file : listing.files) {
    if (!plain_file_name(file.name))
      return false;
    struct stat st {};
    auto path = db + "/" + file.name;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)
        || static_cast<uint64_t>(st.st_size) != file.bytes)
      return false;
  }
  auto id = data_id_of(db);
  if (!id || *id != listing.data_id)
    return false;
  auto reader = checkpoint_reader::open(db);
  if (!reader)
    return false;
  auto& man = (*reader)->get_manifest();
  return (listing.epoch < 0 || man.epoch == listing.epoch)
    && (listing.manifest_digest == 0
        || manifest_digest(man) == listing.manifest_digest);
}

// -- database_file_reader -----------------------------------------------------

database_file_reader::database_file_reader(int fd, std::string path)
  : fd_(fd), path_(std::move(path)) {
  // nop
}

database_file_reader::database_file_reader(
  database_file_reader&& other) noexcept
  : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)),
    offset_(other.offset_), hasher_(std::move(other.hasher_)) {
  // nop
}

database_file_reader&
database_file_reader::operator=(database_file_reader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    offset_ = other.offset_;
    hasher_ = std::move(other.hasher_);
  }
  return *this;
}

database_file_reader::~database_file_reader() {
  if (fd_ >= 0)
    ::close(fd_);
}

caf::expected<database_file_reader>
database_file_reader::open(const std::string& db, std::string_view file_name) {
  if (auto err = check_file_name(file_name))
    return err;
  auto path = db + "/" + std::string{file_name};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return make_error(persistence_errc::not_found, path + " does not exist");
    return detail::io_error("open " + path, errno);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return database_file_reader{fd, std::move(path)};
}

caf::error database_file_reader::read(size_t max_bytes,
                                      std::vector<char>& out) {
  if (max_bytes == 0)
    return invalid_argument("a read of 0 bytes from " + path_);
  out.resize(max_bytes);
  auto got = detail::pread_full(fd_, out.data(), max_bytes, offset_, path_);
  if (!got) {
    out.clear();
    return std::move(got.error());
  }
  out.resize(*got);
  hasher_.update(out.data(), *got);
  offset_ += *got;
  return {};
}

uint64_t database_file_reader::digest() const noexcept {
  return hasher_.digest();
}

uint64_t database_file_reader::bytes_read() const noexcept {
  return offset_;
}

// -- database_copy ------------------------------------------------------------

struct database_copy::impl {
  std::string path;
  std::string copying; // empty once nothing is left to remove
  database_listing listing;
  // The listed files by name: their index in `listing.files`.
  std::map<std::string, size_t, std::less<>> index;
  std::vector<uint64_t> written; // bytes appended, per listed file
  uint64_t unsent = 0; // of the open file: from here on not sent to disk yet
  // The file appends go to; one at a time, so that a database of many
  // files holds one descriptor.
  int fd = -1;
  size_t fd_file = 0;
  bool done = false; // finished, or failed: only destruction is left
  int64_t sync_us = 0;
  // The disk as the fault plan has it (see checkpoint_writer): null without
  // a plan, and then each point is this null test.
  std::unique_ptr<detail::disk_damage> disk;

  ~impl() {
    if (fd >= 0)
      ::close(fd);
    // Best effort: there is no one to tell.
    if (!copying.empty())
      detail::remove_tree(copying);
  }

  caf::error at(fault_point point) {
    return disk ? disk->at(point) : caf::error{};
  }

  caf::error fail(caf::error err) {
    done = true;
    return err;
  }

  std::string file_path(size_t i) const {
    return copying + "/" + listing.files[i].name;
  }

  caf::error close_file() {
    if (fd < 0)
      return {};
    if (::close(std::exchange(fd, -1)) != 0)
      return detail::io_error("close " + file_path(fd_file), errno);
    return {};
  }

  caf::error open_file(size_t i) {
    if (fd >= 0 && fd_file == i)
      return {};
    if (auto err = close_file())
      return err;
    auto file = file_path(i);
    // Read-write: a corrupt_write at copy.write reads the byte it flips.
    fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
      return detail::io_error("open " + file, errno);
    fd_file = i;
    unsent = written[i];
    return {};
  }

  // The copy's bytes go to the disk while the rest arrive.
  void start_writeback() {
    detail::start_writeback(fd, unsent, written[fd_file]);
  }

  // Whether file `i` holds its listed size and has digest `expected`: read
  // back from the disk, not taken from what `append` was given.
  caf::error check_file(size_t i, uint64_t expected, std::vector<char>& buf) {
    auto file = file_path(i);
    auto want = listing.files[i].bytes;
    int in = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0)
      return detail::io_error("open " + file, errno);
    ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
    payload_hasher hasher;
    uint64_t size = 0;
    caf::error err;
    for (;;) {
      auto got = detail::pread_full(in, buf.data(), buf.size(), size, file);
      if (!got) {
        err = std::move(got.error());
        break;
      }
      if (*got == 0)
        break;
      hasher.update(buf.data(), *got);
      size += *got;
    }
    ::close(in);
    if (err)
      return err;
    auto& name = listing.files[i].name;
    if (size != want)
      return corrupt("the copy of " + name + " for " + path + " has "
                     + std::to_string(size) + " bytes, not "
                     + std::to_string(want));
    if (hasher.digest() != expected)
      return corrupt("the copy of " + name + " for " + path
                     + " fails its digest");
    return {};
  }

  // Runs `f`, adding the time it takes to `sync_us`.
  template <class F>
  caf::error synced(F f) {
    auto start = std::chrono::steady_clock::now();
    auto err = f();
    sync_us += std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::steady_clock::now() - start)
                 .count();
    return err;
  }
};

database_copy::database_copy(std::unique_ptr<impl> ptr)
  : impl_(std::move(ptr)) {
  // nop
}

database_copy::~database_copy() = default;

caf::expected<std::unique_ptr<database_copy>>
database_copy::create(std::string path, database_listing listing,
                      copy_options opts) {
  if (path.empty())
    return make_error(persistence_errc::invalid_name, "empty database path");
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  auto self = std::make_unique<impl>();
  for (size_t i = 0; i < listing.files.size(); ++i) {
    auto& name = listing.files[i].name;
    if (auto err = check_file_name(name))
      return err;
    if (!self->index.emplace(name, i).second)
      return invalid_argument("the listing of " + path + " names " + name
                              + " twice");
  }
  self->path = path;
  self->written.assign(listing.files.size(), 0);
  self->listing = std::move(listing);
  if (opts.faults != nullptr)
    self->disk = std::make_unique<detail::disk_damage>(
      *opts.faults, std::move(opts.node), opts.epoch);
  auto copying = path + ".copying";
  if (auto err = detail::remove_tree(copying))
    return err;
  if (auto err = detail::create_parent_dirs(path))
    return err;
  if (::mkdir(copying.c_str(), 0755) != 0)
    return detail::io_error("create " + copying, errno);
  // From here on, the destructor of `self` removes the directory.
  self->copying = std::move(copying);
  for (size_t i = 0; i < self->listing.files.size(); ++i) {
    auto file = self->file_path(i);
    int fd
      = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
      return detail::io_error("create " + file, errno);
    ::close(fd);
  }
  return std::unique_ptr<database_copy>{new database_copy(std::move(self))};
}

caf::error database_copy::append(std::string_view file_name, const char* data,
                                 size_t size) {
  auto& self = *impl_;
  if (self.done)
    return invalid_argument("append after the copy to " + self.path
                            + " finished or failed");
  auto known = self.index.find(file_name);
  if (known == self.index.end())
    return self.fail(invalid_argument("the copy to " + self.path
                                      + " lists no file '"
                                      + std::string{file_name} + "'"));
  auto i = known->second;
  auto offset = self.written[i];
  if (size > self.listing.files[i].bytes - offset)
    return self.fail(invalid_argument(
      "more bytes for " + known->first + " than the "
      + std::to_string(self.listing.files[i].bytes) + " of its listing"));
  if (auto err = self.open_file(i))
    return self.fail(std::move(err));
  if (self.disk)
    if (auto err = self.disk->before_payload(fault_point::copy_write))
      return self.fail(std::move(err));
  auto file = self.file_path(i);
  if (auto err = detail::pwrite_all(self.fd, data, size, offset, file))
    return self.fail(std::move(err));
  if (self.disk)
    if (auto err = self.disk->payload_written(self.fd, offset, size, file))
      return self.fail(std::move(err));
  self.written[i] = offset + size;
  self.start_writeback();
  return {};
}

caf::error database_copy::finish(const std::vector<uint64_t>& digests) {
  auto& self = *impl_;
  if (self.done)
    return invalid_argument("finish after the copy to " + self.path
                            + " finished or failed");
  self.done = true; // whatever happens next, the copy is used up
  if (digests.size() != self.listing.files.size())
    return invalid_argument("the copy to " + self.path + " lists "
                            + std::to_string(self.listing.files.size())
                            + " files, not " + std::to_string(digests.size()));
  if (auto err = self.close_file())
    return err;
  uint64_t largest = 0;
  for (auto& file : self.listing.files)
    largest = std::max(largest, file.bytes);
  std::vector<char> buf(
    static_cast<size_t>(std::clamp<uint64_t>(largest, 1, check_piece_bytes)));
  for (size_t i = 0; i < digests.size(); ++i)
    if (auto err = self.check_file(i, digests[i], buf))
      return err;
  if (auto err = self.synced([&self] {
        return detail::fsync_dir_files(self.copying);
      }))
    return err;
  // detail::replace_path, step by step for the copy.rename.* points. After
  // a failure past the swap, an exchanged old database is at `copying`,
  // which the destructor removes.
  if (auto err = self.at(fault_point::copy_rename_before))
    return err;
  auto old = detail::swap_into_place(self.copying, self.path);
  if (!old)
    return std::move(old.error());
  if (*old != self.copying)
    self.copying.clear(); // moved into place, nothing exchanged into it
  if (auto err = self.at(fault_point::copy_rename_after))
    return err;
  if (auto err = self.synced([&self] {
        return detail::fsync_path(detail::parent_dir(self.path));
      }))
    return err;
  if (!old->empty())
    if (auto err = detail::remove_tree(*old))
      return err;
  self.copying.clear();
  return {};
}

int64_t database_copy::sync_micros() const noexcept {
  return impl_->sync_us;
}

const std::string& database_copy::path() const noexcept {
  return impl_->path;
}

const database_listing& database_copy::listing() const noexcept {
  return impl_->listing;
}

} // namespace epochrt
