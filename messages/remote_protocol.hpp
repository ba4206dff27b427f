#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

// How a master attaches a node to a node daemon (`epochrt node`), before any
// job message is obeyed. The daemon publishes one actor, its gatekeeper,
// which answers only these two requests:
//
//   master -> gatekeeper: remote_hello     -> remote_challenge
//   master -> gatekeeper: remote_attach    -> remote_attached
//
// With a shared secret both sides prove that they know it, each over a nonce
// the other chose: the daemon's proof is in `remote_challenge`, the master's
// in `remote_attach`. Only then does the master receive the actor that hosts
// the node. Proofs are HMAC-SHA256 over a domain string, the nonce and the
// node name (make_proof in actors/remote/proof.hpp).

namespace epochrt {

/// The version of this protocol; a daemon refuses any other. 2: the
/// exchanges' relayed messages are acknowledged (exchange_relay_ack). 3: a
/// small all-reduce goes up and down a tree of the processes
/// (runtime/collective_run.hpp), whose parts a process forwards for others.
/// 4: a node saves only by begin_save and end_save (save_checkpoint is
/// gone), which name the save by an id. 5: a daemon keeps each group's
/// plan, which the master then sends as its key alone (run_tasks).
constexpr uint32_t remote_protocol_version = 5;

/// Master: "I want node `node` hosted here". `client_nonce` is fresh random
/// bytes the daemon must answer over.
struct remote_hello {
  uint32_t version = remote_protocol_version;
  std::string node;
  std::vector<char> client_nonce;
};

/// Daemon: a fresh nonce for the master to answer over, and, when the
/// daemon has a secret, its own proof over the master's nonce.
struct remote_challenge {
  std::vector<char> nonce;
  bool secret_required = false;
  std::vector<char> proof;
};

/// Master: the node to attach and its proof over the daemon's nonce (empty
/// without a secret). A non-empty `declined` says why the master will not
/// use this daemon (its proof was wrong, or only one side has a secret):
/// the daemon logs it and attaches nothing, so both sides report the
/// failure.
struct remote_attach {
  std::string node;
  std::vector<char> nonce;
  std::vector<char> proof;
  std::string declined;
};

/// Daemon: the actor that hosts the node for this master — job, workspace
/// and checkpoint requests all go to it —, the daemon's limits, and the
/// endpoint of its exchange, where the tasks of other nodes reach the
/// channels and collectives of the daemon's nodes (exchange_protocol.hpp).
struct remote_attached {
  caf::actor gate;
  uint64_t max_tensor_bytes = 0;
  caf::actor exchange;
};

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_REMOTE_MESSAGES(X)                   \
  X(remote_hello, version, node, client_nonce)       \
  X(remote_challenge, nonce, secret_required, proof) \
  X(remote_attach, node, nonce, proof, declined)     \
  X(remote_attached, gate, max_tensor_bytes, exchange)

EPOCHRT_REMOTE_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

} // namespace epochrt
