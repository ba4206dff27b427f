#include "tools/trace_writer.hpp"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

namespace epochrt::cli {

namespace {

constexpr int trace_pid = 1;
const std::string runner_lane = "job runner";
const std::string manager_lane = "checkpoint manager";

std::string dump(const nlohmann::json& x) {
  return x.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json stats_args(const checkpoint_stats& s) {
  return {{"db", s.db},
          {"duration_us", s.duration_us},
          {"snapshot_us", s.snapshot_us},
          {"sync_us", s.sync_us},
          {"bytes", s.bytes},
          {"bytes_written", s.written_bytes},
          {"blobs", s.blobs},
          {"blobs_skipped", s.reused_blobs}};
}

} // namespace

std::shared_ptr<trace_writer> trace_writer::open(const std::string& path,
                                                 std::string& problem) {
  std::ofstream out{path, std::ios::out | std::ios::trunc};
  if (!out) {
    problem = "--trace " + path + ": cannot be written";
    return nullptr;
  }
  return std::shared_ptr<trace_writer>{new trace_writer(std::move(out))};
}

trace_writer::trace_writer(std::ofstream out)
  : out_(std::move(out)), origin_(job_event::clock::now()) {
  out_ << "[";
  append(dump({{"name", "process_name"},
               {"ph", "M"},
               {"pid", trace_pid},
               {"args", {{"name", "epochrt run"}}}}));
  // The runner and the manager first, so that they are the top lanes.
  lane(runner_lane);
  lane(manager_lane);
}

trace_writer::~trace_writer() {
  close();
}

int64_t trace_writer::micros(job_event::clock::time_point t) const {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - origin_)
              .count();
  return us < 0 ? 0 : us;
}

void trace_writer::append(const std::string& json_object) {
  out_ << (first_ ? "\n" : ",\n") << json_object;
  out_.flush();
  first_ = false;
}

int trace_writer::lane(const std::string& name) {
  auto i = lanes_.find(name);
  if (i != lanes_.end())
    return i->second;
  auto tid = static_cast<int>(lanes_.size()) + 1;
  lanes_.emplace(name, tid);
  append(dump({{"name", "thread_name"},
               {"ph", "M"},
               {"pid", trace_pid},
               {"tid", tid},
               {"args", {{"name", name}}}}));
  append(dump({{"name", "thread_sort_index"},
               {"ph", "M"},
               {"pid", trace_pid},
               {"tid", tid},
               {"args", {{"sort_index", tid}}}}));
  return tid;
}

void trace_writer::on_event(const job_event& ev) {
  annotated_mutex::guard guard{mtx_};
  if (closed_)
    return;
  using kind = job_event::kind;
  auto span = [&](const std::string& lane_name, const std::string& name,
                  const std::string& category, nlohmann::json args)
                EPOCHRT_REQUIRES(mtx_) -> void {
    auto start = micros(ev.start);
    auto end = micros(ev.end);
    args["epoch"] = ev.epoch;
    if (!ev.ok)
      args["failed"] = true;
    if (!ev.detail.empty())
      args["detail"] = ev.detail;
    append(dump({{"name", name},
                 {"cat", category},
                 {"ph", "X"},
                 {"pid", trace_pid},
                 {"tid", lane(lane_name)},
                 {"ts", start},
                 {"dur", end > start ? end - start : 0},
                 {"args", std::move(args)}}));
  };
  // A failure the whole job saw, at the moment it was seen.
  auto failure_mark = [&](const std::string& name, nlohmann::json args)
                        EPOCHRT_REQUIRES(mtx_) -> void {
    append(dump({{"name", name},
                 {"cat", "failure"},
                 {"ph", "i"},
                 {"s", "g"},
                 {"pid", trace_pid},
                 {"tid", lane(runner_lane)},
                 {"ts", micros(ev.end)},
                 {"args", std::move(args)}}));
  };
  auto epoch = std::to_string(ev.epoch);
  switch (ev.what) {
    case kind::group:
      span(runner_lane, ev.detail + " group", "group",
           nlohmann::json::object());
      return;
    case kind::epoch:
      span(runner_lane, "epoch " + epoch, "epoch", nlohmann::json::object());
      return;
    case kind::snapshot:
      span(runner_lane, "snapshots " + epoch, "checkpoint",
           nlohmann::json::object());
      return;
    case kind::write: {
      span(ev.node, "write " + epoch, "checkpoint", stats_args(ev.stats));
      // Its parts, nested: the snapshot opens a save, the syncs close it.
      auto start = micros(ev.start);
      auto end = micros(ev.end);
      auto part = [&](const std::string& name, int64_t from, int64_t dur)
                    EPOCHRT_REQUIRES(mtx_) -> void {
        append(dump({{"name", name},
                     {"cat", "checkpoint"},
                     {"ph", "X"},
                     {"pid", trace_pid},
                     {"tid", lane(ev.node)},
                     {"ts", from},
                     {"dur", dur},
                     {"args", {{"epoch", ev.epoch}}}}));
      };
      part("snapshot " + epoch, start,
           std::min(ev.stats.snapshot_us, end - start));
      part("sync " + epoch, std::max(start, end - ev.stats.sync_us),
           std::min(ev.stats.sync_us, end - start));
      return;
    }
    case kind::commit:
      span(manager_lane, "commit " + epoch, "checkpoint",
           nlohmann::json::object());
      return;
    case kind::load: {
      // Placed by its end, as the runner heard of it.
      auto end = ev.end;
      auto start
        = micros(end - std::chrono::microseconds(ev.stats.duration_us));
      append(dump({{"name", "load " + epoch},
                   {"cat", "checkpoint"},
                   {"ph", "X"},
                   {"pid", trace_pid},
                   {"tid", lane(ev.node)},
                   {"ts", start},
                   {"dur", micros(end) - start},
                   {"args", stats_args(ev.stats)}}));
      return;
    }
    case kind::node_lost:
      failure_mark("node lost", {{"error", ev.detail}});
      return;
    case kind::recovered:
      span(runner_lane, "recovery", "failure", nlohmann::json::object());
      return;
    case kind::node_moved:
      failure_mark("node moved", {{"node", ev.node}, {"address", ev.detail}});
      return;
    case kind::epoch_started:
      return; // the epoch's span comes when it ends
    case kind::task:
      span(ev.node, ev.detail, "task", nlohmann::json{{"epoch", ev.epoch}});
      return;
    case kind::op: {
      // "TASK: TYPE": the op's type names the span, nested in its task's.
      auto colon = ev.detail.rfind(": ");
      auto type
        = colon == std::string::npos ? ev.detail : ev.detail.substr(colon + 2);
      span(ev.node, type, "op", nlohmann::json{{"epoch", ev.epoch}});
      return;
    }
  }
}

void trace_writer::close() {
  annotated_mutex::guard guard{mtx_};
  if (closed_)
    return;
  closed_ = true;
  out_ << "\n]\n";
  out_.flush();
}

} // namespace epochrt::cli
