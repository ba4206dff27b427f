#include <epochrt/actors/remote/admission_doorman.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/io/abstract_broker.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/sec.hpp>

#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/remote/admission_protocol.hpp>
#include <epochrt/actors/remote/bounded_scribe.hpp>
#include <epochrt/messages/annotated_mutex.hpp>

#include <spdlog/fmt/fmt.h>

namespace epochrt::detail {

namespace {

using clock_type = std::chrono::steady_clock;

// How long the gate stops accepting when it can neither accept nor shed a
// connection (out of descriptors, and no spare one to shed with).
constexpr auto accept_pause = std::chrono::milliseconds(100);

// Log lines about refused peers, at most, per window: a flood of bad
// connections must not turn into a flood of log lines.
constexpr int log_lines_per_window = 10;
constexpr auto log_window = std::chrono::seconds(10);

std::string peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return "an unknown peer";
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof(host),
                    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)
      != 0)
    return "an unknown peer";
  return std::string{host} + ":" + port;
}

std::pair<std::string, uint16_t> local_address_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return {"", 0};
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof(host),
                    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)
      != 0)
    return {"", 0};
  return {host, static_cast<uint16_t>(std::atoi(port))};
}

caf::expected<int> listen_on(const std::string& host, uint16_t port,
                             bool reuse_address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(),
                    &hints, &found)
      != 0)
    return caf::sec::cannot_open_port;
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses{
    found, ::freeaddrinfo};
  for (auto* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd
      = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 ai->ai_protocol);
    if (fd < 0)
      continue;
    int on = 1;
    if (reuse_address)
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0
        && ::listen(fd, SOMAXCONN) == 0)
      return fd;
    ::close(fd);
  }
  return caf::sec::cannot_open_port;
}

} // namespace

/// The thread that owns a daemon's listening socket and admits connections.
/// Shared by its doorman and its thread, which ends soon after stop().
class admission_gate : public std::enable_shared_from_this<admission_gate> {
public:
  /// Takes `hand_off` for each admitted socket: it takes ownership and
  /// returns true, or returns false and the gate closes the socket.
  using hand_off_fn = std::function<bool(int)>;

  admission_gate(int listen_fd, admission_options settings, spdlog::logger& log)
    : listen_fd_(listen_fd), settings_(std::move(settings)), log_(log) {
    std::tie(addr_, port_) = local_address_of(listen_fd_);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  ~admission_gate() {
    if (listen_fd_ >= 0)
      ::close(listen_fd_);
    if (wake_fd_ >= 0)
      ::close(wake_fd_);
    if (reserve_fd_ >= 0)
      ::close(reserve_fd_);
  }

  admission_gate(const admission_gate&) = delete;
  admission_gate& operator=(const admission_gate&) = delete;

  caf::error start(hand_off_fn hand_off) {
    if (wake_fd_ < 0)
      return make_error(caf::sec::runtime_error,
                        std::string{"cannot make an eventfd: "}
                          + std::strerror(errno));
    {
      annotated_mutex::guard guard{mtx_};
      hand_off_ = std::move(hand_off);
    }
    try {
      std::thread{[self = shared_from_this()] {
        self->run();
      }}.detach();
    } catch (const std::system_error& e) {
      annotated_mutex::guard guard{mtx_};
      hand_off_ = nullptr;
      return make_error(caf::sec::runtime_error,
                        std::string{"cannot start the thread that admits "
                                    "connections: "}
                          + e.what());
    }
    return {};
  }

  /// Stops listening at once (new connects are refused), drops the hand-off,
  /// and lets the thread close every socket and end. Idempotent.
  void stop() {
    annotated_mutex::guard guard{mtx_};
    if (stopping_)
      return;
    hand_off_ = nullptr;
    if (listen_fd_ >= 0)
      ::shutdown(listen_fd_, SHUT_RDWR);
    stopping_ = true;
    wake();
  }

  void set_accepting(bool on) {
    accepting_ = on;
    wake();
  }

  const std::string& addr() const noexcept {
    return addr_;
  }

  uint16_t port() const noexcept {
    return port_;
  }

  // Unlocked: read before start(), when no other thread uses the gate.
  int listen_fd() const noexcept EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
    return listen_fd_;
  }

private:
  // A connection goes through these in order; in each, `out` is sent
  // first, then `want` bytes are read into `in`.
  enum class phase { hello, proof, verdict };

  struct connection {
    int fd;
    clock_type::time_point deadline;
    phase at = phase::hello;
    std::string out;
    size_t sent = 0;
    char in[admission_hello_size];
    size_t want = admission_hello_size;
    size_t received = 0;
    bool master_has_secret = false;
    admission_purpose purpose = admission_purpose::basp;
    std::vector<char> master_nonce;
    std::vector<char> daemon_nonce;
    admission_status verdict = admission_status::malformed;
  };

  void wake() {
    uint64_t one = 1;
    if (wake_fd_ >= 0)
      static_cast<void>(::write(wake_fd_, &one, sizeof(one)));
  }

  bool stopping() {
    annotated_mutex::guard guard{mtx_};
    return stopping_;
  }

  // listen_fd_ on the gate's thread, its only writer: unlocked there.
  int own_listen_fd() const EPOCHRT_NO_THREAD_SAFETY_ANALYSIS {
    return listen_fd_;
  }

  void run() {
    std::vector<pollfd> fds;
    while (!stopping()) {
      auto now = clock_type::now();
      expire(now);
      fds.clear();
      fds.push_back({wake_fd_, POLLIN, 0});
      bool accepting = accepting_ && now >= paused_until_;
      fds.push_back({accepting ? own_listen_fd() : -1, POLLIN, 0});
      auto next = now + std::chrono::hours(1);
      for (auto& c : pending_) {
        fds.push_back(
          {c.fd, c.sent < c.out.size() ? short{POLLOUT} : short{POLLIN}, 0});
        next = std::min(next, c.deadline);
      }
      if (accepting_ && now < paused_until_)
        next = std::min(next, paused_until_);
      auto wait
        = std::chrono::duration_cast<std::chrono::milliseconds>(next - now)
            .count()
        + 1;
      auto n = ::poll(fds.data(), fds.size(), static_cast<int>(wait));
      if (n < 0 && errno != EINTR) {
        log_.error("admission of connections stopped: poll failed: {}",
                   std::strerror(errno));
        break;
      }
      if (n <= 0)
        continue;
      if (fds[0].revents != 0) {
        uint64_t ignored;
        static_cast<void>(::read(wake_fd_, &ignored, sizeof(ignored)));
      }
      // Serve the connections polled before accepting new ones, which
      // would shift the indexes.
      size_t index = 2;
      for (auto i = pending_.begin(); i != pending_.end(); ++index) {
        if (fds[index].revents != 0 && !serve(*i))
          i = pending_.erase(i);
        else
          ++i;
      }
      if (fds[1].revents != 0)
        accept_new();
    }
    shut_down();
  }

  void shut_down() {
    for (auto& c : pending_)
      ::close(c.fd);
    pending_.clear();
    annotated_mutex::guard guard{mtx_};
    ::close(listen_fd_);
    listen_fd_ = -1;
  }

  void expire(clock_type::time_point now) {
    for (auto i = pending_.begin(); i != pending_.end();) {
      if (i->deadline > now) {
        ++i;
        continue;
      }
      note(fmt::format("closed a connection from {}: not admitted within {} ms",
                       peer_of(i->fd), settings_.timeout.count()));
      ::close(i->fd);
      i = pending_.erase(i);
    }
  }

  void accept_new() {
    auto ceiling = descriptor_ceiling();
    // A bounded batch per wake-up, so that a flood cannot starve the
    // connections already in the handshake.
    for (int i = 0; i < 16; ++i) {
      int fd = ::accept4(own_listen_fd(), nullptr, nullptr,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
          continue;
        // EINVAL: stop() shut the listening socket down.
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINVAL)
          return;
        out_of_resources(std::strerror(errno));
        return;
      }
      // accept returns the lowest free descriptor, so every one below `fd`
      // is taken: keeping it would leave the daemon fewer than its headroom.
      // Shedding it takes it out of the backlog, so poll does not spin.
      if (fd >= ceiling) {
        ::close(fd);
        running_low(fmt::format("fewer than {} of the {} file descriptors are "
                                "free, and those are kept for the daemon's "
                                "own work",
                                descriptor_limit_ - ceiling,
                                descriptor_limit_));
        continue;
      }
      if (out_of_descriptors_) {
        out_of_descriptors_ = false;
        log_.info("file descriptors are available again: accepting "
                  "connections");
      }
      welcome(fd);
    }
  }

  // The lowest descriptor the gate does not keep a connection on (see
  // admission_descriptor_headroom). Read at each batch: the limit may change.
  int descriptor_ceiling() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0
        || limit.rlim_cur == RLIM_INFINITY
        || limit.rlim_cur
          > static_cast<rlim_t>(std::numeric_limits<int>::max()))
      return std::numeric_limits<int>::max();
    descriptor_limit_ = static_cast<int>(limit.rlim_cur);
    auto headroom = static_cast<int>(
      admission_descriptor_headroom(static_cast<uint64_t>(descriptor_limit_)));
    return std::max(descriptor_limit_ - headroom, 0);
  }

  // Logs once per shortage that new connections are shed for `why`.
  void running_low(const std::string& why) {
    if (out_of_descriptors_)
      return;
    out_of_descriptors_ = true;
    log_.warn("cannot accept a connection: {}; new connections are closed "
              "until descriptors are free again, the ones served go on",
              why);
  }

  // Out of descriptors (or kernel memory) although the gate kept within its
  // ceiling, as the rest of the daemon took the headroom: the pending
  // connection stays in the backlog and the listening socket stays
  // readable, so poll would wake at once, forever. Shed it with the spare
  // descriptor kept for this, or stop accepting for a moment when there is
  // none.
  void out_of_resources(const char* why) {
    running_low(why);
    if (reserve_fd_ >= 0) {
      ::close(reserve_fd_);
      int fd = ::accept4(own_listen_fd(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0)
        ::close(fd);
      reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    if (reserve_fd_ < 0)
      paused_until_ = clock_type::now() + accept_pause;
  }

  void welcome(int fd) {
    if (pending_.size() >= settings_.max_pending_connections) {
      auto& oldest = pending_.front();
      note(fmt::format(
        "closed a connection from {}: {} connections are in the admission "
        "handshake, the most this daemon keeps",
        peer_of(oldest.fd), settings_.max_pending_connections));
      ::close(oldest.fd);
      pending_.pop_front();
    }
    set_tcp_nodelay(fd);
    connection c;
    c.fd = fd;
    c.deadline = clock_type::now() + settings_.timeout;
    pending_.push_back(std::move(c));
    if (!serve(pending_.back()))
      pending_.pop_back();
  }

  enum class io_result { done, blocked, failed };

  // Calls `op(offset)` (a send or a recv at `offset`) until `offset`
  // reaches `total`, the socket would block, or it fails.
  template <class Op>
  static io_result repeat(size_t& offset, size_t total, Op op) {
    while (offset < total) {
      auto n = op(offset);
      if (n > 0)
        offset += static_cast<size_t>(n);
      else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return io_result::blocked;
      else if (n == 0 || errno != EINTR)
        return io_result::failed;
    }
    return io_result::done;
  }

  // Moves one connection on as far as its socket allows. False when it is
  // done with: closed, or handed to the broker.
  bool serve(connection& c) {
    auto stopped = [&c](io_result r) {
      if (r == io_result::blocked)
        return true;
      ::close(c.fd);
      return false;
    };
    for (;;) {
      auto sent = repeat(c.sent, c.out.size(), [&c](size_t at) {
        return ::send(c.fd, c.out.data() + at, c.out.size() - at, MSG_NOSIGNAL);
      });
      if (sent != io_result::done)
        return stopped(sent);
      if (c.at == phase::verdict)
        return finish(c);
      auto got = repeat(c.received, c.want, [&c](size_t at) {
        return ::recv(c.fd, c.in + at, c.want - at, 0);
      });
      if (got != io_result::done)
        return stopped(got);
      advance(c);
    }
  }

  // The bytes a phase waits for are in: prepare the next phase.
  void advance(connection& c) {
    std::string_view in{c.in, c.received};
    c.sent = 0;
    c.received = 0;
    if (c.at == phase::hello) {
      if (!parse_admission_hello(in, c.master_has_secret, c.master_nonce,
                                 c.purpose)) {
        c.verdict = admission_status::malformed;
        c.out.clear();
        c.at = phase::verdict;
        return;
      }
      c.daemon_nonce = make_nonce();
      c.out
        = make_admission_hello(settings_.secret.has_value(), c.daemon_nonce);
      c.want = admission_proof_size;
      c.at = phase::proof;
      return;
    }
    c.verdict = check_admission_proof(in, c.master_has_secret, settings_.secret,
                                      c.daemon_nonce, c.master_nonce);
    if (c.verdict == admission_status::admitted
        && c.purpose == admission_purpose::copy_stream
        && !settings_.copy_streams)
      c.verdict = admission_status::stream_refused;
    c.out = make_admission_verdict(c.verdict, settings_.secret, c.daemon_nonce,
                                   c.master_nonce);
    c.at = phase::verdict;
  }

  // The verdict is out: hand the socket over, or close it.
  bool finish(connection& c) {
    switch (c.verdict) {
      case admission_status::admitted: {
        // Called without the lock: stop() on the multiplexer's thread must
        // never wait for a hand-off that posts to that thread.
        if (c.purpose == admission_purpose::copy_stream) {
          // Not CAF's: a thread of the stream's receiver takes it.
          if (!settings_.copy_streams(c.fd))
            ::close(c.fd);
          return false;
        }
        hand_off_fn hand_off;
        {
          annotated_mutex::guard guard{mtx_};
          hand_off = hand_off_;
        }
        if (!hand_off || !hand_off(c.fd))
          ::close(c.fd);
        return false;
      }
      case admission_status::stream_refused:
        note(fmt::format("refused a copy stream from {}: this daemon takes "
                         "none",
                         peer_of(c.fd)));
        break;
      case admission_status::master_has_no_secret:
        note(
          fmt::format("refused a connection from {}: it has no secret and this "
                      "daemon requires a secret (--secret-file)",
                      peer_of(c.fd)));
        break;
      case admission_status::wrong_secret:
        note(fmt::format(
          "refused a connection from {}: its proof does not match this "
          "daemon's secret (wrong secret)",
          peer_of(c.fd)));
        break;
      case admission_status::malformed:
        note(fmt::format(
          "closed a connection from {}: it does not speak epochrt's "
          "admission handshake",
          peer_of(c.fd)));
        break;
    }
    ::close(c.fd);
    return false;
  }

  void note(const std::string& line) {
    auto now = clock_type::now();
    if (now >= window_end_) {
      if (suppressed_ > 0)
        log_.warn("{} more refused or timed-out connections were not logged",
                  suppressed_);
      window_end_ = now + log_window;
      lines_in_window_ = 0;
      suppressed_ = 0;
    }
    if (lines_in_window_ < log_lines_per_window) {
      ++lines_in_window_;
      log_.warn("{}", line);
    } else {
      ++suppressed_;
    }
  }

  // Closed by the gate's thread; stop(), on another, shuts it down.
  int listen_fd_ EPOCHRT_GUARDED_BY(mtx_);
  int wake_fd_ = -1;
  // A descriptor held in reserve: closed to make room to accept and shed a
  // connection when the process is out of descriptors.
  int reserve_fd_ = -1;
  admission_options settings_;
  // The system's logger, which outlives the gate (the system stops its
  // doormen before it goes).
  spdlog::logger& log_;
  std::string addr_;
  uint16_t port_ = 0;
  annotated_mutex mtx_;
  hand_off_fn hand_off_ EPOCHRT_GUARDED_BY(mtx_);
  bool stopping_ EPOCHRT_GUARDED_BY(mtx_) = false;
  std::atomic<bool> accepting_{true};
  // Only the gate's thread touches the members below.
  std::deque<connection> pending_;
  clock_type::time_point paused_until_;
  // RLIMIT_NOFILE as last read by descriptor_ceiling(), for the log.
  int descriptor_limit_ = 0;
  bool out_of_descriptors_ = false;
  clock_type::time_point window_end_;
  int lines_in_window_ = 0;
  uint64_t suppressed_ = 0;
};

caf::expected<caf::io::doorman_ptr>
admission_doorman::open(caf::io::network::default_multiplexer& mx,
                        const std::string& host, uint16_t port,
                        bool reuse_address, admission_options settings) {
  auto fd = listen_on(host, port, reuse_address);
  if (!fd)
    return std::move(fd.error());
  auto max_message_bytes = settings.max_message_bytes;
  auto faults = settings.faults;
  auto gate = std::make_shared<admission_gate>(*fd, std::move(settings),
                                               log(mx.system()));
  caf::intrusive_ptr<admission_doorman> result{
    new admission_doorman(mx, gate, max_message_bytes, std::move(faults)),
    false};
  // The hand-off holds the doorman until stop() drops it (graceful_shutdown,
  // which the broker calls for every doorman before it lets go of it).
  auto err = gate->start([result, &mx](int admitted) {
    mx.dispatch([result, admitted] {
      result->admit(admitted);
    });
    return true;
  });
  if (err)
    return err;
  return caf::io::doorman_ptr{std::move(result)};
}

admission_doorman::admission_doorman(caf::io::network::default_multiplexer& mx,
                                     std::shared_ptr<admission_gate> gate,
                                     uint64_t max_message_bytes,
                                     std::shared_ptr<fault_injector> faults)
  : doorman(caf::io::accept_handle::from_int(gate->listen_fd())), mx_(mx),
    gate_(std::move(gate)), max_message_bytes_(max_message_bytes),
    faults_(std::move(faults)) {
  // nop
}

admission_doorman::~admission_doorman() {
  gate_->stop();
  for (auto fd : waiting_)
    ::close(fd);
}

bool admission_doorman::new_connection() {
  // Connections arrive through admit(), never through CAF's acceptor.
  return false;
}

void admission_doorman::graceful_shutdown() {
  closed_ = true;
  gate_->stop();
  for (auto fd : waiting_)
    ::close(fd);
  waiting_.clear();
  detach(&mx_, false);
}

void admission_doorman::launch() {
  launched_ = true;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto fd : waiting)
    admit(fd);
}

std::string admission_doorman::addr() const {
  return gate_->addr();
}

uint16_t admission_doorman::port() const {
  return gate_->port();
}

void admission_doorman::add_to_loop() {
  gate_->set_accepting(true);
}

void admission_doorman::remove_from_loop() {
  gate_->set_accepting(false);
}

void admission_doorman::admit(int fd) {
  if (closed_) {
    ::close(fd);
    return;
  }
  if (!launched_ || detached()) {
    waiting_.push_back(fd);
    return;
  }
  auto scribe
    = caf::make_counted<bounded_scribe>(mx_, fd, max_message_bytes_, faults_);
  auto hdl = scribe->hdl();
  parent()->add_scribe(std::move(scribe));
  doorman::new_connection(&mx_, hdl);
}

} // namespace epochrt::detail
