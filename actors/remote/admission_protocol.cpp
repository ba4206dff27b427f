#include <epochrt/actors/remote/admission_protocol.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/sec.hpp>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt::detail {

namespace {

constexpr char magic[admission_magic_size + 1] = "epochrt-admit/1\n";
static_assert(sizeof(magic) == admission_magic_size + 1);

constexpr uint8_t has_secret_flag = 1;

using clock_type = std::chrono::steady_clock;

std::vector<char> both_nonces(const std::vector<char>& daemon_nonce,
                              const std::vector<char>& master_nonce) {
  auto result = daemon_nonce;
  result.insert(result.end(), master_nonce.begin(), master_nonce.end());
  return result;
}

std::vector<char> proof_of(const std::string& secret, prover who,
                           const std::vector<char>& daemon_nonce,
                           const std::vector<char>& master_nonce) {
  return make_proof(secret, who, both_nonces(daemon_nonce, master_nonce), {});
}

// Closes the socket unless released: a failed handshake leaks nothing.
class socket_guard {
public:
  explicit socket_guard(int fd) : fd_(fd) {
    // nop
  }
  ~socket_guard() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  socket_guard(const socket_guard&) = delete;
  socket_guard& operator=(const socket_guard&) = delete;
  int get() const noexcept {
    return fd_;
  }
  int release() noexcept {
    return std::exchange(fd_, -1);
  }

private:
  int fd_;
};

int remaining_ms(clock_type::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
    deadline - clock_type::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

// Waits until `fd` is ready for `events`; false at the deadline.
bool wait_for(int fd, short events, clock_type::time_point deadline) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    auto n = ::poll(&pfd, 1, remaining_ms(deadline));
    if (n > 0)
      return true;
    if (n == 0)
      return false;
    if (errno != EINTR)
      return true; // The following read or write reports the error.
  }
}

caf::error timed_out() {
  return caf::sec::connection_timeout;
}

caf::error send_all(int fd, std::string_view bytes,
                    clock_type::time_point deadline) {
  while (!bytes.empty()) {
    auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline))
        return timed_out();
      continue;
    }
    return caf::sec::disconnect_during_handshake;
  }
  return {};
}

caf::error receive_all(int fd, char* out, size_t size,
                       clock_type::time_point deadline) {
  size_t got = 0;
  while (got < size) {
    auto n = ::recv(fd, out + got, size - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLIN, deadline))
        return timed_out();
      continue;
    }
    return caf::sec::disconnect_during_handshake;
  }
  return {};
}

// A non-blocking TCP connection to the first address of `host` that
// accepts, or the error of the last one tried.
caf::expected<int> open_connection(const std::string& host, uint16_t port,
                                   clock_type::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0)
    return caf::sec::cannot_connect_to_node;
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses{
    found, ::freeaddrinfo};
  caf::error last = caf::sec::cannot_connect_to_node;
  for (auto* ai = found; ai != nullptr; ai = ai->ai_next) {
    socket_guard fd{::socket(ai->ai_family,
                             ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                             ai->ai_protocol)};
    if (fd.get() < 0)
      continue;
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS)
        continue;
      if (!wait_for(fd.get(), POLLOUT, deadline)) {
        last = timed_out();
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0
          || err != 0)
        continue;
    }
    set_tcp_nodelay(fd.get());
    return fd.release();
  }
  return last;
}

} // namespace

void set_tcp_nodelay(int fd) {
  int on = 1;
  // Best effort: BASP's small messages only get slower without it.
  static_cast<void>(
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)));
}

std::string make_admission_hello(bool has_secret,
                                 const std::vector<char>& nonce) {
  std::string out(magic, admission_magic_size);
  out.push_back(static_cast<char>(has_secret ? has_secret_flag : 0));
  out.append(nonce.data(), nonce.size());
  return out;
}

bool parse_admission_hello(std::string_view hello, bool& has_secret,
                           std::vector<char>& nonce) {
  if (hello.size() != admission_hello_size
      || hello.substr(0, admission_magic_size)
        != std::string_view{magic, admission_magic_size})
    return false;
  auto flags = static_cast<uint8_t>(hello[admission_magic_size]);
  if ((flags & ~has_secret_flag) != 0)
    return false;
  has_secret = (flags & has_secret_flag) != 0;
  auto bytes = hello.substr(admission_magic_size + 1);
  nonce.assign(bytes.begin(), bytes.end());
  return true;
}

std::string make_admission_proof(const std::optional<std::string>& secret,
                                 const std::vector<char>& daemon_nonce,
                                 const std::vector<char>& master_nonce) {
  if (!secret)
    return std::string(proof_size, '\0');
  auto proof
    = proof_of(*secret, prover::admitted_master, daemon_nonce, master_nonce);
  return std::string{proof.begin(), proof.end()};
}

admission_status check_admission_proof(std::string_view proof,
                                       bool master_has_secret,
                                       const std::optional<std::string>& secret,
                                       const std::vector<char>& daemon_nonce,
                                       const std::vector<char>& master_nonce) {
  if (!secret)
    return admission_status::admitted;
  if (!master_has_secret)
    return admission_status::master_has_no_secret;
  auto expected
    = proof_of(*secret, prover::admitted_master, daemon_nonce, master_nonce);
  if (!same_proof(expected, std::vector<char>(proof.begin(), proof.end())))
    return admission_status::wrong_secret;
  return admission_status::admitted;
}

std::string make_admission_verdict(admission_status status,
                                   const std::optional<std::string>& secret,
                                   const std::vector<char>& daemon_nonce,
                                   const std::vector<char>& master_nonce) {
  std::string out(1, static_cast<char>(status));
  if (status == admission_status::admitted && secret) {
    auto proof
      = proof_of(*secret, prover::admitting_daemon, daemon_nonce, master_nonce);
    out.append(proof.data(), proof.size());
  } else {
    out.append(proof_size, '\0');
  }
  return out;
}

caf::expected<int> connect_admitted(const std::string& host, uint16_t port,
                                    const std::optional<std::string>& secret,
                                    std::chrono::milliseconds timeout) {
  auto deadline = clock_type::now() + timeout;
  auto connected = open_connection(host, port, deadline);
  if (!connected)
    return std::move(connected.error());
  socket_guard fd{*connected};
  auto master_nonce = make_nonce();
  if (auto err = send_all(
        fd.get(), make_admission_hello(secret.has_value(), master_nonce),
        deadline))
    return err;
  char challenge[admission_hello_size];
  if (auto err = receive_all(fd.get(), challenge, sizeof(challenge), deadline))
    return err;
  bool secret_required = false;
  std::vector<char> daemon_nonce;
  if (!parse_admission_hello({challenge, sizeof(challenge)}, secret_required,
                             daemon_nonce))
    return make_error(actors_errc::unreachable,
                      "the peer does not speak epochrt's admission handshake "
                      "(not an epochrt node daemon, or is TLS on for one "
                      "side only?)");
  if (!secret_required && secret)
    return make_error(actors_errc::auth_failed,
                      "the daemon has no secret, so it cannot prove it is "
                      "the daemon this master shares its secret with");
  // Without a secret of ours the proof is zeros: the daemon then refuses,
  // and says why in its log.
  if (auto err = send_all(
        fd.get(), make_admission_proof(secret, daemon_nonce, master_nonce),
        deadline))
    return err;
  char verdict[admission_verdict_size];
  if (auto err = receive_all(fd.get(), verdict, sizeof(verdict), deadline))
    return err;
  switch (static_cast<admission_status>(verdict[0])) {
    case admission_status::admitted:
      break;
    case admission_status::master_has_no_secret:
      return make_error(actors_errc::auth_failed,
                        "the daemon requires a secret and this master has "
                        "none (--secret-file)");
    case admission_status::wrong_secret:
      return make_error(actors_errc::auth_failed,
                        "the daemon refused the master's proof: wrong secret");
    default:
      return make_error(actors_errc::unreachable,
                        "the daemon refused the admission handshake");
  }
  if (secret) {
    auto expected
      = proof_of(*secret, prover::admitting_daemon, daemon_nonce, master_nonce);
    if (!same_proof(expected,
                    std::vector<char>(verdict + 1, verdict + sizeof(verdict))))
      return make_error(actors_errc::auth_failed,
                        "the daemon does not know this master's secret "
                        "(wrong secret)");
  }
  return fd.release();
}

} // namespace epochrt::detail
