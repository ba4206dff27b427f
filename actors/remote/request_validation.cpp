#include <epochrt/actors/remote/request_validation.hpp>

#include <limits>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/persistence/path_guard.hpp>
#include <epochrt/runtime/exchange_plan.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/op_schema.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

caf::error refuse(std::string why) {
  return make_error(actors_errc::rejected, std::move(why));
}

caf::error check_name(const std::string& name, const std::string& what) {
  if (valid_blob_name(name))
    return {};
  return refuse(what + " '" + name.substr(0, 64)
                + "' is not a valid name (1 to 256 printable characters, no "
                  "whitespace)");
}

caf::error check_op(op_def& op, const std::string& where,
                    const op_registry& ops, const request_limits& limits,
                    const std::string& file_root) {
  for (auto& name : op.inputs)
    if (auto err = check_name(name, where + ": input"))
      return err;
  for (auto& name : op.outputs)
    if (auto err = check_name(name, where + ": output"))
      return err;
  for (auto& [name, value] : op.args)
    if (auto err = check_tensor(value, where + ": arg '" + name + "'", limits))
      return err;
  if (auto err = ops.validate(op))
    return refuse(where + ": " + error_text(err));
  if (file_root.empty())
    return {};
  auto* schema = ops.find(op.type);
  for (auto& [name, value] : op.args) {
    auto* spec = schema->find_arg(name);
    if (spec == nullptr || spec->kind != arg_kind::path)
      continue;
    auto placed = resolve_under(file_root, value.strings.front());
    if (!placed)
      return refuse(where + ": arg '" + name
                    + "': " + error_text(placed.error()));
    value.strings.front() = std::move(*placed);
  }
  return {};
}

caf::error check_node(const std::string& name, const std::string& what) {
  if (auto problem = node_name_problem(name); !problem.empty())
    return refuse(what + " '" + name.substr(0, 64) + "' is not a valid node "
                  + "name: " + problem);
  return {};
}

caf::error check_task_ref(const task_ref& x, const exchange_plan& plan,
                          const std::string& what) {
  if (auto err = check_node(x.node, what + ": node"))
    return err;
  if (auto err = check_name(x.task, what + ": task"))
    return err;
  if (plan.endpoint_of(x.node) == nullptr)
    return refuse(what + ": node " + x.node
                  + " has no exchange in the group's plan");
  return {};
}

// Every name valid and every node the plan names reachable through it.
caf::error check_plan(const exchange_plan& plan) {
  // Bounds on what a plan may make a daemon hold.
  constexpr size_t max_entries = 1 << 16;
  if (plan.peers.size() > max_entries || plan.channels.size() > max_entries
      || plan.collectives.size() > max_entries)
    return refuse("the group's plan names too many nodes, channels or "
                  "collectives");
  for (auto& peer : plan.peers) {
    if (auto err = check_node(peer.node, "a peer of the group's plan"))
      return err;
    if (!peer.endpoint)
      return refuse("the group's plan gives node " + peer.node
                    + " no exchange");
    // A host name is at most 253 characters (RFC 1035), an address has a
    // port: anything else is no address a daemon could be connected to.
    if (peer.host.size() > 253 || (peer.host.empty() != (peer.port == 0)))
      return refuse("the group's plan gives node " + peer.node
                    + " an invalid daemon address");
  }
  std::vector<channel_def> channels;
  for (auto& ch : plan.channels) {
    channels.push_back(ch.channel);
    auto what = "channel '" + ch.channel.name.substr(0, 64) + "'";
    if (plan.endpoint_of(ch.channel.node) == nullptr)
      return refuse(what + ": its node has no exchange in the group's plan");
    for (auto& x : ch.putters)
      if (auto err = check_task_ref(x, plan, what))
        return err;
    for (auto& x : ch.takers)
      if (auto err = check_task_ref(x, plan, what))
        return err;
  }
  if (auto err = check_channels(channels, "the group's channels"))
    return refuse(error_text(err));
  for (auto& c : plan.collectives) {
    auto what = "collective '" + c.name.substr(0, 64) + "'";
    if (auto err = check_name(c.name, "collective"))
      return err;
    if (c.participants.empty() || c.participants.size() > max_entries)
      return refuse(what + " has no or too many participants");
    for (auto& x : c.participants)
      if (auto err = check_task_ref(x, plan, what))
        return err;
  }
  return {};
}

} // namespace

caf::error check_tensor(const tensor& x, const std::string& what,
                        const request_limits& limits) {
  // The product of the dimensions must not overflow on its way to a size
  // that happens to match the payload.
  uint64_t elements = 1;
  for (auto dim : x.shape) {
    if (dim < 0)
      return refuse(what + " has a negative dimension");
    auto d = static_cast<uint64_t>(dim);
    if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / d)
      return refuse(what + " has too many elements");
    elements *= d;
  }
  if (x.byte_size() > limits.max_tensor_bytes
      || (x.type != dtype::string && elements > limits.max_tensor_bytes))
    return refuse(what + " has " + std::to_string(x.byte_size())
                  + " bytes; this daemon takes at most "
                  + std::to_string(limits.max_tensor_bytes)
                  + " per tensor (--max-tensor-bytes)");
  if (!x.consistent())
    return refuse(what
                  + " is malformed: its payload does not match its "
                    "type and shape");
  return {};
}

caf::error check_tasks(run_tasks& msg, const std::string& node,
                       const op_registry& ops, const request_limits& limits,
                       const std::string& file_root) {
  if (!msg.plan.empty())
    if (auto err = check_plan(msg.plan))
      return err;
  for (auto& task : msg.tasks) {
    if (auto err = check_name(task.name, "task"))
      return err;
    auto where = "task '" + task.name + "'";
    if (task.node != node)
      return refuse(where + " is for node '" + task.node.substr(0, 64)
                    + "', not for node '" + node + "' hosted here");
    for (auto& name : task.outputs)
      if (auto err = check_name(name, where + ": output"))
        return err;
    for (auto& step : task.steps) {
      auto step_where = where + ", step '" + step.name.substr(0, 64) + "'";
      if (!step.stop_blob.empty())
        if (auto err = check_name(step.stop_blob, step_where + ": stop blob"))
          return err;
      for (size_t i = 0; i < step.ops.size(); ++i) {
        auto op_where = step_where + ", op " + std::to_string(i);
        if (auto err = check_op(step.ops[i], op_where, ops, limits, file_root))
          return err;
      }
    }
  }
  return {};
}

caf::error check_put(const put_blobs& msg, const request_limits& limits) {
  for (auto& blob : msg.blobs) {
    if (auto err = check_name(blob.name, "blob"))
      return err;
    if (auto err = check_tensor(blob.value, "blob '" + blob.name + "'", limits))
      return err;
  }
  return {};
}

caf::error check_fetch(const fetch_blobs& msg) {
  for (auto& name : msg.names)
    if (auto err = check_name(name, "blob"))
      return err;
  return {};
}

caf::error check_op_types(const check_ops& msg) {
  for (auto& type : msg.types)
    if (auto err = check_name(type, "op type"))
      return err;
  return {};
}

} // namespace epochrt
