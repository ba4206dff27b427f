#include <epochrt/persistence/dir_lock.hpp>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <epochrt/persistence/detail/fs_util.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

namespace epochrt {

namespace {

// Who the refusal names: the pid LOCK records when it reads as one (a
// positive decimal number and a line break at most), "another process"
// otherwise: the file may be empty (its holder has not written it yet) or
// hold anything a crashed or foreign program left.
std::string holder_of(int fd) {
  char buf[32];
  ssize_t n;
  do {
    n = ::pread(fd, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0)
    return "another process";
  std::string text{buf, static_cast<size_t>(n)};
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  auto digits = !text.empty() && text.size() <= 10 && text[0] != '0';
  for (auto c : text)
    digits = digits && c >= '0' && c <= '9';
  return digits ? "process " + text : "another process";
}

} // namespace

dir_lock::dir_lock(std::string dir, int fd) noexcept
  : dir_(std::move(dir)), fd_(fd) {
  // nop
}

dir_lock::dir_lock(dir_lock&& other) noexcept
  : dir_(std::move(other.dir_)), fd_(std::exchange(other.fd_, -1)) {
  other.dir_.clear();
}

dir_lock& dir_lock::operator=(dir_lock&& other) noexcept {
  if (this != &other) {
    release();
    dir_ = std::move(other.dir_);
    other.dir_.clear();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

dir_lock::~dir_lock() {
  release();
}

void dir_lock::release() noexcept {
  // Closing the only descriptor of the open file description drops the
  // flock; LOCK stays (see the header).
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

caf::expected<dir_lock> dir_lock::acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(persistence_errc::io_error,
                      "cannot create " + dir + ": " + ec.message());
  auto path = (std::filesystem::path{dir} / file_name).string();
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return detail::io_error("cannot open " + path, errno);
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    auto err = errno;
    auto holder = err == EWOULDBLOCK ? holder_of(fd) : std::string{};
    ::close(fd);
    if (err == EWOULDBLOCK)
      return make_error(persistence_errc::locked,
                        dir + " is in use by " + holder
                          + " (one job per directory: it holds " + path + ")");
    return detail::io_error("cannot lock " + path, err);
  }
  // Ours now: record who holds it, for the next one's refusal. A failure
  // here (a full disk) leaves the lock as good, only a refusal less
  // telling ("another process"), so it is not an error.
  auto pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0)
    static_cast<void>(detail::pwrite_all(fd, pid.data(), pid.size(), 0, path));
  return dir_lock{dir, fd};
}

} // namespace epochrt
