#include <epochrt/persistence/detail/fs_util.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <epochrt/persistence/persistence_errc.hpp>

namespace fs = std::filesystem;

namespace epochrt::detail {

namespace {

caf::error io_error(std::string_view what, const std::error_code& ec) {
  return make_error(persistence_errc::io_error,
                    std::string{what} + ": " + ec.message());
}

// Closes a file descriptor on scope exit.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

std::string errno_text(std::string_view what, int err) {
  return std::string{what} + ": " + std::strerror(err);
}

caf::error io_error(std::string_view what, int err) {
  return make_error(persistence_errc::io_error, errno_text(what, err));
}

std::string parent_dir(const std::string& path) {
  auto parent = fs::path{path}.lexically_normal().parent_path();
  return parent.empty() ? std::string{"."} : parent.string();
}

caf::error create_parent_dirs(const std::string& path) {
  auto parent = parent_dir(path);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    return io_error("create " + parent, ec);
  return {};
}

caf::expected<size_t> pread_full(int fd, char* into, size_t size,
                                 uint64_t offset, const std::string& file) {
  size_t got = 0;
  while (got < size) {
    auto n
      = ::pread(fd, into + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return make_error(persistence_errc::io_error,
                        errno_text("read " + file, errno));
    if (n == 0)
      break;
    got += static_cast<size_t>(n);
  }
  return got;
}

caf::error pwrite_all(int fd, const char* bytes, size_t size, uint64_t offset,
                      const std::string& file) {
  while (size > 0) {
    auto n = ::pwrite(fd, bytes, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return io_error("write " + file, errno);
    }
    if (n == 0)
      return io_error("write " + file, EIO);
    bytes += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return {};
}

caf::error fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return io_error("open " + path, errno);
  fd_guard guard{fd};
  if (::fsync(fd) != 0)
    return io_error("fsync " + path, errno);
  return {};
}

void start_writeback(int fd, uint64_t& from, uint64_t end) noexcept {
  if (end < from || end - from < writeback_bytes)
    return;
  static_cast<void>(::sync_file_range(fd, static_cast<off_t>(from),
                                      static_cast<off_t>(end - from),
                                      SYNC_FILE_RANGE_WRITE));
  from = end;
}

caf::error fsync_dir_files(const std::string& dir) {
  std::error_code ec;
  for (auto it = fs::directory_iterator{dir, ec}; !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec))
      if (auto err = fsync_path(it->path().string()))
        return err;
  }
  if (ec)
    return io_error("list " + dir, ec);
  return fsync_path(dir);
}

caf::error remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec)
    return io_error("remove " + path, ec);
  return {};
}

uint64_t tree_bytes(const std::string& dir) noexcept {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator{dir, ec};
       !ec && it != fs::end(it); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      auto size = it->file_size(size_ec);
      if (!size_ec)
        total += size;
    }
  }
  return total;
}

caf::expected<std::string> swap_into_place(const std::string& from,
                                           const std::string& to) {
  std::error_code ec;
  bool had_old = fs::exists(fs::symlink_status(to, ec));
  if (!had_old) {
    if (::rename(from.c_str(), to.c_str()) != 0)
      return io_error("rename " + from + " to " + to, errno);
    return std::string{};
  }
  // Swap atomically: `to` is never missing, `from` then holds the old one.
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE)
      == 0)
    return from;
  int exchange_errno = errno;
  if (exchange_errno != EINVAL && exchange_errno != ENOSYS
      && exchange_errno != ENOTSUP)
    return io_error("exchange " + from + " with " + to, exchange_errno);
  auto aside = to + ".old";
  if (auto err = remove_tree(aside))
    return err;
  if (::rename(to.c_str(), aside.c_str()) != 0)
    return io_error("rename " + to + " to " + aside, errno);
  if (::rename(from.c_str(), to.c_str()) != 0) {
    int err = errno;
    ::rename(aside.c_str(), to.c_str()); // put the old one back
    return io_error("rename " + from + " to " + to, err);
  }
  return aside;
}

caf::error replace_path(const std::string& from, const std::string& to) {
  auto old = swap_into_place(from, to);
  if (!old)
    return std::move(old.error());
  if (auto err = fsync_path(parent_dir(to)))
    return err;
  if (old->empty())
    return {};
  return remove_tree(*old);
}

std::string temp_path_of(const std::string& path) {
  return path + ".tmp";
}

caf::error write_synced_file(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error("create " + path, errno);
  fd_guard guard{fd};
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::unlink(path.c_str());
      return io_error("write " + path, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    return io_error("fsync " + path, err);
  }
  return {};
}

caf::error rename_durably(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    int err = errno;
    ::unlink(from.c_str());
    return io_error("rename " + from + " to " + to, err);
  }
  return fsync_path(parent_dir(to));
}

caf::error write_file_durably(const std::string& path, std::string_view bytes) {
  auto tmp = temp_path_of(path);
  if (auto err = write_synced_file(tmp, bytes))
    return err;
  return rename_durably(tmp, path);
}

caf::expected<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // ENOTDIR: a parent is a regular file, so nothing can ever be there.
    if (errno == ENOENT || errno == ENOTDIR)
      return make_error(persistence_errc::not_found, path + " does not exist");
    return io_error("open " + path, errno);
  }
  fd_guard guard{fd};
  std::string result;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return io_error("read " + path, errno);
    }
    if (n == 0)
      break;
    result.append(buf, static_cast<size_t>(n));
  }
  return result;
}

} // namespace epochrt::detail
