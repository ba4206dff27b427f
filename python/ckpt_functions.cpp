#include "ckpt_functions.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "errors.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

// A typo must not read as an empty directory. BadInput.
void check_directory(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw_if(
      make_error(actors_errc::invalid_argument, dir + ": not a directory"),
      error_kind::bad_input);
}

// The metadata of `dir` and, when its latest generation is damaged, what
// is wrong with it (the previous one was read). Throws `error`.
std::pair<checkpoint_metadata, std::string>
read_metadata(const std::string& dir) {
  std::string damage;
  auto metadata = file_metadata_handler{dir}.load(&damage);
  if (!metadata)
    throw error(make_error(persistence_errc::corrupt,
                           dir + "/" + file_metadata_handler::file_name + ": "
                             + coded_error_text(metadata.error())),
                error_kind::error);
  return {std::move(*metadata), std::move(damage)};
}

std::vector<db_listing> listing_of(const std::string& dir) {
  auto listing = list_checkpoints(dir);
  if (!listing)
    throw error(listing.error(), error_kind::error);
  return std::move(*listing);
}

py::dict ckpt_ls(const std::string& dir) {
  check_directory(dir);
  std::vector<db_listing> listing;
  checkpoint_metadata metadata;
  {
    py::gil_scoped_release release;
    metadata = read_metadata(dir).first;
    listing = listing_of(dir);
  }
  py::list databases;
  for (auto& db : listing)
    databases.append(py::dict("node"_a = db.node, "epoch"_a = db.epoch,
                              "complete"_a = db.complete, "bytes"_a = db.bytes,
                              "path"_a = db.path));
  auto& committed = metadata.committed_epochs;
  py::object last = py::none();
  if (!committed.empty())
    last = py::int_(committed.back());
  return py::dict("databases"_a = databases,
                  "committed_epochs"_a = py::cast(committed),
                  "last_committed"_a = last);
}

py::dict ckpt_show(const std::string& dir, const std::string& node,
                   int64_t epoch,
                   std::optional<std::vector<std::string>> blobs) {
  check_directory(dir);
  auto values = [&] {
    py::gil_scoped_release release;
    return read_checkpoint_blobs(dir, node, epoch,
                                 blobs.value_or(std::vector<std::string>{}));
  }();
  if (!values)
    throw error(values.error(), error_kind::error);
  py::dict result;
  for (auto& [name, value] : *values)
    result[py::str(name)] = to_ndarray(std::move(value));
  return result;
}

py::dict ckpt_verify(const std::string& dir) {
  check_directory(dir);
  std::vector<std::string> problems;
  std::map<int64_t, std::map<std::string, std::optional<std::string>>> epochs;
  {
    py::gil_scoped_release release;
    auto [metadata, damage] = read_metadata(dir);
    // A damaged latest generation is damage, though a run resumes from the
    // previous one.
    if (!damage.empty())
      problems.push_back(dir + "/" + file_metadata_handler::file_name + ": "
                         + damage);
    auto verified = verify_committed(dir, metadata);
    if (!verified)
      throw error(verified.error(), error_kind::error);
    for (auto& [epoch, nodes] : *verified) {
      auto prefix = "epoch " + std::to_string(epoch) + ": ";
      auto& found = epochs[epoch];
      if (nodes.empty())
        problems.push_back(prefix + "no node has a database");
      for (auto& [node, err] : nodes) {
        auto& problem = found[node];
        if (err) {
          problem = coded_error_text(err);
          problems.push_back(prefix + node + ": " + *problem);
        }
      }
    }
  }
  return py::dict("ok"_a = problems.empty(), "epochs"_a = py::cast(epochs),
                  "problems"_a = py::cast(problems));
}

} // namespace

void bind_ckpt_functions(py::module_& m) {
  m.def("ckpt_ls", &ckpt_ls, "dir"_a, R"doc(
The checkpoint directory `dir` as `epochrt ckpt ls --json` shows it:
{"databases": [{"node", "epoch", "complete", "bytes", "path"}...] sorted by
node then epoch, "committed_epochs": [...], "last_committed": E or None}.
Raises BadInput when `dir` is not a directory, Error when its metadata
cannot be read.)doc");
  m.def("ckpt_show", &ckpt_show, "dir"_a, "node"_a, "epoch"_a,
        "blobs"_a = py::none(), R"doc(
The blobs of `node`'s checkpoint of `epoch` in `dir`, as {name: NumPy
array} (arrays as fetch makes them): those named in `blobs`, in that order,
or every blob in the order it was saved. Every digest is checked; nothing
is returned unless every blob reads back intact. Raises BadInput for a bad
node name, a negative epoch or a `dir` that is not a directory; Error
(code not_found, incomplete, corrupt) for a missing, unfinished or
damaged checkpoint or a blob it lacks.)doc");
  m.def("ckpt_verify", &ckpt_verify, "dir"_a, R"doc(
Checks every committed epoch's databases in `dir` as `epochrt ckpt verify`
does (each exists, is complete, and every blob reads back with its
digests): {"ok": bool, "epochs": {epoch: {node: None or the problem}},
"problems": ["epoch E: NODE: ..."...]}. A damaged latest metadata file
(the previous generation read instead) is a problem too. Raises BadInput
when `dir` is not a directory, Error when no metadata can be read.)doc");
}

} // namespace epochrt::python
