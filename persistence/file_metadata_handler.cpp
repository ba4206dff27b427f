#include <epochrt/persistence/file_metadata_handler.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/codec.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/detail/disk_damage.hpp>
#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/digest.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt {

namespace {

// The first 8 bytes of the file; the version is its last byte.
constexpr char file_magic[8] = {'E', 'P', 'R', 'T', 'M', 'E', 'T', 1};
constexpr size_t header_size = 16; // magic, then XXH3-64 little-endian

// XXH3-64 of the magic followed by the record: the digest of the file.
uint64_t file_digest(std::string_view record) {
  payload_hasher hasher;
  hasher.update(file_magic, sizeof(file_magic));
  hasher.update(record.data(), record.size());
  return hasher.digest();
}

// Whether `dir` holds a `<node>.<epoch>` checkpoint database (a directory
// with a LevelDB CURRENT file). Looks at names only: opening a database
// would change it.
bool has_databases(const std::string& dir) {
  std::error_code ec;
  for (auto it = fs::directory_iterator{dir, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    auto name = it->path().filename().string();
    auto dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()
        || !std::all_of(name.begin() + static_cast<ptrdiff_t>(dot) + 1,
                        name.end(), [](char c) {
                          return c >= '0' && c <= '9';
                        }))
      continue;
    std::error_code entry_ec;
    if (fs::exists(it->path() / "CURRENT", entry_ec))
      return true;
  }
  return false;
}

} // namespace

std::string file_metadata_handler::to_file_bytes(const checkpoint_metadata& x) {
  auto record = encode(x);
  auto digest = file_digest(record);
  std::string result;
  result.reserve(header_size + record.size());
  result.append(file_magic, sizeof(file_magic));
  for (int i = 0; i < 8; ++i)
    result += static_cast<char>((digest >> (8 * i)) & 0xff);
  result += record;
  return result;
}

caf::expected<checkpoint_metadata>
file_metadata_handler::from_file_bytes(const std::string& bytes,
                                       const std::string& path) {
  if (bytes.size() < header_size
      || bytes.compare(0, sizeof(file_magic), file_magic, sizeof(file_magic))
        != 0)
    return make_error(persistence_errc::corrupt,
                      "metadata file " + path
                        + " is corrupt: no epochrt metadata header");
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i)
    stored |= uint64_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
  auto record = std::string_view{bytes}.substr(header_size);
  if (file_digest(record) != stored)
    return make_error(persistence_errc::corrupt,
                      "metadata file " + path
                        + " is corrupt: its digest does not match");
  auto result = decode<checkpoint_metadata>(record);
  if (!result)
    return make_error(persistence_errc::corrupt,
                      "metadata file " + path + " does not decode");
  return result;
}

file_metadata_handler::file_metadata_handler(
  std::string dir, std::shared_ptr<fault_injector> faults)
  : dir_(std::move(dir)), faults_(std::move(faults)) {
  file_ = (fs::path{dir_} / file_name).string();
  previous_file_ = (fs::path{dir_} / previous_file_name).string();
}

caf::expected<checkpoint_metadata>
file_metadata_handler::read_generation(const std::string& path) const {
  auto bytes = detail::read_file(path);
  if (!bytes)
    return std::move(bytes.error());
  return from_file_bytes(*bytes, path);
}

caf::expected<checkpoint_metadata>
file_metadata_handler::load_state(bool missing_is_damage,
                                  std::string* fallback_reason) const {
  if (faults_) {
    fault_action action;
    if (auto err = strike_blocking(faults_.get(), fault_point::load_metadata,
                                   fault_site{}, action))
      return err;
  }
  auto latest = read_generation(file_);
  if (!latest && is_error(latest.error(), persistence_errc::not_found)) {
    if (!missing_is_damage)
      return checkpoint_metadata{};
    latest = make_error(persistence_errc::corrupt,
                        "metadata file " + file_
                          + " is missing but the directory holds checkpoint "
                            "databases; run with --from-scratch to start "
                            "over");
  }
  if (latest || !is_error(latest.error(), persistence_errc::corrupt))
    return latest;
  // The latest generation is damaged: the one before it, if it is sound,
  // holds every commit but the last change.
  auto previous = read_generation(previous_file_);
  if (!previous)
    return latest;
  if (fallback_reason != nullptr)
    *fallback_reason = error_text(latest.error());
  return previous;
}

caf::expected<checkpoint_metadata>
file_metadata_handler::load(std::string* fallback_reason) const {
  std::error_code ec;
  // Checked before reading: a file that appears in between is read below.
  auto missing = !fs::exists(file_, ec) && !ec;
  return load_state(missing && has_databases(dir_), fallback_reason);
}

caf::error file_metadata_handler::reset() {
  // The generation before a reset is another job's: never fall back to it.
  if (::unlink(previous_file_.c_str()) != 0 && errno != ENOENT)
    return make_error(persistence_errc::io_error,
                      "remove " + previous_file_ + ": "
                        + std::generic_category().message(errno));
  return store(checkpoint_metadata{}, {"reset", -1});
}

caf::error file_metadata_handler::keep_previous_generation() const {
  // Only a sound file is worth keeping: after a fall-back the file being
  // replaced is the damaged one, and the previous generation stays.
  auto current = read_generation(file_);
  if (!current)
    return is_error(current.error(), persistence_errc::io_error)
      ? current.error()
      : caf::error{};
  auto tmp = detail::temp_path_of(previous_file_);
  ::unlink(tmp.c_str());
  if (::link(file_.c_str(), tmp.c_str()) != 0)
    return make_error(persistence_errc::io_error,
                      "link " + file_ + " to " + tmp + ": "
                        + std::generic_category().message(errno));
  // Made durable by the fsync of the directory after the new file's rename.
  if (::rename(tmp.c_str(), previous_file_.c_str()) != 0) {
    auto err = errno;
    ::unlink(tmp.c_str());
    return make_error(persistence_errc::io_error,
                      "rename " + tmp + " to " + previous_file_ + ": "
                        + std::generic_category().message(err));
  }
  return {};
}

caf::error file_metadata_handler::store(const checkpoint_metadata& x,
                                        const record_change& change) {
  // A reset starts a new line of generations.
  auto keep_previous = change.what != "reset";
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    return make_error(persistence_errc::io_error,
                      "create " + dir_ + ": " + ec.message());
  auto bytes = to_file_bytes(x);
  if (!faults_) {
    auto tmp = detail::temp_path_of(file_);
    if (auto err = detail::write_synced_file(tmp, bytes))
      return err;
    if (keep_previous)
      if (auto err = keep_previous_generation()) {
        ::unlink(tmp.c_str());
        return err;
      }
    return detail::rename_durably(tmp, file_);
  }
  // detail::write_file_durably, step by step for the commit.* points.
  detail::disk_damage disk{*faults_, {}, change.epoch, change.what};
  if (auto err = disk.before_bytes(fault_point::commit_write_before, bytes))
    return err;
  auto tmp = detail::temp_path_of(file_);
  if (auto err = detail::write_synced_file(tmp, bytes))
    return err;
  if (auto err = disk.at(fault_point::commit_write_after)) {
    ::unlink(tmp.c_str());
    return err;
  }
  if (auto err = disk.at(fault_point::commit_rename_before)) {
    ::unlink(tmp.c_str());
    return err;
  }
  if (keep_previous)
    if (auto err = keep_previous_generation()) {
      ::unlink(tmp.c_str());
      return err;
    }
  if (auto err = detail::rename_durably(tmp, file_))
    return err;
  return disk.at(fault_point::commit_rename_after);
}

caf::error file_metadata_handler::write_record(const checkpoint_metadata& x,
                                               const record_change& change) {
  return store(x, change);
}

caf::error file_metadata_handler::check_writable() {
  auto cannot = [&](const std::string& why) {
    return make_error(persistence_errc::not_writable,
                      "checkpoint directory " + dir_ + ": " + why);
  };
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    return cannot("cannot be created: " + ec.message());
  if (!fs::is_directory(dir_, ec))
    return cannot("is not a directory");
  // Permission bits do not tell (root ignores them, ACLs, read-only
  // mounts): try it. Not durably: this runs before every save, on the
  // epoch loop's path, and a probe that is removed at once has nothing to
  // keep (an fsync here was most of a checkpoint's stall).
  auto probe
    = (fs::path{dir_} / (".epochrt.probe." + std::to_string(::getpid())))
        .string();
  int fd
    = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    auto why = std::strerror(errno);
    return cannot(std::string{"a file cannot be created in it: "} + why);
  }
  auto written = ::write(fd, "probe", 5) == 5;
  auto closed = ::close(fd) == 0;
  ::unlink(probe.c_str());
  if (!written || !closed)
    return cannot("a file in it cannot be written");
  // A directory about to be written must hold metadata that can be
  // trusted. A fresh one gets an empty file now, before any database, so
  // that a crash before the first commit leaves databases beside metadata,
  // never beside none (which load() refuses).
  auto state = load();
  if (!state)
    return std::move(state.error());
  if (!fs::exists(file_, ec)) {
    if (auto err = store(*state, {"create", -1}))
      return err;
  }
  return {};
}

caf::expected<std::optional<checkpoint_metadata>>
file_metadata_handler::read_record() {
  // load() first: it refuses a missing file beside databases.
  auto state = load();
  if (!state)
    return std::move(state.error());
  std::error_code ec;
  if (!fs::exists(file_, ec) && !fs::exists(previous_file_, ec))
    return std::optional<checkpoint_metadata>{};
  return std::optional<checkpoint_metadata>{std::move(*state)};
}

} // namespace epochrt
