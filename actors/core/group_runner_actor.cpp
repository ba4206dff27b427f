#include <epochrt/actors/core/group_runner_actor.hpp>

#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/detail/run_group.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

group_runner_actor::behavior_type
group_runner_behavior(group_runner_actor::pointer self, detail::node_map nodes,
                      std::chrono::milliseconds timeout) {
  return {
    [=](run_tasks& msg) -> caf::result<tasks_done> {
      auto rp = self->make_response_promise<tasks_done>();
      // The runner quits as soon as its reply is out: that drops the
      // replies still due after a failure.
      auto gathered
        = detail::run_group(self, nodes, timeout, std::move(msg),
                            [self, rp](caf::expected<tasks_done> done) mutable {
                              if (done)
                                rp.deliver(std::move(*done));
                              else
                                rp.deliver(std::move(done.error()));
                              self->quit();
                            });
      if (gathered)
        self->set_down_handler([gathered](caf::down_msg& down) {
          gathered->node_down(down.source);
        });
      return rp;
    },
  };
}

} // namespace

group_runner_actor spawn_group_runner(caf::actor_system& sys,
                                      std::map<std::string, caf::actor> nodes,
                                      std::chrono::milliseconds timeout) {
  return sys.spawn(group_runner_behavior, std::move(nodes), timeout);
}

} // namespace epochrt
