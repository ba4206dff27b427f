// What a peer that has not proven itself can do to a node daemon: raw
// sockets against a real daemon process on 127.0.0.1, its memory, file
// descriptors and CPU time read from /proc, and a real master served
// afterwards.

#include <boost/test/unit_test.hpp>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/secret_file.hpp>
#include <epochrt/actors/remote/admission_protocol.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/actors/remote/socket_io.hpp>
#include <epochrt/messages/error_text.hpp>

using namespace std::chrono_literals;
using epochrt::process::node_daemon;
using epochrt::process::read_text;
using epochrt::test::eventually;
using epochrt::test::process_runner;
using epochrt::test::start_daemon;
using epochrt::test::temp_dir;

namespace {

namespace detail = epochrt::detail;

// A socket of the test's, closed when it goes.
class raw_connection {
public:
  explicit raw_connection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
      throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      throw std::runtime_error("connect() failed");
  }

  ~raw_connection() {
    ::close(fd_);
  }

  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  // False when the daemon has closed the connection.
  bool send(const std::string& bytes) {
    auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    return n == static_cast<ssize_t>(bytes.size());
  }

  // Exactly `size` bytes, or fewer when the daemon closed the connection or
  // nothing came within `timeout`.
  std::string receive(size_t size, std::chrono::milliseconds timeout) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.size() < size) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
      pollfd pfd{fd_, POLLIN, 0};
      if (left.count() <= 0
          || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0)
        break;
      char buf[256];
      auto n = ::recv(fd_, buf, std::min(sizeof(buf), size - out.size()), 0);
      if (n <= 0)
        break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

  // True when the daemon closes the connection within `timeout` (whatever
  // it sent before).
  bool closed_by_peer(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return false;
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0)
        return false;
      char buf[256];
      auto n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0)
        return true;
    }
  }

private:
  int fd_ = -1;
};

// The 32 bytes of a CAF 0.17 BASP header (network byte order): a client
// handshake announcing a payload of `payload_len` bytes, which CAF's broker
// allocates as soon as it has read the header.
std::string basp_header(uint32_t payload_len) {
  std::string out(32, '\0');
  out[0] = 1; // client_handshake
  for (int i = 0; i < 4; ++i)
    out[4 + i] = static_cast<char>((payload_len >> (24 - 8 * i)) & 0xff);
  return out;
}

std::string proc_field(int pid, const std::string& file,
                       const std::string& key) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/" + file};
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0)
      return line.substr(key.size());
  return {};
}

// Resident memory of a process, in MiB.
double resident_mib(int pid) {
  return std::stod(proc_field(pid, "status", "VmRSS:")) / 1024.0;
}

// CPU time a process has used, in seconds.
double cpu_seconds(int pid) {
  auto text = read_text("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream in{text.substr(text.rfind(')') + 2)};
  std::vector<std::string> fields;
  for (std::string field; in >> field;)
    fields.push_back(field);
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after comm.
  auto ticks = std::stod(fields.at(11)) + std::stod(fields.at(12));
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Descriptor numbers below `limit` that a process has free: what it can
// still open under a descriptor limit of `limit` (descriptors it inherited
// above the limit count for nothing).
size_t free_descriptors(int pid, int limit) {
  auto* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr)
    return 0;
  size_t taken = 0;
  while (auto* entry = ::readdir(dir))
    taken += entry->d_name[0] != '.' && std::atoi(entry->d_name) < limit;
  ::closedir(dir);
  return static_cast<size_t>(limit) - taken;
}

std::string write_secret(const temp_dir& dir) {
  auto path = dir.sub("secret");
  std::ofstream{path} << "the-right-secret-0123456789\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

// The pipeline job over one daemon, as a real master runs it.
std::string run_master(const node_daemon& daemon,
                       const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"run",
                                EPOCHRT_SOURCE_DIR "/examples/jobs/"
                                                   "pipeline.json",
                                "--node",
                                "trainer_0=" + daemon.address(),
                                "--fetch",
                                "trainer_0:total"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto result = process_runner{EPOCHRT_CLI, 60s}.run(args);
  BOOST_TEST(result.exit_code == 0, result.err);
  return result.out;
}

// Lowers the descriptor limit of the processes started while it lives.
class descriptor_limit {
public:
  explicit descriptor_limit(rlim_t limit) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lower = saved_;
    lower.rlim_cur = limit;
    ::setrlimit(RLIMIT_NOFILE, &lower);
  }
  ~descriptor_limit() {
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }

private:
  rlimit saved_{};
};

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (auto i = text.find(part); i != std::string::npos;
       i = text.find(part, i + 1))
    ++n;
  return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(admission)

BOOST_AUTO_TEST_CASE(
  headers_announcing_gigabytes_before_authentication_cost_the_daemon_nothing) {
  temp_dir dir;
  auto secret = write_secret(dir);
  auto daemon = start_daemon(
    dir.str(), "d",
    {"--secret-file", secret, "--admission-timeout-ms", "60000"});
  auto before = resident_mib(daemon.pid());
  std::vector<std::unique_ptr<raw_connection>> peers;
  for (uint32_t announced : {1u << 30, 1u << 30, 1u << 30, 0xFFFFFFFFu}) {
    peers.push_back(std::make_unique<raw_connection>(daemon.port()));
    BOOST_REQUIRE(peers.back()->send(basp_header(announced)));
  }
  // CAF's broker would have allocated the first gigabyte within
  // milliseconds of the header.
  std::this_thread::sleep_for(500ms);
  BOOST_TEST(daemon.running());
  auto after = resident_mib(daemon.pid());
  BOOST_TEST(after - before < 16.0,
             "resident " << before << " MiB before, " << after << " after");
  auto out = run_master(daemon, {"--secret-file", secret});
  BOOST_TEST(out.find("trainer_0:total=145") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(
  hundreds_of_unauthenticated_connections_hold_a_bounded_amount) {
  temp_dir dir;
  auto secret = write_secret(dir);
  auto daemon = start_daemon(
    dir.str(), "d",
    {"--secret-file", secret, "--admission-timeout-ms", "60000"});
  auto before = resident_mib(daemon.pid());
  std::vector<std::unique_ptr<raw_connection>> peers;
  for (int i = 0; i < 200; ++i) {
    peers.push_back(std::make_unique<raw_connection>(daemon.port()));
    BOOST_REQUIRE(peers.back()->send(basp_header(4u << 20)));
  }
  std::this_thread::sleep_for(500ms);
  auto after = resident_mib(daemon.pid());
  BOOST_TEST(after - before < 16.0,
             "resident " << before << " MiB before, " << after << " after");
  // Only the newest 64 stay in the handshake: the others were closed.
  size_t closed = 0;
  for (auto& peer : peers)
    closed += peer->closed_by_peer(10ms) ? 1 : 0;
  BOOST_TEST(closed >= 200u - 64u);
  auto out = run_master(daemon, {"--secret-file", secret});
  BOOST_TEST(out.find("trainer_0:total=145") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(a_copy_stream_needs_the_secret_like_any_connection) {
  temp_dir dir;
  auto secret = write_secret(dir);
  auto daemon = start_daemon(dir.str(), "d", {"--secret-file", secret});
  auto fd = epochrt::detail::connect_admitted(
    "127.0.0.1", daemon.port(), std::string{"not-the-secret-0123456789"}, 5s,
    epochrt::detail::admission_purpose::copy_stream);
  BOOST_REQUIRE(!fd);
  BOOST_TEST(epochrt::is_error(fd.error(), epochrt::actors_errc::auth_failed),
             epochrt::error_text(fd.error()));
}

BOOST_AUTO_TEST_CASE(
  admitted_copy_streams_with_forged_or_no_tokens_cost_the_daemon_nothing) {
  temp_dir dir;
  auto secret_file = write_secret(dir);
  auto secret = epochrt::read_secret_file(secret_file);
  BOOST_REQUIRE(secret);
  auto daemon = start_daemon(dir.str(), "d", {"--secret-file", secret_file});
  auto open_stream = [&] {
    auto fd = epochrt::detail::connect_admitted(
      "127.0.0.1", daemon.port(), *secret, 5s,
      epochrt::detail::admission_purpose::copy_stream);
    if (!fd)
      BOOST_FAIL("no copy stream: " << epochrt::error_text(fd.error()));
    return std::make_unique<epochrt::detail::socket_guard>(*fd);
  };
  // A token no copy waits for: refused, with the reason. The daemon
  // serves 8 streams at once, and a refused one counts until its thread
  // has drained it, which a busy machine may delay past our next stream:
  // that one is closed at once, and is tried again.
  for (int i = 0; i < 20; ++i) {
    char head[5] = {};
    auto answered = [&] {
      auto stream = open_stream();
      auto token = epochrt::detail::make_nonce();
      auto deadline = std::chrono::steady_clock::now() + 5s;
      return !epochrt::detail::send_all(stream->get(),
                                        {token.data(), token.size()}, deadline)
        && !epochrt::detail::receive_all(stream->get(), head, 5, deadline);
    };
    BOOST_REQUIRE(epochrt::test::eventually(answered, 5s));
    BOOST_TEST(head[0] == 1);
  }
  // Streams that never show a token: a few are served until they time
  // out, the rest closed at once; a master is served meanwhile.
  std::vector<std::unique_ptr<epochrt::detail::socket_guard>> idle;
  for (int i = 0; i < 20; ++i)
    idle.push_back(open_stream());
  auto out = run_master(daemon, {"--secret-file", secret_file});
  BOOST_TEST(out.find("trainer_0:total=145") != std::string::npos, out);
  BOOST_TEST(daemon.running());
}

BOOST_AUTO_TEST_CASE(a_connection_that_never_proves_itself_is_closed_in_time) {
  temp_dir dir;
  auto secret = write_secret(dir);
  auto daemon = start_daemon(
    dir.str(), "d", {"--secret-file", secret, "--admission-timeout-ms", "300"});
  raw_connection silent{daemon.port()};
  raw_connection slow{daemon.port()};
  // A part of a hello, never the rest.
  BOOST_REQUIRE(slow.send(basp_header(1024)));
  auto started = std::chrono::steady_clock::now();
  BOOST_TEST(silent.closed_by_peer(5s));
  BOOST_TEST(slow.closed_by_peer(5s));
  BOOST_TEST((std::chrono::steady_clock::now() - started < 3s));
  BOOST_TEST(eventually(
    [&] {
      return daemon.log().find("not admitted within 300 ms")
        != std::string::npos;
    },
    2s));
}

BOOST_AUTO_TEST_CASE(
  idle_connections_at_a_descriptor_limit_neither_spin_nor_lock_out_a_master) {
  temp_dir dir;
  auto secret = write_secret(dir);
  std::unique_ptr<node_daemon> daemon;
  {
    descriptor_limit limit{128};
    daemon = std::make_unique<node_daemon>(start_daemon(
      dir.str(), "d",
      std::vector<std::string>{"--secret-file", secret,
                               "--admission-timeout-ms", "60000"}));
  }
  std::vector<std::unique_ptr<raw_connection>> peers;
  for (int i = 0; i < 150; ++i)
    peers.push_back(std::make_unique<raw_connection>(daemon->port()));
  std::this_thread::sleep_for(200ms);
  auto cpu_before = cpu_seconds(daemon->pid());
  std::this_thread::sleep_for(1s);
  auto busy = cpu_seconds(daemon->pid()) - cpu_before;
  BOOST_TEST(busy < 0.3, "the daemon used " << busy << " s of CPU in 1 s");
  auto out = run_master(*daemon, {"--secret-file", secret});
  BOOST_TEST(out.find("trainer_0:total=145") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(
  out_of_descriptors_the_daemon_logs_once_sheds_new_connections_and_recovers) {
  temp_dir dir;
  std::unique_ptr<node_daemon> daemon;
  {
    // Room for CAF's own descriptors and a handful of connections.
    descriptor_limit limit{24};
    daemon = std::make_unique<node_daemon>(start_daemon(
      dir.str(), "d",
      std::vector<std::string>{"--admission-timeout-ms", "60000"}));
  }
  {
    std::vector<std::unique_ptr<raw_connection>> peers;
    for (int i = 0; i < 60; ++i)
      peers.push_back(std::make_unique<raw_connection>(daemon->port()));
    std::this_thread::sleep_for(200ms);
    auto cpu_before = cpu_seconds(daemon->pid());
    std::this_thread::sleep_for(1s);
    auto busy = cpu_seconds(daemon->pid()) - cpu_before;
    BOOST_TEST(busy < 0.3, "the daemon used " << busy << " s of CPU in 1 s");
    BOOST_TEST(count_of(daemon->log(), "cannot accept a connection") == 1u,
               daemon->log());
    // Idle peers leave the daemon descriptors for its own work, and UBSan
    // the pipe its vptr check opens (without one it reports valid objects
    // as invalid). Eventually: the daemon's own work may hold a few for a
    // moment.
    size_t free = 0;
    BOOST_TEST(eventually(
                 [&] {
                   free = free_descriptors(daemon->pid(), 24);
                   return free >= detail::admission_descriptor_headroom(24);
                 },
                 1s),
               "the daemon has " << free << " of its 24 descriptors free");
    // The connections it kept are still served: a hello gets a challenge.
    auto hello = detail::make_admission_hello(false, detail::make_nonce());
    size_t served = 0;
    for (auto& peer : peers)
      if (peer->send(hello))
        served += peer->receive(detail::admission_hello_size, 100ms).size()
          == detail::admission_hello_size;
    BOOST_TEST(served > 0u, daemon->log());
  }
  // The idle peers are gone; the daemon serves a master again.
  auto out = run_master(*daemon);
  BOOST_TEST(out.find("trainer_0:total=145") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(an_admitted_peer_cannot_announce_more_than_the_limit) {
  temp_dir dir;
  auto daemon = start_daemon(dir.str(), "d", {"--max-tensor-bytes", "1024"});
  auto before = resident_mib(daemon.pid());
  raw_connection peer{daemon.port()};
  // A master without a secret, to a daemon without one.
  auto master_nonce = detail::make_nonce();
  BOOST_REQUIRE(peer.send(detail::make_admission_hello(false, master_nonce)));
  auto challenge = peer.receive(detail::admission_hello_size, 5s);
  BOOST_REQUIRE_EQUAL(challenge.size(), detail::admission_hello_size);
  BOOST_REQUIRE(peer.send(std::string(detail::admission_proof_size, '\0')));
  auto verdict = peer.receive(detail::admission_verdict_size, 5s);
  BOOST_REQUIRE_EQUAL(verdict.size(), detail::admission_verdict_size);
  BOOST_TEST(verdict[0] == '\0');
  BOOST_REQUIRE(peer.send(basp_header(512u << 20)));
  BOOST_TEST(peer.closed_by_peer(5s));
  BOOST_TEST(resident_mib(daemon.pid()) - before < 16.0);
  BOOST_TEST(eventually(
    [&] {
      return daemon.log().find("more than the") != std::string::npos;
    },
    2s));
  auto out = run_master(daemon);
  BOOST_TEST(out.find("trainer_0:total=145") != std::string::npos, out);
}

BOOST_AUTO_TEST_SUITE_END()
