#include <epochrt/actors/api/node_server.hpp>

#include <algorithm>
#include <filesystem>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/network.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/remote/copy_stream_receiver.hpp>
#include <epochrt/actors/remote/gatekeeper_actor.hpp>
#include <epochrt/actors/remote/replica_links.hpp>
#include <epochrt/actors/remote/replica_store_actor.hpp>
#include <epochrt/actors/remote/socket_io.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/remote_protocol.hpp>
#include <epochrt/persistence/dir_lock.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/worker_pool.hpp>

namespace epochrt {

namespace {

// `use` of a stream of its own to the daemon at `address`, closed after.
template <class Use>
auto on_new_stream(replica_links& links, const std::string& address, Use use)
  -> decltype(use(0)) {
  auto fd = links.open_stream(address);
  if (!fd)
    return std::move(fd.error());
  detail::socket_guard stream{*fd};
  return use(stream.get());
}

caf::expected<std::string> make_root(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(actors_errc::invalid_argument,
                      "checkpoint root " + dir + ": " + ec.message());
  auto absolute = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(absolute))
    return make_error(actors_errc::invalid_argument,
                      "checkpoint root " + dir + " is not a directory");
  return absolute.string();
}

// Keeps the connection this daemon opened to another daemon watched:
// `linked` once, then `unlinked` when the connection (the other daemon's
// gatekeeper, reached over it) is gone; ends with `owner` (the exchange's
// endpoint) too, so that a daemon stopped within a process that goes on
// leaves no watch behind.
void watch_link(caf::actor_system& sys, caf::actor gate, caf::actor owner,
                std::function<void(const caf::node_id&)> linked,
                std::function<void(const caf::node_id&)> unlinked) {
  // The handles go in as arguments, not captures: CAF 0.17 dereferences a
  // null pointer to spawn a function actor without arguments (UBSan).
  auto body = [linked, unlinked](caf::event_based_actor* self, caf::actor gate,
                                 caf::actor owner) -> caf::behavior {
    auto node = gate.node();
    self->set_down_handler(
      [self, node, unlinked, gate = gate.address()](caf::down_msg& dm) {
        if (dm.source == gate)
          unlinked(node);
        self->quit();
      });
    self->monitor(gate);
    self->monitor(owner);
    linked(node);
    // A behavior keeps the actor, and so the watch, alive until a down.
    return {[gate](exchange_link_atom) {
      // nothing to do: announcements go to the exchange, not here
    }};
  };
  sys.spawn<caf::hidden>(body, std::move(gate), std::move(owner));
}

// How the daemon's exchange connects to another daemon: as a master
// connects to a daemon, over TLS or through the admission handshake with
// the daemon's own secret (the daemons of one job share it).
auto peer_connector(caf::actor_system& sys,
                    const node_server_options& options) {
  return [&sys, secret = options.secret, timeout = options.admission_timeout](
           const std::string& host, uint16_t port, const caf::actor& owner,
           std::function<void(const caf::node_id&)> linked,
           std::function<void(const caf::node_id&)> unlinked) {
    auto address = node_address{host, port}.str();
    connect_actor_async(
      sys, host, port, timeout, secret,
      [&sys, address, owner, linked, unlinked](caf::expected<caf::actor> gate) {
        if (!gate) {
          detail::log(sys).info("exchange: no connection of its own to the "
                                "daemon at {} ({}); messages to it go through "
                                "the master",
                                address, caf::to_string(gate.error()));
          unlinked({});
          return;
        }
        watch_link(sys, std::move(*gate), owner, linked, unlinked);
      });
  };
}

} // namespace

node_server::node_server(caf::actor_system& sys, caf::actor gatekeeper,
                         caf::actor store, uint16_t port, std::string root,
                         std::unique_ptr<dir_lock> lock,
                         std::shared_ptr<fault_injector> faults,
                         std::shared_ptr<worker_pool> pool,
                         std::shared_ptr<exchange_hub> hub,
                         std::shared_ptr<copy_stream_receiver> streams)
  : sys_(sys), gatekeeper_(std::move(gatekeeper)), store_(std::move(store)),
    port_(port), root_(std::move(root)), lock_(std::move(lock)),
    faults_(std::move(faults)), pool_(std::move(pool)), hub_(std::move(hub)),
    streams_(std::move(streams)) {
  // nop
}

caf::expected<std::unique_ptr<node_server>>
node_server::start(caf::actor_system& sys,
                   std::shared_ptr<const op_registry> ops,
                   node_server_options options) {
  if (!sys.has_middleman())
    return make_error(actors_errc::invalid_argument,
                      "a node daemon needs CAF's middleman "
                      "(configure_network)");
  if (!is_loopback(options.host) && !options.secret && !uses_tls(sys))
    return make_error(actors_errc::invalid_argument,
                      "refusing to listen on " + options.host
                        + " without a secret or TLS: any host could run "
                          "code here (give --secret-file or --tls-*, or "
                          "listen on 127.0.0.1)");
  auto root = make_root(options.checkpoint_root);
  if (!root)
    return std::move(root.error());
  // Before the port is bound: a second daemon on this root must not be
  // reachable even for a moment.
  std::unique_ptr<dir_lock> lock;
  if (options.lock_root) {
    auto locked = dir_lock::acquire(*root);
    if (!locked)
      return std::move(locked.error());
    lock = std::make_unique<dir_lock>(std::move(*locked));
  }
  auto made = worker_pool::make({options.worker_threads});
  if (!made)
    return std::move(made.error());
  std::shared_ptr<worker_pool> pool = std::move(*made);
  auto host = options.host;
  auto port = options.port;
  admission_options admission;
  admission.secret = options.secret;
  admission.timeout = options.admission_timeout;
  admission.max_pending_connections = options.max_pending_connections;
  admission.max_message_bytes
    = options.max_tensor_bytes + message_overhead_bytes;
  admission.faults = options.faults;
  auto faults = options.faults;
  exchange_hub_options hub_options;
  hub_options.max_tensor_bytes = options.max_tensor_bytes;
  // Messages for runs not begun here yet: a few tensors' worth, not the
  // default gigabyte, whatever the tensor limit.
  hub_options.max_early_bytes = std::min<uint64_t>(
    hub_options.max_early_bytes,
    8 * (options.max_tensor_bytes + message_overhead_bytes));
  auto silence = caf::get_or(sys.config(), "middleman.connection-timeout",
                             caf::timespan{std::chrono::seconds(5)});
  if (silence.count() > 0)
    hub_options.silence_limit
      = std::chrono::duration_cast<std::chrono::milliseconds>(silence);
  hub_options.connect_peer = peer_connector(sys, options);
  bool secret_required = options.secret.has_value(); // options move below
  auto hub = exchange_hub::make(sys, pool, hub_options);
  gatekeeper_config keeper_cfg;
  keeper_cfg.secret = std::move(options.secret);
  keeper_cfg.root = *root;
  keeper_cfg.ops = std::move(ops);
  keeper_cfg.max_tensor_bytes = options.max_tensor_bytes;
  keeper_cfg.task_timeout = options.task_timeout;
  keeper_cfg.faults = options.faults;
  keeper_cfg.pool = pool;
  keeper_cfg.hub = hub;
  // Copies' bytes on streams of their own, admitted as every connection
  // here is; under TLS, which admits no other way, in CAF messages.
  std::shared_ptr<copy_stream_receiver> streams;
  if (!uses_tls(sys)) {
    streams = copy_stream_receiver::make({}, faults);
    admission.copy_streams = [streams](int fd) {
      return streams->serve(fd);
    };
  }
  keeper_cfg.store = spawn_replica_store(sys, *root, faults, streams);
  if (!keeper_cfg.store) {
    hub->shutdown();
    return make_error(actors_errc::invalid_argument,
                      "no thread for the daemon's replica store");
  }
  auto links = std::make_shared<replica_links>(sys, keeper_cfg.secret,
                                               options.admission_timeout);
  keeper_cfg.find_store = [links](const std::string& address, bool reconnect) {
    return links->store_at(address, reconnect);
  };
  if (streams) {
    auto step = copy_stream_limits{}.step_timeout;
    keeper_cfg.streams.send = [links, step](const std::string& address,
                                            const std::vector<char>& token,
                                            const std::string& local_db,
                                            const database_listing& listing,
                                            uint64_t& sent) -> caf::error {
      return on_new_stream(*links, address, [&](int fd) {
        return send_copy_stream(fd, token, local_db, listing, step, sent);
      });
    };
    keeper_cfg.streams.fetch =
      [links, step](const std::string& address, const std::vector<char>& token,
                    uint64_t bytes, const piece_sink& sink,
                    uint64_t& received) -> caf::expected<uint64_t> {
      return on_new_stream(*links, address, [&](int fd) {
        return fetch_copy_stream(fd, token, bytes, sink, step, received);
      });
    };
  }
  auto store = keeper_cfg.store;
  auto keeper = spawn_gatekeeper(sys, std::move(keeper_cfg));
  auto bound = publish_actor(keeper, host, port, admission);
  if (!bound) {
    hub->shutdown();
    caf::anon_send_exit(keeper, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    if (streams)
      streams->stop();
    return make_error(actors_errc::unreachable,
                      "cannot listen on " + node_address{host, port}.str()
                        + ": " + caf::to_string(bound.error()));
  }
  detail::log(sys).info("node daemon listening on {}{}, checkpoints under {}{}",
                        node_address{host, *bound}.str(),
                        uses_tls(sys) ? " (TLS)" : "", *root,
                        secret_required ? ", secret required" : "");
  return std::unique_ptr<node_server>{
    new node_server(sys, std::move(keeper), std::move(store), *bound,
                    std::move(*root), std::move(lock), std::move(faults),
                    std::move(pool), std::move(hub), std::move(streams))};
}

node_server::~node_server() {
  stop();
}

void node_server::stop() {
  if (!gatekeeper_)
    return;
  detail::log(sys_).info("node daemon on port {}: shutting down", port_);
  // As for a session: no thread of its nodes sleeps past the daemon.
  if (faults_)
    faults_->interrupt_delays();
  sys_.middleman().unpublish(gatekeeper_, port_);
  caf::anon_send_exit(gatekeeper_, caf::exit_reason::user_shutdown);
  gatekeeper_ = nullptr;
  caf::anon_send_exit(store_, caf::exit_reason::user_shutdown);
  store_ = nullptr;
  if (streams_)
    streams_->stop();
  // Waiting tasks are woken (and fail) before the pool drops its queue.
  hub_->shutdown();
  // Queued work is dropped; running tasks end at their next op once their
  // node, dropped with the gatekeeper, has seen its exit.
  pool_->stop();
}

} // namespace epochrt
