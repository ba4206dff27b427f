#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include <epochrt/actors/remote/proof.hpp>

namespace epochrt::detail {

// The admission handshake: the first bytes on every connection to a node
// daemon, exchanged on the raw socket before the connection is handed to
// CAF's BASP broker. Every message has a fixed size, so a peer can make the
// daemon hold no more than these few bytes before it has proven that it
// knows the daemon's secret; BASP, which allocates whatever a header
// announces, only ever sees admitted peers. The master speaks first, so that
// a TLS daemon (which waits for a ClientHello) refuses a plain master at
// once instead of both sides waiting.
//
//   master -> daemon  hello:     magic(16) flags(1) master_nonce(32)
//   daemon -> master  challenge: magic(16) flags(1) daemon_nonce(32)
//   master -> daemon  proof:     proof(32)
//   daemon -> master  verdict:   status(1) proof(32)
//
// flags bit 0: the sender has a secret. Bit 1, from a master (a daemon
// pushing a checkpoint copy): once admitted, the connection carries a copy's
// byte stream (copy_stream_receiver.hpp), not BASP. The proofs are HMAC-SHA256
// with the secret over both nonces (make_proof, prover::admitted_master and
// prover::admitting_daemon); all zeros from a side without a secret. The
// daemon's proof is sent only with an `admitted` verdict.

constexpr size_t admission_magic_size = 16;
constexpr size_t admission_hello_size = admission_magic_size + 1 + nonce_size;
constexpr size_t admission_proof_size = proof_size;
constexpr size_t admission_verdict_size = 1 + proof_size;

/// What a daemon answers to a master's proof.
enum class admission_status : uint8_t {
  admitted = 0,
  /// The daemon requires a secret and the master has none.
  master_has_no_secret = 1,
  /// The master's proof does not match the daemon's secret.
  wrong_secret = 2,
  /// The master's hello was not epochrt's.
  malformed = 3,
  /// The master asked for a byte stream and the daemon takes none.
  stream_refused = 4,
};

/// What an admitted connection carries.
enum class admission_purpose : uint8_t {
  /// CAF's BASP: the connection is handed to the middleman.
  basp,
  /// A checkpoint copy's bytes (copy_stream_receiver.hpp).
  copy_stream,
};

/// The opening message of either side (the daemon's is its challenge,
/// always for BASP).
std::string
make_admission_hello(bool has_secret, const std::vector<char>& nonce,
                     admission_purpose purpose = admission_purpose::basp);

/// Reads a hello of exactly `admission_hello_size` bytes; false when it is
/// not one.
bool parse_admission_hello(std::string_view hello, bool& has_secret,
                           std::vector<char>& nonce,
                           admission_purpose& purpose);

/// The master's proof for the daemon (zeros without a secret).
std::string make_admission_proof(const std::optional<std::string>& secret,
                                 const std::vector<char>& daemon_nonce,
                                 const std::vector<char>& master_nonce);

/// Checks a master's `proof` against the daemon's `secret` (none: every
/// master is admitted).
admission_status check_admission_proof(std::string_view proof,
                                       bool master_has_secret,
                                       const std::optional<std::string>& secret,
                                       const std::vector<char>& daemon_nonce,
                                       const std::vector<char>& master_nonce);

/// The daemon's last message: `status`, and its own proof when it admits a
/// master and has a secret.
std::string make_admission_verdict(admission_status status,
                                   const std::optional<std::string>& secret,
                                   const std::vector<char>& daemon_nonce,
                                   const std::vector<char>& master_nonce);

/// How many descriptors, of a process limit of `limit`, the admission gate
/// leaves to the rest of the daemon: it never holds a connection whose
/// descriptor is numbered `limit - headroom` or above. Idle peers that have
/// not proven themselves must not starve what the daemon does for its master
/// (the master's connection, LevelDB and checkpoint files, CAF's own), nor
/// the sanitizers: UBSan's vptr check opens a pipe to probe the memory it
/// checks and, without a free descriptor, reports a valid object as one
/// with an invalid vptr.
constexpr uint64_t admission_descriptor_headroom(uint64_t limit) {
  return limit / 16 > 8 ? limit / 16 : 8;
}

/// Turns Nagle's algorithm off on a connected TCP socket: BASP's small
/// request/reply messages would otherwise wait for ACKs. Best effort.
void set_tcp_nodelay(int fd);

/// The master's side: connects to `host`:`port`, passes the admission
/// handshake with `secret` and checks the daemon's proof, all within
/// `timeout`. Returns the connected socket, which the caller owns and hands
/// to CAF. Errors: caf::sec::cannot_connect_to_node (nothing listens or the
/// host is unknown), caf::sec::connection_timeout, caf::sec::
/// disconnect_during_handshake (closed mid-handshake, e.g. TLS on one side
/// only), actors_errc::unreachable (the peer does not speak the handshake),
/// actors_errc::auth_failed (a side lacks the secret, or the secrets differ).
/// Blocks the calling thread.
/// `purpose`: what the connection carries once admitted; a daemon that
/// takes no copy streams refuses one with actors_errc::unreachable.
caf::expected<int> connect_admitted(const std::string& host, uint16_t port,
                                    const std::optional<std::string>& secret,
                                    std::chrono::milliseconds timeout,
                                    admission_purpose purpose
                                    = admission_purpose::basp);

} // namespace epochrt::detail
