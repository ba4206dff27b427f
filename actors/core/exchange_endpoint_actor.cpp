#include <epochrt/actors/core/exchange_endpoint_actor.hpp>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/exchange_protocol.hpp>

namespace epochrt {

namespace {

// The hub sends its own requests as the endpoint: nobody else can.
bool from_itself(caf::event_based_actor* self) {
  auto& sender = self->current_sender();
  return sender && sender->id() == self->id() && sender->node() == self->node();
}

caf::behavior endpoint_behavior(caf::event_based_actor* self,
                                std::weak_ptr<exchange_hub> weak) {
  self->set_down_handler([weak](caf::down_msg& dm) {
    if (auto hub = weak.lock())
      hub->peer_down(dm.source, dm.reason);
  });
  // CAF's default for an error that comes as a message is to quit, and
  // CAF sends one back for a message its receiver did not expect: one
  // such answer from another process, or an error any peer sends, would
  // stop the exchange of this process for good.
  self->set_error_handler([self](caf::error& err) {
    detail::log(self->system())
      .warn("exchange: dropped an error that came as a message: {}",
            error_text(err));
  });
  // Hands a message to the hub with the actor that sent it; a message
  // without a sender cannot be answered or checked, and is dropped.
  auto pass = [self, weak](auto& msg) {
    auto hub = weak.lock();
    auto& sender = self->current_sender();
    if (!hub || !sender)
      return;
    hub->receive(caf::actor_cast<caf::actor>(sender), msg);
  };
  return {
    [pass](exchange_put& msg) {
      pass(msg);
    },
    [pass](exchange_take& msg) {
      pass(msg);
    },
    [pass](exchange_close& msg) {
      pass(msg);
    },
    [pass](exchange_reply& msg) {
      pass(msg);
    },
    [pass](exchange_part& msg) {
      pass(msg);
    },
    [pass](exchange_result& msg) {
      pass(msg);
    },
    [pass](exchange_task_end& msg) {
      pass(msg);
    },
    [pass](exchange_node_lost& msg) {
      pass(msg);
    },
    [pass](exchange_probe& msg) {
      pass(msg);
    },
    [pass](exchange_probe_reply& msg) {
      pass(msg);
    },
    [pass](exchange_deadlock& msg) {
      pass(msg);
    },
    [pass](exchange_forward& msg) {
      pass(msg);
    },
    [pass](exchange_relayed& msg) {
      pass(msg);
    },
    [self, weak](exchange_link_atom) {
      auto hub = weak.lock();
      auto& sender = self->current_sender();
      // Only another process's exchange has a connection to announce.
      if (!hub || !sender || sender->node() == self->node())
        return;
      hub->receive_link(caf::actor_cast<caf::actor>(sender));
    },
    [self](exchange_watch_atom, caf::actor& peer) {
      // Only the hub's own requests count: it sends them as the endpoint.
      if (!from_itself(self) || !peer)
        return;
      self->monitor(peer);
    },
    [self, weak](exchange_timer_atom, uint64_t id) {
      if (!from_itself(self))
        return;
      if (auto hub = weak.lock())
        hub->timer_fired(id);
    },
  };
}

} // namespace

caf::actor spawn_exchange_endpoint(caf::actor_system& sys,
                                   std::weak_ptr<exchange_hub> hub) {
  return sys.spawn(endpoint_behavior, std::move(hub));
}

} // namespace epochrt
