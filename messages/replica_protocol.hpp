#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/atom.hpp>

#include <epochrt/messages/checkpoint_records.hpp>
#include <epochrt/messages/message_fields.hpp>

// How node daemons copy checkpoint databases to each other (`--replicas`),
// over their own authenticated connections, never through the master.
// Each daemon has one replica store actor, which keeps the copies it holds
// of other nodes' databases and serves its own and its copies for restores;
// another daemon reaches it by asking the daemon's gatekeeper:
//
//   daemon -> gatekeeper:   replica_store_atom        -> the store actor
//
// A copy is pushed by the persistence actor of the node that wrote the
// database, once its write is durable, one database at a time (the epoch's
// own and, before it, each earlier one whose data file it refers to that
// the holder lacks):
//
//   owner -> store:  copy_offer    -> copy_ticket (0: held already)
//                    copy_data ... -> unit (each; several in flight)
//                    copy_close    -> unit, once the copy is durable
//
// or, when the offer asks for a stream and the store takes streams (its
// daemon does not use TLS), the ticket holds a token and the bytes go on a
// connection of their own (actors/remote/copy_stream_receiver.hpp), which
// passes the same admission handshake as every connection to the daemon.
//
// A restore (a node whose database is missing or damaged where it runs)
// is pulled by the node's persistence actor from a daemon that holds it:
//
//   node -> store:   copy_list     -> copy_listings
//                    copy_open     -> copy_ticket
//                    copy_read ... -> copy_piece (the last with its digest)
//
// or, when the open asks for a stream and the store takes streams, the
// file's bytes and digest come on a copy stream presenting the ticket's
// token.
//
// The master's commit record is kept on every daemon too (through a node's
// persistence actor: keep_commit_record, fetch_commit_record), and
// retention removes copies with their epoch:
//
//   owner -> store:  copy_prune    -> pruned_checkpoints
//
// Paths in these messages are as the master names them; each daemon places
// them under its own checkpoint root. Files are named by their plain name
// inside the database directory.

namespace epochrt {

using replica_store_atom = caf::atom_constant<caf::atom("ert_rstor")>;

/// One file of a checkpoint database directory.
struct database_file {
  std::string name;
  uint64_t bytes = 0;
};

/// One node's database of one epoch, as a copy needs it: its files, and
/// what tells one write of it from another (its data file's id, 0 when it
/// has none, and the digest of its manifest record).
struct database_listing {
  int64_t epoch = -1;
  uint64_t data_id = 0;
  uint64_t manifest_digest = 0;
  std::vector<database_file> files;
};

/// Owner: "here is database `db` of `node`"; the store answers with a
/// transfer's ticket, or 0 when it holds that very database already.
struct copy_offer {
  std::string node;
  std::string db;
  database_listing listing;
  /// The owner would send the bytes on a copy stream.
  bool stream = false;
};

/// A transfer (or, for copy_open, a read) under way at a store; 0: none.
/// `token`: for an offer or an open that asked for a stream, the one-time
/// token the stream presents; empty when the store takes no streams (the
/// bytes then go as copy_data, or copy_piece).
struct copy_ticket {
  uint64_t id = 0;
  std::vector<char> token = {};
};

/// Bytes of file `file` of a transfer, from `offset` on. Pieces of one
/// transfer may arrive out of order (several are in flight, each from its
/// own requester): the store writes each file's pieces in offset order.
struct copy_data {
  uint64_t ticket = 0;
  std::string file;
  uint64_t offset = 0;
  std::vector<char> bytes;
};

/// The end of a transfer: the XXH3-64 of each file's bytes, in the order
/// of the listing's files. The store checks them, makes the copy durable
/// and swaps it in, then replies.
struct copy_close {
  uint64_t ticket = 0;
  std::vector<uint64_t> digests;
};

/// Restore: what a copy of `node`'s database `db` of `epoch` needs, from
/// the store's daemon.
struct copy_list {
  std::string node;
  std::string db;
  int64_t epoch = -1;
};

/// The databases of a copy, those it refers to first, `db` itself last.
struct copy_listings {
  std::vector<database_listing> databases;
};

/// Restore: start reading file `file` of database `db` (one of a
/// copy_listings) from its first byte.
struct copy_open {
  std::string node;
  std::string db;
  std::string file;
  /// The reader would take the bytes on a copy stream.
  bool stream = false;
};

/// Restore: the next at most `max_bytes` of the read `ticket`.
struct copy_read {
  uint64_t ticket = 0;
  uint64_t max_bytes = 0;
};

/// What a copy_read got: bytes, and at the end of the file (`last`) the
/// XXH3-64 of all of them; the read is over then.
struct copy_piece {
  std::vector<char> bytes;
  bool last = false;
  uint64_t digest = 0;
};

/// Retention: remove the store's copies of `node`'s databases older than
/// `kept` (prune_checkpoints' rule).
struct copy_prune {
  std::string node;
  std::vector<std::string> kept;
};

/// Master -> a node's persistence actor on a daemon: keep `record`, the
/// master's commit record of its checkpoint directory `dir` (as the master
/// names it), beside the databases there, so that a master on a new host
/// can resume from it. Answered with nothing once it is durable.
struct keep_commit_record {
  std::string node;
  std::string dir;
  checkpoint_metadata record;
};

/// Master -> a node's persistence actor on a daemon: the commit record kept
/// for `dir`. Replies checkpoint_metadata; persistence_errc::not_found when
/// none is kept.
struct fetch_commit_record {
  std::string node;
  std::string dir;
};

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_REPLICA_MESSAGES(X)                           \
  X(keep_commit_record, node, dir, record)                    \
  X(fetch_commit_record, node, dir)                           \
  X(database_file, name, bytes)                               \
  X(database_listing, epoch, data_id, manifest_digest, files) \
  X(copy_offer, node, db, listing, stream)                    \
  X(copy_ticket, id, token)                                   \
  X(copy_data, ticket, file, offset, bytes)                   \
  X(copy_close, ticket, digests)                              \
  X(copy_list, node, db, epoch)                               \
  X(copy_listings, databases)                                 \
  X(copy_open, node, db, file, stream)                        \
  X(copy_read, ticket, max_bytes)                             \
  X(copy_piece, bytes, last, digest)                          \
  X(copy_prune, node, kept)

EPOCHRT_REPLICA_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

} // namespace epochrt
