#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/network_flags.hpp"

// `epochrt ckpt ...`: read-only views of a checkpoint directory, and its
// retention by hand (`gc`). Only `verify` of a distributed job's
// checkpoints, which asks its daemons, needs an actor system; only `gc`
// writes to the directory.

namespace epochrt::cli {

/// `epochrt ckpt ls DIR`: one line per database, "NODE EPOCH
/// complete|incomplete BYTES", then "last_committed=E" or
/// "last_committed=none". With `json`, one JSON document instead:
/// {"databases": [{"node", "epoch", "complete", "bytes"}...],
///  "committed_epochs": [...], "last_committed": E or null}.
/// exit_bad_input when DIR is not a directory.
int ckpt_ls(const std::string& dir, bool json = false);

/// The arguments of `epochrt ckpt show`.
struct ckpt_show_options {
  std::string dir;
  std::string node;
  int64_t epoch = 0;
  /// Blobs to print, in this order; empty: every blob, in manifest order.
  std::vector<std::string> blobs;
  /// One JSON document instead of lines (see ckpt_show).
  bool json = false;
};

/// `epochrt ckpt show DIR NODE EPOCH [BLOB...]`: one "BLOB=v1,v2,..." line
/// per blob. exit_failure when the checkpoint or a blob is missing,
/// incomplete or corrupt; exit_bad_input for a bad node name or epoch, or
/// when DIR is not a directory. With `json`: {"node", "epoch", "blobs":
/// [{"name", "type", "shape", "digest", "values"}...]}, the digest as 16
/// hex digits, the values row-major as JSON numbers, booleans or strings;
/// a NaN or infinite float as the string "NaN", "Infinity" or "-Infinity"
/// (JSON has no number for them). Nothing is printed unless every blob
/// reads back intact.
int ckpt_show(const ckpt_show_options& opts);

/// The arguments of `epochrt ckpt diff`.
struct ckpt_diff_options {
  std::string dir;
  std::string node;
  int64_t from_epoch = 0;
  int64_t to_epoch = 0;
  bool json = false;
};

/// `epochrt ckpt diff DIR NODE E1 E2`: what changed in NODE's checkpoint
/// from epoch E1 to E2, by the digests the manifests record (the payloads
/// are not read: `ckpt verify` checks them). One line per blob that
/// differs, "added NAME", "removed NAME" or "changed NAME" (its digest,
/// type or shape differs), E2's blobs in manifest order, then E1's removed
/// ones, and a last line "diff: A added, R removed, C changed, U
/// unchanged". With `json`: {"node", "from", "to", "added": [...],
/// "removed": [...], "changed": [...], "unchanged": [...]}. exit_ok whether
/// or not anything differs; exit_failure when either checkpoint is
/// missing, incomplete or its manifest corrupt; exit_bad_input for a bad
/// node name or epoch, or when DIR is not a directory.
int ckpt_diff(const ckpt_diff_options& opts);

/// How `ckpt verify` and `ckpt gc` reach a distributed job's daemons.
struct daemon_flags {
  /// `--node NAME=HOST:PORT`: the daemons the job's nodes ran on (as its
  /// `run` named them). Empty: everything is in DIR.
  std::vector<std::string> remote_nodes;
  /// `--replicas R`: the copies of each database on other daemons, as the
  /// run made them.
  int64_t replicas = 0;
  /// How the daemons are reached, as `run` reaches them.
  std::optional<std::string> secret_file;
  int64_t connection_timeout_ms = 5000;
  tls_flags tls;
};

/// The arguments of `epochrt ckpt verify`.
struct ckpt_verify_options {
  std::string dir;
  daemon_flags daemons;
};

/// `epochrt ckpt verify DIR`: checks every committed epoch — every node's
/// database exists, is complete and all its digests check out — printing
/// "epoch E ok" per good epoch, or "no committed epochs". exit_failure,
/// with one stderr line per problem, when any epoch is not intact;
/// exit_bad_input when DIR is not a directory.
///
/// With remote nodes, each of their databases is checked on its daemon and
/// on every other daemon named, where a copy may lie (`run --replicas`):
/// a copy found damaged or incomplete is a problem as the database itself
/// is, and with `replicas`, so are fewer intact copies than that. The
/// line of a good epoch says what was checked: "epoch E ok (D databases,
/// C copies)". Reads only; restores and repairs nothing. exit_bad_input
/// for a bad --node, --replicas or network flag; exit_failure when a
/// daemon cannot be reached.
int ckpt_verify(const ckpt_verify_options& opts);

/// The arguments of `epochrt ckpt gc`.
struct ckpt_gc_options {
  std::string dir;
  size_t keep_last = 0;
  daemon_flags daemons;
};

/// `epochrt ckpt gc DIR --keep-last K`: retention by hand, as `run
/// --keep-last K` does after each commit. Uncommits the epochs older than
/// the last K committed ones, then removes every node's databases older
/// than the oldest kept epoch, except those whose payloads a kept
/// checkpoint refers to (and leftovers of removals a crash cut short).
/// Prints "removed PATH" per database, "referenced PATH" per old database
/// kept for its payloads, and a last line "gc: kept epochs A..B, removed N
/// databases, freed BYTES bytes" (or "gc: no committed epochs").
/// exit_failure when the metadata or a kept database cannot be read
/// (nothing is removed then) or a removal fails; exit_bad_input when DIR is
/// not a directory or K is 0.
///
/// With remote nodes (`--node`, and `--replicas` as the run had it), the
/// databases are removed where they lie, on the daemons, and with them
/// their copies on each node's holders; the lines name the paths on the
/// daemons. exit_bad_input for a bad --node or network flag; exit_failure
/// when a daemon cannot be reached or a kept database read there.
int ckpt_gc(const ckpt_gc_options& opts);

} // namespace epochrt::cli
