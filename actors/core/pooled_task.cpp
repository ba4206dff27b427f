#include <epochrt/actors/core/pooled_task.hpp>

#include <chrono>
#include <exception>
#include <utility>

#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/messages/fault_injector.hpp>
#include <epochrt/messages/protocol.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/task_runner.hpp>
#include <epochrt/runtime/worker_pool.hpp>

namespace epochrt {

namespace {

// The fault plan at one of a task's points, on the task's thread: a delay
// sleeps, an injected error fails the task, and a node that is killed or
// frozen hears of it from here first.
caf::error task_point(fault_injector* faults, fault_point point,
                      const caf::actor& node_actor, const fault_site& site,
                      const std::atomic<bool>* cancel) {
  fault_action action;
  // A delay ends early, like the Sleep op, when the task is cancelled.
  auto err = strike_blocking(faults, point, site, action, cancel);
  if (err || !action)
    return err;
  if (action.kind == fault_kind::kill_node
      || action.kind == fault_kind::freeze_node)
    caf::anon_send(node_actor, node_fault_atom::value,
                   static_cast<uint8_t>(action.kind));
  return injected_error(point, site, action);
}

using clock_type = std::chrono::steady_clock;

int64_t micros(clock_type::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// Times a task's ops from the hook that runs before each: an op ends where
// the next one (or the task) begins. Only the slow ones are kept.
class op_clock {
public:
  op_clock(task_timing& timing, clock_type::time_point task_start)
    : timing_(timing), task_start_(task_start) {
    // nop
  }

  void next_op(const std::string& type, clock_type::time_point now) {
    close(now);
    current_type_ = &type;
    current_start_ = now;
  }

  void close(clock_type::time_point now) {
    if (current_type_ == nullptr)
      return;
    if (micros(now - current_start_) >= slow_op_threshold_us)
      timing_.slow_ops.push_back(op_timing{index_, *current_type_,
                                           micros(current_start_ - task_start_),
                                           micros(now - current_start_)});
    ++index_;
    current_type_ = nullptr;
  }

private:
  task_timing& timing_;
  clock_type::time_point task_start_;
  const std::string* current_type_ = nullptr;
  clock_type::time_point current_start_;
  uint32_t index_ = 0;
};

// Closes the timing of a task however its run ends.
class task_clock {
public:
  task_clock(task_timing& timing, const pooled_task& t)
    : timing_(timing), start_(clock_type::now()), ops_(timing, start_) {
    timing_.node = t.node;
    timing_.task = t.task.name;
    timing_.offset_us = micros(start_ - t.received);
  }

  ~task_clock() {
    auto end = clock_type::now();
    ops_.close(end);
    timing_.duration_us = micros(end - start_);
  }

  op_clock& ops() noexcept {
    return ops_;
  }

private:
  task_timing& timing_;
  clock_type::time_point start_;
  op_clock ops_;
};

caf::expected<std::vector<task_output>> run_pooled(pooled_task& t,
                                                   task_timing& timing) {
  task_clock clock{timing, t};
  try {
    auto* plan = t.faults.get();
    before_op_hook before_op = [&](const op_def& op) -> caf::error {
      clock.ops().next_op(op.type, clock_type::now());
      if (plan == nullptr)
        return {};
      return task_point(plan, fault_point::node_op, t.reply_to,
                        fault_site{t.node, t.epoch, op.type}, t.cancel.get());
    };
    fault_site site{t.node, t.epoch, t.task.name};
    if (auto failed = task_point(plan, fault_point::task_start, t.reply_to,
                                 site, t.cancel.get()))
      return failed;
    auto outputs = run_task(t.task, *t.ws, *t.ops, t.cancel.get(), before_op);
    if (outputs)
      if (auto failed = task_point(plan, fault_point::task_end, t.reply_to,
                                   site, t.cancel.get()))
        return failed;
    return outputs;
  } catch (const std::exception& ex) {
    // run_task catches what ops and checks throw; this is for what it
    // throws itself (std::bad_alloc): the node must hear of the task.
    return make_error(runtime_errc::op_failed,
                      "task '" + t.task.name + "': " + ex.what());
  } catch (...) {
    return make_error(runtime_errc::op_failed,
                      "task '" + t.task.name + "': unknown exception");
  }
}

// Owns a task from its submission to its end and sends the node actor the
// one message that ends it: the outputs or the error once it ran, or an
// error when it is destroyed unrun (the pool dropped it when it stopped).
class task_holder {
public:
  explicit task_holder(pooled_task t) : task_(std::move(t)) {
    // nop
  }

  task_holder(const task_holder&) = delete;
  task_holder& operator=(const task_holder&) = delete;

  ~task_holder() {
    if (!reported_)
      report(make_error(runtime_errc::op_failed,
                        "task '" + task_.task.name
                          + "' was dropped unrun: the worker pool stopped"));
  }

  void run() {
    task_timing timing;
    auto outputs = run_pooled(task_, timing);
    if (!outputs)
      report(std::move(outputs.error()));
    else
      report_done(std::move(*outputs), std::move(timing));
  }

  // The task was never queued: nothing is to be sent for it.
  void disarm() {
    reported_ = true;
  }

private:
  void report(caf::error err) {
    reported_ = true;
    caf::anon_send(task_.reply_to, task_ended_atom::value, task_.id,
                   make_error(actors_errc::task_failed,
                              "node " + task_.node + ": " + error_text(err)));
  }

  void report_done(std::vector<task_output> outputs, task_timing timing) {
    reported_ = true;
    tasks_done done{task_.node, std::move(outputs), {}};
    done.timings.push_back(std::move(timing));
    caf::anon_send(task_.reply_to, task_ended_atom::value, task_.id,
                   std::move(done));
  }

  pooled_task task_;
  bool reported_ = false;
};

} // namespace

caf::error submit_task(worker_pool& pool, pooled_task task) {
  auto node = task.node;
  auto name = task.task.name;
  auto holder = std::make_shared<task_holder>(std::move(task));
  if (!pool.submit([holder] {
        holder->run();
      })) {
    // Nothing may be sent for a task that was refused.
    holder->disarm();
    return make_error(actors_errc::task_failed,
                      "node " + node + ": task '" + name
                        + "' refused: the worker pool is stopped");
  }
  return {};
}

} // namespace epochrt
