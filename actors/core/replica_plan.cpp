#include <epochrt/actors/core/replica_plan.hpp>

#include <algorithm>
#include <set>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt {

caf::expected<std::vector<replica_assignment>>
plan_replicas(const std::vector<node_ref>& nodes, size_t replicas) {
  std::vector<replica_assignment> result(nodes.size());
  if (replicas == 0)
    return result;
  // Indices of the nodes on daemons, in name order.
  std::vector<size_t> remote;
  std::set<std::string> daemons;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].address.empty()) {
      remote.push_back(i);
      daemons.insert(nodes[i].address);
    }
  if (daemons.size() < replicas + 1)
    return make_error(actors_errc::invalid_argument,
                      std::to_string(replicas) + " copies of each checkpoint "
                        + "need at least " + std::to_string(replicas + 1)
                        + " node daemons (a copy never stays on its node's "
                          "own daemon); the job's nodes run on "
                        + std::to_string(daemons.size()));
  std::sort(remote.begin(), remote.end(), [&](size_t x, size_t y) {
    return nodes[x].name < nodes[y].name;
  });
  for (size_t k = 0; k < remote.size(); ++k) {
    auto& own = nodes[remote[k]].address;
    auto& plan = result[remote[k]];
    for (size_t step = 1;
         step < remote.size() && plan.holders.size() < replicas; ++step) {
      auto& other = nodes[remote[(k + step) % remote.size()]].address;
      if (other != own
          && std::find(plan.holders.begin(), plan.holders.end(), other)
            == plan.holders.end())
        plan.holders.push_back(other);
    }
    plan.sources = plan.holders;
    for (auto& daemon : daemons)
      if (daemon != own
          && std::find(plan.sources.begin(), plan.sources.end(), daemon)
            == plan.sources.end())
        plan.sources.push_back(daemon);
  }
  return result;
}

} // namespace epochrt
