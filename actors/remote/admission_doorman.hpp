#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <caf/io/doorman.hpp>
#include <caf/io/fwd.hpp>

#include <epochrt/actors/api/network.hpp>

namespace epochrt::detail {

class admission_gate;

/// A doorman for CAF's BASP broker that hands it only admitted connections.
/// Its listening socket belongs to a thread of its own (the gate), which
/// accepts, runs the admission handshake on each raw socket with a
/// fixed-size buffer and a deadline, and passes each admitted socket to the
/// multiplexer's thread as a bounded_scribe. Until then nothing of CAF sees
/// the peer. The gate sheds connections rather than spin when the process
/// runs out of file descriptors.
///
/// Created by admission_middleman_actor::open; owned by the broker it is
/// published with, which calls every member below in the multiplexer's
/// thread.
class admission_doorman final : public caf::io::doorman {
public:
  /// Listens on `host`:`port` (0: a free port) and starts the gate.
  /// caf::sec::cannot_open_port when the address cannot be bound;
  /// caf::sec::runtime_error when no thread can be started.
  static caf::expected<caf::io::doorman_ptr>
  open(caf::io::network::default_multiplexer& mx, const std::string& host,
       uint16_t port, bool reuse_address, admission_options settings);

  ~admission_doorman() override;

  bool new_connection() override;
  void graceful_shutdown() override;
  void launch() override;
  std::string addr() const override;
  uint16_t port() const override;
  void add_to_loop() override;
  void remove_from_loop() override;

  /// Hands an admitted socket to the broker, in the multiplexer's thread.
  void admit(int fd);

private:
  admission_doorman(caf::io::network::default_multiplexer& mx,
                    std::shared_ptr<admission_gate> gate,
                    uint64_t max_message_bytes,
                    std::shared_ptr<fault_injector> faults);

  caf::io::network::default_multiplexer& mx_;
  std::shared_ptr<admission_gate> gate_;
  uint64_t max_message_bytes_;
  // The daemon's fault plan, for the scribes of admitted peers.
  std::shared_ptr<fault_injector> faults_;
  // Sockets admitted before the broker launched this doorman.
  std::vector<int> waiting_;
  bool launched_ = false;
  bool closed_ = false;
};

} // namespace epochrt::detail
