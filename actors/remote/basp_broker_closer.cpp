#include <epochrt/actors/remote/basp_broker_closer.hpp>

#include <future>

#include <caf/actor_cast.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/abstract_broker.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/settings.hpp>

namespace epochrt::detail {

namespace {

// What `caf::io::middleman::stop` does to the broker, then the cleanup the
// broker's own skips: `caf::scheduled_actor::cleanup` closes the mailbox and
// bounces what it holds (its second call of the base classes' cleanup does
// nothing). Calling CAF's compiled function rather than draining the queue
// here also keeps CAF's queue templates out of our sanitized code. Runs in
// the multiplexer's thread.
void terminate_and_close(caf::io::abstract_broker& broker,
                         caf::io::network::multiplexer& backend) {
  if (!broker.getf(caf::abstract_actor::is_terminated_flag)) {
    broker.context(&backend);
    broker.quit(caf::exit_reason::user_shutdown);
    broker.finalize();
  }
  if (!broker.mailbox().closed())
    broker.caf::scheduled_actor::cleanup(
      caf::make_error(caf::exit_reason::user_shutdown), &backend);
}

} // namespace

basp_broker_closer::basp_broker_closer(caf::actor_system& sys) : system_(sys) {
  // nop
}

void basp_broker_closer::start() {
  // nop: the broker is the middleman's to start.
}

void basp_broker_closer::stop() {
  // Without a multiplexer thread (manual multiplexing, CAF's test backend)
  // nobody would run the task below: CAF's own stop handles that case.
  if (!system_.has_middleman()
      || caf::get_or(system_.config(), "middleman.manual-multiplexing", false))
    return;
  auto& middleman = system_.middleman();
  auto handle = middleman.named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  auto* broker = static_cast<caf::io::abstract_broker*>(
    caf::actor_cast<caf::abstract_actor*>(handle));
  auto& backend = middleman.backend();
  std::promise<void> done;
  backend.dispatch([&] {
    terminate_and_close(*broker, backend);
    done.set_value();
  });
  done.get_future().wait();
}

void basp_broker_closer::init(caf::actor_system_config&) {
  // nop
}

caf::actor_system::module::id_t basp_broker_closer::id() const {
  return network_manager;
}

void* basp_broker_closer::subtype_ptr() {
  return this;
}

} // namespace epochrt::detail
