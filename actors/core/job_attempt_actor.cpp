#include <epochrt/actors/core/job_attempt_actor.hpp>

#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/core/job_attempt_phase.hpp>
#include <epochrt/actors/core/job_attempt_rules.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/notify.hpp>
#include <epochrt/actors/detail/on_own_thread.hpp>
#include <epochrt/actors/detail/place_within.hpp>
#include <epochrt/actors/detail/run_group.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/runtime/epoch_limiter.hpp>
#include <epochrt/runtime/exchange_plan.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

namespace epochrt {

namespace {

using continuation = std::function<void()>;

// A fault plan's delay at one of the attempt's points has passed.
using delay_done_atom = caf::atom_constant<caf::atom("ert_delay")>;

struct attempt_state {
  job_attempt_config cfg;
  caf::response_promise promise;
  // Whether a checkpoint that cannot be loaded may be replaced by an older
  // one: only when the epoch was picked automatically.
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
  // Whether a poll of cfg.stop_now is scheduled, and when the poll first
  // saw cfg.stop set.
  bool watching_stop_now = false;
  std::optional<job_event::clock::time_point> stop_seen;
  // What the attempt is doing (job_attempt_phase.hpp), and at which epoch.
  attempt_phase phase = attempt_phase::checking_ops;
  int64_t phase_epoch = -1;
};

// The attempt's handle with the message it sends itself: others hold the
// narrow job_attempt_actor.
using job_attempt_internal
  = job_attempt_actor::extend<caf::reacts_to<delay_done_atom, uint64_t>>;

using attempt_ptr = job_attempt_internal::stateful_pointer<attempt_state>;
using outputs_continuation = std::function<void(std::vector<task_output>&)>;

// Tells the job's observer, if any, that `what` happened from `start` to
// now.
void emit(attempt_ptr self, job_event::kind what, int64_t epoch,
          job_event::clock::time_point start, bool ok = true,
          std::string detail = {}) {
  detail::notify_span(self->system(), self->state.cfg.events.get(), what, epoch,
                      start, ok, std::move(detail));
}

// The tasks of a group that succeeded, and their slow ops, as their nodes
// timed them, placed from the group's start and kept within the group (a
// daemon's numbers are not trusted to be sane).
void emit_task_timings(attempt_ptr self, int64_t epoch,
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
    detail::notify(self->system(), events, event);
    for (auto& op : t.slow_ops) {
      job_event slow = event;
      slow.what = job_event::kind::op;
      slow.detail = t.task + ": " + op.type;
      std::tie(slow.start, slow.end) = detail::place_within(
        event.start, event.end, op.offset_us, op.duration_us);
      detail::notify(self->system(), events, slow);
    }
  }
}

void fail(attempt_ptr self, caf::error err) {
  self->state.promise.deliver(std::move(err));
  self->quit();
}

// The attempt now does `phase` at `epoch` (-1: none).
void enter(attempt_ptr self, attempt_phase phase, int64_t epoch = -1) {
  auto& st = self->state;
  st.phase = phase;
  st.phase_epoch = epoch;
  // Worded only for a log that shows it: phases are entered every epoch.
  auto& log = detail::log(self->system());
  if (log.should_log(spdlog::level::debug))
    log.debug("job attempt: {}", describe(phase, epoch));
}

// A lost node's error says which node and address; this adds what the job
// was doing (a checkpoint request knows no epoch), so that the line a
// person reads names the phase and the epoch the job was at. Called only
// from the error handler of the request its phase made: the attempt
// enters its next phase from that request's success only.
caf::error lost_while(attempt_ptr self, const caf::error& err) {
  auto& st = self->state;
  return make_error(actors_errc::node_lost,
                    describe(st.phase, st.phase_epoch) + ": "
                      + error_text(err));
}

// Why the running group must be cancelled now, if it must: a stop at once
// was requested, or a graceful stop `stop_grace` ago.
caf::error reason_to_cancel(attempt_state& st) {
  if (st.cfg.stop_now_requested())
    return make_error(actors_errc::stopped,
                      "stopped at once on request, cancelling a running "
                      "group; the last committed epoch is where a rerun "
                      "resumes");
  if (!st.cfg.stop_requested())
    return {};
  auto now = job_event::clock::now();
  if (!st.stop_seen)
    st.stop_seen = now;
  if (now - *st.stop_seen < st.cfg.stop_grace)
    return {};
  auto grace
    = std::chrono::duration_cast<std::chrono::milliseconds>(st.cfg.stop_grace);
  return make_error(actors_errc::stopped,
                    "stopped on request: the running group did not end "
                    "within "
                      + std::to_string(grace.count())
                      + " ms of the request (its tasks may wait in a "
                        "channel or a collective), and was cancelled; the "
                        "last committed epoch is where a rerun resumes");
}

// While a group runs, polls the request to stop at once: the group is then
// failed as stopped, and the group runner cancels it on every node (their
// tasks stop at their next op, their waits in channels and collectives
// end), so that even an epoch whose tasks wait forever ends.
void watch_stop_now(attempt_ptr self) {
  auto& st = self->state;
  if ((!st.cfg.stop_now && !st.cfg.stop) || st.watching_stop_now)
    return;
  st.watching_stop_now = true;
  auto id = ++st.next_delay;
  st.delayed.emplace(id, [self] {
    auto& st = self->state;
    st.watching_stop_now = false;
    if (!st.group)
      return;
    if (auto why = reason_to_cancel(st)) {
      detail::log(self->system()).warn("{}", error_text(why));
      st.group->abandon(why);
      return;
    }
    watch_stop_now(self);
  });
  self->delayed_send(self, st.cfg.stop_poll, delay_done_atom::value, id);
}

void run_group_now(attempt_ptr self, const task_group_def& group,
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
    self, cfg.where.nodes, cfg.group_timeout, std::move(msg), false,
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
    &cfg.where.exchange);
  // Null when the group failed before anything was sent.
  if (running) {
    self->state.group = std::move(running);
    watch_stop_now(self);
  }
}

// Consults the fault plan at `point`, then goes on with `next` -- at once,
// after an injected delay, or not at all when an injected error fails the
// job. The attempt is an actor: a delay is a delayed message to itself,
// never a sleep on a scheduler thread.
void at_point(attempt_ptr self, fault_point point, int64_t epoch,
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

// A group of the job, between the fault plan's job.group points.
void run_job_group(attempt_ptr self, const task_group_def& group,
                   const char* label, int64_t epoch,
                   outputs_continuation next) {
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

// Checkpoints are written in the background: the loop waits only until
// every node has taken its copy-on-write snapshot; the manager commits the
// epoch once every write is done. A checkpoint that cannot be taken costs
// a warning, never the job (Caffe2's rule) -- unless a node was lost: its
// workspace is gone with it, so the job cannot go on from this epoch, and
// failing now (node_lost) lets the job runner recover from the last
// committed epoch. Going on would only fail at the node's next request, or,
// after the last epoch, not at all while the last checkpoint is missing.
void save(attempt_ptr self, int64_t epoch, bool final, continuation next) {
  enter(self, attempt_phase::saving, epoch);
  auto& cfg = self->state.cfg;
  detail::log(self->system()).info("saving checkpoints for epoch {}", epoch);
  auto start = job_event::clock::now();
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_save_async{epoch, final})
    .then(
      [self, epoch, next, start] {
        detail::log(self->system()).debug("snapshots of epoch {} taken", epoch);
        emit(self, job_event::kind::snapshot, epoch, start);
        next();
      },
      [self, epoch, next, start](caf::error& err) {
        emit(self, job_event::kind::snapshot, epoch, start, false,
             error_text(err));
        if (is_node_lost(err)) {
          fail(self, lost_while(self, err));
          return;
        }
        detail::log(self->system())
          .warn("unable to write checkpoint for epoch {}: {}", epoch,
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
void after_flush(attempt_ptr self, int64_t epoch, continuation next) {
  auto& cfg = self->state.cfg;
  if (!cfg.checkpoint_manager) {
    next();
    return;
  }
  enter(self, attempt_phase::committing, epoch);
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout), ckpt_flush{epoch})
    .then(next, [self](caf::error& err) {
      if (is_node_lost(err))
        err = lost_while(self, err);
      fail(self, std::move(err));
    });
}

void deliver(attempt_ptr self, int64_t epoch) {
  self->state.promise.deliver(job_result{epoch});
  self->quit();
}

// The download group, then the exit group, on the state of `epoch`.
void run_download_and_exit(attempt_ptr self, int64_t epoch) {
  enter(self, attempt_phase::download_and_exit, epoch);
  auto& job = self->state.cfg.job;
  detail::log(self->system()).info("starting the download group");
  run_job_group(
    self, job.download_group, "download", epoch,
    [self, epoch](std::vector<task_output>&) {
      detail::log(self->system()).info("finished the download group");
      detail::log(self->system()).info("starting the exit group");
      run_job_group(
        self, self->state.cfg.job.exit_group, "exit", epoch,
        [self, epoch](std::vector<task_output>&) {
          detail::log(self->system()).info("finished the exit group");
          deliver(self, epoch);
        });
    });
}

// Builds the upload group (host code, on a thread of its own) and runs it.
void run_upload(attempt_ptr self, int64_t epoch, continuation next) {
  enter(self, attempt_phase::uploading, epoch);
  detail::on_own_thread(
    self, "the upload task group builder",
    [build = self->state.cfg.upload_group, epoch] {
      return build(epoch);
    },
    [self, epoch, next](caf::expected<task_group_def> group) {
      if (!group) {
        fail(self, std::move(group.error()));
        return;
      }
      auto plan = make_exchange_plan(*group, {}, "upload_group.tasks");
      if (!plan) {
        fail(self, std::move(plan.error()));
        return;
      }
      if (!plan->empty())
        self->state.plans.insert_or_assign("upload", std::move(*plan));
      // The group outlives this continuation: the runs refer to it.
      auto shared = std::make_shared<task_group_def>(std::move(*group));
      run_job_group(self, *shared, "upload", epoch,
                    [self, next, shared](std::vector<task_output>&) {
                      detail::log(self->system())
                        .info("finished uploading the checkpoints");
                      next();
                    });
    });
}

// Asks the manager whether the checkpoint of `epoch` is committed.
void ask_committed(attempt_ptr self, int64_t epoch,
                   std::function<void(bool)> answer,
                   std::function<void(caf::error&)> on_error) {
  auto& cfg = self->state.cfg;
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_accessible{epoch})
    .then(std::move(answer), std::move(on_error));
}

// A failed save costs a warning when it fails, and the job goes on
// (Caffe2's rule). A run whose last checkpoint is not committed says so
// again at its end, where it is read: a rerun would not resume from it.
void warn_if_uncommitted(attempt_ptr self, int64_t epoch, continuation next) {
  if (!self->state.cfg.checkpoint_manager) {
    next();
    return;
  }
  ask_committed(
    self, epoch,
    [self, epoch, next](bool committed) {
      if (!committed)
        detail::log(self->system())
          .warn("the job ended after epoch {}, but its checkpoint is not "
                "committed (see the warnings above): a rerun will not "
                "resume from it",
                epoch);
      next();
    },
    [next](caf::error&) {
      next();
    });
}

// The upload of the last epoch's checkpoints, when there is one to hand on.
void upload_then(attempt_ptr self, int64_t epoch, continuation next) {
  auto& cfg = self->state.cfg;
  if (!cfg.upload_group || !cfg.checkpoint_manager) {
    next();
    return;
  }
  ask_committed(
    self, epoch,
    [self, epoch, next](bool committed) {
      if (committed) {
        run_upload(self, epoch, next);
        return;
      }
      // The last save failed (a warning was logged then): what lies at
      // the epoch's path, if anything, is not a checkpoint to hand on.
      detail::log(self->system())
        .warn("not uploading the checkpoints of epoch {}: that epoch is not "
              "committed",
              epoch);
      next();
    },
    [self](caf::error& err) {
      fail(self, std::move(err));
    });
}

// The end of the epoch loop after `epoch`. With checkpoints, the last
// epoch's is committed once the flush is done: a rerun resumes from it and
// runs the groups after the loop on that state -- as Caffe2 ran them on
// the state the final checkpoint holds.
void finish(attempt_ptr self, int64_t epoch) {
  after_flush(self, epoch, [self, epoch] {
    detail::log(self->system()).info("finished training after epoch {}", epoch);
    if (self->state.cfg.stop_requested()) {
      fail(self,
           make_error(actors_errc::stopped,
                      "stopped on request after epoch " + std::to_string(epoch)
                        + ", before the groups after the epoch loop"));
      return;
    }
    warn_if_uncommitted(self, epoch, [self, epoch] {
      upload_then(self, epoch, [self, epoch] {
        run_download_and_exit(self, epoch);
      });
    });
  });
}

// Host code: an exception here would kill the attempt and leave the job runner
// waiting for a reply that never comes. An observer never changes the job
// (see epoch_observer.hpp): what it throws costs a warning.
void call_observer(attempt_ptr self, int64_t epoch,
                   const std::vector<task_output>& outputs) {
  auto& cfg = self->state.cfg;
  if (!cfg.on_epoch)
    return;
  try {
    cfg.on_epoch(epoch, outputs);
  } catch (const std::exception& ex) {
    detail::log(self->system())
      .warn("the epoch observer threw after epoch {}: {}", epoch, ex.what());
  } catch (...) {
    detail::log(self->system())
      .warn("the epoch observer threw after epoch {}", epoch);
  }
}

void run_epoch(attempt_ptr self, int64_t epoch);

void check_stop(attempt_ptr self, int64_t epoch,
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

// The job was asked to stop after `epoch`: the checkpoints already begun
// commit before the reply, as at the end of a job.
void stop_after(attempt_ptr self, int64_t epoch) {
  after_flush(self, epoch, [self, epoch] {
    detail::log(self->system())
      .info("stopped on request after epoch {}", epoch);
    self->state.promise.deliver(
      make_error(actors_errc::stopped,
                 "stopped on request after epoch " + std::to_string(epoch)));
    self->quit();
  });
}

void run_epoch(attempt_ptr self, int64_t epoch) {
  if (self->state.cfg.stop_requested()) {
    stop_after(self, epoch - 1);
    return;
  }
  enter(self, attempt_phase::epoch, epoch);
  self->state.epoch_start = job_event::clock::now();
  emit(self, job_event::kind::epoch_started, epoch, self->state.epoch_start);
  at_point(self, fault_point::job_epoch_start, epoch, {}, [self, epoch] {
    detail::log(self->system()).info("starting epoch {}", epoch);
    run_job_group(
      self, self->state.cfg.job.epoch_group, "epoch", epoch,
      [self, epoch](std::vector<task_output>& outputs) {
        auto& cfg = self->state.cfg;
        // The outputs are described only for a log that shows them.
        if (detail::log(self->system()).should_log(spdlog::level::info))
          detail::log(self->system())
            .info("finished epoch {}:{}", epoch,
                  describe_outputs(cfg.job.epoch_group, outputs));
        call_observer(self, epoch, outputs);
        auto shared
          = std::make_shared<std::vector<task_output>>(std::move(outputs));
        at_point(self, fault_point::job_stop_check, epoch, {},
                 [self, epoch, shared] {
                   check_stop(self, epoch, *shared);
                 });
      });
  });
}

void init_manager(attempt_ptr self, int64_t retrieve_from, continuation next,
                  std::function<void(caf::error&)> on_error) {
  auto& cfg = self->state.cfg;
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_init{cfg.where.checkpoint_nodes, retrieve_from, {}})
    .then(
      [next](ckpt_result&) {
        next();
      },
      [on_error](caf::error& err) {
        on_error(err);
      });
}

void start_from_scratch(attempt_ptr self) {
  enter(self, attempt_phase::init_group);
  detail::log(self->system()).info("starting the init group");
  run_job_group(self, self->state.cfg.job.init_group, "init", 0,
                [self](std::vector<task_output>&) {
                  if (!self->state.cfg.checkpoint_manager) {
                    run_epoch(self, 1);
                    return;
                  }
                  enter(self, attempt_phase::preparing_checkpoints, 0);
                  detail::log(self->system()).info("preparing checkpoints");
                  init_manager(
                    self, -1,
                    [self] {
                      save(self, 0, false, [self] {
                        run_epoch(self, 1);
                      });
                    },
                    [self](caf::error& err) {
                      if (is_node_lost(err))
                        err = lost_while(self, err);
                      fail(self, std::move(err));
                    });
                });
}

void resume_from(attempt_ptr self, resume_point point);

// Some nodes may hold the state of a checkpoint they loaded before another
// node's failed: a start from scratch begins with empty workspaces.
void reset_then_start_from_scratch(attempt_ptr self) {
  enter(self, attempt_phase::resetting);
  auto& cfg = self->state.cfg;
  std::vector<detail::gather_target<node_actor>> targets;
  targets.reserve(cfg.where.nodes.size());
  for (auto& [name, node] : cfg.where.nodes)
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
void after_failed_resume(attempt_ptr self, int64_t epoch, caf::error& err) {
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
  detail::log(self->system())
    .warn("cannot resume from epoch {}: {}; trying an earlier one", epoch,
          error_text(err));
  auto& cfg = self->state.cfg;
  self
    ->request(cfg.checkpoint_manager,
              detail::with_margin(cfg.checkpoint_timeout),
              ckpt_resume_epoch{-1, epoch, {}})
    .then(
      [self](resume_point& earlier) {
        if (earlier.epoch < 0) {
          detail::log(self->system())
            .warn("no usable checkpoint left; starting from "
                  "scratch");
          reset_then_start_from_scratch(self);
        } else {
          resume_from(self, earlier);
        }
      },
      [self](caf::error& err) {
        fail(self, std::move(err));
      });
}

// After loading the checkpoint of `point`: the next epoch, unless the job
// had already ended after this one.
// Whether the job's last run ended because an epoch limiter said so (its
// `finished` blob, loaded with the checkpoint, is true), rather than
// another stop condition: only then does a higher limit train on. A blob
// that is absent or cannot be read says no.
void ended_by_its_limit(attempt_ptr self, std::function<void(bool)> next) {
  auto& cfg = self->state.cfg;
  auto pending = std::make_shared<size_t>(0);
  auto found = std::make_shared<bool>(false);
  auto done = [pending, found, next] {
    if (--*pending == 0)
      next(*found);
  };
  std::vector<std::pair<node_actor, std::string>> asks;
  for (auto& [node, blob] : epoch_limiter_outputs(cfg.job)) {
    auto i = cfg.where.nodes.find(node);
    if (i != cfg.where.nodes.end())
      asks.emplace_back(i->second, blob);
  }
  if (asks.empty()) {
    next(false);
    return;
  }
  *pending = asks.size();
  for (auto& [node, blob] : asks)
    self->request(node, cfg.group_timeout, fetch_blobs{{blob}})
      .then(
        [found, done](blob_values& values) {
          for (auto& x : values.blobs)
            if (x.value.type == dtype::boolean && x.value.element_count() == 1
                && x.value.data[0] != 0)
              *found = true;
          done();
        },
        [done](caf::error&) {
          done();
        });
}

// The epoch limit is the job's as given now, not as the run that made the
// checkpoint had it: a job given more epochs trains on after a run that
// ended, one given fewer than it has committed ends at once.
void continue_after(attempt_ptr self, const resume_point& point) {
  auto limit = epoch_limit(self->state.cfg.job);
  auto& log = detail::log(self->system());
  if (limit && point.epoch > *limit) {
    log.warn("the epoch limit, {}, is below the last committed epoch, {}: "
             "no epoch to run",
             *limit, point.epoch);
    finish(self, point.epoch);
  } else if (limit && point.epoch == *limit) {
    log.info("the job has run its {} epochs", *limit);
    finish(self, point.epoch);
  } else if (point.final && limit) {
    ended_by_its_limit(self, [self, point, limit](bool by_limit) {
      if (!by_limit) {
        detail::log(self->system())
          .info("the job had stopped after epoch {}", point.epoch);
        finish(self, point.epoch);
        return;
      }
      detail::log(self->system())
        .info("the job had stopped after epoch {} at its epoch limit, now "
              "{}: training on",
              point.epoch, *limit);
      run_epoch(self, point.epoch + 1);
    });
  } else if (point.final) {
    log.info("the job had stopped after epoch {}", point.epoch);
    finish(self, point.epoch);
  } else {
    run_epoch(self, point.epoch + 1);
  }
}

// One job_event per node whose checkpoint was loaded.
void notify_loads(attempt_ptr self, int64_t epoch,
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
    detail::notify(self->system(), events, event);
  }
}

void resume_from(attempt_ptr self, resume_point point) {
  auto epoch = point.epoch;
  enter(self, attempt_phase::resuming, epoch);
  detail::log(self->system()).info("resuming from epoch {}", epoch);
  auto on_error = [self, epoch](caf::error& err) {
    after_failed_resume(self, epoch, err);
  };
  init_manager(
    self, epoch,
    [self, point, on_error] {
      auto& cfg = self->state.cfg;
      auto start = job_event::clock::now();
      self
        ->request(cfg.checkpoint_manager,
                  detail::with_margin(cfg.checkpoint_timeout),
                  ckpt_load{point.epoch, {}, {}, false})
        .then(
          [self, point, start](ckpt_result& loaded) {
            detail::log(self->system())
              .info("checkpoint of epoch {} loaded", point.epoch);
            notify_loads(self, point.epoch, start, loaded.stats);
            continue_after(self, point);
          },
          on_error);
    },
    on_error);
}

void find_start(attempt_ptr self, const run_attempt& msg);

// Every node is asked whether the process that hosts it has the ops its
// tasks call, before anything runs: ops are registered per process, and a
// daemon's may lack one the master's has. A lack is bad input (the job
// cannot run there); a node that cannot be asked is lost.
void start(attempt_ptr self, const run_attempt& msg) {
  enter(self, attempt_phase::checking_ops);
  auto& cfg = self->state.cfg;
  auto needed = op_types_by_node(cfg.job);
  std::vector<detail::gather_target<node_actor>> targets;
  for (auto& [name, node] : cfg.where.nodes)
    if (needed.count(name) > 0)
      targets.push_back({name, node});
  if (targets.empty()) {
    find_start(self, msg);
    return;
  }
  detail::gather_options opts;
  opts.site = {"checking the ops of the job", -1};
  opts.policy = detail::gather_policy::fail_fast;
  opts.timeout = cfg.group_timeout;
  detail::gather<caf::unit_t>(
    self, targets, std::move(opts),
    [needed = std::move(needed)](const auto& target) {
      auto& types = needed.at(target.node);
      return check_ops{{types.begin(), types.end()}};
    },
    [](const std::string& node, caf::error err) {
      if (in_category(err, runtime_category))
        return err;
      return make_error(
        actors_errc::node_lost,
        "node " + node + " could not be asked for its ops: " + error_text(err));
    },
    [self, msg](caf::expected<std::vector<caf::unit_t>> checked) {
      if (!checked)
        fail(self, std::move(checked.error()));
      else
        find_start(self, msg);
    });
}

// Where the attempt starts: the checkpoint asked for, or the newest
// committed one, or scratch.
void find_start(attempt_ptr self, const run_attempt& msg) {
  enter(self, attempt_phase::finding_start);
  auto& cfg = self->state.cfg;
  if (!cfg.checkpoint_manager) {
    if (msg.reset_workspaces)
      reset_then_start_from_scratch(self);
    else
      start_from_scratch(self);
    return;
  }
  self
    ->request(
      cfg.checkpoint_manager, detail::with_margin(cfg.checkpoint_timeout),
      ckpt_resume_epoch{msg.resume_from_epoch, -1, cfg.where.checkpoint_nodes})
    .then(
      [self, reset = msg.reset_workspaces](resume_point& point) {
        if (point.epoch >= 0)
          resume_from(self, point);
        else if (reset)
          reset_then_start_from_scratch(self);
        else
          start_from_scratch(self);
      },
      [self](caf::error& err) {
        fail(self, std::move(err));
      });
}

job_attempt_internal::behavior_type attempt_behavior(attempt_ptr self,
                                                     job_attempt_config cfg) {
  self->state.cfg = std::move(cfg);
  // The nodes are monitored for the whole job, not per group: a node that
  // ends fails the group running on it at once, and a later request to it
  // fails at once too (CAF answers a request to a dead local actor).
  for (auto& [name, node] : self->state.cfg.where.nodes)
    self->monitor(node);
  self->set_down_handler([self](caf::down_msg& down) {
    if (auto running = self->state.group)
      running->node_down(down.source);
  });
  // A monitor stays attached to its node after the attempt ends, and keeps
  // the attempt's memory with it: removed when the attempt ends.
  // (The state is gone by then: the functor holds the addresses.)
  std::vector<caf::actor_addr> monitored;
  for (auto& [name, node] : self->state.cfg.where.nodes)
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
    [self](run_attempt& msg) -> caf::result<job_result> {
      auto& job = self->state.cfg.job;
      if (job.epoch_group.tasks.empty() || job.stop_conditions.empty())
        return make_error(actors_errc::invalid_argument,
                          "job '" + job.name
                            + "' has no epoch task or no stop condition: its "
                              "epoch loop could never end");
      if (msg.resume_from_epoch >= 0 && !self->state.cfg.checkpoint_manager)
        return make_error(actors_errc::no_checkpoint_manager,
                          "resuming from an epoch needs a checkpoint manager");
      for (auto [label, group] : {std::pair{"init", &job.init_group},
                                  std::pair{"epoch", &job.epoch_group},
                                  std::pair{"download", &job.download_group},
                                  std::pair{"exit", &job.exit_group}}) {
        auto plan = make_exchange_plan(*group, job.channels,
                                       std::string{label} + "_group.tasks");
        if (!plan)
          return std::move(plan.error());
        if (!plan->empty())
          self->state.plans.emplace(label, std::move(*plan));
      }
      self->state.promise = self->make_response_promise();
      // Only an epoch picked automatically may be replaced by an earlier one.
      self->state.fall_back = msg.resume_from_epoch < 0;
      start(self, msg);
      return self->state.promise;
    },
  };
}

} // namespace

job_attempt_actor spawn_job_attempt(caf::actor_system& sys,
                                    job_attempt_config cfg) {
  return sys.spawn(attempt_behavior, std::move(cfg));
}

} // namespace epochrt
