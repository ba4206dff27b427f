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
#include <epochrt/actors/remote/socket_io.hpp>

namespace epochrt::detail {

namespace {

constexpr char magic[admission_magic_size + 1] = "epochrt-admit/1\n";
static_assert(sizeof(magic) == admission_magic_size + 1);

constexpr uint8_t has_secret_flag = 1;
constexpr uint8_t copy_stream_flag = 2;

using clock_type = socket_clock;

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

caf::error timed_out() {
  return caf::sec::connection_timeout;
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
                                 const std::vector<char>& nonce,
                                 admission_purpose purpose) {
  std::string out(magic, admission_magic_size);
  uint8_t flags = has_secret ? has_secret_flag : 0;
  if (purpose == admission_purpose::copy_stream)
    flags |= copy_stream_flag;
  out.push_back(static_cast<char>(flags));
  out.append(nonce.data(), nonce.size());
  return out;
}

bool parse_admission_hello(std::string_view hello, bool& has_secret,
                           std::vector<char>& nonce,
                           admission_purpose& purpose) {
  if (hello.size() != admission_hello_size
      || hello.substr(0, admission_magic_size)
        != std::string_view{magic, admission_magic_size})
    return false;
  auto flags = static_cast<uint8_t>(hello[admission_magic_size]);
  if ((flags & ~(has_secret_flag | copy_stream_flag)) != 0)
    return false;
  has_secret = (flags & has_secret_flag) != 0;
  purpose = (flags & copy_stream_flag) != 0 ? admission_purpose::copy_stream
                                            : admission_purpose::basp;
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
                                    std::chrono::milliseconds timeout,
                                    admission_purpose purpose) {
  auto deadline = clock_type::now() + timeout;
  auto connected = open_connection(host, port, deadline);
  if (!connected)
    return std::move(connected.error());
  socket_guard fd{*connected};
  auto master_nonce = make_nonce();
  if (auto err = send_all(
        fd.get(),
        make_admission_hello(secret.has_value(), master_nonce, purpose),
        deadline))
    return err;
  char challenge[admission_hello_size];
  if (auto err = receive_all(fd.get(), challenge, sizeof(challenge), deadline))
    return err;
  bool secret_required = false;
  std::vector<char> daemon_nonce;
  auto daemon_purpose = admission_purpose::basp;
  if (!parse_admission_hello({challenge, sizeof(challenge)}, secret_required,
                             daemon_nonce, daemon_purpose))
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
    case admission_status::stream_refused:
      return make_error(actors_errc::unreachable,
                        "the daemon takes no checkpoint copy streams");
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
