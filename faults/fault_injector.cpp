#include <epochrt/faults/fault_injector.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <epochrt/faults/fault_errc.hpp>

namespace epochrt {

namespace {

std::string site_text(const fault_site& site, uint64_t n) {
  std::string text;
  auto add = [&](const std::string& part) {
    text += (text.empty() ? "" : ", ") + part;
  };
  if (!site.node.empty())
    add("node " + std::string{site.node});
  if (site.epoch >= 0)
    add("epoch " + std::to_string(site.epoch));
  if (!site.detail.empty())
    add(std::string{site.detail});
  if (n > 0)
    add("hit " + std::to_string(n));
  return text.empty() ? std::string{} : " (" + text + ")";
}

void write_all(int fd, const std::string& text) noexcept {
  size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

bool matches(const fault_rule& rule, const fault_site& site) {
  return (!rule.node || *rule.node == site.node)
    && (!rule.epoch || *rule.epoch == site.epoch)
    && (!rule.detail || *rule.detail == site.detail);
}

} // namespace

fault_injector::fault_injector(fault_plan plan)
  : plan_(std::move(plan)), states_(plan_.faults.size()) {
  for (size_t i = 0; i < plan_.faults.size(); ++i) {
    armed_[static_cast<size_t>(plan_.faults[i].point)].store(true);
    // A stream per rule, so adding a rule leaves the draws of the others.
    states_[i].draws = fault_draws{plan_.seed * 0x100000001b3ULL + i + 1};
  }
}

fault_action fault_injector::hit(fault_point point, const fault_site& site) {
  annotated_mutex::guard guard{mtx_};
  if (trace_fd_ >= 0) {
    auto n = ++trace_counts_[{point, std::string{site.node}}];
    write_all(trace_fd_,
              std::string{info(point).name} + "\t" + std::string{site.node}
                + "\t" + std::to_string(site.epoch) + "\t"
                + std::string{site.detail} + "\t" + std::to_string(n) + "\n");
  }
  for (size_t i = 0; i < plan_.faults.size(); ++i) {
    auto& rule = plan_.faults[i];
    if (rule.point != point || !matches(rule, site))
      continue;
    auto& st = states_[i];
    auto n = ++st.matches;
    if (rule.hit != 0 && rule.hit != n)
      continue;
    if (rule.count != 0 && st.strikes >= rule.count)
      continue;
    auto draw = st.draws.next();
    if (rule.probability < 1.0
        && static_cast<double>(draw >> 11) * 0x1.0p-53 >= rule.probability)
      continue;
    ++st.strikes;
    auto line = std::string{fault_kind_name(rule.kind)} + " at "
      + std::string{info(point).name} + site_text(site, n);
    if (rule.kind == fault_kind::crash)
      kill_process(line);
    strikes_.push_back(std::move(line));
    fault_action action;
    action.kind = rule.kind;
    action.error = rule.error;
    action.ms = rule.ms;
    action.draw = st.draws.next();
    return action;
  }
  return {};
}

fault_injector::~fault_injector() {
  if (trace_fd_ >= 0)
    ::close(trace_fd_);
}

caf::error fault_injector::trace_to(const std::string& path) {
  auto fd
    = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error(fault_errc::unreadable_plan,
                      path + ": cannot open: " + std::strerror(errno));
  annotated_mutex::guard guard{mtx_};
  if (trace_fd_ >= 0)
    ::close(trace_fd_);
  trace_fd_ = fd;
  for (auto& x : armed_)
    x.store(true);
  return {};
}

void fault_injector::delay(std::chrono::milliseconds ms,
                           const std::atomic<bool>* cancel) {
  auto until = std::chrono::steady_clock::now() + ms;
  annotated_mutex::guard guard{mtx_};
  while (!delays_interrupted_ && std::chrono::steady_clock::now() < until) {
    if (cancel != nullptr && cancel->load())
      return;
    auto slice = cancel != nullptr
      ? std::chrono::steady_clock::now() + std::chrono::milliseconds(10)
      : until;
    delays_cv_.wait_until(guard, std::min(slice, until));
  }
}

void fault_injector::interrupt_delays() {
  {
    annotated_mutex::guard guard{mtx_};
    delays_interrupted_ = true;
  }
  delays_cv_.notify_all();
}

std::vector<std::string> fault_injector::strikes() const {
  annotated_mutex::guard guard{mtx_};
  return strikes_;
}

void kill_process(std::string_view why) noexcept {
  // The line says which fault it was, for whoever reads the output.
  write_all(STDERR_FILENO, "epochrt: fault plan: " + std::string{why} + "\n");
  ::kill(::getpid(), SIGKILL);
  std::_Exit(137);
}

void freeze_process(std::string_view why) noexcept {
  write_all(STDERR_FILENO, "epochrt: fault plan: " + std::string{why} + "\n");
  ::raise(SIGSTOP);
}

caf::error injected_error(fault_point point, const fault_site& site,
                          const fault_action& action) {
  std::string what = "injected ";
  if (action.kind == fault_kind::io_error)
    what += errno_name(action.error);
  else
    what += fault_kind_name(action.kind);
  what += " at " + std::string{info(point).name} + site_text(site, 0);
  if (action.kind == fault_kind::io_error)
    what += std::string{": "} + std::strerror(action.error);
  return make_error(fault_errc::injected, std::move(what));
}

caf::error strike_blocking(fault_injector* faults, fault_point point,
                           const fault_site& site, fault_action& action,
                           const std::atomic<bool>* cancel) {
  action = strike(faults, point, site);
  if (action.kind == fault_kind::delay) {
    faults->delay(std::chrono::milliseconds(action.ms), cancel);
    action = {};
  } else if (action.kind == fault_kind::io_error) {
    return injected_error(point, site, action);
  }
  return {};
}

} // namespace epochrt
