#include <epochrt/runtime/exchange_ops.hpp>

#include <epochrt/runtime/op_context.hpp>
#include <epochrt/runtime/op_registry.hpp>

namespace epochrt {

namespace {

arg_spec arg(std::string name, arg_kind kind, bool required, std::string doc) {
  return arg_spec{std::move(name), kind, required, std::move(doc)};
}

caf::error no_exchange(const op_context& ctx) {
  return ctx.fail(runtime_errc::exchange_failed,
                  "no exchange: this task runs outside a session, where "
                  "channels and collectives do not exist");
}

// The declaration of the op's channel in its group's plan; an error outside
// a session, or for a channel the plan does not declare.
caf::expected<channel_def> channel_of(const op_context& ctx) {
  if (ctx.port() == nullptr)
    return no_exchange(ctx);
  auto name = ctx.string_arg("channel");
  auto def = ctx.port()->find_channel(name);
  if (!def)
    return ctx.fail(runtime_errc::exchange_failed,
                    "channel '" + name + "' is not a channel of this group");
  return std::move(*def);
}

std::string blob_count(size_t n) {
  return std::to_string(n) + (n == 1 ? " blob" : " blobs");
}

// -- channels -------------------------------------------------------------

caf::error enqueue_blobs(op_context& ctx) {
  if (auto* done = ctx.resumed())
    return done->outcome().error;
  auto def = channel_of(ctx);
  if (!def)
    return std::move(def.error());
  if (def->blobs.size() != ctx.input_count())
    return ctx.fail(runtime_errc::exchange_failed,
                    "an item of channel '" + def->name + "' has "
                      + blob_count(def->blobs.size()) + ", got "
                      + std::to_string(ctx.input_count()));
  std::vector<tensor_ptr> item;
  item.reserve(ctx.input_count());
  for (size_t i = 0; i < ctx.input_count(); ++i)
    item.push_back(ctx.share_input(i));
  return ctx.wait_for(ctx.port()->put(def->name, std::move(item)));
}

// Takes an item into the first `blobs` outputs; `safe` sets the last output
// to the channel's end instead of failing there.
caf::error dequeue(op_context& ctx, bool safe) {
  auto blobs = ctx.output_count() - (safe ? 1 : 0);
  if (auto* done = ctx.resumed()) {
    auto& outcome = done->outcome();
    if (outcome.error)
      return outcome.error;
    if (outcome.closed) {
      if (!safe)
        return ctx.fail(runtime_errc::exchange_failed,
                        "channel '" + ctx.string_arg("channel")
                          + "' is closed and empty");
      ctx.set_output(blobs, make_scalar<bool>(true));
      ctx.end_step();
      return caf::none;
    }
    if (outcome.values.size() != blobs)
      return ctx.fail(runtime_errc::exchange_failed,
                      "channel '" + ctx.string_arg("channel") + "' gave "
                        + blob_count(outcome.values.size()) + ", expected "
                        + std::to_string(blobs));
    for (size_t i = 0; i < blobs; ++i)
      ctx.set_output_shared(i, std::move(outcome.values[i]));
    if (safe)
      ctx.set_output(blobs, make_scalar<bool>(false));
    return caf::none;
  }
  auto def = channel_of(ctx);
  if (!def)
    return std::move(def.error());
  if (def->blobs.size() != blobs)
    return ctx.fail(runtime_errc::exchange_failed,
                    "an item of channel '" + def->name + "' has "
                      + blob_count(def->blobs.size()) + ", the op takes "
                      + std::to_string(blobs));
  return ctx.wait_for(ctx.port()->take(def->name));
}

caf::error dequeue_blobs(op_context& ctx) {
  return dequeue(ctx, false);
}

caf::error safe_dequeue_blobs(op_context& ctx) {
  return dequeue(ctx, true);
}

caf::error close_blobs_queue(op_context& ctx) {
  if (auto* done = ctx.resumed())
    return done->outcome().error;
  auto def = channel_of(ctx);
  if (!def)
    return std::move(def.error());
  return ctx.wait_for(ctx.port()->close(def->name));
}

// -- collectives ----------------------------------------------------------

template <collective_kind Kind>
caf::error collective_op(op_context& ctx) {
  if (auto* done = ctx.resumed()) {
    auto& outcome = done->outcome();
    if (outcome.error)
      return outcome.error;
    if (outcome.values.size() != ctx.output_count())
      return ctx.fail(runtime_errc::exchange_failed,
                      "the collective gave " + blob_count(outcome.values.size())
                        + " for " + std::to_string(ctx.output_count())
                        + " outputs");
    for (size_t i = 0; i < ctx.output_count(); ++i)
      ctx.set_output_shared(i, std::move(outcome.values[i]));
    return caf::none;
  }
  if (ctx.port() == nullptr)
    return no_exchange(ctx);
  std::vector<tensor_ptr> inputs;
  inputs.reserve(ctx.input_count());
  for (size_t i = 0; i < ctx.input_count(); ++i)
    inputs.push_back(ctx.share_input(i));
  return ctx.wait_for(ctx.port()->collective(Kind, ctx.string_arg("collective"),
                                             std::move(inputs)));
}

std::string same_count(const op_def& op) {
  if (op.inputs.size() != op.outputs.size())
    return op.type + " takes one output per input ("
      + std::to_string(op.inputs.size()) + " inputs), got "
      + std::to_string(op.outputs.size()) + " outputs";
  return {};
}

std::string check_name(const op_def& op, const char* arg_name) {
  auto name = string_arg_of(op, arg_name);
  if (name.empty())
    return op.type + ": " + arg_name + " must not be empty";
  return {};
}

std::string check_channel_name(const op_def& op) {
  return check_name(op, "channel");
}

void must_add(op_registry& registry, caf::error& first, op_schema schema) {
  if (auto err = registry.add(std::move(schema)); err && !first)
    first = std::move(err);
}

} // namespace

channel_use channel_use_of(std::string_view op_type) noexcept {
  if (op_type == exchange_ops::enqueue)
    return channel_use::put;
  if (op_type == exchange_ops::dequeue || op_type == exchange_ops::safe_dequeue)
    return channel_use::take;
  if (op_type == exchange_ops::close)
    return channel_use::close;
  return channel_use::none;
}

std::optional<collective_kind>
collective_kind_of(std::string_view op_type) noexcept {
  if (op_type == exchange_ops::all_reduce)
    return collective_kind::all_reduce;
  if (op_type == exchange_ops::broadcast)
    return collective_kind::broadcast;
  if (op_type == exchange_ops::all_gather)
    return collective_kind::all_gather;
  if (op_type == exchange_ops::barrier)
    return collective_kind::barrier;
  return std::nullopt;
}

caf::error add_exchange_ops(op_registry& registry) {
  caf::error first;
  auto channel_arg = [] {
    return arg("channel", arg_kind::string, true,
               "the channel, declared by the job");
  };
  auto collective_arg = [] {
    return arg("collective", arg_kind::string, true,
               "the collective: every task of the group with an op of this "
               "name takes part");
  };
  must_add(registry, first,
           {std::string{exchange_ops::enqueue},
            "Puts one item, its inputs (one per blob the channel's items "
            "have), into `channel`, waiting while the channel is full. Fails "
            "when the channel is closed. The blobs are shared, not copied, "
            "within a process.",
            1,
            -1,
            0,
            0,
            {channel_arg()},
            enqueue_blobs,
            check_channel_name});
  must_add(registry, first,
           {std::string{exchange_ops::dequeue},
            "Takes the oldest item of `channel` into its outputs (one per "
            "blob the channel's items have), waiting while the channel is "
            "empty. Fails once the channel is closed and empty.",
            0,
            0,
            1,
            -1,
            {channel_arg()},
            dequeue_blobs,
            check_channel_name});
  must_add(registry, first,
           {std::string{exchange_ops::safe_dequeue},
            "As DequeueBlobs, with one more output, `status` (bool): false "
            "when an item was taken; once the channel is closed and empty, "
            "true, the item outputs are left as they were, and the op ends "
            "its step (the ops after it do not run, the step does not "
            "iterate again).",
            0,
            0,
            2,
            -1,
            {channel_arg()},
            safe_dequeue_blobs,
            check_channel_name});
  must_add(registry, first,
           {std::string{exchange_ops::close},
            "Closes `channel`: later puts fail, and takes end once it is "
            "empty. Closing a closed channel does nothing. No blobs.",
            0,
            0,
            0,
            0,
            {channel_arg()},
            close_blobs_queue,
            check_channel_name});
  must_add(
    registry, first,
    {std::string{exchange_ops::all_reduce},
     "Outputs, for each input, the elementwise reduction (`op`: sum, mean, "
     "min, max; default sum) of that input over every participant of "
     "`collective`, folded in participant order (by node name, then task "
     "name), so that every run gives the same bits. Numeric blobs of one "
     "dtype and shape on every participant.",
     1,
     -1,
     1,
     -1,
     {collective_arg(),
      arg("op", arg_kind::string, false, "sum (default), mean, min or max")},
     collective_op<collective_kind::all_reduce>,
     [](const op_def& op) -> std::string {
       if (auto problem = check_name(op, "collective"); !problem.empty())
         return problem;
       if (op.args.count("op") > 0
           && !reduce_op_from_name(string_arg_of(op, "op")))
         return "Allreduce: op must be sum, mean, min or max, got '"
           + string_arg_of(op, "op") + "'";
       return same_count(op);
     }});
  must_add(registry, first,
           {std::string{exchange_ops::broadcast},
            "Outputs, for each input, the root node's value of it: every "
            "participant of `collective` gets the root's blobs (the root "
            "too). Every participant's blobs have the root's dtypes and "
            "shapes.",
            1,
            -1,
            1,
            -1,
            {collective_arg(),
             arg("root", arg_kind::string, true,
                 "the node whose blobs are sent; exactly one participant "
                 "runs there")},
            collective_op<collective_kind::broadcast>,
            [](const op_def& op) -> std::string {
              if (auto problem = check_name(op, "collective"); !problem.empty())
                return problem;
              if (auto problem = check_name(op, "root"); !problem.empty())
                return problem;
              return same_count(op);
            }});
  must_add(registry, first,
           {std::string{exchange_ops::all_gather},
            "Outputs, for each input, every participant's value of it "
            "stacked along a new first dimension, in participant order: "
            "shape [participants, ...]. Blobs of one dtype and shape on "
            "every participant.",
            1,
            -1,
            1,
            -1,
            {collective_arg()},
            collective_op<collective_kind::all_gather>,
            [](const op_def& op) -> std::string {
              if (auto problem = check_name(op, "collective"); !problem.empty())
                return problem;
              return same_count(op);
            }});
  must_add(registry, first,
           {std::string{exchange_ops::barrier},
            "Waits until every participant of `collective` has reached it. "
            "No blobs.",
            0,
            0,
            0,
            0,
            {collective_arg()},
            collective_op<collective_kind::barrier>,
            [](const op_def& op) {
              return check_name(op, "collective");
            }});
  return first;
}

} // namespace epochrt
