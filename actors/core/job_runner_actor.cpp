#include <epochrt/actors/core/job_runner_actor.hpp>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/detail/gather.hpp>
#include <epochrt/actors/detail/log.hpp>
#include <epochrt/actors/detail/notify.hpp>
#include <epochrt/actors/detail/on_own_thread.hpp>
#include <epochrt/actors/detail/timeouts.hpp>
#include <epochrt/messages/error_text.hpp>

namespace epochrt {

namespace {

struct runner_state {
  job_runner_config cfg;
  caf::response_promise promise;
  // The attempt running now; invalid between attempts. Its reply and its
  // down message are matched against it, so that news of an attempt that
  // already ended is ignored.
  job_attempt_actor attempt;
  // Lost nodes recovered so far.
  int failures = 0;
  // When the loss being recovered was noticed.
  job_event::clock::time_point lost_at;
};

using runner_ptr = job_runner_actor::stateful_pointer<runner_state>;

// Tells the job's observer, if any, that `what` happened from `start` to
// now.
void emit(runner_ptr self, job_event::kind what,
          job_event::clock::time_point start, std::string detail) {
  detail::notify_span(self->system(), self->state.cfg.attempt.events.get(),
                      what, -1, start, true, std::move(detail));
}

void end_job(runner_ptr self, caf::expected<job_result> result) {
  if (result)
    self->state.promise.deliver(std::move(*result));
  else
    self->state.promise.deliver(std::move(result.error()));
  self->quit();
}

// Ends a job that failed once every checkpoint write begun has ended: a
// save begun before the failure (the previous epoch's, written while the
// failed epoch ran) still commits, so a rerun resumes from it instead of
// the epoch before. A flush that fails costs only that epoch.
void end_failed_job(runner_ptr self, caf::error err) {
  auto& manager = self->state.cfg.attempt.checkpoint_manager;
  if (!manager) {
    end_job(self, std::move(err));
    return;
  }
  self
    ->request(manager,
              detail::with_margin(self->state.cfg.attempt.checkpoint_timeout),
              ckpt_flush{})
    .then(
      [self, err]() mutable {
        end_job(self, std::move(err));
      },
      [self, err](caf::error& flush_err) mutable {
        detail::log(self->system())
          .info("a checkpoint begun before the failure did not commit: {}",
                error_text(flush_err));
        end_job(self, std::move(err));
      });
}

void after_failure(runner_ptr self, caf::error err);

void run_attempt_now(runner_ptr self, run_attempt msg) {
  auto attempt = spawn_job_attempt(self->system(), self->state.cfg.attempt);
  self->state.attempt = attempt;
  // An attempt that ends without replying (an exception in host code it
  // ran) is a failure too, not a job that waits for ever.
  self->monitor(attempt);
  // The attempt bounds every request it makes; this wait is bounded by
  // them.
  self->request(attempt, caf::infinite, std::move(msg))
    .then(
      [self, attempt](job_result& result) {
        if (self->state.attempt != attempt)
          return;
        self->state.attempt = nullptr;
        end_job(self, std::move(result));
      },
      [self, attempt](caf::error& err) {
        if (self->state.attempt != attempt)
          return;
        self->state.attempt = nullptr;
        after_failure(self, std::move(err));
      });
}

// The lost nodes are back: a new attempt from the last committed epoch.
void after_recovery(runner_ptr self, const caf::error& loss,
                    caf::expected<job_nodes> where) {
  if (!where) {
    end_job(self,
            make_error(actors_errc::node_lost,
                       error_text(loss)
                         + "; recovery failed: " + error_text(where.error())));
    return;
  }
  auto& cfg = self->state.cfg;
  cfg.attempt.where = std::move(*where);
  emit(self, job_event::kind::recovered, self->state.lost_at,
       "failure " + std::to_string(self->state.failures));
  // From the last committed epoch, whatever was asked at the start; nodes
  // may hold what the failed attempt left behind.
  run_attempt_now(self, run_attempt{-1, true});
}

// Brings the lost nodes back once nothing of the failed attempt runs: its
// tasks are cancelled on the nodes that were not lost (a checkpoint loaded
// under them would be overwritten), and every checkpoint write begun has
// ended (a save begun before the loss may still commit, so the epoch to
// resume from is known only then).
void recover(runner_ptr self, caf::error loss) {
  auto& cfg = self->state.cfg;
  std::vector<detail::gather_target<node_actor>> targets;
  for (auto& [name, node] : cfg.attempt.where.nodes)
    targets.push_back({name, node});
  detail::gather_options opts;
  opts.site = {"cancelling tasks before a recovery", -1};
  opts.timeout = cfg.request_timeout;
  detail::gather<caf::unit_t>(
    self, targets, std::move(opts),
    [](const auto&) {
      return cancel_tasks{};
    },
    [](const std::string&, caf::error err) {
      return err;
    },
    [self, loss](caf::expected<std::vector<caf::unit_t>> cancelled) {
      // A node that cannot cancel is the lost one, or will be replaced.
      if (!cancelled)
        detail::log(self->system())
          .debug("tasks not stopped everywhere: {}",
                 error_text(cancelled.error()));
      auto bring_back = [self, loss] {
        detail::on_own_thread(self, "recovering the lost nodes",
                              self->state.cfg.recover_nodes,
                              [self, loss](caf::expected<job_nodes> where) {
                                after_recovery(self, loss, std::move(where));
                              });
      };
      auto& manager = self->state.cfg.attempt.checkpoint_manager;
      if (!manager) {
        bring_back();
        return;
      }
      self
        ->request(
          manager,
          detail::with_margin(self->state.cfg.attempt.checkpoint_timeout),
          ckpt_flush{})
        .then(bring_back, [self, loss](caf::error& err) {
          end_job(self,
                  make_error(actors_errc::node_lost,
                             error_text(loss)
                               + "; recovery failed: " + error_text(err)));
        });
    });
}

void after_failure(runner_ptr self, caf::error err) {
  auto& cfg = self->state.cfg;
  auto lost = is_node_lost(err);
  if (!lost) {
    end_failed_job(self, std::move(err));
    return;
  }
  self->state.lost_at = job_event::clock::now();
  emit(self, job_event::kind::node_lost, self->state.lost_at, error_text(err));
  // A recovery may take as long as a reconnect: a job asked to stop stops
  // instead, from what is committed.
  if (cfg.attempt.stop_requested()) {
    end_failed_job(self,
                   make_error(actors_errc::stopped,
                              "stopped on request after " + error_text(err)));
    return;
  }
  auto failures = ++self->state.failures;
  if (failures > cfg.max_node_failures || !cfg.recover_nodes) {
    if (cfg.max_node_failures > 0)
      err = make_error(actors_errc::node_lost,
                       error_text(err) + " (failure " + std::to_string(failures)
                         + ", more than "
                         + std::to_string(cfg.max_node_failures) + " allowed)");
    end_failed_job(self, std::move(err));
    return;
  }
  detail::log(self->system())
    .warn("{}; recovering (failure {} of at most {})", error_text(err),
          failures, cfg.max_node_failures);
  recover(self, std::move(err));
}

job_runner_actor::behavior_type runner_behavior(runner_ptr self,
                                                job_runner_config cfg) {
  self->state.cfg = std::move(cfg);
  self->set_down_handler([self](caf::down_msg& down) {
    auto& attempt = self->state.attempt;
    // An attempt that replied is no longer current, and quits normally
    // after its reply (which comes first: CAF keeps the order of one
    // sender's messages).
    if (!attempt || down.source != attempt.address()
        || down.reason == caf::exit_reason::normal)
      return;
    attempt = nullptr;
    after_failure(self,
                  make_error(actors_errc::task_failed,
                             "the job attempt ended without an answer: "
                               + error_text(down.reason)));
  });
  return {
    [self](run_job& msg) -> caf::result<job_result> {
      if (self->state.promise.pending())
        return make_error(actors_errc::invalid_argument,
                          "this job runner is running its job already");
      self->state.promise = self->make_response_promise();
      run_attempt_now(self, run_attempt{msg.resume_from_epoch, false});
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
