#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/protocol.hpp>

// The typed interfaces of epochrt's actors: what each one answers, and with
// what. A request an actor does not take, or a reply handler for another
// type than it answers, does not compile. The message types are the
// protocol's (protocol.hpp, manager_protocol.hpp), registered with CAF
// under fixed names (message_types.hpp). Messages an actor sends itself
// (timers, the end of work it handed to another thread) are not here: each
// actor's .cpp extends its handle with them (`extend<...>`), so that the
// handle others hold stays narrow.

namespace epochrt {

/// The group runner (actors/core/group_runner_actor.hpp): one task group
/// across its nodes, `tasks_done` with every output in node order.
using group_runner_actor
  = caf::typed_actor<caf::replies_to<run_tasks>::with<tasks_done>>;

/// The job runner (actors/core/job_runner_actor.hpp): the whole job, then
/// `ckpt_epoch` with the last epoch run.
using job_runner_actor
  = caf::typed_actor<caf::replies_to<run_job>::with<ckpt_epoch>>;

} // namespace epochrt
