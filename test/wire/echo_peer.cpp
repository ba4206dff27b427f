// wire_echo_peer: the other end of wire_test. It publishes, on 127.0.0.1 and
// a port the kernel picks, one actor that answers every message with the
// message itself, prints "listening on 127.0.0.1:PORT" on stdout, and runs
// until stdin closes, SIGTERM or SIGINT arrives, or --max-seconds pass.
//
// Its actor system is configured exactly as a node daemon's
// (`epochrt::configure_network`), so a value that comes back unchanged has
// crossed the same registry and serializer a real peer would use.

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/send.hpp>
#include <caf/type_id.hpp>

#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/actors/api/network.hpp>

namespace {

// A class rather than a function of no arguments: CAF 0.17 spawns such a
// function by dereferencing a null argument tuple, which UBSan rejects.
class echoing_actor : public caf::event_based_actor {
public:
  explicit echoing_actor(caf::actor_config& cfg) : caf::event_based_actor(cfg) {
    // `reflect` answers a request with the request's own content. Unlike a
    // typed handler it sees every message, including one whose type this
    // process does not know (CAF hands it over emptied).
    set_default_handler(caf::reflect);
  }

  caf::behavior make_behavior() override {
    // An actor with an empty behavior would terminate at once; `close_atom`
    // is the one message not echoed, and nothing in wire_test sends it.
    return {
      [this](caf::close_atom) {
        quit();
      },
    };
  }
};

enum class stop_reason { stdin_closed, signal, lifetime, error };

const char* to_string(stop_reason x) {
  switch (x) {
    case stop_reason::stdin_closed:
      return "stdin closed";
    case stop_reason::signal:
      return "signal";
    case stop_reason::lifetime:
      return "--max-seconds passed";
    default:
      return "poll failed";
  }
}

// Blocks until stdin reaches EOF, a signal of `signal_fd` arrives, or
// `lifetime` passes. The lifetime is a safety net only: the test process
// holds the write end of our stdin, so even its crash ends us.
stop_reason wait_for_stop(int signal_fd, std::chrono::seconds lifetime) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + lifetime;
  pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - clock::now());
    if (left.count() <= 0)
      return stop_reason::lifetime;
    auto ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      return stop_reason::error;
    }
    if (fds[1].revents != 0)
      return stop_reason::signal;
    if (fds[0].revents != 0) {
      char buf[256];
      auto n = ::read(STDIN_FILENO, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
        return stop_reason::stdin_closed;
      // Input is ignored: only its end matters.
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  long max_seconds = 600;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-seconds" && i + 1 < argc) {
      max_seconds = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::cerr << "usage: wire_echo_peer [--max-seconds N]\n";
      return 2;
    }
  }
  // Block the stop signals before CAF starts its threads, which inherit the
  // mask: the signals then wait in the signalfd for the main thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
    std::cerr << "wire_echo_peer: cannot block signals\n";
    return 1;
  }
  int signal_fd = ::signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::cerr << "wire_echo_peer: signalfd failed\n";
    return 1;
  }
  caf::actor_system_config cfg;
  if (auto err = epochrt::configure_network(cfg)) {
    std::cerr << "wire_echo_peer: " << epochrt::coded_error_text(err) << '\n';
    return 1;
  }
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  auto echo_actor = sys.spawn<echoing_actor>();
  auto port = sys.middleman().publish(echo_actor, 0, "127.0.0.1");
  if (!port) {
    std::cerr << "wire_echo_peer: publish failed: " << sys.render(port.error())
              << '\n';
    caf::anon_send_exit(echo_actor, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::cout << "listening on 127.0.0.1:" << *port << std::endl;
  auto reason = wait_for_stop(signal_fd, std::chrono::seconds{max_seconds});
  std::cerr << "wire_echo_peer: stopping (" << to_string(reason) << ")\n";
  caf::anon_send_exit(echo_actor, caf::exit_reason::user_shutdown);
  ::close(signal_fd);
  return reason == stop_reason::error ? 1 : 0;
}
