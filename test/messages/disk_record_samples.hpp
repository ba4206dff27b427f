#pragma once

// Non-trivial instances of every record the codec keeps on disk, for its
// round-trip tests: every field set, nested values included, so that a
// field the codec forgets shows.

#include <string>
#include <vector>

#include <caf/deep_to_string.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/checkpoint_records.hpp>

namespace epochrt::test {

inline blob_entry sample_blob_entry() {
  return blob_entry{"w", dtype::i64, {3, 0, 2}, 1234, 0xdeadbeefcafef00dull,
                    0,   3,          77,        4096};
}

inline manifest sample_manifest() {
  manifest x;
  x.node = "trainer_0";
  x.epoch = 9;
  x.blobs
    = {sample_blob_entry(), blob_entry{"s", dtype::string, {2}, 10, 77, 1}};
  x.total_bytes = 1244;
  x.created_unix_ms = 1700000000123;
  return x;
}

inline blob_chunk sample_blob_chunk() {
  blob_chunk x;
  x.name = "w";
  x.index = 17;
  x.data = {'\x01', '\x00', '\xff', 'a', 'b'};
  x.digest = 0x0123456789abcdefull;
  return x;
}

inline blob_chunk sample_string_chunk() {
  blob_chunk x;
  x.name = "names";
  x.index = 0;
  x.strings = {"a", "", "ccc"};
  x.digest = 5;
  return x;
}

inline checkpoint_stats sample_checkpoint_stats() {
  return checkpoint_stats{"trainer_0", "/tmp/db", 1500, 1 << 20, 12,
                          4096,        11,        250,  900};
}

inline checkpoint_metadata sample_checkpoint_metadata() {
  checkpoint_metadata x;
  x.db_prefix = "/tmp/ckpt";
  x.node_names = {"trainer_0", "trainer_1"};
  x.committed_epochs = {0, 1, 2, 5};
  x.last_stats = {sample_checkpoint_stats(), sample_checkpoint_stats()};
  x.last_stats[1].node = "trainer_1";
  x.last_action = "save";
  return x;
}

/// Text of an expected's error, or "ok"; safe to evaluate in any assertion
/// message (Boost evaluates message arguments even when the check passes).
template <class T>
std::string describe(const caf::expected<T>& x) {
  return x ? std::string{"ok"} : caf::to_string(x.error());
}

/// Equality through CAF's inspectors: covers the protocol types, which have
/// no operator==, and fails loudly when a field is left out of `inspect`.
template <class T>
bool same(const T& x, const T& y) {
  return caf::deep_to_string(x) == caf::deep_to_string(y);
}

/// Calls `f` with a sample of every record the codec keeps on disk.
template <class F>
void for_each_disk_record(F&& f) {
  f(sample_blob_entry());
  f(sample_manifest());
  f(sample_blob_chunk());
  f(sample_string_chunk());
  f(sample_checkpoint_stats());
  f(sample_checkpoint_metadata());
}

} // namespace epochrt::test
