#include "bench/caf_item_peer.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <pthread.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/response_promise.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/error_codes.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/messages/error_text.hpp>

namespace epochrt::bench {

namespace {

using item_atom = caf::atom_constant<caf::atom("cb_item")>;
using stream_atom = caf::atom_constant<caf::atom("cb_stream")>;

// Generous: only a wedged run reaches it.
constexpr auto request_timeout = std::chrono::seconds(10);

// std::vector<char> crosses the wire with one memcpy, as a tensor's data
// does in epochrt's messages.
caf::behavior item_sink(caf::event_based_actor*) {
  return {
    [](item_atom, const std::vector<char>& item) {
      return static_cast<int64_t>(item.size());
    },
  };
}

struct stream_run {
  caf::actor sink;
  std::vector<char> item;
  caf::response_promise promise;
  int left = 0;
  std::chrono::steady_clock::time_point start;
};

void send_next(caf::event_based_actor* self,
               const std::shared_ptr<stream_run>& run) {
  self->request(run->sink, request_timeout, item_atom::value, run->item)
    .then(
      [self, run](int64_t) {
        if (--run->left > 0) {
          send_next(self, run);
          return;
        }
        std::chrono::duration<double> elapsed
          = std::chrono::steady_clock::now() - run->start;
        run->promise.deliver(elapsed.count());
      },
      [run](caf::error& err) {
        run->promise.deliver(std::move(err));
      });
}

// Answers (stream, items, bytes) with the seconds `items` sequential
// requests of `bytes` bytes took, timed inside the actor.
caf::behavior item_driver(caf::event_based_actor* self, caf::actor sink) {
  return {
    [=](stream_atom, int32_t items, int32_t bytes) -> caf::result<double> {
      auto run = std::make_shared<stream_run>();
      run->sink = sink;
      run->item.assign(static_cast<size_t>(bytes), '\x5a');
      run->promise = self->make_response_promise();
      run->left = items;
      run->start = std::chrono::steady_clock::now();
      send_next(self, run);
      return run->promise;
    },
  };
}

} // namespace

int serve_caf_item_sink() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr); // before any thread starts
  caf::actor_system_config cfg;
  if (auto err = configure_network(cfg)) {
    std::fprintf(stderr, "%s\n", coded_error_text(err).c_str());
    return 1;
  }
  configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  auto sink = sys.spawn(item_sink);
  auto port = sys.middleman().publish(sink, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "publish: %s\n",
                 coded_error_text(port.error()).c_str());
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  int received = 0;
  sigwait(&stop, &received);
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  return 0;
}

int run_caf_item_client(uint16_t port, int items, int reps, int item_bytes) {
  caf::actor_system_config cfg;
  if (auto err = configure_network(cfg)) {
    std::fprintf(stderr, "%s\n", coded_error_text(err).c_str());
    return 1;
  }
  configure_scheduler(cfg, 2);
  caf::actor_system sys{cfg};
  auto sink = sys.middleman().remote_actor("127.0.0.1", port);
  if (!sink) {
    std::fprintf(stderr, "connecting to the sink on port %u: %s\n",
                 static_cast<unsigned>(port),
                 coded_error_text(sink.error()).c_str());
    return 1;
  }
  auto driver = sys.spawn(item_driver, *sink);
  int rc = 0;
  {
    caf::scoped_actor self{sys};
    auto stream = [&](int count) {
      double seconds = -1;
      self
        ->request(driver, std::chrono::minutes(5), stream_atom::value,
                  int32_t{count}, int32_t{item_bytes})
        .receive(
          [&](double s) {
            seconds = s;
          },
          [&](caf::error& err) {
            std::fprintf(stderr, "CAF items: %s\n", error_text(err).c_str());
          });
      return seconds;
    };
    if (stream(std::max(1, items / 10)) < 0) // warm-up
      rc = 1;
    for (int r = 0; r < reps && rc == 0; ++r) {
      auto seconds = stream(items);
      if (seconds < 0)
        rc = 1;
      else
        std::printf("%.9f\n", seconds);
      std::fflush(stdout);
    }
  }
  caf::anon_send_exit(driver, caf::exit_reason::user_shutdown);
  return rc;
}

} // namespace epochrt::bench
