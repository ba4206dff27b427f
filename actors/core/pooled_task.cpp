#include <epochrt/actors/core/pooled_task.hpp>

#include <chrono>
#include <exception>
#include <utility>

#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/core/exchange_port.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
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
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  if (any_cancelled_.load()) {
    reply_cancelled();
    return;
  }
  if (!claim())
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

void task_group_run::cancel() {
  if (cancel_.exchange(true))
    return;
  if (on_cancel)
    on_cancel();
}

void task_group_run::task_cancelled(caf::error err) {
  {
    annotated_mutex::guard guard{cancelled_mtx_};
    if (!cancelled_)
      cancelled_ = std::move(err);
  }
  any_cancelled_ = true;
  cancel();
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1)
    reply_cancelled();
}

void task_group_run::reply_cancelled() {
  if (!claim())
    return;
  caf::error err;
  {
    annotated_mutex::guard guard{cancelled_mtx_};
    err = cancelled_;
  }
  reply(caf::make_message(std::move(err)));
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

// The timing of a task from its first op to its end, across the waits
// that hand it from one pool thread to another.
class task_clock {
public:
  task_clock(task_timing& timing, const pooled_task& t)
    : timing_(timing), start_(clock_type::now()), ops_(timing, start_) {
    timing_.node = t.group->node_name();
    timing_.task = t.task.name;
    timing_.offset_us = micros(start_ - t.group->received());
  }

  // The task ended.
  void finish() {
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

caf::error task_failure(const pooled_task& t, const caf::error& err) {
  // A wait for a node that was lost: the group fails as a lost node, so
  // that a job with failures left recovers.
  if (is_error(err, runtime_errc::peer_lost)) {
    // Named first is the node that was lost, not this one that waited: a
    // supervisor reading the error restarts the lost one.
    auto text = error_text(err);
    auto at = text.find(" was lost (");
    auto start = at == std::string::npos ? at : text.rfind("node ", at);
    if (start != std::string::npos)
      return make_error(actors_errc::node_lost,
                        text.substr(start, at - start) + ": lost while node "
                          + t.group->node_name() + " waited for it: " + text);
    return make_error(actors_errc::node_lost,
                      "node " + t.group->node_name() + ": " + text);
  }
  return make_error(actors_errc::task_failed,
                    "node " + t.group->node_name() + ": " + error_text(err));
}

// Everything of one task that lives from its first op to its end, across
// its waits: a task that waits gives its thread back, and the job that
// takes it up again owns this.
struct task_state {
  explicit task_state(pooled_task task) : t(std::move(task)) {
    // nop
  }

  pooled_task t;
  task_timing timing;
  std::unique_ptr<task_clock> clock;
  std::unique_ptr<exchange_port> port;
  std::unique_ptr<task_execution> execution;
};

caf::error before_each_op(task_state& st, const op_def& op) {
  st.clock->ops().next_op(op.type, clock_type::now());
  auto& t = st.t;
  if (!t.faults)
    return {};
  return task_point(t.faults.get(), fault_point::node_op, t.node, *t.tasks,
                    fault_site{t.group->node_name(), t.group->epoch(), op.type},
                    t.group->cancel_flag());
}

// Starts the task: its task.start point, its port, its execution.
caf::error start_task(task_state& st) {
  auto& t = st.t;
  st.clock = std::make_unique<task_clock>(st.timing, t);
  fault_site site{t.group->node_name(), t.group->epoch(), t.task.name};
  if (auto err = task_point(t.faults.get(), fault_point::task_start, t.node,
                            *t.tasks, site, t.group->cancel_flag()))
    return err;
  if (t.hub) {
    port_faults faults;
    faults.injector = t.faults;
    faults.fault_node = [node = t.node, tasks = t.tasks](fault_kind kind) {
      tasks->set_faulted();
      caf::anon_send(node, node_fault_atom::value, static_cast<uint8_t>(kind));
    };
    st.port = std::make_unique<exchange_port>(
      t.hub, t.run, task_ref{t.group->node_name(), t.task.name},
      t.group->epoch(), std::move(faults));
  }
  // One pointer in the hook: it fits std::function without an allocation.
  before_op_hook before_op = [s = &st](const op_def& op) {
    return before_each_op(*s, op);
  };
  st.execution = std::make_unique<task_execution>(
    t.task, *t.ws, *t.ops, t.group->cancel_flag(), std::move(before_op),
    st.port.get());
  return {};
}

// The task ended with `outputs`: its task.end point. Its collectives and
// channels learn of its end once it has been reported (tell_exchange).
caf::expected<std::vector<task_output>>
end_task(task_state& st, caf::expected<std::vector<task_output>> outputs) {
  auto& t = st.t;
  st.clock->finish();
  if (outputs) {
    fault_site site{t.group->node_name(), t.group->epoch(), t.task.name};
    if (auto err = task_point(t.faults.get(), fault_point::task_end, t.node,
                              *t.tasks, site, t.group->cancel_flag()))
      outputs = std::move(err);
  }
  return outputs;
}

// Tells the task's channels and collectives that it ended (`ok`: it
// succeeded). After the report of its end: a failed task's own error must
// reach its group before the errors of the tasks that waited for it.
void tell_exchange(task_state& st, bool ok) {
  if (st.port)
    st.port->task_ended(ok);
}

// Owns a task from its submission to its end, and reports that end to the
// task's group exactly once: when it ran, or when it is destroyed unrun
// (the pool dropped it when it stopped). A task that waits moves its state
// to a new job, queued again once the wait is over; that job owes the
// report then. Whatever happens, the task counts itself out of its node's
// tasks once.
class task_job : public worker_pool::job {
public:
  task_job(std::unique_ptr<task_state> st, std::weak_ptr<worker_pool> pool)
    : st_(std::move(st)), pool_(std::move(pool)) {
    // nop
  }

  ~task_job() override {
    if (!st_)
      return; // handed on to the job that goes on after a wait
    if (!reported_) {
      // Nothing may escape a destructor; a report that cannot be built
      // leaves the group to its node's deadline.
      try {
        fail(make_error(runtime_errc::op_failed,
                        "task '" + st_->t.task.name
                          + "' was dropped: the worker pool stopped"));
        if (st_->port)
          st_->port->task_ended(false);
      } catch (...) {
        // nop
      }
    }
    st_->t.tasks->remove(st_->t.node);
  }

  void run() override {
    try {
      if (!st_->execution) {
        if (auto err = start_task(*st_)) {
          report(end_task(*st_, std::move(err)));
          return;
        }
      }
      while (!st_->execution->run()) {
        if (park())
          return;
      }
      report(end_task(*st_, std::move(st_->execution->result())));
    } catch (const std::exception& ex) {
      // Out of memory on the way: the group still hears of the task.
      if (!st_)
        return;
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
    return st_->t;
  }

private:
  // The task waits: its state goes to a job queued once the wait is over,
  // and this thread returns to the pool. False when the wait was over
  // already: the task goes on here.
  bool park() {
    auto wait = st_->execution->pending();
    auto next = std::make_shared<std::unique_ptr<task_job>>(
      new task_job(std::move(st_), pool_));
    auto resume = [next, pool = pool_] {
      std::unique_ptr<worker_pool::job> job = std::move(*next);
      if (auto p = pool.lock())
        if (p->submit(std::move(job)))
          return;
      // No pool to go on: the job, destroyed here, reports the task.
    };
    if (wait->on_complete(std::move(resume)))
      return true;
    st_ = std::move((*next)->st_);
    return false;
  }

  void report(caf::expected<std::vector<task_output>> outputs) {
    reported_ = true;
    // A failure reaches the group before the exchange hears of it: the
    // failed task's own error, not that of a task that waited for it,
    // is the group's. A success is told to the exchange first, while the
    // run is surely still open.
    if (outputs)
      tell_exchange(*st_, true);
    // After a kill or freeze, met by this task or another, the node
    // answers the group.
    if (!outputs)
      fail(outputs.error());
    else if (!st_->t.tasks->faulted())
      st_->t.group->task_succeeded(st_->t.index, std::move(*outputs),
                                   std::move(st_->timing));
    if (!outputs)
      tell_exchange(*st_, false);
  }

  // Fails the group with `err`, unless the node was killed or frozen. A
  // task that stopped because its group was cancelled is no cause: the
  // failure that cancelled the group is.
  void fail(const caf::error& err) {
    if (st_->t.tasks->faulted())
      return;
    if (is_error(err, runtime_errc::cancelled))
      st_->t.group->task_cancelled(make_error(
        actors_errc::task_cancelled,
        "node " + st_->t.group->node_name() + ": " + error_text(err)));
    else
      st_->t.group->settle(task_failure(st_->t, err));
  }

  std::unique_ptr<task_state> st_;
  // Weak: a pool must not be destroyed from one of its threads, as the
  // last owner on a pool thread would.
  std::weak_ptr<worker_pool> pool_;
  bool reported_ = false;
};

} // namespace

caf::error submit_task(const std::shared_ptr<worker_pool>& pool,
                       pooled_task task) {
  task.tasks->add();
  std::unique_ptr<worker_pool::job> job{
    new task_job(std::make_unique<task_state>(std::move(task)), pool)};
  if (pool->submit(std::move(job)))
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
