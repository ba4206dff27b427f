#include "tools/progress_view.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <unistd.h>

#include <epochrt/messages/printable.hpp>

namespace epochrt::cli {

namespace {

int64_t micros(job_event::clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

std::string format_time(int64_t us) {
  char buf[32];
  if (us < 1000)
    std::snprintf(buf, sizeof(buf), "%lld us", static_cast<long long>(us));
  else if (us < 1000000)
    std::snprintf(buf, sizeof(buf), "%.1f ms", us / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.2f s", us / 1e6);
  return buf;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0)
    std::snprintf(buf, sizeof(buf), "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s", bytes, units[unit]);
  return buf;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      return; // a terminal gone away: nothing to show it on
    done += static_cast<size_t>(n);
  }
}

} // namespace

progress_view::progress_view(std::string job_name,
                             std::optional<int64_t> epoch_limit, int fd)
  : job_(printable(job_name)), limit_(epoch_limit), fd_(fd) {
  // nop
}

void progress_view::on_event(const job_event& ev) {
  annotated_mutex::guard guard{mtx_};
  using kind = job_event::kind;
  switch (ev.what) {
    case kind::group:
      if (ev.detail != "init" || !ev.ok)
        return;
      epoch_ = 0;
      epoch_us_ = micros(ev.end - ev.start);
      break;
    case kind::epoch_started:
      epoch_ = ev.epoch;
      break;
    case kind::epoch:
      epoch_ = std::max(epoch_, ev.epoch);
      epoch_us_ = micros(ev.end - ev.start);
      break;
    case kind::write:
      if (pending_.epoch != ev.epoch)
        pending_ = save_figures{ev.epoch};
      pending_.us = std::max(pending_.us, ev.stats.duration_us);
      pending_.write_us = std::max(pending_.write_us,
                                   ev.stats.duration_us - ev.stats.snapshot_us);
      pending_.bytes += ev.stats.written_bytes;
      return; // drawn with the commit
    case kind::commit:
      if (!ev.ok)
        return;
      committed_ = ev.epoch;
      ckpt_ = pending_.epoch == ev.epoch ? pending_ : save_figures{ev.epoch};
      ckpt_.us += micros(ev.end - ev.start);
      break;
    case kind::load:
      resumed_ = ev.epoch;
      committed_ = std::max(committed_, ev.epoch);
      epoch_ = std::max(epoch_, ev.epoch);
      break;
    default:
      return;
  }
  draw();
}

std::string progress_view::text() const {
  annotated_mutex::guard guard{mtx_};
  return line();
}

std::string progress_view::line() const {
  std::string line = job_;
  line += "  epoch ";
  line += epoch_ < 0 ? std::string{"-"} : std::to_string(epoch_);
  if (limit_)
    line += "/" + std::to_string(*limit_);
  if (epoch_us_ >= 0)
    line += "  " + format_time(epoch_us_) + "/epoch";
  if (ckpt_.epoch >= 0) {
    line += "  ckpt " + std::to_string(ckpt_.epoch) + ": "
      + format_time(ckpt_.us) + " " + format_bytes(ckpt_.bytes);
    if (ckpt_.write_us > 0)
      line += " "
        + format_bytes(static_cast<double>(ckpt_.bytes) * 1e6 / ckpt_.write_us)
        + "/s";
  }
  line += "  committed ";
  line += committed_ < 0 ? std::string{"none"} : std::to_string(committed_);
  if (resumed_ >= 0)
    line += "  (resumed from " + std::to_string(resumed_) + ")";
  return line;
}

void progress_view::draw() {
  if (finished_)
    return;
  write_all(fd_, "\r\x1b[2K" + line() + "\r");
}

void progress_view::clear_line() {
  annotated_mutex::guard guard{mtx_};
  if (!finished_)
    write_all(fd_, "\r\x1b[2K");
}

void progress_view::finish() {
  annotated_mutex::guard guard{mtx_};
  if (finished_)
    return;
  finished_ = true;
  write_all(fd_, "\r\x1b[2K" + line() + "\n");
}

} // namespace epochrt::cli
