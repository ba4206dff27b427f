#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/annotated_mutex.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/persistence/checkpoint_copy.hpp>

// The bytes of a checkpoint copy on a connection of their own. A daemon
// pushing a copy (replica_client.hpp) offers it to the holder's replica
// store over CAF as always, and gets a one-time token back; it then opens
// a connection to the holder's port that passes the same admission
// handshake as every connection there (the daemons' secret), asks for a
// copy stream instead of BASP (admission_purpose::copy_stream), and sends:
//
//   pusher -> holder  token(32)
//   holder -> pusher  status
//   pusher -> holder  every listed file's bytes, in the listing's order
//                     the XXH3-64 of each file, u64 little-endian, in order
//   holder -> pusher  status, once the copy is durable (or failed)
//
//   status: code(1: 0 ok, 1 failed) length(u32 little-endian, at most
//           max_status_text) text(length bytes: why it failed)
//
// A restore reads a file the same way: it opens the file at the store
// over CAF asking for a stream, gets a token, and on its stream:
//
//   reader -> holder  token(32)
//   holder -> reader  status
//   holder -> reader  pieces: length(u64 little-endian, at most
//                     max_stream_piece) bytes(length); then a length of 0
//                     and the XXH3-64 of the file (u64 little-endian), or
//                     a length of all ones and a failed status
//
// So the bytes cross once, from the file into the socket and from the
// socket into the copy, without CAF's serialization or its one thread per
// process for the network. Without TLS only: a TLS daemon takes no streams
// (its connections are not admitted by the handshake but by TLS), and its
// copies go through CAF.

namespace epochrt {

class fault_injector;

/// Longest failure text in a status.
constexpr size_t max_status_text = 4096;

/// Largest piece of a file a holder sends a reader at once.
constexpr uint64_t max_stream_piece = uint64_t{16} << 20;

/// What a copy stream's receiver bounds.
struct copy_stream_limits {
  /// Streams served at once; an admitted stream beyond is closed.
  size_t max_streams = 8;
  /// Copies waiting for their stream, at most; the oldest is dropped.
  size_t max_waiting = 64;
  /// A waiting copy no stream came for within this is dropped.
  std::chrono::milliseconds wait_limit = std::chrono::minutes(2);
  /// Longest a stream may take to present its token.
  std::chrono::milliseconds token_timeout = std::chrono::seconds(5);
  /// Longest one read or write of a stream may wait for the peer.
  std::chrono::milliseconds step_timeout = std::chrono::seconds(30);
  /// The slowest a stream may send its bytes on the whole: it is cut off
  /// once it took `step_timeout` plus its listed bytes at this rate.
  uint64_t min_bytes_per_second = uint64_t{1} << 20;
};

/// A daemon's end of copy streams: copies offered to its replica store wait
/// here for their stream, each stream is served by a thread of its own.
///
/// Thread safety: every member may be called from any thread. The threads
/// of streams hold the receiver; `stop` ends them.
class copy_stream_receiver
  : public std::enable_shared_from_this<copy_stream_receiver> {
public:
  /// `faults`: kept while a copy (which borrows it) may still be written.
  static std::shared_ptr<copy_stream_receiver>
  make(copy_stream_limits limits, std::shared_ptr<fault_injector> faults);

  ~copy_stream_receiver();

  copy_stream_receiver(const copy_stream_receiver&) = delete;
  copy_stream_receiver& operator=(const copy_stream_receiver&) = delete;

  /// Keeps `copy` for the stream that presents the returned token (32
  /// random bytes, good once). A copy no stream came for is dropped at the
  /// next call once it waited `wait_limit`.
  std::vector<char> expect(std::unique_ptr<database_copy> copy);

  /// Keeps `reader` (a file here, read from its first byte) for the stream
  /// that presents the returned token, which receives the file. Bounded as
  /// the copies that wait.
  std::vector<char> expect_read(database_file_reader reader);

  /// Drops every copy to `path` that waits or streams, and returns once
  /// none is left (a stream is cut off): only one copy of a path may exist.
  /// caf::sec::request_timeout when a stream did not end within 10 s.
  caf::error release(const std::string& path);

  /// Takes the admitted socket `fd` and serves its stream on a thread of
  /// its own. False (the socket untouched) when `max_streams` are served,
  /// no thread can be started, or the receiver stopped: the pusher, which
  /// sees its stream closed before its token was taken, sends the copy as
  /// CAF messages instead.
  bool serve(int fd);

  /// Cuts off every stream, drops every waiting copy and waits (at most
  /// 10 s) for the streams' threads. Later streams are refused.
  void stop();

private:
  struct waiting;
  struct waiting_read;
  struct streaming;

  copy_stream_receiver(copy_stream_limits limits,
                       std::shared_ptr<fault_injector> faults);

  void run(int fd);
  void drain(int fd);
  caf::error receive(int fd, std::unique_ptr<database_copy>& copy,
                     bool& answered);
  caf::error serve_read(int fd, database_file_reader& reader);
  // The copy waiting for `token`, now streamed on `fd`; null: none.
  std::unique_ptr<database_copy> take(const std::vector<char>& token, int fd);
  // The read waiting for `token`; none: none.
  std::optional<database_file_reader> take_read(const std::vector<char>& token);

  copy_stream_limits limits_;
  std::shared_ptr<fault_injector> faults_;
  annotated_mutex mtx_;
  std::condition_variable_any ended_;
  bool stopped_ EPOCHRT_GUARDED_BY(mtx_) = false;
  std::vector<waiting> waiting_ EPOCHRT_GUARDED_BY(mtx_);
  std::vector<waiting_read> reads_ EPOCHRT_GUARDED_BY(mtx_);
  std::vector<streaming> streaming_ EPOCHRT_GUARDED_BY(mtx_);
};

/// The reading end: presents `token` on the admitted stream `fd`, passes
/// the file's bytes (`bytes` are expected) to `sink` in order and returns
/// the holder's XXH3-64 of them; `received` grows by the bytes received.
/// The whole read may take `step_timeout` plus `bytes` at
/// copy_stream_limits' default slowest rate. Errors as for
/// send_copy_stream; actors_errc::rejected also for a piece longer than
/// max_stream_piece or a failure without a reason; the sink's.
caf::expected<uint64_t>
fetch_copy_stream(int fd, const std::vector<char>& token, uint64_t bytes,
                  const std::function<caf::error(const char*, size_t)>& sink,
                  std::chrono::milliseconds step_timeout, uint64_t& received);

/// The pushing end: sends the copy's files (each a file of the database
/// directory `local_db`, as `listing` names them) on the admitted stream
/// `fd` with `token`, and returns once the holder made the copy durable.
/// `sent` grows by the bytes sent. Errors: actors_errc::unreachable when
/// the holder closed the stream before it took the token (it serves too
/// many: nothing was sent), the local files' (persistence layer),
/// actors_errc::rejected with the holder's reason, caf::sec::
/// connection_timeout when a step waits longer than `step_timeout`, caf::
/// sec::disconnect_during_handshake when the holder closed the stream
/// without a reason.
caf::error
send_copy_stream(int fd, const std::vector<char>& token,
                 const std::string& local_db, const database_listing& listing,
                 std::chrono::milliseconds step_timeout, uint64_t& sent);

} // namespace epochrt
