#include <epochrt/actors/remote/copy_stream_receiver.hpp>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <thread>

#include <poll.h>
#include <sys/socket.h>

#include <caf/sec.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/actors/remote/socket_io.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/checkpoint_copy.hpp>

namespace epochrt {

namespace {

// Bytes read from the socket, or from a file, at once.
constexpr size_t stream_piece_bytes = size_t{1} << 20;

// How long release and stop wait for a cut-off stream's thread.
constexpr auto stream_end_limit = std::chrono::seconds(10);

// How long a failed stream is read on to let its pusher see the status.
constexpr auto drain_limit = std::chrono::seconds(2);

using detail::socket_clock;

socket_clock::time_point after(std::chrono::milliseconds timeout) {
  return socket_clock::now() + timeout;
}

// The deadlines of a stream of known length: each read or write waits at
// most a step, and the whole stream at most a step plus its bytes at the
// slowest rate allowed (and a second), so that a peer cannot hold it for
// ever by moving a byte per step.
struct stream_deadline {
  socket_clock::time_point end;
  std::chrono::milliseconds step;

  socket_clock::time_point next() const {
    return std::min(end, after(step));
  }
};

stream_deadline deadline_for(uint64_t bytes, uint64_t min_bytes_per_second,
                             std::chrono::milliseconds step) {
  auto rate = std::max<uint64_t>(min_bytes_per_second, 1);
  return {after(step) + std::chrono::seconds(bytes / rate + 1), step};
}

void put_u32(std::string& out, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
}

void put_u64(std::string& out, uint64_t x) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* in, int bytes) {
  uint64_t x = 0;
  for (int i = 0; i < bytes; ++i)
    x |= uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return x;
}

caf::error send_status(int fd, const caf::error& err,
                       std::chrono::milliseconds timeout) {
  std::string out(1, err ? '\1' : '\0');
  auto text = err ? error_text(err) : std::string{};
  text.resize(std::min(text.size(), max_status_text));
  put_u32(out, static_cast<uint32_t>(text.size()));
  out += text;
  return detail::send_all(fd, out, after(timeout));
}

// The holder's status: none when it is ok, its reason as an error else.
caf::error receive_status(int fd, std::chrono::milliseconds timeout) {
  char head[5];
  if (auto err = detail::receive_all(fd, head, sizeof(head), after(timeout)))
    return err;
  auto length = get_le(head + 1, 4);
  if ((head[0] != 0 && head[0] != 1) || length > max_status_text)
    return make_error(actors_errc::rejected,
                      "the holder answered a copy stream with a malformed "
                      "status");
  std::string text(length, '\0');
  if (auto err
      = detail::receive_all(fd, text.data(), text.size(), after(timeout)))
    return err;
  if (head[0] == 0)
    return {};
  return make_error(actors_errc::rejected, std::move(text));
}

} // namespace

struct copy_stream_receiver::waiting {
  std::vector<char> token;
  std::unique_ptr<database_copy> copy;
  socket_clock::time_point since;
};

struct copy_stream_receiver::waiting_read {
  std::vector<char> token;
  database_file_reader reader;
  socket_clock::time_point since;
};

struct copy_stream_receiver::streaming {
  int fd;
  std::string path; // of its copy; empty until the token was presented
};

std::shared_ptr<copy_stream_receiver>
copy_stream_receiver::make(copy_stream_limits limits,
                           std::shared_ptr<fault_injector> faults) {
  return std::shared_ptr<copy_stream_receiver>{
    new copy_stream_receiver(limits, std::move(faults))};
}

copy_stream_receiver::copy_stream_receiver(
  copy_stream_limits limits, std::shared_ptr<fault_injector> faults)
  : limits_(limits), faults_(std::move(faults)) {
  // nop
}

copy_stream_receiver::~copy_stream_receiver() {
  // Every thread holds the receiver: none is left by now.
}

namespace {

// Moves what waited too long out of `list` into `dropped`.
template <class Entry>
void drop_expired(std::vector<Entry>& list, std::vector<Entry>& dropped,
                  const copy_stream_limits& limits) {
  auto now = socket_clock::now();
  for (auto i = list.begin(); i != list.end();) {
    if (now - i->since > limits.wait_limit) {
      dropped.push_back(std::move(*i));
      i = list.erase(i);
    } else {
      ++i;
    }
  }
}

// Moves what waited too long out of `list` into `dropped`, and the oldest
// while `list` is full: room for one more.
template <class Entry>
void make_room(std::vector<Entry>& list, std::vector<Entry>& dropped,
               const copy_stream_limits& limits) {
  drop_expired(list, dropped, limits);
  while (!list.empty() && list.size() >= limits.max_waiting) {
    dropped.push_back(std::move(list.front()));
    list.erase(list.begin());
  }
}

// The entry of `list` whose token is `token`, compared with every one in
// constant time: how long this takes tells nothing about the tokens.
template <class Entry>
auto find_token(std::vector<Entry>& list, const std::vector<char>& token) {
  auto found = list.end();
  for (auto i = list.begin(); i != list.end(); ++i)
    if (detail::same_proof(i->token, token))
      found = i;
  return found;
}

} // namespace

std::vector<char>
copy_stream_receiver::expect(std::unique_ptr<database_copy> copy) {
  auto token = detail::make_nonce();
  std::vector<waiting> dropped; // destroyed without the lock
  annotated_mutex::guard guard{mtx_};
  make_room(waiting_, dropped, limits_);
  if (!stopped_)
    waiting_.push_back(waiting{token, std::move(copy), socket_clock::now()});
  return token;
}

std::vector<char>
copy_stream_receiver::expect_read(database_file_reader reader) {
  auto token = detail::make_nonce();
  std::vector<waiting_read> dropped;
  annotated_mutex::guard guard{mtx_};
  make_room(reads_, dropped, limits_);
  if (!stopped_)
    reads_.push_back(
      waiting_read{token, std::move(reader), socket_clock::now()});
  return token;
}

caf::error copy_stream_receiver::release(const std::string& path) {
  std::vector<waiting> dropped;
  annotated_mutex::guard guard{mtx_};
  for (auto i = waiting_.begin(); i != waiting_.end();) {
    if (i->copy->path() == path) {
      dropped.push_back(std::move(*i));
      i = waiting_.erase(i);
    } else {
      ++i;
    }
  }
  auto busy = [&]() EPOCHRT_REQUIRES(mtx_) {
    return std::any_of(streaming_.begin(), streaming_.end(),
                       [&](const streaming& s) {
                         return s.path == path;
                       });
  };
  for (auto& s : streaming_)
    if (s.path == path)
      ::shutdown(s.fd, SHUT_RDWR);
  if (!ended_.wait_for(guard, stream_end_limit, [&]() EPOCHRT_REQUIRES(mtx_) {
        return !busy();
      }))
    return make_error(caf::sec::request_timeout,
                      "a copy stream to " + path + " did not end");
  return {};
}

bool copy_stream_receiver::serve(int fd) {
  annotated_mutex::guard guard{mtx_};
  if (stopped_ || streaming_.size() >= limits_.max_streams)
    return false;
  // Listed first: the thread ends by taking itself off the list, under
  // the lock held here.
  streaming_.push_back(streaming{fd, {}});
  try {
    std::thread{[self = shared_from_this(), fd] {
      self->run(fd);
    }}.detach();
  } catch (const std::exception&) { // no thread, or no memory for one
    streaming_.pop_back();
    return false;
  }
  return true;
}

void copy_stream_receiver::stop() {
  std::vector<waiting> dropped;
  std::vector<waiting_read> dropped_reads;
  annotated_mutex::guard guard{mtx_};
  stopped_ = true;
  dropped.swap(waiting_);
  dropped_reads.swap(reads_);
  for (auto& s : streaming_)
    ::shutdown(s.fd, SHUT_RDWR);
  ended_.wait_for(guard, stream_end_limit, [&]() EPOCHRT_REQUIRES(mtx_) {
    return streaming_.empty();
  });
}

std::unique_ptr<database_copy>
copy_stream_receiver::take(const std::vector<char>& token, int fd) {
  annotated_mutex::guard guard{mtx_};
  auto found = find_token(waiting_, token);
  if (found == waiting_.end())
    return nullptr;
  auto copy = std::move(found->copy);
  waiting_.erase(found);
  // Under the same lock: release() sees the copy either waiting or here.
  for (auto& s : streaming_)
    if (s.fd == fd)
      s.path = copy->path();
  return copy;
}

std::optional<database_file_reader>
copy_stream_receiver::take_read(const std::vector<char>& token) {
  // A read nobody came for keeps its file open: each stream looks.
  std::vector<waiting> dropped;
  std::vector<waiting_read> dropped_reads;
  annotated_mutex::guard guard{mtx_};
  drop_expired(waiting_, dropped, limits_);
  drop_expired(reads_, dropped_reads, limits_);
  auto found = find_token(reads_, token);
  if (found == reads_.end())
    return std::nullopt;
  auto reader = std::move(found->reader);
  reads_.erase(found);
  return reader;
}

void copy_stream_receiver::run(int fd) {
  {
    detail::socket_guard socket{fd};
    std::unique_ptr<database_copy> copy;
    bool answered = false;
    auto err = receive(fd, copy, answered);
    // A failed copy is removed before the stream counts as ended, so
    // that release() returns only once its files are gone.
    copy.reset();
    if (!answered)
      static_cast<void>(send_status(fd, err, limits_.step_timeout));
    if (err)
      drain(fd);
    annotated_mutex::guard guard{mtx_};
    streaming_.erase(std::find_if(streaming_.begin(), streaming_.end(),
                                  [fd](const streaming& s) {
                                    return s.fd == fd;
                                  }));
  }
  ended_.notify_all();
}

// Closing a socket with unread bytes resets the connection, and the
// pusher, still sending, would lose the status sent before it: the stream
// is read on to its end, or for a moment, first.
void copy_stream_receiver::drain(int fd) {
  ::shutdown(fd, SHUT_WR);
  char sink[64 << 10];
  auto deadline = after(drain_limit);
  while (detail::wait_for(fd, POLLIN, deadline)) {
    auto n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
      return;
  }
}

caf::error copy_stream_receiver::receive(int fd,
                                         std::unique_ptr<database_copy>& copy,
                                         bool& answered) {
  std::vector<char> token(detail::nonce_size);
  if (auto err = detail::receive_all(fd, token.data(), token.size(),
                                     after(limits_.token_timeout)))
    return err;
  copy = take(token, fd);
  if (!copy) {
    auto reader = take_read(token);
    if (!reader)
      return make_error(actors_errc::rejected,
                        "no copy or read waits for this stream: its token is "
                        "unknown, was used, or waited too long");
    answered = true;
    return serve_read(fd, *reader);
  }
  if (auto err = send_status(fd, {}, limits_.step_timeout))
    return err;
  uint64_t listed = 0;
  for (auto& file : copy->listing().files)
    listed += file.bytes;
  auto deadline
    = deadline_for(listed, limits_.min_bytes_per_second, limits_.step_timeout);
  std::vector<char> piece(stream_piece_bytes);
  for (auto& file : copy->listing().files) {
    for (uint64_t left = file.bytes; left > 0;) {
      auto size = static_cast<size_t>(std::min<uint64_t>(left, piece.size()));
      if (auto err
          = detail::receive_all(fd, piece.data(), size, deadline.next()))
        return err;
      if (auto err = copy->append(file.name, piece.data(), size))
        return err;
      left -= size;
    }
  }
  std::vector<char> raw(8 * copy->listing().files.size());
  if (auto err
      = detail::receive_all(fd, raw.data(), raw.size(), deadline.next()))
    return err;
  std::vector<uint64_t> digests;
  for (size_t at = 0; at < raw.size(); at += 8)
    digests.push_back(get_le(raw.data() + at, 8));
  return copy->finish(digests);
}

caf::error copy_stream_receiver::serve_read(int fd,
                                            database_file_reader& reader) {
  if (auto err = send_status(fd, {}, limits_.step_timeout))
    return err;
  // A reader that drains too slowly on the whole is cut off, as a pusher
  // that sends too slowly is.
  auto started = socket_clock::now();
  auto rate = std::max<uint64_t>(limits_.min_bytes_per_second, 1);
  std::vector<char> piece;
  for (;;) {
    auto allowed = limits_.step_timeout
      + std::chrono::seconds(reader.bytes_read() / rate + 1);
    std::string head;
    auto err = socket_clock::now() - started > allowed
      ? make_error(caf::sec::connection_timeout,
                   "the reader of a copy stream drains too slowly")
      : reader.read(stream_piece_bytes, piece);
    if (err) {
      // A failed read: a length of all ones, then why.
      put_u64(head, UINT64_MAX);
      if (!detail::send_all(fd, head, after(limits_.step_timeout)))
        static_cast<void>(send_status(fd, err, limits_.step_timeout));
      return err;
    }
    put_u64(head, piece.size());
    if (piece.empty()) {
      put_u64(head, reader.digest());
      return detail::send_all(fd, head, after(limits_.step_timeout));
    }
    if (auto err = detail::send_all(fd, head, after(limits_.step_timeout)))
      return err;
    if (auto err = detail::send_all(fd, {piece.data(), piece.size()},
                                    after(limits_.step_timeout)))
      return err;
  }
}

namespace {

// Sends `token` and reads the holder's first status: unreachable when the
// holder closed the stream before it took the token.
caf::error present_token(int fd, const std::vector<char>& token,
                         std::chrono::milliseconds step_timeout) {
  auto taken
    = detail::send_all(fd, {token.data(), token.size()}, after(step_timeout));
  if (!taken)
    taken = receive_status(fd, step_timeout);
  if (taken == caf::sec::disconnect_during_handshake)
    return make_error(actors_errc::unreachable,
                      "the holder closed the copy stream before it took "
                      "the token (too many streams at once?)");
  return taken;
}

} // namespace

caf::expected<uint64_t>
fetch_copy_stream(int fd, const std::vector<char>& token, uint64_t bytes,
                  const std::function<caf::error(const char*, size_t)>& sink,
                  std::chrono::milliseconds step_timeout, uint64_t& received) {
  if (auto err = present_token(fd, token, step_timeout))
    return err;
  // At the slowest rate a holder allows a pusher.
  auto deadline = deadline_for(bytes, copy_stream_limits{}.min_bytes_per_second,
                               step_timeout);
  std::vector<char> piece;
  for (;;) {
    char head[8];
    if (auto err = detail::receive_all(fd, head, sizeof(head), deadline.next()))
      return err;
    auto length = get_le(head, 8);
    if (length == 0) {
      if (auto err
          = detail::receive_all(fd, head, sizeof(head), deadline.next()))
        return err;
      return get_le(head, 8);
    }
    if (length == UINT64_MAX) {
      auto err = receive_status(fd, step_timeout);
      if (!err)
        err = make_error(actors_errc::rejected,
                         "the holder failed the read without a reason");
      return err;
    }
    if (length > max_stream_piece)
      return make_error(actors_errc::rejected,
                        "the holder sent a piece of " + std::to_string(length)
                          + " bytes, more than "
                          + std::to_string(max_stream_piece));
    piece.resize(static_cast<size_t>(length));
    if (auto err
        = detail::receive_all(fd, piece.data(), piece.size(), deadline.next()))
      return err;
    if (auto err = sink(piece.data(), piece.size()))
      return err;
    received += piece.size();
  }
}

caf::error
send_copy_stream(int fd, const std::vector<char>& token,
                 const std::string& local_db, const database_listing& listing,
                 std::chrono::milliseconds step_timeout, uint64_t& sent) {
  if (auto err = present_token(fd, token, step_timeout))
    return err;
  // A send that fails may be the holder giving up: its status says why.
  auto or_reason = [fd](caf::error err) {
    auto reason = receive_status(fd, std::chrono::seconds(1));
    if (reason && reason != caf::sec::disconnect_during_handshake
        && reason != caf::sec::connection_timeout)
      return reason;
    return err;
  };
  std::string digests;
  std::vector<char> piece;
  for (auto& file : listing.files) {
    auto reader = database_file_reader::open(local_db, file.name);
    if (!reader)
      return std::move(reader.error());
    while (reader->bytes_read() < file.bytes) {
      auto want = std::min<uint64_t>(stream_piece_bytes,
                                     file.bytes - reader->bytes_read());
      if (auto err = reader->read(static_cast<size_t>(want), piece))
        return err;
      if (piece.empty())
        break;
      if (auto err = detail::send_all(fd, {piece.data(), piece.size()},
                                      after(step_timeout)))
        return or_reason(std::move(err));
      sent += piece.size();
    }
    // The holder waits for the listed bytes: a file that changed since it
    // was listed cannot be sent.
    if (reader->bytes_read() != file.bytes)
      return make_error(actors_errc::checkpoint_failed,
                        local_db + "/" + file.name + " has changed since it "
                          + "was listed for a copy");
    put_u64(digests, reader->digest());
  }
  if (auto err = detail::send_all(fd, digests, after(step_timeout)))
    return or_reason(std::move(err));
  return receive_status(fd, step_timeout);
}

} // namespace epochrt
