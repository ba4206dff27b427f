#pragma once

#include <cstddef>
#include <cstdint>

#include <caf/io/network/scribe_impl.hpp>

namespace epochrt::detail {

/// A TCP scribe that refuses to read a message longer than a bound. CAF's
/// BASP broker reads a 32-byte header and then asks its scribe for exactly
/// the payload length the header announces, allocating that buffer before
/// a byte of it arrives; this scribe closes the connection instead when the
/// announced length exceeds `max_read_bytes`, so a peer cannot make this
/// process hold more than that per connection.
///
/// Lives in the multiplexer's thread, like every CAF servant.
class bounded_scribe final : public caf::io::network::scribe_impl {
public:
  bounded_scribe(caf::io::network::default_multiplexer& mx, int fd,
                 uint64_t max_read_bytes);

  void configure_read(caf::io::receive_policy::config config) override;

  bool consume(caf::execution_unit* ctx, const void* buf, size_t size) override;

private:
  uint64_t max_read_bytes_;
  // The read size asked for beyond the bound; zero while within it.
  size_t refused_size_ = 0;
};

} // namespace epochrt::detail
