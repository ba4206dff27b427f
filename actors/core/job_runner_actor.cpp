#include <epochrt/actors/core/job_runner_actor.hpp>

#include <tuple>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/place_within.hpp>
#include <epochrt/actors/detail/run_group.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/runtime/exchange_plan.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

using continuation = std::function<void()>;

// A fault plan's delay at one of the runner's points has passed.
using delay_done_atom = caf::atom_constant<caf::atom("ert_delay")>;

struct runner_state {
  job_runner_config cfg;
  caf::response_promise promise;
  bool fall_back = false;
  // What to do once a delay ends, by id.
  std::map<uint64_t, continuation> delayed;
  uint64_t next_delay = 0;
  // When the running epoch started, for its job_event.
  job_event::clock::time_point epoch_start;
  // The group running now, for the nodes' down messages; null between
  // groups.
  detail::group_gather group;
  // The channels and collectives of each group, by label; none for a group
  // that uses neither.
  std::map<std::string, exchange_plan> plans;
};

// The runner's handle with the message it sends itself: others hold the
// narrow job_runner_actor.
using job_runner_internal
  = job_runner_actor::extend<caf::reacts_to<delay_done_atom, uint64_t>>;

using runner_ptr = job_runner_internal::stateful_pointer<runner_state>;
using outputs_continuation = std::function<void(std::vector<task_output>&)>;

// Tells the job's observer, if any, that `what` happened from `start` to
// now.
void emit(runner_ptr self, job_event::kind what, int64_t epoch,
          job_event::clock::time_point start, bool ok = true,
          std::string detail = {}) {
  auto* events = self->state.cfg.events.get();
  if (events == nullptr)
    return;
  job_event event;
  event.what = what;
  event.epoch = epoch;
  event.start = start;
  event.end = job_event::clock::now();
  event.ok = ok;
  event.detail = std::move(detail);
  notify(events, event);
}

// The tasks of a group that succeeded, and their slow ops, as their nodes
// timed them, placed from the group's start and kept within the group (a
// daemon's numbers are not trusted to be sane).
void emit_task_timings(runner_ptr self, int64_t epoch,
                       job_event::clock::time_point group_start,
                       const std::vector<task_timing>& timings) {
  auto* events = self->state.cfg.events.get();
  if (events == nullptr)
    return;
  auto group_end = job_event::clock::now();
  for (auto& t : timings) {
    job_event event;
    event.what = job_event::kind::task;
    event.epoch = epoch;
    event.node = t.node;
    event.detail = t.task;
    std::tie(event.start, event.end) = detail::place_within(
      group_start, group_end, t.offset_us, t.duration_us);
    notify(events, event);
    for (auto& op : t.slow_ops) {
      job_event slow = event;
      slow.what = job_event::kind::op;
      slow.detail = t.task + ": " + op.type;
      std::tie(slow.start, slow.end) = detail::place_within(
        event.start, event.end, op.offset_us, op.duration_us);
      notify(events, slow);
    }
  }
}

void fail(runner_ptr self, caf::error err) {
  self->state.promise.deliver(std::move(err));
  self->quit();
}

// A lost node's error says which node and address; `where` adds what the
// job was doing (a checkpoint request knows no epoch), so that the line a
// person reads names the phase and the epoch the job was at.
caf::error lost_while(const std::string& where, const caf::error& err) {
  return make_error(actors_errc::node_lost, where + ": " + error_text(err));
}

void run_group_now(runner_ptr self, const task_group_def& group,
                   const char* label, int64_t epoch,
                   outputs_continuation next) {
  if (group.tasks.empty()) {
    std::vector<task_output> none;
    next(none);
    return;
  }
  auto& cfg = self->state.cfg;
  auto start = job_event::clock::now();
  run_tasks msg{label, epoch, group.tasks, 0, {}};
  if (auto plan = self->state.plans.find(label);
      plan != self->state.plans.end())
    msg.plan = plan->second;
  // Run here rather than in a group runner actor of its own: an epoch then
  // spawns no actor and holds no timed request of its own in CAF's clock.
  auto running = detail::run_group(
    self, cfg.nodes, cfg.group_timeout, std::move(msg), false,
    [self, next, label, epoch, start](caf::expected<tasks_done> done) {
      self->state.group = nullptr;
      if (!done) {
        emit(self, job_event::kind::group, epoch, start, false, label);
        fail(self, std::move(done.error()));
        return;
      }
      emit(self, job_event::kind::group, epoch, start, true, label);
      emit_task_timings(self, epoch, start, done->timings);
      next(done->outputs);
    },
    &cfg.exchange);
  // Null when the group failed before anything was sent.
  if (running)
    self->state.group = std::move(running);
}

// Consults the fault plan at `point`, then goes on with `next` -- at once,
// after an injected delay, or not at all when an injected error fails the
// job. The runner is an actor: a delay is a delayed message to itself,
// never a sleep on a scheduler thread.
void at_point(runner_ptr self, fault_point point, int64_t epoch,
              std::string_view detail, continuation next) {
  auto* faults = self->state.cfg.faults.get();
  fault_site site{{}, epoch, detail};
  auto action = strike(faults, point, site);
  switch (action.kind) {
    case fault_kind::none:
      next();
      return;
    case fault_kind::delay: {
      auto id = ++self->state.next_delay;
      self->state.delayed.emplace(id, std::move(next));
      self->delayed_send(self, std::chrono::milliseconds(action.ms),
                         delay_done_atom::value, id);
      return;
    }
    default:
      fail(self, injected_error(point, site, action));
  }
}

void run_group(runner_ptr self, const task_group_def& group, const char* label,
               int64_t epoch, outputs_continuation next) {
  at_point(self, fault_point::job_group_start, epoch, label,
           [self, &group, label, epoch, next = std::move(next)] {
             auto after
               = [self, label, epoch, next](std::vector<task_output>& outputs) {
                   auto shared = std::make_shared<std::vector<task_output>>(
                     std::move(outputs));
                   at_point(self, fault_point::job_group_end, epoch, label,
                            [next, shared] {
                              next(*shared);
                            });
                 };
             run_group_now(self, group, label, epoch, std::move(after));
           });
}
// "node:blob=values" for the small outputs of the epoch's tasks: the
// progress line of an epoch.
std::string describe_outputs(const task_group_def& group,
                             const std::vector<task_output>& outputs) {
  std::string text;
  for (auto& out : outputs) {
    if (out.value.type == dtype::string || out.value.element_count() > 8)
      continue;
    text += ' ';
    for (auto& task : group.tasks)
      if (task.name == out.task) {
        text += task.node;
        text += ':';
        break;
      }
    text += out.blob;
    text += '=';
    text += format_values(out.value);
  }
  return text;
}

// Stop conditions are outputs of epoch tasks on the condition's node.
caf::expected<bool> should_stop(const job_def& job,
                                const std::vector<task_output>& outputs) {
  for (auto& cond : job.stop_conditions) {
    const task_output* found = nullptr;
    for (auto& out : outputs) {
      if (out.blob != cond.blob)
        continue;
      for (auto& task : job.epoch_group.tasks)
        if (task.name == out.task && task.node == cond.node)
          found = &out;
    }
    if (found == nullptr)
      return make_error(actors_errc::invalid_argument,
                        "stop condition " + cond.node + ":" + cond.blob
                          + " is not an output of any epoch task");
    auto& value = found->value;
    if (value.type != dtype::string && value.element_count() > 0
        && element_as_double(value, 0) != 0.0)
      return true;
  }
  return false;
}

// Checkpoints are written in the background: the loop waits only until
// every node has taken its copy-on-write snapshot; the manager commits the
// epoch once every write is done. A checkpoint that cannot be taken costs
// a warning, never the job (Caffe2's rule) -- unless a node was lost: its
// workspace is gone with it, so the job cannot go on from this epoch, and
// failing now (node_lost) lets the job runner recover from the last
// committed epoch. Going on would only fail at the node's next request, or,
// after the last epoch, not at all while the last checkpoint is missing.
void save(runner_ptr self, int64_t epoch, bool final, continuation next) {
  auto& cfg = self->state.cfg;
  detail::log().info("saving checkpoints for epoch {}", epoch);
  auto start = job_event::clock::now();
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_save_async{epoch, final})
    .then(
      [self, epoch, next, start] {
        detail::log().debug("snapshots of epoch {} taken", epoch);
        emit(self, job_event::kind::snapshot, epoch, start);
        next();
      },
      [self, epoch, next, start](caf::error& err) {
        emit(self, job_event::kind::snapshot, epoch, start, false,
             error_text(err));
        if (is_node_lost(err)) {
          fail(self,
               lost_while("saving the checkpoint of epoch "
                            + std::to_string(epoch),
                          err));
          return;
        }
        detail::log().warn("unable to write checkpoint for epoch {}: {}", epoch,
                           error_text(err));
        next();
      });
}

// Goes on with `next` once every checkpoint write begun so far has ended:
// the job is done (or stopped) only when its last checkpoint is committed
// (or known to have failed), so that a restart after this finds it. The
// manager fails the flush with node_lost when the write of `epoch` was cut
// short by a lost node: the job then recovers instead of ending without
// that checkpoint.
void after_flush(runner_ptr self, int64_t epoch, continuation next) {
  auto& cfg = self->state.cfg;
  if (!cfg.checkpoint_manager) {
    next();
    return;
  }
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout), ckpt_flush{epoch})
    .then(next, [self, epoch](caf::error& err) {
      if (is_node_lost(err))
        err = lost_while(
          "committing the checkpoint of epoch " + std::to_string(epoch), err);
      fail(self, std::move(err));
    });
}

void finish(runner_ptr self, int64_t epoch) {
  after_flush(self, epoch, [self, epoch] {
    detail::log().info("finished training after epoch {}", epoch);
    self->state.promise.deliver(ckpt_epoch{epoch});
    self->quit();
  });
}

// Host code: an exception here would kill the runner and leave train()
// waiting for a reply that never comes. An observer never changes the job
// (see epoch_observer.hpp): what it throws costs a warning.
void call_observer(const job_runner_config& cfg, int64_t epoch,
                   const std::vector<task_output>& outputs) {
  if (!cfg.on_epoch)
    return;
  try {
    cfg.on_epoch(epoch, outputs);
  } catch (const std::exception& ex) {
    detail::log().warn("the epoch observer threw after epoch {}: {}", epoch,
                       ex.what());
  } catch (...) {
    detail::log().warn("the epoch observer threw after epoch {}", epoch);
  }
}

void run_epoch(runner_ptr self, int64_t epoch);

void check_stop(runner_ptr self, int64_t epoch,
                const std::vector<task_output>& outputs) {
  auto& cfg = self->state.cfg;
  auto stop = should_stop(cfg.job, outputs);
  if (!stop) {
    fail(self, std::move(stop.error()));
    return;
  }
  auto next = [self, epoch, stop = *stop] {
    emit(self, job_event::kind::epoch, epoch, self->state.epoch_start);
    at_point(self, fault_point::job_epoch_end, epoch, {}, [self, epoch, stop] {
      if (stop)
        finish(self, epoch);
      else
        run_epoch(self, epoch + 1);
    });
  };
  if (cfg.checkpoint_manager)
    save(self, epoch, *stop, next);
  else
    next();
}

bool stop_requested(const job_runner_config& cfg) {
  return cfg.stop && cfg.stop->load(std::memory_order_relaxed);
}

// The job was asked to stop after `epoch`: the checkpoints already begun
// commit before the reply, as at the end of a job.
void stop_after(runner_ptr self, int64_t epoch) {
  after_flush(self, epoch, [self, epoch] {
    detail::log().info("stopped on request after epoch {}", epoch);
    self->state.promise.deliver(
      make_error(actors_errc::stopped,
                 "stopped on request after epoch " + std::to_string(epoch)));
    self->quit();
  });
}

void run_epoch(runner_ptr self, int64_t epoch) {
  if (stop_requested(self->state.cfg)) {
    stop_after(self, epoch - 1);
    return;
  }
  self->state.epoch_start = job_event::clock::now();
  emit(self, job_event::kind::epoch_started, epoch, self->state.epoch_start);
  at_point(self, fault_point::job_epoch_start, epoch, {}, [self, epoch] {
    detail::log().info("starting epoch {}", epoch);
    run_group(
      self, self->state.cfg.job.epoch_group, "epoch", epoch,
      [self, epoch](std::vector<task_output>& outputs) {
        auto& cfg = self->state.cfg;
        // The outputs are described only for a log that shows them.
        if (detail::log().should_log(spdlog::level::info))
          detail::log().info("finished epoch {}:{}", epoch,
                             describe_outputs(cfg.job.epoch_group, outputs));
        call_observer(cfg, epoch, outputs);
        auto shared
          = std::make_shared<std::vector<task_output>>(std::move(outputs));
        at_point(self, fault_point::job_stop_check, epoch, {},
                 [self, epoch, shared] {
                   check_stop(self, epoch, *shared);
                 });
      });
  });
}

void init_manager(runner_ptr self, int64_t retrieve_from, continuation next,
                  std::function<void(caf::error&)> on_error) {
  auto& cfg = self->state.cfg;
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_init{cfg.checkpoint_nodes, retrieve_from, {}})
    .then(
      [next](ckpt_result&) {
        next();
      },
      [on_error](caf::error& err) {
        on_error(err);
      });
}

void start_from_scratch(runner_ptr self) {
  detail::log().info("starting the init group");
  run_group(self, self->state.cfg.job.init_group, "init", 0,
            [self](std::vector<task_output>&) {
              if (!self->state.cfg.checkpoint_manager) {
                run_epoch(self, 1);
                return;
              }
              detail::log().info("preparing checkpoints");
              init_manager(
                self, -1,
                [self] {
                  save(self, 0, false, [self] {
                    run_epoch(self, 1);
                  });
                },
                [self](caf::error& err) {
                  if (is_node_lost(err))
                    err = lost_while("preparing checkpoints (epoch 0)", err);
                  fail(self, std::move(err));
                });
            });
}

void resume_from(runner_ptr self, int64_t epoch);

// Some nodes may hold the state of a checkpoint they loaded before another
// node's failed: a start from scratch begins with empty workspaces.
void reset_then_start_from_scratch(runner_ptr self) {
  auto& cfg = self->state.cfg;
  std::vector<detail::gather_target<node_actor>> targets;
  targets.reserve(cfg.nodes.size());
  for (auto& [name, node] : cfg.nodes)
    targets.push_back({name, node});
  detail::gather_options opts;
  opts.site = {"reset before a start from scratch", -1};
  opts.policy = detail::gather_policy::fail_fast;
  opts.timeout = cfg.group_timeout;
  detail::gather<caf::unit_t>(
    self, targets, std::move(opts),
    [](const auto&) {
      return reset_workspace{"restart"};
    },
    [](const std::string& node, caf::error err) {
      return make_error(actors_errc::node_lost,
                        "node " + node
                          + " could not be reset: " + error_text(err));
    },
    [self](caf::expected<std::vector<caf::unit_t>> reset) {
      if (!reset)
        fail(self, std::move(reset.error()));
      else
        start_from_scratch(self);
    });
}

// The checkpoint of `epoch` could not be used. Without fall-back that ends
// the job; with it, the newest committed epoch before it is tried next, and
// the job starts from scratch when none is left.
void after_failed_resume(runner_ptr self, int64_t epoch, caf::error& err) {
  // Only a checkpoint that is unusable is replaced by an older one: a node
  // that is lost or too slow may still be loading, and falling back under
  // it would mix two states.
  auto node_trouble = is_node_lost(err);
  if (!self->state.fall_back || node_trouble) {
    fail(self,
         make_error(node_trouble ? actors_errc::node_lost
                                 : actors_errc::checkpoint_failed,
                    "cannot resume from epoch " + std::to_string(epoch) + ": "
                      + error_text(err)));
    return;
  }
  detail::log().warn("cannot resume from epoch {}: {}; trying an earlier one",
                     epoch, error_text(err));
  auto& cfg = self->state.cfg;
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_resume_epoch{-1, epoch})
    .then(
      [self](ckpt_epoch& earlier) {
        if (earlier.epoch < 0) {
          detail::log().warn("no usable checkpoint left; starting from "
                             "scratch");
          reset_then_start_from_scratch(self);
        } else {
          resume_from(self, earlier.epoch);
        }
      },
      [self](caf::error& err) {
        fail(self, std::move(err));
      });
}

// After loading the checkpoint of `epoch`: the next epoch, unless the job
// had already stopped after this one.
void continue_after(runner_ptr self, int64_t epoch) {
  auto& cfg = self->state.cfg;
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_resume_epoch{epoch, -1})
    .then(
      [self, epoch](ckpt_epoch& resumed) {
        if (resumed.final) {
          detail::log().info("the job had stopped after epoch {}", epoch);
          finish(self, epoch);
        } else {
          run_epoch(self, epoch + 1);
        }
      },
      [self](caf::error& err) {
        fail(self, std::move(err));
      });
}

// One job_event per node whose checkpoint was loaded.
void notify_loads(runner_ptr self, int64_t epoch,
                  job_event::clock::time_point start,
                  const std::vector<checkpoint_stats>& stats) {
  auto* events = self->state.cfg.events.get();
  if (events == nullptr)
    return;
  job_event event;
  event.what = job_event::kind::load;
  event.epoch = epoch;
  event.start = start;
  event.end = job_event::clock::now();
  for (auto& node : stats) {
    event.node = node.node;
    event.stats = node;
    notify(events, event);
  }
}

void resume_from(runner_ptr self, int64_t epoch) {
  detail::log().info("resuming from epoch {}", epoch);
  auto on_error = [self, epoch](caf::error& err) {
    after_failed_resume(self, epoch, err);
  };
  init_manager(
    self, epoch,
    [self, epoch, on_error] {
      auto& cfg = self->state.cfg;
      auto start = job_event::clock::now();
      self
        ->request(cfg.checkpoint_manager,
                  detail::with_margin(cfg.checkpoint_timeout),
                  ckpt_load{epoch, {}, {}, false})
        .then(
          [self, epoch, start](ckpt_result& loaded) {
            detail::log().info("checkpoint of epoch {} loaded", epoch);
            notify_loads(self, epoch, start, loaded.stats);
            continue_after(self, epoch);
          },
          on_error);
    },
    on_error);
}

job_runner_internal::behavior_type runner_behavior(runner_ptr self,
                                                   job_runner_config cfg) {
  self->state.cfg = std::move(cfg);
  // The nodes are monitored for the whole job, not per group: a node that
  // ends fails the group running on it at once, and a later request to it
  // fails at once too (CAF answers a request to a dead local actor).
  for (auto& [name, node] : self->state.cfg.nodes)
    self->monitor(node);
  self->set_down_handler([self](caf::down_msg& down) {
    if (auto running = self->state.group)
      running->node_down(down.source);
  });
  // A monitor stays attached to its node after the runner ends, and keeps
  // the runner's memory with it: removed when the runner ends.
  // (The state is gone by then: the functor holds the addresses.)
  std::vector<caf::actor_addr> monitored;
  for (auto& [name, node] : self->state.cfg.nodes)
    monitored.push_back(node.address());
  self->attach_functor([self, monitored](const caf::error&) {
    for (auto& node : monitored)
      self->demonitor(node);
  });
  return {
    [self](delay_done_atom, uint64_t id) {
      auto i = self->state.delayed.find(id);
      if (i == self->state.delayed.end())
        return;
      auto next = std::move(i->second);
      self->state.delayed.erase(i);
      next();
    },
    [self](run_job& msg) -> caf::result<ckpt_epoch> {
      auto& job = self->state.cfg.job;
      if (job.epoch_group.tasks.empty() || job.stop_conditions.empty())
        return make_error(actors_errc::invalid_argument,
                          "job '" + job.name
                            + "' has no epoch task or no stop condition: its "
                              "epoch loop could never end");
      for (auto [label, group] : {std::pair{"init", &job.init_group},
                                  std::pair{"epoch", &job.epoch_group}}) {
        auto plan = make_exchange_plan(*group, job.channels,
                                       std::string{label} + "_group.tasks");
        if (!plan)
          return std::move(plan.error());
        if (!plan->empty())
          self->state.plans.emplace(label, std::move(*plan));
      }
      self->state.promise = self->make_response_promise();
      self->state.fall_back = msg.fall_back;
      if (msg.resume_from_epoch >= 0 && self->state.cfg.checkpoint_manager)
        resume_from(self, msg.resume_from_epoch);
      else if (msg.reset_workspaces)
        reset_then_start_from_scratch(self);
      else
        start_from_scratch(self);
      return self->state.promise;
    },
  };
}

} // namespace

job_runner_actor spawn_job_runner(caf::actor_system& sys,
                                  job_runner_config cfg) {
  return sys.spawn(runner_behavior, std::move(cfg));
}

} // namespace epochrt
