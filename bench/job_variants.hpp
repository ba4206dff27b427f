#pragma once

// The variants of a job that collectives_bench times against the job
// itself: its compute alone (the collectives taken out) and its
// collectives alone (the compute taken out). Plain job_def rewriting; no
// actors.

#include <string>
#include <vector>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt::bench {

/// True for the collective ops: Allreduce, Broadcast, Allgather, Barrier.
bool is_collective(const op_def& op);

/// The job with every collective op of its epoch group replaced by what
/// leaves the blobs as a one-node run of it would: nothing where an output
/// is its own input, a Copy of the input otherwise (an all-reduce of one
/// participant is the identity). With `global_epoch`, the epoch tasks also
/// write the node's workspace instead of a private one, so that their
/// intermediate blobs can be fetched afterwards.
job_def without_collectives(const job_def& def, bool global_epoch = false);

/// A blob that a collective of the epoch group takes as input.
struct collective_input {
  std::string node;
  std::string blob;
};

/// Every such input once, in order of appearance.
std::vector<collective_input> collective_inputs(const job_def& def);

/// The same input with its type and shape, as a run of the job made it.
struct typed_input {
  collective_input where;
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
};

/// The job's collectives alone: the epoch group's tasks keep only their
/// collective ops, in their steps with their iteration counts (steps left
/// empty go); tasks without a collective (the epoch limiter's) stay as
/// they are. The init group gets, beside its own tasks, a task per node
/// that fills `inputs` with ones, so that every collective has its
/// operands. Task outputs no remaining op writes are dropped. Throws
/// std::runtime_error for a step with a stop blob whose ops would go (its
/// iterations would then change).
job_def collectives_only(const job_def& def,
                         const std::vector<typed_input>& inputs);

} // namespace epochrt::bench
