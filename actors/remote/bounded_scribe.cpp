#include <epochrt/actors/remote/bounded_scribe.hpp>

#include <cstdlib>
#include <string>

#include <sys/socket.h>

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/operation.hpp>

#include <epochrt/actors/detail/log.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt::detail {

bounded_scribe::bounded_scribe(caf::io::network::default_multiplexer& mx,
                               int fd, uint64_t max_read_bytes,
                               std::shared_ptr<fault_injector> faults)
  : scribe_impl(mx, fd), max_read_bytes_(max_read_bytes),
    faults_(std::move(faults)) {
  // nop
}

void bounded_scribe::remove_from_loop() {
  scribe_impl::remove_from_loop();
  // After the multiplexer has applied this iteration's events: a stream
  // still in the loop gets its own removal (and the reset) from CAF then;
  // one that never got there holds the reference still. The task holds
  // this scribe until it has run.
  caf::intrusive_ptr<bounded_scribe> self{this};
  stream_.backend().post([self] {
    if ((self->stream_.eventbf() & caf::io::network::input_mask) == 0)
      self->stream_.removed_from_loop(caf::io::network::operation::read);
  });
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

bool bounded_scribe::strike_heartbeat(const void* buf, size_t size,
                                      bool& twice) {
  // BASP reads a header, then exactly the payload it announced, if any.
  if (in_payload_) {
    in_payload_ = false;
    return false;
  }
  if (size != caf::io::basp::header_size)
    return false;
  caf::io::basp::header hdr;
  caf::binary_deserializer source{nullptr, static_cast<const char*>(buf), size};
  if (source(hdr))
    return false;
  if (hdr.payload_len > 0) {
    in_payload_ = true;
    return false;
  }
  if (!caf::io::basp::is_heartbeat(hdr))
    return false;
  if (partitioned_until_ > std::chrono::steady_clock::now())
    return true;
  fault_site site{{}, -1, "heartbeat"};
  auto action = strike(faults_.get(), fault_point::remote_heartbeat, site);
  switch (action.kind) {
    case fault_kind::none:
      return false;
    case fault_kind::duplicate:
      twice = true;
      return false;
    case fault_kind::drop:
    case fault_kind::delay:
      return true;
    case fault_kind::partition:
      partitioned_until_ = std::chrono::steady_clock::now()
        + std::chrono::milliseconds{action.ms};
      log(stream_.backend().system())
        .warn("no heartbeat from {} reaches CAF for {} ms (fault plan)", addr(),
              action.ms);
      return true;
    case fault_kind::kill_node:
      kill_process(error_text(
        injected_error(fault_point::remote_heartbeat, site, action)));
    case fault_kind::freeze_node:
      freeze_process(error_text(
        injected_error(fault_point::remote_heartbeat, site, action)));
      return false;
    default:
      return false;
  }
}

bool bounded_scribe::consume(caf::execution_unit* ctx, const void* buf,
                             size_t size) {
  // Every read is followed, so that a header is told from a payload.
  if (faults_ != nullptr && refused_size_ == 0) {
    bool twice = false;
    if (strike_heartbeat(buf, size, twice))
      return true; // Taken away: BASP still waits for a header.
    if (twice && !scribe::consume(ctx, buf, size))
      return false;
  }
  auto result = scribe::consume(ctx, buf, size);
  if (refused_size_ == 0)
    return result;
  log(stream_.backend().system())
    .warn("closed the connection from {}: it announced a message of {} "
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
