#include "bench/file_baseline.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace epochrt::bench {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path);
}

class fd_guard {
public:
  explicit fd_guard(int fd) : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const noexcept {
    return fd_;
  }
  int release() noexcept {
    auto fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_;
};

// Reads `size` bytes at `offset`, across short reads and EINTR. Throws
// when the file ends early or a read fails.
void read_exactly(int fd, char* into, size_t size, off_t offset,
                  const std::string& path) {
  size_t done = 0;
  while (done < size) {
    auto n = ::pread(fd, into + done, size - done,
                     offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      fail("read", path);
    }
    if (n == 0)
      throw std::runtime_error(path + " ends early");
    done += static_cast<size_t>(n);
  }
}

} // namespace

timing file_write(const std::string& path,
                  const std::vector<blob_bytes>& blobs) {
  stopwatch watch;
  fd_guard fd{
    ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
  if (fd.get() < 0)
    fail("create", path);
  for (auto& b : blobs) {
    size_t done = 0;
    while (done < b.size) {
      auto n = ::write(fd.get(), b.data + done, b.size - done);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        fail("write", path);
      }
      done += static_cast<size_t>(n);
    }
  }
  if (::fdatasync(fd.get()) != 0)
    fail("fdatasync", path);
  if (::close(fd.release()) != 0)
    fail("close", path);
  return watch.elapsed();
}

timing file_read(const std::string& path,
                 const std::vector<blob_bytes>& blobs) {
  size_t largest = 0;
  for (auto& b : blobs)
    largest = std::max(largest, b.size);
  std::vector<char> buffer(largest, 1); // touched: reused, as for LevelDB
  stopwatch watch;
  fd_guard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.get() < 0)
    fail("open", path);
  off_t offset = 0;
  for (auto& b : blobs) {
    read_exactly(fd.get(), buffer.data(), b.size, offset, path);
    auto edge = std::min<size_t>(8, b.size);
    if (std::memcmp(buffer.data(), b.data, edge) != 0
        || std::memcmp(buffer.data() + b.size - edge, b.data + b.size - edge,
                       edge)
          != 0)
      throw std::runtime_error(path + ": blob " + std::string{b.name}
                               + " reads back different");
    offset += static_cast<off_t>(b.size);
  }
  return watch.elapsed();
}

timing file_read_fresh(const std::string& path,
                       const std::vector<blob_bytes>& blobs) {
  std::vector<std::vector<char>> values;
  values.reserve(blobs.size());
  stopwatch watch;
  fd_guard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.get() < 0)
    fail("open", path);
  off_t offset = 0;
  for (auto& b : blobs) {
    auto& buffer = values.emplace_back(b.size);
    read_exactly(fd.get(), buffer.data(), b.size, offset, path);
    if (b.size > 0 && buffer.back() != b.data[b.size - 1])
      throw std::runtime_error(path + ": blob " + std::string{b.name}
                               + " reads back different");
    offset += static_cast<off_t>(b.size);
  }
  return watch.elapsed();
}

} // namespace epochrt::bench
