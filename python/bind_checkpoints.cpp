#include "bindings.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "call_arguments.hpp"
#include "multi_node_checkpoint_manager.hpp"
#include "session.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

checkpoint_options manager_options(double timeout, int64_t full_every,
                                   size_t keep_last) {
  checkpoint_options options;
  options.timeout = to_milliseconds(timeout, "timeout");
  if (full_every < 0)
    bad_argument("full_every: expected 0 or more, got "
                 + std::to_string(full_every));
  options.full_every = full_every;
  options.keep_last = keep_last;
  return options;
}

} // namespace

void bind_db_name(py::module_& m) {
  m.def(
    "db_name",
    [](int64_t epoch, const std::string& node_name,
       const std::string& db_prefix, std::optional<std::string> path_prefix) {
      return db_name(epoch, node_name, db_prefix, path_prefix.value_or(""));
    },
    "epoch"_a, "node_name"_a, "db_prefix"_a, "path_prefix"_a = py::none(),
    "The path of `node_name`'s checkpoint database of `epoch` (Caffe2's "
    "db_name): `path_prefix + node + \".\" + epoch` with a path_prefix, "
    "else `<db_prefix>/<node>.<epoch>`.");
}

void bind_checkpoint_manager(py::module_& m) {
  using manager = multi_node_checkpoint_manager;
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<manager, std::shared_ptr<manager>>(m, "MultiNodeCheckpointManager",
                                                R"doc(
The checkpoints of a job's nodes under `db_prefix`, one database per node
and epoch (`<db_prefix>/<node>.<epoch>`), saved and loaded in parallel
(Caffe2's MultiNodeCheckpointManager). Options, keyword only: `timeout`
(seconds one node may take for one checkpoint operation), `full_every`
(0: a save writes only the blobs that changed since the node's last one;
N: every payload at epochs divisible by N), `keep_last` (0: keep every
checkpoint; N: only the last N committed epochs).

Unlike Caffe2's, whose init, load and save build task groups for a
session to run, these calls do the work themselves: `init` takes the
session.)doc")
    .def(py::init([](const std::string& db_prefix, double timeout,
                     int64_t full_every, size_t keep_last) {
           auto options = manager_options(timeout, full_every, keep_last);
           py::gil_scoped_release release;
           return std::make_shared<manager>(db_prefix, std::move(options));
         }),
         "db_prefix"_a, py::kw_only(), "timeout"_a = 3600.0, "full_every"_a = 0,
         "keep_last"_a = 0)
    .def_property_readonly("db_prefix", &manager::db_prefix)
    .def("init", &manager::init, release(), "session"_a, "nodes"_a,
         "retrieve_from_epoch"_a = py::none(), "path_prefix"_a = "",
         "Binds the manager to `nodes` of `session` and lists the blobs "
         "their checkpoints hold: those of the nodes' workspaces now, or of "
         "the checkpoints of `retrieve_from_epoch`.")
    .def("load", &manager::load, release(), "epoch"_a, "path_prefix"_a = "",
         "Loads every node's checkpoint of `epoch`, every digest checked.")
    .def("save", &manager::save, release(), "epoch"_a,
         "Saves every node's checkpoint of `epoch`; "
         "write_checkpoint_metadata commits it.")
    .def("write_checkpoint_metadata", &manager::write_checkpoint_metadata,
         release(), "epoch"_a, "Records `epoch` as committed.")
    .def("get_resume_from_epoch_id", &manager::get_resume_from_epoch_id,
         release(), "user_epoch"_a = py::none(),
         "`user_epoch` when it is committed (BadInput otherwise), else the "
         "last committed epoch, else None.")
    .def("cp_accessible", &manager::cp_accessible, release(),
         "epoch"_a = py::none(),
         "Without an epoch: can the checkpoint directory be written? With "
         "one: is that epoch committed? False when there is no answer.")
    .def("check_db_exists", &manager::check_db_exists, release(), "epoch"_a,
         "True when every node's checkpoint of `epoch` exists and is "
         "complete.")
    .def("get_ckpt_db_name", &manager::get_ckpt_db_name, release(),
         "node_name"_a, "epoch"_a,
         "The database path of `node_name`'s checkpoint of `epoch`.")
    .def("blob_list", &manager::blob_list, release(), "node"_a,
         "The blobs the last `init` (or `train`) listed for `node`.")
    .def("load_blobs_locally", &manager::load_blobs_locally, release(),
         "nodes"_a, "blob_names"_a, "epoch"_a, "session"_a,
         "Loads only `blob_names` from every node's checkpoint of `epoch` "
         "into that node, binding the manager to `nodes` first when no "
         "init did (Caffe2's load_blobs_locally): True, or False with "
         "nothing loaded when a checkpoint of that epoch does not exist.")
    .def(
      "set_params",
      [](manager& self, const std::vector<std::string>& nodes,
         std::optional<std::string> path_prefix) {
        self.set_params(nodes, path_prefix.value_or(""));
      },
      release(), "nodes"_a, "path_prefix"_a = py::none(),
      "Sets the nodes and path prefix, as JobRunner.train does first; "
      "refuses a directory another job holds.")
    .def(
      "report_checkpoint_stats",
      [](manager& self, const std::string& action) {
        auto stats = [&] {
          py::gil_scoped_release release;
          return self.report_checkpoint_stats(action);
        }();
        py::list result;
        for (auto& x : stats) {
          py::dict d;
          d["node"] = x.node;
          d["db"] = x.db;
          d["seconds"] = static_cast<double>(x.duration_us) / 1e6;
          d["bytes"] = x.bytes;
          d["blobs"] = x.blobs;
          d["written_bytes"] = x.written_bytes;
          d["reused_blobs"] = x.reused_blobs;
          d["snapshot_seconds"] = static_cast<double>(x.snapshot_us) / 1e6;
          d["sync_seconds"] = static_cast<double>(x.sync_us) / 1e6;
          result.append(std::move(d));
        }
        return result;
      },
      "action_name"_a,
      "Records the stats of the last save or load under `action_name` in "
      "the checkpoint metadata and returns them, one dict per node: node, "
      "db, seconds, bytes, blobs, written_bytes, reused_blobs, "
      "snapshot_seconds, sync_seconds.")
    .def_property_readonly("nodes", &manager::nodes, release(),
                           "The nodes of the last set_params or init.");

  py::class_<checkpoint_manager, manager, std::shared_ptr<checkpoint_manager>>(
    m, "_CheckpointManager",
    "The native part of CheckpointManager (the package's).")
    .def(py::init([](const std::string& db_prefix, const std::string& node,
                     double timeout, int64_t full_every, size_t keep_last) {
           auto options = manager_options(timeout, full_every, keep_last);
           py::gil_scoped_release release;
           return std::make_shared<checkpoint_manager>(db_prefix, node,
                                                       std::move(options));
         }),
         "db_prefix"_a, "node_name"_a, py::kw_only(), "timeout"_a = 3600.0,
         "full_every"_a = 0, "keep_last"_a = 0)
    .def_property_readonly("node_name", &checkpoint_manager::node_name)
    .def("_load_blobs_from_checkpoint",
         &checkpoint_manager::load_blobs_from_checkpoint, release(),
         "blob_names"_a, "epoch"_a, "session"_a);
}

} // namespace epochrt::python
