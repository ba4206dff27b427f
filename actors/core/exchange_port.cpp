#include <epochrt/actors/core/exchange_port.hpp>

#include <utility>

#include <epochrt/actors/core/exchange_hub.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

using port_context = std::shared_ptr<const exchange_port::context>;

// Starts an operation as the fault plan says at `point`: now, later (a
// delay), twice (a duplicate, obeyed once by the exchange), never (a lost
// message: `wait` then fails as a lost node once the silence limit has
// passed), or never because the task's node is struck.
void strike_and_start(const port_context& ctx, fault_point point,
                      const std::string& detail,
                      const std::shared_ptr<exchange_wait>& wait,
                      std::function<void()> start) {
  fault_site site{ctx->task.node, ctx->epoch, detail};
  auto action = strike(ctx->faults.injector.get(), point, site);
  switch (action.kind) {
    case fault_kind::none:
      start();
      return;
    case fault_kind::delay:
      ctx->hub->after(std::chrono::milliseconds{action.ms}, std::move(start));
      return;
    case fault_kind::duplicate:
      start();
      start();
      return;
    case fault_kind::kill_node:
    case fault_kind::freeze_node:
      if (ctx->faults.fault_node)
        ctx->faults.fault_node(action.kind);
      wait->fail(injected_error(point, site, action));
      return;
    default: {
      // A lost message: as on a broken stream, the two sides are lost to
      // each other once it has stayed silent for the connection timeout.
      auto why = error_text(injected_error(point, site, action));
      auto limit = ctx->hub->options().silence_limit;
      ctx->hub->after(limit, [wait, why, limit] {
        wait->fail(make_error(runtime_errc::peer_lost,
                              "a message was lost (" + why
                                + "): no answer within "
                                + std::to_string(limit.count()) + " ms"));
      });
    }
  }
}

} // namespace

exchange_port::exchange_port(std::shared_ptr<exchange_hub> hub, uint64_t run,
                             task_ref task, int64_t epoch, port_faults faults)
  : ctx_(std::make_shared<const context>(
    context{std::move(hub), run, std::move(task), epoch, std::move(faults)})) {
  // nop
}

exchange_port::~exchange_port() {
  // nop
}

std::optional<channel_def>
exchange_port::find_channel(const std::string& name) const {
  return ctx_->hub->find_channel(ctx_->run, name);
}

std::shared_ptr<exchange_wait>
exchange_port::put(const std::string& channel, std::vector<tensor_ptr> item) {
  auto wait = std::make_shared<exchange_wait>();
  auto op = ctx_->hub->next_op_id();
  auto shared_item
    = std::make_shared<const std::vector<tensor_ptr>>(std::move(item));
  strike_and_start(ctx_, fault_point::channel_put, channel, wait,
                   [ctx = ctx_, op, channel, shared_item, wait] {
                     ctx->hub->put(ctx->run, ctx->task, op, channel,
                                   *shared_item, wait);
                   });
  return wait;
}

std::shared_ptr<exchange_wait> exchange_port::take(const std::string& channel) {
  auto wait = std::make_shared<exchange_wait>();
  auto op = ctx_->hub->next_op_id();
  strike_and_start(ctx_, fault_point::channel_take, channel, wait,
                   [ctx = ctx_, op, channel, wait] {
                     ctx->hub->take(ctx->run, ctx->task, op, channel, wait);
                   });
  return wait;
}

std::shared_ptr<exchange_wait>
exchange_port::close(const std::string& channel) {
  auto wait = std::make_shared<exchange_wait>();
  auto op = ctx_->hub->next_op_id();
  strike_and_start(ctx_, fault_point::channel_close, channel, wait,
                   [ctx = ctx_, op, channel, wait] {
                     ctx->hub->close(ctx->run, ctx->task, op, channel, wait);
                   });
  return wait;
}

std::shared_ptr<exchange_wait>
exchange_port::collective(collective_kind kind, const std::string& name,
                          std::vector<tensor_ptr> inputs) {
  auto call = calls_[name]++;
  auto task_wait = std::make_shared<exchange_wait>();
  auto hub_wait = task_wait;
  auto* injector = ctx_->faults.injector.get();
  if (injector != nullptr && injector->armed(fault_point::collective_receive)) {
    // The results pass the receive point on their way back to the task.
    hub_wait = std::make_shared<exchange_wait>();
    auto* raw = hub_wait.get();
    hub_wait->on_complete([ctx = ctx_, raw, task_wait, name] {
      auto outcome
        = std::make_shared<exchange_outcome>(std::move(raw->outcome()));
      auto deliver = [task_wait, outcome] {
        task_wait->complete(*outcome);
      };
      if (outcome->error)
        deliver();
      else
        strike_and_start(ctx, fault_point::collective_receive, name, task_wait,
                         deliver);
    });
  }
  auto shared_inputs
    = std::make_shared<const std::vector<tensor_ptr>>(std::move(inputs));
  strike_and_start(ctx_, fault_point::collective_send, name, task_wait,
                   [ctx = ctx_, kind, name, call, shared_inputs, hub_wait] {
                     ctx->hub->contribute(ctx->run, ctx->task, kind, name, call,
                                          *shared_inputs, hub_wait);
                   });
  return task_wait;
}

void exchange_port::task_ended(bool ok) {
  ctx_->hub->task_ended(ctx_->run, ctx_->task, ok, calls_);
}

} // namespace epochrt
