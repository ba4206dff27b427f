#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include <epochrt/messages/job_def.hpp>
#include <epochrt/messages/tensor.hpp>

namespace epochrt {

class op_registry;

/// Caffe2's Job, as a builder over a `job_def`: four task groups — init
/// (run once, from scratch only), epoch (looped until a stop condition
/// holds), download (once after the loop) and exit (once, last) — plus the
/// stop conditions and the nodes to checkpoint.
///
/// A plain value: copyable, not thread-safe; build it on one thread, then
/// hand `def()` to whatever runs it.
class job {
public:
  /// Which group a task path names in error messages: `def` paths follow
  /// the job_def ("epoch_group.tasks[1].steps[0].ops[2]"), `file` paths
  /// follow the job file ("epoch[1].steps[0].ops[2]").
  enum class path_style { def, file };

  explicit job(std::string name);

  /// Adopts a definition as is, then gives unnamed tasks their generated
  /// names (see `name_tasks`).
  static job from_def(job_def def);

  const std::string& name() const noexcept {
    return def_.name;
  }

  task_group_def& init_group() noexcept {
    return def_.init_group;
  }
  task_group_def& epoch_group() noexcept {
    return def_.epoch_group;
  }
  task_group_def& download_group() noexcept {
    return def_.download_group;
  }
  task_group_def& exit_group() noexcept {
    return def_.exit_group;
  }
  const task_group_def& init_group() const noexcept {
    return def_.init_group;
  }
  const task_group_def& epoch_group() const noexcept {
    return def_.epoch_group;
  }
  const task_group_def& download_group() const noexcept {
    return def_.download_group;
  }
  const task_group_def& exit_group() const noexcept {
    return def_.exit_group;
  }

  /// Appends `task` to `group` (one of this job's groups), naming it
  /// "<group>/<node>/<index>" when it has no name. Precondition: `group`
  /// is one of this job's four groups.
  void add_task(task_group_def& group, task_def task);

  /// Gives every unnamed task the name "<group>/<node>/<index>", where
  /// group is init, epoch, download or exit and index its position.
  void name_tasks();

  /// The job stops after an epoch in which `blob` on `node` is true. As in
  /// Caffe2, when no epoch task on `node` outputs `blob` yet, adds an epoch
  /// task on `node` with no steps whose only output is `blob`.
  void add_stop_condition(std::string node, std::string blob);

  const std::vector<stop_condition>& stop_conditions() const noexcept {
    return def_.stop_conditions;
  }

  /// Declares a channel that the tasks of any group may use by name
  /// (EnqueueBlobs, DequeueBlobs, SafeDequeueBlobs, CloseBlobsQueue). Each
  /// run of a group that uses it gets it empty and open, and must leave it
  /// closed and empty.
  void add_channel(channel_def channel);

  const std::vector<channel_def>& channels() const noexcept {
    return def_.channels;
  }

  /// Checkpoint exactly these nodes; an empty list restores the default.
  void set_nodes_to_checkpoint(std::vector<std::string> nodes);

  /// The explicit list, else the nodes of the init group in first-use
  /// order (Caffe2: the nodes that hold state worth saving).
  std::vector<std::string> nodes_to_checkpoint() const;

  /// Every node that runs a task of any group, in first-use order (init,
  /// epoch, download, exit), then every node that hosts a channel and runs
  /// no task.
  std::vector<std::string> nodes() const;

  const job_def& def() const noexcept {
    return def_;
  }

  /// Checks the whole job; the first problem is returned with the field
  /// path at fault: "epoch_group.tasks[1].steps[0].ops[2]: unknown op
  /// 'Foo'". Checks: a job name; valid node, task and blob names; task
  /// names present and unique within a group; ops valid per `registry`;
  /// num_iter >= 0, and 0 only with a stop_blob; every stop condition on a
  /// node of the job and naming an output of an epoch task on that node; a
  /// non-empty epoch group has at least one stop condition (otherwise it
  /// never ends); nodes_to_checkpoint are nodes of the job; channels
  /// declared as `check_channels` says, and every group's channels and
  /// collectives used as `make_exchange_plan` says.
  caf::error validate(const op_registry& registry,
                      path_style style = path_style::def) const;

private:
  job_def def_;
};

/// A task of one step (num_iter 1) running `ops` on `node` whose blobs
/// live in `workspace`: GLOBAL (the default) reads and writes the node's
/// workspace, which checkpoints save; PRIVATE keeps the blobs it creates
/// that the node's workspace lacks as scratch that dies with the task (a
/// job file's `"workspace": "private"`). An empty `name` is filled in by
/// `job::add_task`.
task_def make_task(std::string name, std::string node, std::vector<op_def> ops,
                   std::vector<std::string> outputs = {},
                   workspace_type workspace = workspace_type::global);

op_def make_op(std::string type, std::vector<std::string> inputs,
               std::vector<std::string> outputs,
               std::map<std::string, tensor> args = {});

/// Appends `task` to `group` as is (no generated name: use `job::add_task`
/// or `job::name_tasks` for that).
void add_task(task_group_def& group, task_def task);

} // namespace epochrt
