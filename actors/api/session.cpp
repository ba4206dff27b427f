#include <epochrt/actors/api/session.hpp>

#include <future>
#include <map>
#include <memory>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/core/group_run.hpp>
#include <epochrt/actors/detail/blocking_request.hpp>
#include <epochrt/actors/detail/exchange_setup.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/messages/names.hpp>
#include <epochrt/runtime/exchange_plan.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

session::session(session_options options) : options_(options) {
  // nop
}

session::~session() {
  // nop
}

node_lease::node_lease(session& owner, std::vector<std::string> nodes)
  : owner_(&owner), nodes_(std::move(nodes)) {
  // nop
}

node_lease::node_lease(node_lease&& other) noexcept
  : owner_(other.owner_), nodes_(std::move(other.nodes_)) {
  other.owner_ = nullptr;
}

node_lease::~node_lease() {
  if (owner_ != nullptr)
    owner_->release(nodes_);
}

caf::expected<node_lease>
session::lease_nodes(const std::vector<std::string>& nodes,
                     const std::string& holder) {
  annotated_mutex::guard guard{lease_mtx_};
  for (auto& node : nodes)
    if (auto i = leased_.find(node); i != leased_.end())
      return make_error(actors_errc::invalid_argument,
                        "node '" + node + "' is in use by " + i->second
                          + ", which runs on this session; run " + holder
                          + " after it, or on a session of its own");
  std::vector<std::string> taken;
  for (auto& node : nodes)
    if (leased_.emplace(node, holder).second)
      taken.push_back(node);
  return node_lease{*this, std::move(taken)};
}

caf::error session::check_unleased(const std::vector<std::string>& nodes) {
  annotated_mutex::guard guard{lease_mtx_};
  for (auto& node : nodes)
    if (auto i = leased_.find(node); i != leased_.end())
      return make_error(actors_errc::invalid_argument,
                        "node '" + node + "' is in use by " + i->second
                          + ", which runs on this session: a group run on it "
                            "now would interleave with its epochs");
  return {};
}

void session::release(const std::vector<std::string>& nodes) {
  annotated_mutex::guard guard{lease_mtx_};
  for (auto& node : nodes)
    leased_.erase(node);
}

caf::error session::recover_lost_nodes() {
  return make_error(actors_errc::node_lost,
                    "this session cannot replace a lost node");
}

std::string session::address_of(const std::string&) const {
  return {};
}

std::shared_ptr<const op_registry> session::ops() const {
  return nullptr;
}

caf::expected<std::vector<task_output>>
session::run(const task_group_def& group, const std::string& label,
             int64_t epoch, const std::vector<channel_def>& channels) {
  if (group.tasks.empty())
    return std::vector<task_output>{};
  {
    std::vector<std::string> group_nodes;
    for (auto& task : group.tasks)
      group_nodes.push_back(task.node);
    if (auto err = check_unleased(group_nodes))
      return err;
  }
  if (auto err = check_channels(channels))
    return err;
  auto plan = make_exchange_plan(group, channels);
  if (!plan)
    return std::move(plan.error());
  std::map<std::string, node_actor> nodes;
  detail::exchange_setup setup;
  setup.end_timeout = options_.request_timeout;
  auto add = [&](const std::string& name) -> caf::error {
    if (nodes.count(name) > 0)
      return {};
    auto handle = node(name);
    if (!handle)
      return std::move(handle.error());
    nodes.emplace(name, handle->node);
    setup.directory.emplace(name, detail::directory_entry(*handle));
    if (handle->relay)
      setup.relay = handle->relay;
    return {};
  };
  for (auto& task : group.tasks)
    if (auto err = add(task.node))
      return err;
  for (auto& ch : plan->channels)
    if (auto err = add(ch.channel.node))
      return err;
  auto outcome = std::make_shared<std::promise<caf::expected<tasks_done>>>();
  auto ready = outcome->get_future();
  // The runner hands the outcome over itself: no asker actor, no request.
  auto runner = start_group_run(
    system(), std::move(nodes), options_.group_timeout,
    run_tasks{label, epoch, group.tasks, 0, std::move(*plan)},
    [outcome](caf::expected<tasks_done> done) {
      outcome->set_value(std::move(done));
    },
    std::move(setup));
  // The runner's own timeout names the node that is late; this one only
  // ends a wait for a runner that cannot end it.
  auto done = detail::await_or_stop(
    ready, runner, detail::with_margin(options_.group_timeout));
  if (!done)
    return std::move(done.error());
  return std::move(done->outputs);
}

caf::expected<tensor> session::fetch(const std::string& node_name,
                                     const std::string& blob) {
  auto handle = node(node_name);
  if (!handle)
    return std::move(handle.error());
  auto values = detail::blocking_request<blob_values>(
    system(), handle->node, options_.request_timeout, fetch_blobs{{blob}});
  if (!values)
    return std::move(values.error());
  return std::move(values->blobs.front().value);
}

caf::error session::put(const std::string& node_name, std::string blob,
                        tensor value) {
  if (auto problem = blob_name_problem(blob); !problem.empty())
    return make_error(runtime_errc::bad_argument, problem);
  auto handle = node(node_name);
  if (!handle)
    return std::move(handle.error());
  put_blobs msg;
  msg.blobs.push_back(blob_value{std::move(blob), std::move(value)});
  auto done = detail::blocking_request<caf::unit_t>(
    system(), handle->node, options_.request_timeout, std::move(msg));
  return done ? caf::error{} : std::move(done.error());
}

} // namespace epochrt
