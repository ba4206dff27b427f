#include <epochrt/actors/api/stats_json_writer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include <set>

#include <nlohmann/json.hpp>

#include <epochrt/runtime/job.hpp>

namespace epochrt {

namespace {

int64_t micros(job_event::clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// Text from a peer may be invalid UTF-8: replaced, never a throw.
std::string dump(const nlohmann::json& line) {
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json node_json(const checkpoint_stats& s) {
  auto write_us = s.duration_us - s.snapshot_us - s.sync_us;
  return {{"node", s.node},
          {"save_us", s.duration_us},
          {"snapshot_us", s.snapshot_us},
          {"write_us", write_us < 0 ? 0 : write_us},
          {"sync_us", s.sync_us},
          {"bytes", s.bytes},
          {"bytes_written", s.written_bytes},
          {"blobs", s.blobs},
          {"blobs_written", s.blobs - s.reused_blobs},
          {"blobs_skipped", s.reused_blobs}};
}

} // namespace

std::string metrics_problem(const job& the_job,
                            const std::vector<std::string>& metrics) {
  std::set<std::string> outputs;
  for (auto& task : the_job.epoch_group().tasks)
    outputs.insert(task.outputs.begin(), task.outputs.end());
  for (auto& metric : metrics)
    if (outputs.count(metric) == 0) {
      std::string known;
      for (auto& blob : outputs)
        known += (known.empty() ? "" : ", ") + dump(blob);
      return "no epoch task outputs " + dump(metric)
        + " (their outputs: " + (known.empty() ? "none" : known) + ")";
    }
  return {};
}

std::function<void(const std::string&)>
stats_json_writer::file_sink(const std::string& path) {
  auto out
    = std::make_shared<std::ofstream>(path, std::ios::out | std::ios::trunc);
  if (!*out)
    return {};
  return [out](const std::string& line) {
    *out << line << '\n';
    out->flush();
  };
}

std::shared_ptr<stats_json_writer>
stats_json_writer::open(const std::string& path, bool checkpoints,
                        std::string& problem) {
  auto sink = file_sink(path);
  if (!sink) {
    problem = "--stats-json " + path + ": cannot be written";
    return nullptr;
  }
  return to_sink(std::move(sink), checkpoints);
}

std::shared_ptr<stats_json_writer>
stats_json_writer::to_sink(std::function<void(const std::string&)> sink,
                           bool checkpoints) {
  return std::shared_ptr<stats_json_writer>{
    new stats_json_writer(std::move(sink), checkpoints)};
}

stats_json_writer::stats_json_writer(
  std::function<void(const std::string&)> sink, bool checkpoints)
  : sink_(std::move(sink)), checkpoints_(checkpoints),
    origin_(job_event::clock::now()) {
  // nop
}

stats_json_writer::~stats_json_writer() {
  close();
}

double stats_json_writer::seconds_now() const {
  return std::chrono::duration<double>(job_event::clock::now() - origin_)
    .count();
}

void stats_json_writer::write_line(const std::string& line) {
  sink_(line);
}

void stats_json_writer::on_event(const job_event& ev) {
  annotated_mutex::guard guard{mtx_};
  using kind = job_event::kind;
  switch (ev.what) {
    case kind::group:
      // Epoch 0 is the init group; later epochs have their own event.
      if (ev.detail == "init" && ev.ok) {
        pending_[0].epoch_us = micros(ev.end - ev.start);
        maybe_write(0, false);
      }
      return;
    case kind::epoch:
      pending_[ev.epoch].epoch_us = micros(ev.end - ev.start);
      maybe_write(ev.epoch, false);
      return;
    case kind::snapshot: {
      auto& record = pending_[ev.epoch];
      record.snapshot_us = micros(ev.end - ev.start);
      if (!ev.ok) { // no commit comes after a save that could not begin
        record.committed = false;
        record.error = ev.detail;
      }
      maybe_write(ev.epoch, false);
      return;
    }
    case kind::write:
      pending_[ev.epoch].nodes.push_back(ev.stats);
      return;
    case kind::commit: {
      auto& record = pending_[ev.epoch];
      record.commit_us = micros(ev.end - ev.start);
      record.committed = ev.ok;
      record.error = ev.detail;
      maybe_write(ev.epoch, false);
      return;
    }
    case kind::load:
      write_line(dump(nlohmann::json{{"type", "load"},
                                     {"epoch", ev.epoch},
                                     {"time_s", seconds_now()},
                                     {"node", ev.node},
                                     {"load_us", ev.stats.duration_us},
                                     {"bytes", ev.stats.bytes},
                                     {"blobs", ev.stats.blobs}}));
      return;
    case kind::node_lost:
      ++failures_;
      write_line(dump(nlohmann::json{{"type", "node_lost"},
                                     {"time_s", seconds_now()},
                                     {"error", ev.detail},
                                     {"failures", failures_}}));
      return;
    case kind::epoch_started:
      return; // a line per epoch once it ran
    case kind::task:
    case kind::op:
      return; // the timeline's (--trace), not the statistics'
    case kind::recovered:
      ++recoveries_;
      // The epochs of the failed attempt get no further figures.
      for (auto i = pending_.begin(); i != pending_.end();)
        maybe_write((i++)->first, true);
      write_line(dump(nlohmann::json{{"type", "recovered"},
                                     {"time_s", seconds_now()},
                                     {"recovery_us", micros(ev.end - ev.start)},
                                     {"recoveries", recoveries_}}));
      return;
    case kind::node_moved:
      write_line(dump(nlohmann::json{{"type", "node_moved"},
                                     {"time_s", seconds_now()},
                                     {"node", ev.node},
                                     {"address", ev.detail}}));
      return;
  }
}

void stats_json_writer::set_metrics(std::vector<std::string> blobs) {
  annotated_mutex::guard guard{mtx_};
  metrics_ = std::move(blobs);
}

void stats_json_writer::on_epoch_outputs(
  int64_t epoch, const std::vector<task_output>& outputs) {
  annotated_mutex::guard guard{mtx_};
  if (metrics_.empty())
    return;
  for (auto& out : outputs) {
    if (std::find(metrics_.begin(), metrics_.end(), out.blob) == metrics_.end()
        || out.value.type == dtype::string || out.value.element_count() != 1
        || !out.value.consistent())
      continue;
    auto value = element_as_double(out.value, 0);
    pending_[epoch].metrics[out.blob][out.task]
      = std::isfinite(value) ? std::optional<double>{value} : std::nullopt;
  }
}

void stats_json_writer::maybe_write(int64_t epoch, bool force) {
  auto i = pending_.find(epoch);
  if (i == pending_.end())
    return;
  auto& r = i->second;
  auto complete = r.epoch_us && (!checkpoints_ || r.committed);
  if (!complete && !force)
    return;
  nlohmann::json line{
    {"type", "epoch"}, {"epoch", epoch}, {"time_s", seconds_now()}};
  line["epoch_us"] = r.epoch_us ? nlohmann::json(*r.epoch_us) : nullptr;
  if (checkpoints_) {
    line["snapshot_us"]
      = r.snapshot_us ? nlohmann::json(*r.snapshot_us) : nullptr;
    line["commit_us"] = r.commit_us ? nlohmann::json(*r.commit_us) : nullptr;
    line["committed"] = r.committed.value_or(false);
    if (!r.error.empty())
      line["error"] = r.error;
    auto nodes = nlohmann::json::array();
    for (auto& s : r.nodes)
      nodes.push_back(node_json(s));
    line["nodes"] = std::move(nodes);
  }
  if (!r.metrics.empty()) {
    auto metrics = nlohmann::json::object();
    for (auto& [blob, by_task] : r.metrics)
      for (auto& [task, value] : by_task)
        metrics[blob][task] = value ? nlohmann::json(*value) : nullptr;
    line["metrics"] = std::move(metrics);
  }
  line["failures"] = failures_;
  line["recoveries"] = recoveries_;
  write_line(dump(line));
  pending_.erase(i);
}

void stats_json_writer::close() {
  annotated_mutex::guard guard{mtx_};
  while (!pending_.empty())
    maybe_write(pending_.begin()->first, true);
}

} // namespace epochrt
