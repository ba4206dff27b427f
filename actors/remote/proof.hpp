#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace epochrt::detail {

/// Bytes of a nonce: fresh for every challenge, never reused.
constexpr size_t nonce_size = 32;

/// Bytes of a proof (HMAC-SHA256).
constexpr size_t proof_size = 32;

/// `nonce_size` bytes from OpenSSL's CSPRNG. Aborts when the generator
/// fails: without unpredictable nonces there is no authentication at all.
std::vector<char> make_nonce();

/// Who proves, and in which handshake: each signs its own domain string, so
/// that a proof sent by one side, or in one handshake, can never be replayed
/// as another's.
enum class prover { daemon, master, admitting_daemon, admitted_master };

/// HMAC-SHA256 with key `secret` over the prover's domain string, `nonce`
/// and `node`, each length-prefixed so that no two inputs collide.
std::vector<char> make_proof(const std::string& secret, prover who,
                             const std::vector<char>& nonce,
                             std::string_view node);

/// Compares in constant time, so that timing reveals nothing of `expected`.
bool same_proof(const std::vector<char>& expected,
                const std::vector<char>& got) noexcept;

} // namespace epochrt::detail
