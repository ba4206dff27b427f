#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/node_protocols.hpp>
#include <epochrt/messages/protocol.hpp>

// The typed interfaces of epochrt's actors: what each one answers, and with
// what (the node's and the persistence actor's are in node_protocols.hpp). A
// request an actor does not take, or a reply handler for another type than it
// answers, does not compile. The message types are the protocol's
// (protocol.hpp, manager_protocol.hpp), registered with CAF under fixed names
// (message_types.hpp). Messages an actor sends itself (timers, the end of work
// it handed to another thread) are not here: each actor's .cpp extends its
// handle with them (`extend<...>`), so that the handle others hold stays
// narrow.

namespace epochrt {

/// The job runner (actors/core/job_runner_actor.hpp): the whole job, its
/// recoveries included, then `job_result` with the last epoch run.
using job_runner_actor
  = caf::typed_actor<caf::replies_to<run_job>::with<job_result>>;

/// One attempt at a job (actors/core/job_attempt_actor.hpp), which the job
/// runner spawns for the first run and after every recovery.
using job_attempt_actor
  = caf::typed_actor<caf::replies_to<run_attempt>::with<job_result>>;

/// The checkpoint manager (actors/core/checkpoint_manager_actor.hpp): the
/// requests of manager_protocol.hpp, fanned out to the persistence actors
/// of its nodes. A request answered with nothing is a `reacts_to`: its
/// reply handler takes no argument.
using checkpoint_manager_actor
  = caf::typed_actor<caf::reacts_to<ckpt_set_params>,
                     caf::replies_to<ckpt_init>::with<ckpt_result>,
                     caf::reacts_to<ckpt_save_async>,
                     caf::reacts_to<ckpt_flush>,
                     caf::replies_to<ckpt_save>::with<ckpt_result>,
                     caf::replies_to<ckpt_load>::with<ckpt_result>,
                     caf::replies_to<ckpt_read>::with<blob_values>,
                     caf::replies_to<ckpt_exists>::with<checkpoint_status>,
                     caf::replies_to<ckpt_verify_copies>::with<database_checks>,
                     caf::replies_to<ckpt_retain>::with<retention_result>,
                     caf::replies_to<ckpt_resume_epoch>::with<resume_point>,
                     caf::reacts_to<ckpt_write_metadata>,
                     caf::replies_to<ckpt_report>::with<ckpt_result>,
                     caf::replies_to<ckpt_accessible>::with<bool>>;

} // namespace epochrt
