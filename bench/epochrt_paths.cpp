#include "bench/epochrt_paths.hpp"

#include <mutex>
#include <optional>
#include <stdexcept>

#include <caf/actor_system.hpp>

#include <epochrt/actors/api/checkpoint_manager.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/job_runner.hpp>
#include <epochrt/actors/api/local_session.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/job.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/workspace.hpp>

namespace epochrt::bench {

namespace {

void check(const caf::error& err, const std::string& what) {
  if (err)
    throw std::runtime_error(what + ": " + error_text(err));
}

std::shared_ptr<workspace> seeded_node(local_session& sess,
                                       const std::vector<blob>& blobs) {
  auto ws = sess.workspace_of(bench_node);
  if (!ws)
    throw std::runtime_error("no workspace for node " + bench_node);
  for (auto& [name, value] : blobs)
    ws->set(name, value); // a copy: the session owns its blobs
  return ws;
}

// init: the epoch limiter's counter (and nothing that touches the seeded
// blobs); epoch: `work_ms` of work (a Sleep), one trivial op, and the
// limiter's countdown.
job make_stall_job(int epochs, int work_ms, const op_registry& ops) {
  job j{"checkpoint_bench"};
  std::vector<op_def> epoch_ops;
  if (work_ms > 0)
    epoch_ops.push_back(
      make_op("Sleep", {}, {}, {{"ms", make_scalar<int64_t>(work_ms)}}));
  epoch_ops.push_back(make_op("ConstantFill", {}, {"bench_tick"}));
  j.add_task(j.epoch_group(), make_task("", bench_node, std::move(epoch_ops)));
  check(epoch_limiter(j, epochs), "epoch_limiter");
  check(j.validate(ops), "the stall job is invalid");
  return j;
}

} // namespace

registry_ptr make_registry() {
  auto ops = std::make_shared<op_registry>();
  if (auto err = add_builtin_ops(*ops))
    throw std::runtime_error(error_text(err));
  return ops;
}

save_result checkpoint_save(caf::actor_system& sys, const registry_ptr& ops,
                            const std::vector<blob>& blobs,
                            const std::string& db_prefix, int64_t epoch) {
  save_result result;
  local_session sess{sys, ops};
  auto ws = seeded_node(sess, blobs);
  {
    auto start = clock_type::now();
    auto snap = ws->snapshot_all();
    result.snapshot_seconds = seconds_since(start);
    if (snap.size() != blobs.size())
      throw std::runtime_error("the snapshot has the wrong blob count");
  }
  checkpoint_manager mgr{sys, db_prefix, bench_node};
  auto start = clock_type::now();
  check(mgr.init(sess), "checkpoint_manager::init");
  result.init_seconds = seconds_since(start);
  start = clock_type::now();
  stopwatch watch;
  check(mgr.save(epoch), "checkpoint_manager::save");
  result.save_seconds = seconds_since(start);
  check(mgr.write_checkpoint_metadata(epoch),
        "checkpoint_manager::write_checkpoint_metadata");
  result.time = watch.elapsed();
  for (auto& stats : mgr.last_stats())
    result.reported_bytes += stats.bytes;
  if (result.reported_bytes != payload_bytes(blobs))
    throw std::runtime_error(
      "the save reports " + std::to_string(result.reported_bytes)
      + " bytes, the blobs hold " + std::to_string(payload_bytes(blobs)));
  return result;
}

incremental_result
incremental_saves(caf::actor_system& sys, const registry_ptr& ops,
                  const std::vector<blob>& blobs, const std::string& db_prefix,
                  size_t change_every) {
  incremental_result result;
  local_session sess{sys, ops};
  auto ws = seeded_node(sess, blobs);
  checkpoint_manager mgr{sys, db_prefix, bench_node};
  check(mgr.init(sess), "checkpoint_manager::init");
  auto save = [&](int64_t epoch, uint64_t& bytes, double& seconds) {
    auto start = clock_type::now();
    check(mgr.save(epoch), "checkpoint_manager::save");
    check(mgr.write_checkpoint_metadata(epoch),
          "checkpoint_manager::write_checkpoint_metadata");
    seconds = seconds_since(start);
    for (auto& stats : mgr.last_stats())
      bytes += stats.written_bytes;
  };
  save(1, result.full_bytes, result.full_seconds);
  for (size_t i = 0; i < blobs.size(); i += change_every) {
    auto changed = blobs[i].second;
    for (auto& byte : changed.data)
      byte = static_cast<char>(byte ^ 0x40);
    result.changed_bytes += changed.byte_size();
    ws->set(blobs[i].first, std::move(changed));
  }
  save(2, result.incremental_bytes, result.incremental_seconds);
  return result;
}

load_result checkpoint_load(caf::actor_system& sys, const registry_ptr& ops,
                            const std::vector<blob>& blobs,
                            const std::string& db_prefix, int64_t epoch) {
  load_result result;
  local_session sess{sys, ops};
  auto ws = sess.workspace_of(bench_node);
  if (!ws)
    throw std::runtime_error("no workspace for node " + bench_node);
  checkpoint_manager mgr{sys, db_prefix, bench_node};
  auto start = clock_type::now();
  check(mgr.init(sess, {}, epoch), "checkpoint_manager::init from epoch");
  result.init_seconds = seconds_since(start);
  stopwatch watch;
  check(mgr.load(epoch), "checkpoint_manager::load");
  result.time = watch.elapsed();
  // Untimed: the node must now hold exactly what was saved.
  if (ws->blob_count() != blobs.size())
    throw std::runtime_error("loaded " + std::to_string(ws->blob_count())
                             + " blobs, saved " + std::to_string(blobs.size()));
  for (auto& [name, value] : blobs) {
    auto loaded = ws->get(name);
    if (!loaded || *loaded != value)
      throw std::runtime_error("blob " + name + " did not load back intact");
    result.bytes += loaded->byte_size();
  }
  return result;
}

std::vector<double>
epoch_intervals_ms(caf::actor_system& sys, const registry_ptr& ops,
                   const std::vector<blob>& blobs, const std::string& db_prefix,
                   int epochs, int work_ms) {
  local_session sess{sys, ops};
  seeded_node(sess, blobs);
  std::optional<checkpoint_manager> mgr;
  if (!db_prefix.empty())
    mgr.emplace(sys, db_prefix, bench_node);
  // The observer runs on the runner actor's thread; the stamps are read
  // only after train() has returned.
  std::mutex mtx;
  std::vector<clock_type::time_point> stamps;
  job_runner_options opts;
  opts.on_epoch = [&](int64_t, const std::vector<task_output>&) {
    auto now = clock_type::now();
    std::lock_guard<std::mutex> guard{mtx};
    stamps.push_back(now);
  };
  job_runner runner{make_stall_job(epochs, work_ms, *ops),
                    mgr ? &*mgr : nullptr,
                    {},
                    nullptr,
                    std::move(opts)};
  auto last = runner.train(sess);
  if (!last)
    throw std::runtime_error("job_runner::train: " + error_text(last.error()));
  if (*last != epochs)
    throw std::runtime_error("the stall job ended after epoch "
                             + std::to_string(*last) + ", expected "
                             + std::to_string(epochs));
  // A failed save costs the job runner only a warning: make sure every
  // epoch was really committed, or the intervals measured nothing.
  if (mgr)
    for (int64_t e = 0; e <= epochs; ++e)
      if (!mgr->cp_accessible(e))
        throw std::runtime_error("the stall job did not commit epoch "
                                 + std::to_string(e));
  std::lock_guard<std::mutex> guard{mtx};
  if (stamps.size() != static_cast<size_t>(epochs))
    throw std::runtime_error("the epoch observer saw "
                             + std::to_string(stamps.size()) + " epochs, "
                             + "expected " + std::to_string(epochs));
  std::vector<double> result;
  for (size_t i = 1; i < stamps.size(); ++i)
    result.push_back(
      std::chrono::duration<double, std::milli>(stamps[i] - stamps[i - 1])
        .count());
  return result;
}

} // namespace epochrt::bench
