#include "actors/detail/bounded_scribe.hpp"

#include <sys/socket.h>

#include <caf/io/network/operation.hpp>

#include "actors/detail/log.hpp"

namespace epochrt::detail {

bounded_scribe::bounded_scribe(caf::io::network::default_multiplexer& mx,
                               int fd, uint64_t max_read_bytes)
  : scribe_impl(mx, fd), max_read_bytes_(max_read_bytes) {
  // nop
}

void bounded_scribe::configure_read(caf::io::receive_policy::config config) {
  if (config.second > max_read_bytes_) {
    // Keep the previous (small) read size: the buffer is never grown, and
    // consume() closes the connection before another byte is read.
    refused_size_ = config.second;
    return;
  }
  scribe_impl::configure_read(config);
}

bool bounded_scribe::consume(caf::execution_unit* ctx, const void* buf,
                             size_t size) {
  auto result = scribe::consume(ctx, buf, size);
  if (refused_size_ == 0)
    return result;
  log().warn("closed the connection from {}: it announced a message of {} "
             "bytes, more than the {} this daemon accepts "
             "(--max-tensor-bytes)",
             addr(), refused_size_, max_read_bytes_);
  ::shutdown(stream_.fd(), SHUT_RDWR);
  // What CAF's own stream does on a failed read: the broker is told the
  // connection closed (BASP forgets the peer), and reading stops.
  io_failure(ctx, caf::io::network::operation::read);
  return false;
}

} // namespace epochrt::detail
