#include <epochrt/actors/core/pooled_task.hpp>

#include <chrono>
#include <exception>
#include <utility>

#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/messages/fault_injector.hpp>
#include <epochrt/runtime/runtime_errc.hpp>
#include <epochrt/runtime/task_runner.hpp>
#include <epochrt/runtime/worker_pool.hpp>

namespace epochrt {

// -- node_tasks ---------------------------------------------------------------

void node_tasks::remove(const node_task_events& node) {
  // Sequentially consistent with wait_for_idle: either the node sees the
  // count at zero, or this sees the node waiting and tells it.
  if (running_.fetch_sub(1) == 1 && waiting_.load())
    caf::anon_send(node, tasks_idle_atom::value);
}

bool node_tasks::wait_for_idle() noexcept {
  waiting_.store(true);
  return idle_confirmed();
}

bool node_tasks::idle_confirmed() noexcept {
  if (running_.load() != 0)
    return false;
  waiting_.store(false);
  return true;
}

// -- task_group_run -----------------------------------------------------------

task_group_run::task_group_run(caf::strong_actor_ptr node,
                               std::string node_name,
                               caf::response_promise promise, std::string label,
                               size_t tasks, int64_t epoch,
                               clock_type::time_point received)
  : node_(std::move(node)), node_name_(std::move(node_name)),
    promise_(std::move(promise)), label_(std::move(label)), epoch_(epoch),
    received_(received), outputs_(tasks > 1 ? tasks : 0), timings_(tasks),
    remaining_(tasks) {
  // nop
}

void task_group_run::task_succeeded(size_t index,
                                    std::vector<task_output> outputs,
                                    task_timing timing) {
  if (outputs_.empty())
    single_ = std::move(outputs);
  else
    outputs_[index] = std::move(outputs);
  timings_[index] = std::move(timing);
  // The acquire half makes every other task's slots visible to the last.
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1 || !claim())
    return;
  caf::message msg;
  try {
    tasks_done done{node_name_, {}, std::move(timings_)};
    if (outputs_.empty()) {
      done.outputs = std::move(single_);
    } else {
      size_t total = 0;
      for (auto& outs : outputs_)
        total += outs.size();
      done.outputs.reserve(total);
      for (auto& outs : outputs_)
        for (auto& out : outs)
          done.outputs.emplace_back(std::move(out));
    }
    msg = caf::make_message(std::move(done));
  } catch (const std::exception& ex) {
    // Claimed: nobody else answers the group now.
    msg = caf::make_message(make_error(
      actors_errc::task_failed,
      "node " + node_name_ + ": its outputs could not be sent: " + ex.what()));
  }
  reply(std::move(msg));
}

bool task_group_run::settle(caf::error err) {
  cancel();
  if (!claim())
    return false;
  reply(caf::make_message(std::move(err)));
  return true;
}

void task_group_run::reply(caf::message msg) {
  // Only the claimer gets here: the promise and the node are its to take,
  // and the group lets go of both (see the class comment).
  auto promise = std::move(promise_);
  auto node = std::move(node_);
  // What response_promise::deliver does, with no execution unit: this runs
  // on a pool thread as often as in the node actor, and an enqueue without
  // one is safe from any thread (it is how anon_send enqueues).
  auto& stages = promise.stages();
  if (!stages.empty()) {
    auto rest = stages;
    auto next = std::move(rest.back());
    rest.pop_back();
    next->enqueue(caf::make_mailbox_element(promise.source(), promise.id(),
                                            std::move(rest), std::move(msg)),
                  nullptr);
    return;
  }
  if (auto& source = promise.source())
    source->enqueue(caf::make_mailbox_element(std::move(node),
                                              promise.id().response_id(), {},
                                              std::move(msg)),
                    nullptr);
}

namespace {

// -- running one task ---------------------------------------------------------

// The fault plan at one of a task's points, on the task's thread: a delay
// sleeps, an injected error fails the task, and a node that is killed or
// frozen is marked faulted, then hears of it from here.
caf::error task_point(fault_injector* faults, fault_point point,
                      const node_task_events& node, node_tasks& tasks,
                      const fault_site& site, const std::atomic<bool>* cancel) {
  fault_action action;
  // A delay ends early, like the Sleep op, when the task is cancelled.
  auto err = strike_blocking(faults, point, site, action, cancel);
  if (err || !action)
    return err;
  if (action.kind == fault_kind::kill_node
      || action.kind == fault_kind::freeze_node) {
    // First: from here on no task of the node answers a group.
    tasks.set_faulted();
    caf::anon_send(node, node_fault_atom::value,
                   static_cast<uint8_t>(action.kind));
  }
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
    timing_.node = t.group->node_name();
    timing_.task = t.task.name;
    timing_.offset_us = micros(start_ - t.group->received());
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

// What the hook before each op needs, behind one pointer: a hook that
// captures a single pointer fits in std::function without an allocation.
struct op_hook_context {
  task_clock* clock;
  pooled_task* task;
};

caf::error before_each_op(const op_hook_context& ctx, const op_def& op) {
  ctx.clock->ops().next_op(op.type, clock_type::now());
  auto& t = *ctx.task;
  if (!t.faults)
    return {};
  return task_point(t.faults.get(), fault_point::node_op, t.node, *t.tasks,
                    fault_site{t.group->node_name(), t.group->epoch(), op.type},
                    t.group->cancel_flag());
}

caf::expected<std::vector<task_output>> run_pooled(pooled_task& t,
                                                   task_timing& timing) {
  task_clock clock{timing, t};
  try {
    auto* plan = t.faults.get();
    auto* cancel = t.group->cancel_flag();
    fault_site site{t.group->node_name(), t.group->epoch(), t.task.name};
    if (auto err = task_point(plan, fault_point::task_start, t.node, *t.tasks,
                              site, cancel))
      return err;
    op_hook_context ctx{&clock, &t};
    before_op_hook before_op = [c = &ctx](const op_def& op) {
      return before_each_op(*c, op);
    };
    auto outputs = run_task(t.task, *t.ws, *t.ops, cancel, before_op);
    if (outputs)
      if (auto err = task_point(plan, fault_point::task_end, t.node, *t.tasks,
                                site, cancel))
        return err;
    return outputs;
  } catch (const std::exception& ex) {
    // run_task catches what ops and checks throw; this is for what it
    // throws itself (std::bad_alloc): the group must hear of the task.
    return make_error(runtime_errc::op_failed,
                      "task '" + t.task.name + "': " + ex.what());
  } catch (...) {
    return make_error(runtime_errc::op_failed,
                      "task '" + t.task.name + "': unknown exception");
  }
}

caf::error task_failure(const pooled_task& t, const caf::error& err) {
  return make_error(actors_errc::task_failed,
                    "node " + t.group->node_name() + ": " + error_text(err));
}

// Owns a task from its submission to its end, and reports that end to the
// task's group exactly once: when it ran, or when it is destroyed unrun
// (the pool dropped it when it stopped). Whatever happens, the task counts
// itself out of its node's tasks.
class task_job : public worker_pool::job {
public:
  explicit task_job(pooled_task t) : task_(std::move(t)) {
    // nop
  }

  ~task_job() override {
    if (!reported_) {
      // Nothing may escape a destructor; a report that cannot be built
      // leaves the group to its node's deadline.
      try {
        fail(make_error(runtime_errc::op_failed,
                        "task '" + task_.task.name
                          + "' was dropped unrun: the worker pool stopped"));
      } catch (...) {
        // nop
      }
    }
    task_.tasks->remove(task_.node);
  }

  void run() override {
    try {
      task_timing timing;
      auto outputs = run_pooled(task_, timing);
      reported_ = true;
      // After a kill or freeze, met by this task or another, the node
      // answers the group.
      if (!outputs)
        fail(outputs.error());
      else if (!task_.tasks->faulted())
        task_.group->task_succeeded(task_.index, std::move(*outputs),
                                    std::move(timing));
    } catch (const std::exception& ex) {
      // Out of memory on the way: the group still hears of the task.
      reported_ = true;
      try {
        fail(
          make_error(runtime_errc::op_failed,
                     std::string{"task ended by an exception: "} + ex.what()));
      } catch (...) {
        // nop
      }
    }
  }

  // The job was refused: nothing is to be reported for it.
  void disarm() noexcept {
    reported_ = true;
  }

  const pooled_task& task() const noexcept {
    return task_;
  }

private:
  // Fails the group with `err`, unless the node was killed or frozen.
  void fail(const caf::error& err) {
    if (!task_.tasks->faulted())
      task_.group->settle(task_failure(task_, err));
  }

  pooled_task task_;
  bool reported_ = false;
};

} // namespace

caf::error submit_task(worker_pool& pool, pooled_task task) {
  task.tasks->add();
  std::unique_ptr<worker_pool::job> job{new task_job(std::move(task))};
  if (pool.submit(std::move(job)))
    return {};
  // Refused: the job is still ours, and nothing may be sent for it; it
  // counts itself out as it is destroyed.
  auto& refused = static_cast<task_job&>(*job);
  refused.disarm();
  auto& t = refused.task();
  return make_error(actors_errc::task_failed,
                    "node " + t.group->node_name() + ": task '" + t.task.name
                      + "' refused: the worker pool is stopped");
}

} // namespace epochrt
