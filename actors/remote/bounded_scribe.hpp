#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <caf/io/network/scribe_impl.hpp>

namespace epochrt {
class fault_injector;
} // namespace epochrt

namespace epochrt::detail {

/// A TCP scribe that refuses to read a message longer than a bound. CAF's
/// BASP broker reads a 32-byte header and then asks its scribe for exactly
/// the payload length the header announces, allocating that buffer before
/// a byte of it arrives; this scribe closes the connection instead when the
/// announced length exceeds `max_read_bytes`, so a peer cannot make this
/// process hold more than that per connection.
///
/// With a fault plan, it is also where remote.heartbeat strikes: at each
/// BASP heartbeat the peer sends (site: no node — a connection carries all
/// of a master's nodes —, epoch -1, detail "heartbeat"). A heartbeat only
/// refreshes CAF's silence clock for the connection, so:
///
/// - drop: the heartbeat does not reach CAF;
/// - delay: likewise — a servant has no timer to hand CAF the bytes later,
///   and a heartbeat that arrives late has refreshed nothing meanwhile; the
///   next one refreshes the clock as a late one would;
/// - duplicate: CAF sees it twice (harmless);
/// - partition: no heartbeat of this connection reaches CAF for `ms`; other
///   messages still do, so an idle master is lost, as in a real partition,
///   when `ms` is at least the daemon's connection timeout (CAF closes the
///   connection; the master sees its nodes lost);
/// - kill_node: the daemon process dies (SIGKILL); freeze_node: it stops
///   (SIGSTOP), so its own heartbeats stop too.
///
/// Lives in the multiplexer's thread, like every CAF servant.
class bounded_scribe final : public caf::io::network::scribe_impl {
public:
  bounded_scribe(caf::io::network::default_multiplexer& mx, int fd,
                 uint64_t max_read_bytes,
                 std::shared_ptr<fault_injector> faults = nullptr);

  void configure_read(caf::io::receive_policy::config config) override;

  bool consume(caf::execution_unit* ctx, const void* buf, size_t size) override;

  /// Also drops the stream's reference to this scribe when CAF would not.
  /// CAF 0.17 squashes an "add to the loop" and a "remove from the loop" of
  /// one loop iteration into nothing, and then never tells the stream it
  /// left the loop: a scribe closed before the multiplexer registered it
  /// (CAF's broker does that to a connection a heartbeat tick finds in its
  /// handshake) kept itself alive forever.
  void remove_from_loop() override;

private:
  uint64_t max_read_bytes_;
  // The read size asked for beyond the bound; zero while within it.
  size_t refused_size_ = 0;
  std::shared_ptr<fault_injector> faults_;
  // The payload BASP reads next (after a header that announced one).
  bool in_payload_ = false;
  std::chrono::steady_clock::time_point partitioned_until_;

  // True when the heartbeat header in this read is taken away by a fault;
  // sets `twice` when CAF is to see it twice.
  bool strike_heartbeat(const void* buf, size_t size, bool& twice);
};

} // namespace epochrt::detail
