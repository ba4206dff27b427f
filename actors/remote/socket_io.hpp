#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include <caf/error.hpp>

// Blocking reads and writes with a deadline on a raw TCP socket, for the
// few connections epochrt handles outside CAF: the admission handshake and
// the byte streams of checkpoint copies. Sockets may be blocking or not;
// nothing here raises SIGPIPE.

namespace epochrt::detail {

using socket_clock = std::chrono::steady_clock;

/// Closes the socket unless released: a failed exchange leaks nothing.
class socket_guard {
public:
  explicit socket_guard(int fd) noexcept : fd_(fd) {
    // nop
  }
  ~socket_guard();
  socket_guard(const socket_guard&) = delete;
  socket_guard& operator=(const socket_guard&) = delete;
  int get() const noexcept {
    return fd_;
  }
  int release() noexcept;

private:
  int fd_;
};

/// Waits until `fd` is ready for `events` (poll's); false at the deadline.
/// True on a poll error too: the read or write that follows reports it.
bool wait_for(int fd, short events, socket_clock::time_point deadline);

/// Sends every byte of `bytes`. caf::sec::connection_timeout at the
/// deadline; caf::sec::disconnect_during_handshake when the peer closed or
/// reset the connection.
caf::error send_all(int fd, std::string_view bytes,
                    socket_clock::time_point deadline);

/// Receives exactly `size` bytes into `out`. Errors as for send_all.
caf::error receive_all(int fd, char* out, size_t size,
                       socket_clock::time_point deadline);

} // namespace epochrt::detail
