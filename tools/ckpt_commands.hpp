#pragma once

#include <cstdint>
#include <string>
#include <vector>

// `epochrt ckpt ...`: read-only views of a checkpoint directory. None of
// them needs an actor system; none of them writes to the directory.

namespace epochrt::cli {

/// `epochrt ckpt ls DIR`: one line per database, "NODE EPOCH
/// complete|incomplete BYTES", then "last_committed=E" or
/// "last_committed=none". exit_bad_input when DIR is not a directory.
int ckpt_ls(const std::string& dir);

/// The arguments of `epochrt ckpt show`.
struct ckpt_show_options {
  std::string dir;
  std::string node;
  int64_t epoch = 0;
  /// Blobs to print, in this order; empty: every blob, in manifest order.
  std::vector<std::string> blobs;
};

/// `epochrt ckpt show DIR NODE EPOCH [BLOB...]`: one "BLOB=v1,v2,..." line
/// per blob. exit_failure when the checkpoint or a blob is missing,
/// incomplete or corrupt; exit_bad_input for a bad node name or epoch, or
/// when DIR is not a directory.
int ckpt_show(const ckpt_show_options& opts);

/// `epochrt ckpt verify DIR`: checks every committed epoch — every node's
/// database exists, is complete and all its digests check out — printing
/// "epoch E ok" per good epoch, or "no committed epochs". exit_failure,
/// with one stderr line per problem, when any epoch is not intact;
/// exit_bad_input when DIR is not a directory.
int ckpt_verify(const std::string& dir);

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
int ckpt_gc(const std::string& dir, size_t keep_last);

} // namespace epochrt::cli
