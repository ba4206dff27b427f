#pragma once

#include <caf/actor_system.hpp>

namespace epochrt::detail {

/// Terminates CAF's BASP broker and closes its mailbox while an actor system
/// shuts down, after the system has awaited its actors and before the
/// middleman stops. `configure_network` loads it into every actor system
/// that talks over the network; nothing else needs to know it exists.
///
/// Why: in CAF 0.17.6 (and 0.18) `abstract_broker::cleanup` calls
/// `local_actor::cleanup`, skipping `scheduled_actor::cleanup`, so a
/// terminated broker's mailbox stays open. The broker sends its heartbeat
/// tick to itself through the actor clock, which keeps running until the
/// scheduler stops, after the middleman. A tick delivered in between lands
/// in the dead broker's mailbox, and since its sender is the broker, the
/// broker keeps itself alive: it, its connections and whatever its mailbox
/// holds are never freed (LeakSanitizer reports them at exit; how often
/// depends on the heartbeat interval and the machine's load). Closing the
/// mailbox here, as `scheduled_actor::cleanup` would, makes any later
/// message bounce instead, and the broker is freed with the middleman.
///
/// The module occupies CAF's `network_manager` slot, which CAF 0.17 reserves
/// for libcaf_net, a library no Debian package ships and we never load: the
/// slot is the one stopped first, and CAF offers no other hook between
/// awaiting actors and stopping the middleman.
///
/// Thread safety: CAF calls `stop` once, from the thread that destroys the
/// actor system; the work runs in the multiplexer's thread, where the broker
/// lives, and `stop` returns when it is done.
class basp_broker_closer final : public caf::actor_system::module {
public:
  explicit basp_broker_closer(caf::actor_system& sys);

  /// The factory `caf::actor_system_config::load` calls (with an empty
  /// type list, which this module ignores).
  template <class TypeList>
  static caf::actor_system::module* make(caf::actor_system& sys, TypeList) {
    return new basp_broker_closer(sys);
  }

  void start() override;

  void stop() override;

  void init(caf::actor_system_config& cfg) override;

  id_t id() const override;

  void* subtype_ptr() override;

private:
  caf::actor_system& system_;
};

} // namespace epochrt::detail
