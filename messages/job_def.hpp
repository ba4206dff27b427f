#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <epochrt/messages/message_fields.hpp>
#include <epochrt/messages/tensor.hpp>

// The definition of a job as data. Everything here is a plain value that can
// be copied, compared, written to a job file and sent to another process:
// ops are named by type and carry typed arguments, never code.

namespace epochrt {

/// One call of a registered op. Arguments are tensors: a scalar for a
/// number, flag or string, a 1-D tensor for a list.
struct op_def {
  std::string type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, tensor> args;
};

/// A list of ops run in order `num_iter` times (Caffe2's ExecutionStep).
/// When `stop_blob` is set, the step also ends as soon as that blob holds a
/// true (non-zero) scalar after an iteration; with `num_iter == 0` it then
/// runs until the blob says stop.
struct step_def {
  std::string name;
  std::vector<op_def> ops;
  int64_t num_iter = 1;
  std::string stop_blob;
};

/// Where a task's blobs live. GLOBAL tasks read and write the node's
/// workspace. PRIVATE tasks read the node's workspace too, but blobs they
/// create that the node's workspace does not have are scratch and die with
/// the task.
enum class workspace_type : uint8_t { global, private_scratch };

/// Steps run in order on one node. `outputs` are blobs fetched when the task
/// ends and returned to the job runner.
struct task_def {
  std::string name;
  std::string node;
  workspace_type workspace = workspace_type::global;
  std::vector<step_def> steps;
  std::vector<std::string> outputs;
};

/// The tasks of one phase; the tasks of a node run concurrently, and nodes
/// run in parallel.
struct task_group_def {
  std::vector<task_def> tasks;
};

/// A channel: a bounded FIFO queue of blob tuples (Caffe2's BlobsQueue),
/// hosted by `node`, that the tasks of a group on any nodes put items into
/// (EnqueueBlobs) and take items from (DequeueBlobs, SafeDequeueBlobs), and
/// close (CloseBlobsQueue). An item is one tensor per name in `blobs`, in
/// that order. A channel lives for one run of a group that uses it: it
/// starts empty and open, and must be closed and empty when the group ends.
struct channel_def {
  std::string name;
  std::string node;
  /// Items it holds at most; a put waits while it is full. At least 1.
  int64_t capacity = 1;
  /// The names of one item's blobs (what ops and errors call them).
  std::vector<std::string> blobs;
};

/// The job stops after an epoch in which this output of a task on `node`
/// is true (non-zero).
struct stop_condition {
  std::string node;
  std::string blob;
};

/// Caffe2's Job: init runs once from scratch, epoch loops until a stop
/// condition holds, download runs once after the loop, exit runs last.
/// An empty `nodes_to_checkpoint` means the nodes of the init group.
/// `channels` are the channels its groups' tasks may use (by name).
struct job_def {
  std::string name;
  task_group_def init_group;
  task_group_def epoch_group;
  task_group_def download_group;
  task_group_def exit_group;
  std::vector<stop_condition> stop_conditions;
  std::vector<std::string> nodes_to_checkpoint;
  std::vector<channel_def> channels;
};

/// The value of `op`'s argument `name` when it is one string; empty when
/// the argument is absent or anything else.
std::string string_arg_of(const op_def& op, const std::string& name);

bool operator==(const op_def& x, const op_def& y) noexcept;
bool operator==(const step_def& x, const step_def& y) noexcept;
bool operator==(const task_def& x, const task_def& y) noexcept;
bool operator==(const task_group_def& x, const task_group_def& y) noexcept;
bool operator==(const channel_def& x, const channel_def& y) noexcept;
bool operator==(const stop_condition& x, const stop_condition& y) noexcept;
bool operator==(const job_def& x, const job_def& y) noexcept;

// Every message type of this header and its fields, in wire order
// (message_fields.hpp).
#define EPOCHRT_JOB_DEF_MESSAGES(X)                                     \
  X(op_def, type, inputs, outputs, args)                                \
  X(step_def, name, ops, num_iter, stop_blob)                           \
  X(task_def, name, node, workspace, steps, outputs)                    \
  X(task_group_def, tasks)                                              \
  X(channel_def, name, node, capacity, blobs)                           \
  X(stop_condition, node, blob)                                         \
  X(job_def, name, init_group, epoch_group, download_group, exit_group, \
    stop_conditions, nodes_to_checkpoint, channels)

EPOCHRT_JOB_DEF_MESSAGES(EPOCHRT_DEFINE_MESSAGE)

} // namespace epochrt
