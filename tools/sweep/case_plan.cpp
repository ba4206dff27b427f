#include "tools/sweep/case_plan.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <string>

#include <epochrt/faults/fault_draws.hpp>

namespace epochrt::cli::sweep {

namespace {

bool is_persistence_point(fault_point p) {
  auto name = info(p).name;
  return name.rfind("save.", 0) == 0 || name.rfind("commit.", 0) == 0
    || name.rfind("load.", 0) == 0;
}

// A point where a task's channel or collective message leaves or its
// results arrive: lost, doubled and killed messages are swept there too.
bool is_exchange_point(fault_point p) {
  return p == fault_point::channel_put || p == fault_point::channel_take
    || p == fault_point::channel_close || p == fault_point::collective_send
    || p == fault_point::collective_receive;
}

} // namespace

case_plan plan_cases(const std::vector<hit>& hits, const sweep_options& opts) {
  auto wanted = [&](fault_kind kind) {
    if (opts.faults.empty())
      return true;
    return std::find(opts.faults.begin(), opts.faults.end(),
                     std::string{fault_kind_name(kind)})
      != opts.faults.end();
  };
  // The last three only at the exchange points: what a lost, doubled or
  // killed message does to tasks that wait for each other.
  const fault_kind kinds[] = {
    fault_kind::crash,       fault_kind::io_error,  fault_kind::corrupt_write,
    fault_kind::short_write, fault_kind::partition, fault_kind::drop,
    fault_kind::duplicate,   fault_kind::kill_node};
  auto exchange_only = [](fault_kind kind) {
    return kind == fault_kind::drop || kind == fault_kind::duplicate
      || kind == fault_kind::kill_node;
  };
  const int errors[] = {EIO, ENOSPC, EACCES};
  std::map<fault_kind, std::vector<sweep_case>> by_kind;
  size_t io_errors = 0;
  std::set<std::string> remote;
  for (auto& d : opts.daemon_nodes)
    remote.insert(d);
  for (auto& n : opts.remote_nodes)
    remote.insert(n.substr(0, n.find('=')));
  for (size_t order = 0; order < hits.size(); ++order) {
    auto& h = hits[order];
    for (auto kind : kinds) {
      if (!wanted(kind) || (info(h.point).kinds & kind_bit(kind)) == 0)
        continue;
      if (kind == fault_kind::io_error && !is_persistence_point(h.point))
        continue;
      if (exchange_only(kind) && !is_exchange_point(h.point))
        continue;
      // A partition is between the master and a remote node.
      if (kind == fault_kind::partition
          && (h.process != master_process || remote.count(h.node) == 0))
        continue;
      sweep_case c;
      c.order = order;
      c.where = h;
      c.rule.point = h.point;
      c.rule.kind = kind;
      if (!h.node.empty())
        c.rule.node = h.node;
      c.rule.hit = h.n;
      if (kind == fault_kind::io_error)
        c.rule.error = errors[io_errors++ % 3];
      if (kind == fault_kind::partition)
        c.rule.ms = static_cast<uint64_t>(3 * opts.connection_timeout_ms);
      by_kind[kind].push_back(std::move(c));
    }
  }
  size_t total = 0;
  for (auto& [kind, cases] : by_kind)
    total += cases.size();
  auto limit = static_cast<size_t>(opts.max_runs);
  std::vector<sweep_case> chosen;
  if (total <= limit) {
    for (auto kind : kinds)
      for (auto& c : by_kind[kind])
        chosen.push_back(c);
  } else {
    // A seeded sample that keeps every kind: shuffle each kind's cases,
    // then take one of each kind in turn. Partitions last the longest:
    // at most a tenth of the runs.
    fault_draws draws{opts.seed};
    for (auto& [kind, cases] : by_kind) {
      for (size_t i = cases.size(); i > 1; --i)
        std::swap(cases[i - 1], cases[draws.below(i)]);
      if (kind == fault_kind::partition)
        cases.resize(std::min(cases.size(), std::max<size_t>(limit / 10, 2)));
    }
    std::map<fault_kind, size_t> taken;
    while (chosen.size() < limit) {
      bool any = false;
      for (auto kind : kinds) {
        auto& cases = by_kind[kind];
        if (taken[kind] < cases.size() && chosen.size() < limit) {
          chosen.push_back(cases[taken[kind]++]);
          any = true;
        }
      }
      if (!any)
        break;
    }
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const sweep_case& x, const sweep_case& y) {
                     return x.order < y.order;
                   });
  for (size_t i = 0; i < chosen.size(); ++i)
    chosen[i].index = i + 1;
  return {std::move(chosen), total};
}

} // namespace epochrt::cli::sweep
