#include <epochrt/actors/core/group_run.hpp>

#include <memory>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/run_group.hpp>
#include <epochrt/messages/protocol.hpp>

namespace epochrt {

namespace {

// Calls its function once: with the outcome, or, when it is destroyed
// first, with an error saying that the runner ended before the group.
class outcome_once {
public:
  explicit outcome_once(group_outcome_fn done) : done_(std::move(done)) {
    // nop
  }

  outcome_once(const outcome_once&) = delete;
  outcome_once& operator=(const outcome_once&) = delete;

  ~outcome_once() {
    if (done_)
      done_(make_error(actors_errc::node_lost,
                       "the group runner stopped before the group ended"));
  }

  void operator()(caf::expected<tasks_done> outcome) {
    auto done = std::move(done_);
    done_ = nullptr;
    if (done)
      done(std::move(outcome));
  }

private:
  group_outcome_fn done_;
};

// Runs `group`, hands the outcome to `done`, and quits: that drops the
// replies still due after a failure.
void one_group_run(caf::event_based_actor* self, detail::node_map nodes,
                   std::chrono::milliseconds timeout, run_tasks group,
                   std::shared_ptr<outcome_once> done,
                   std::shared_ptr<const detail::exchange_setup> exchange) {
  auto gathered = detail::run_group(
    self, nodes, timeout, std::move(group), true,
    [self, done, exchange](caf::expected<tasks_done> outcome) {
      (*done)(std::move(outcome));
      self->quit();
    },
    exchange.get());
  if (gathered)
    self->set_down_handler([gathered](caf::down_msg& down) {
      gathered->node_down(down.source);
    });
}

} // namespace

caf::actor
start_group_run(caf::actor_system& sys, std::map<std::string, node_actor> nodes,
                std::chrono::milliseconds timeout, run_tasks group,
                group_outcome_fn done, detail::exchange_setup exchange) {
  return sys.spawn(
    one_group_run, std::move(nodes), timeout, std::move(group),
    std::make_shared<outcome_once>(std::move(done)),
    std::make_shared<const detail::exchange_setup>(std::move(exchange)));
}

} // namespace epochrt
