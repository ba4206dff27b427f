#include <epochrt/actors/remote/socket_io.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/sec.hpp>

namespace epochrt::detail {

namespace {

int remaining_ms(socket_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
    deadline - socket_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

} // namespace

socket_guard::~socket_guard() {
  if (fd_ >= 0)
    ::close(fd_);
}

int socket_guard::release() noexcept {
  return std::exchange(fd_, -1);
}

bool wait_for(int fd, short events, socket_clock::time_point deadline) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    auto n = ::poll(&pfd, 1, remaining_ms(deadline));
    if (n > 0)
      return true;
    if (n == 0)
      return false;
    if (errno != EINTR)
      return true; // The following read or write reports the error.
  }
}

caf::error send_all(int fd, std::string_view bytes,
                    socket_clock::time_point deadline) {
  while (!bytes.empty()) {
    // MSG_DONTWAIT: a blocking socket waits in wait_for, within the
    // deadline, never in send.
    auto n
      = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline))
        return caf::sec::connection_timeout;
      continue;
    }
    return caf::sec::disconnect_during_handshake;
  }
  return {};
}

caf::error receive_all(int fd, char* out, size_t size,
                       socket_clock::time_point deadline) {
  size_t got = 0;
  while (got < size) {
    auto n = ::recv(fd, out + got, size - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLIN, deadline))
        return caf::sec::connection_timeout;
      continue;
    }
    return caf::sec::disconnect_during_handshake;
  }
  return {};
}

} // namespace epochrt::detail
