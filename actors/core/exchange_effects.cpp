#include <epochrt/actors/core/exchange_effects.hpp>

#include <caf/actor_system.hpp>
#include <caf/make_message.hpp>

#include <epochrt/actors/detail/log.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

void exchange_effects::send(const caf::actor& to, caf::message msg) {
  if (to)
    outbox.emplace_back(to, std::move(msg));
}

caf::message reply_message(uint64_t run, uint64_t op, exchange_status status,
                           std::string error) {
  exchange_reply reply;
  reply.run = run;
  reply.op = op;
  reply.status = status;
  reply.error = std::move(error);
  return caf::make_message(std::move(reply));
}

void exchange_effects::reply(const caf::actor& to, uint64_t run, uint64_t op,
                             exchange_status status, std::string error) {
  send(to, reply_message(run, op, status, std::move(error)));
}

void exchange_effects::fail(std::shared_ptr<exchange_wait> wait,
                            caf::error err) {
  exchange_outcome outcome;
  outcome.error = std::move(err);
  done.emplace_back(std::move(wait), std::move(outcome));
}

void log_refusal(const caf::actor& sender, const std::string& what) {
  // A proxy lives in this process's system: its logger is ours.
  detail::log(sender.home_system())
    .warn("exchange: refused a message from {}: {}",
          caf::to_string(sender.node()), what);
}

caf::error run_over(uint64_t run) {
  return make_error(runtime_errc::exchange_failed,
                    "the group run " + std::to_string(run)
                      + " is over on this node");
}

} // namespace epochrt
