#pragma once

#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <epochrt/messages/exchange_protocol.hpp>
#include <epochrt/messages/job_def.hpp>

namespace epochrt {

/// Checks channel declarations: valid, distinct names (as blob names);
/// valid node names; a capacity of 1 to `max_channel_capacity`; at least
/// one blob per item, each a valid name, none twice. Errors
/// (`runtime_errc::invalid_job`) start with `path` and the index:
/// "channels[1].capacity: expected 1 to 1048576, got 0".
caf::error check_channels(const std::vector<channel_def>& channels,
                          const std::string& path = "channels");

/// Items a channel may hold at most.
constexpr int64_t max_channel_capacity = int64_t{1} << 20;

/// The plan of the channels and collectives that the tasks of `group` use
/// (without its peers, which only a session knows): the channels of
/// `channels` that its ops name, with the tasks that put into or close
/// each and the tasks that take from it; and every collective its ops
/// name, with its participants sorted by node, then task name. Empty when
/// the group uses neither.
///
/// Errors (`runtime_errc::invalid_job`) name the op at fault, as
/// `tasks_path` + "[task].steps[s].ops[o]" (e.g. tasks_path "epoch" for a
/// job file, "epoch_group.tasks" for a job_def): a channel no declaration
/// names; an item of another size than its channel's; a channel of the
/// group that no task closes (it must be closed when the group ends) or
/// that tasks put into but none takes from; a collective used as two kinds,
/// with two reductions or two roots; a broadcast root on a node where no
/// participant, or more than one, runs.
caf::expected<exchange_plan>
make_exchange_plan(const task_group_def& group,
                   const std::vector<channel_def>& channels,
                   const std::string& tasks_path = "tasks");

/// The nodes of the plan's channels that no task of `group` runs on: they
/// host a channel of the group and must hear of its run too.
std::vector<std::string> channel_only_nodes(const exchange_plan& plan,
                                            const task_group_def& group);

} // namespace epochrt
