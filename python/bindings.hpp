#pragma once

namespace pybind11 {
class module_;
} // namespace pybind11

namespace epochrt::python {

// The module's names, defined in `m` by one function per group, each
// called once by PYBIND11_MODULE (module.cpp) with the GIL held. A class's
// base is bound before it, within the same function.

// bind_ops.cpp
/// OpOutput, OpRegistry and code_digest: ops written in Python.
void bind_op_registry(pybind11::module_& m);

// bind_job.cpp
/// Op, Step, Task, Channel and TaskGroup: the parts of a job.
void bind_job_parts(pybind11::module_& m);

/// Job: a job file loaded, or a job built in Python, and its groups.
void bind_job(pybind11::module_& m);

/// epoch_limiter and epoch_limit: a job that stops after N epochs.
void bind_epoch_limiter(pybind11::module_& m);

// bind_sessions.cpp
/// Session, LocalSession and DistributedSession.
void bind_sessions(pybind11::module_& m);

/// NodeServer and serve_node: a node daemon in this process.
void bind_node_daemon(pybind11::module_& m);

// bind_checkpoints.cpp
/// db_name: the path of a node's checkpoint database of an epoch.
void bind_db_name(pybind11::module_& m);

/// MultiNodeCheckpointManager and _CheckpointManager.
void bind_checkpoint_manager(pybind11::module_& m);

// bind_job_runner.cpp
/// JobRunner: a job run with checkpoints at epoch boundaries.
void bind_job_runner(pybind11::module_& m);

} // namespace epochrt::python
