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

std::string fault_label(const sweep_case& c) {
  return c.host_loss ? "host_loss" : std::string{fault_kind_name(c.rule.kind)};
}

case_plan plan_cases(const std::vector<hit>& hits, const sweep_options& opts) {
  auto asked = [&](const std::string& label) {
    return std::find(opts.faults.begin(), opts.faults.end(), label)
      != opts.faults.end();
  };
  auto wanted = [&](fault_kind kind) {
    return opts.faults.empty() || asked(std::string{fault_kind_name(kind)});
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
  // Host loss only when asked for: its runs keep copies and a spare, which
  // the other cases do not.
  std::vector<std::string> labels;
  for (auto kind : kinds)
    labels.emplace_back(fault_kind_name(kind));
  labels.emplace_back("host_loss");
  auto host_losses = asked("host_loss");
  const int errors[] = {EIO, ENOSPC, EACCES};
  std::map<std::string, std::vector<sweep_case>> by_kind;
  size_t io_errors = 0;
  std::set<std::string> remote;
  for (auto& d : opts.daemon_nodes)
    remote.insert(d);
  for (auto& n : opts.remote_nodes)
    remote.insert(n.substr(0, n.find('=')));
  for (size_t order = 0; order < hits.size(); ++order) {
    auto& h = hits[order];
    auto applies = [&](fault_kind kind) {
      return (info(h.point).kinds & kind_bit(kind)) != 0;
    };
    for (auto kind : kinds) {
      if (!wanted(kind) || !applies(kind))
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
      by_kind[fault_label(c)].push_back(std::move(c));
    }
    // A host is lost where a daemon the sweep runs crashes.
    if (host_losses && h.process != master_process
        && applies(fault_kind::crash)) {
      sweep_case c;
      c.order = order;
      c.where = h;
      c.rule.point = h.point;
      c.rule.kind = fault_kind::crash;
      if (!h.node.empty())
        c.rule.node = h.node;
      c.rule.hit = h.n;
      c.host_loss = true;
      by_kind[fault_label(c)].push_back(std::move(c));
    }
  }
  size_t total = 0;
  for (auto& [kind, cases] : by_kind)
    total += cases.size();
  auto limit = static_cast<size_t>(opts.max_runs);
  std::vector<sweep_case> chosen;
  if (total <= limit) {
    for (auto& label : labels)
      for (auto& c : by_kind[label])
        chosen.push_back(c);
  } else {
    // A seeded sample that keeps every kind: shuffle each kind's cases,
    // then take one of each kind in turn. Partitions last the longest:
    // at most a tenth of the runs.
    // Shuffled in the order of the kinds' values, then host loss, so that a
    // seed samples what it sampled before host loss existed.
    std::vector<fault_kind> by_value(std::begin(kinds), std::end(kinds));
    std::sort(by_value.begin(), by_value.end());
    std::vector<std::string> shuffle_order;
    for (auto kind : by_value)
      shuffle_order.emplace_back(fault_kind_name(kind));
    shuffle_order.emplace_back("host_loss");
    fault_draws draws{opts.seed};
    for (auto& label : shuffle_order) {
      auto& cases = by_kind[label];
      for (size_t i = cases.size(); i > 1; --i)
        std::swap(cases[i - 1], cases[draws.below(i)]);
      if (label == "partition")
        cases.resize(std::min(cases.size(), std::max<size_t>(limit / 10, 2)));
    }
    std::map<std::string, size_t> taken;
    while (chosen.size() < limit) {
      bool any = false;
      for (auto& label : labels) {
        auto& cases = by_kind[label];
        if (taken[label] < cases.size() && chosen.size() < limit) {
          chosen.push_back(cases[taken[label]++]);
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
