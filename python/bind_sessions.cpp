#include "bindings.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <epochrt/epochrt.hpp>

#include "call_arguments.hpp"
#include "distributed_session.hpp"
#include "errors.hpp"
#include "local_session.hpp"
#include "node_daemon.hpp"
#include "op_registry.hpp"
#include "runtime.hpp"
#include "session.hpp"
#include "task_group_ref.hpp"
#include "tensor_array.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace epochrt::python {

namespace {

// The network options of the CLI's flags (--tls-*, --connection-timeout-ms)
// from keyword arguments: TLS needs all three files or none.
network_options network_of(double connection_timeout,
                           const std::optional<std::string>& tls_certificate,
                           const std::optional<std::string>& tls_key,
                           const std::optional<std::string>& tls_ca) {
  auto timeout = to_milliseconds(connection_timeout, "connection_timeout");
  if (timeout < std::chrono::milliseconds{250}
      || timeout > std::chrono::hours{1})
    bad_argument("connection_timeout: from 0.25 to 3600 seconds, as "
                 "epochrt's --connection-timeout-ms");
  auto network = runtime::network_with(timeout);
  auto given = int{tls_certificate.has_value()} + int{tls_key.has_value()}
    + int{tls_ca.has_value()};
  if (given == 3)
    network.tls = tls_options{*tls_certificate, *tls_key, *tls_ca};
  else if (given != 0)
    bad_argument("TLS needs tls_certificate, tls_key and tls_ca, or none");
  return network;
}

std::optional<std::string>
secret_of(const std::optional<std::string>& secret_file) {
  if (!secret_file)
    return std::nullopt;
  auto secret = read_secret_file(*secret_file);
  if (!secret)
    throw error(secret.error(), error_kind::bad_input);
  return std::move(*secret);
}

node_address address_of(const std::string& text, bool any_port,
                        const std::string& what) {
  auto address = node_address::parse(text, any_port);
  if (!address)
    bad_argument(what + ": " + error_text(address.error()));
  return std::move(*address);
}

} // namespace

void bind_sessions(py::module_& m) {
  py::class_<session>(m, "Session", R"doc(
What LocalSession and DistributedSession share: the nodes a job runs on,
their blobs read and written with fetch and put.)doc")
    .def(
      "fetch",
      [](session& self, const std::string& node, const std::string& blob,
         bool copy, std::optional<py::array> out) -> py::array {
        // A node in this process: one copy at most, from the blob itself,
        // into memory NumPy allocates with huge pages where it can (the
        // node actor's reply copies into memory faulted in 4 KiB at a time:
        // 256 MiB took 170 ms there, 50 ms here).
        auto shared = [&] {
          py::gil_scoped_release release;
          return self.local_blob(node, blob);
        }();
        if (shared) {
          if (out) {
            copy_into(*shared, *out);
            return *out;
          }
          return copy ? copy_to_ndarray(*shared)
                      : to_readonly_ndarray(std::move(shared));
        }
        // A node on a daemon: the reply is a copy of its own, which the
        // array takes over.
        auto value = [&] {
          py::gil_scoped_release release;
          return self.fetch(node, blob);
        }();
        if (out) {
          copy_into(value, *out);
          return *out;
        }
        if (copy)
          return to_ndarray(std::move(value));
        return to_readonly_ndarray(
          std::make_shared<const tensor>(std::move(value)));
      },
      "node"_a, "blob"_a, py::kw_only(), "copy"_a = true, "out"_a = py::none(),
      R"doc(
A copy of blob `blob` of node `node` as a new NumPy array of the blob's
dtype (float32, float64, int32, int64, uint8, bool) and shape, with no
conversion of its elements; strings as an array of dtype object holding
bytes. Raises BadInput when the node has no such blob.

With `out`, an array of the blob's dtype and shape (writable,
C-contiguous), the elements are copied into it instead, and it is
returned: a loop that fetches every epoch reuses its memory. With
copy=False, a read-only array that shares the blob itself, no copy, for
a node in this process (the node writes a copy of a blob while anyone
holds it, so the array never changes); a node on a daemon sends a copy.
Raises TypeError or ValueError for an `out` that does not fit.)doc")
    .def(
      "put",
      [](session& self, const std::string& node, const std::string& blob,
         py::handle value) {
        // Refused before a conversion that may be long: every save of the
        // node would fail on the name.
        if (auto problem = blob_name_problem(blob); !problem.empty())
          bad_argument("put: " + problem);
        auto converted = from_ndarray(value);
        py::gil_scoped_release release;
        self.put(node, blob, std::move(converted));
      },
      "node"_a, "blob"_a, "value"_a, R"doc(
Stores `value` (anything numpy.asarray takes, of a dtype fetch returns;
str and bytes as strings) as blob `blob` of node `node`.)doc")
    .def(
      "run",
      [](py::object self, py::object what) -> py::object {
        if (py::hasattr(what, "_run_on"))
          return what.attr("_run_on")(self);
        if (!py::isinstance<task_group_ref>(what))
          throw py::type_error(
            "Session.run: expected a TaskGroup (or what a checkpoint "
            "manager's init returns), got "
            + std::string{py::str(py::type::of(what))});
        auto& sess = self.cast<session&>();
        check_not_in_python_op("Session.run");
        auto group = what.cast<task_group_ref&>().get();
        auto outputs = [&] {
          py::gil_scoped_release release;
          return sess.get().run(group, "group run by Session.run");
        }();
        if (!outputs)
          throw error(outputs.error(), error_kind::job_failed);
        py::dict result;
        for (auto& out : *outputs) {
          auto task = py::str(out.task);
          if (!result.contains(task))
            result[task] = py::dict{};
          result[task].cast<py::dict>()[py::str(out.blob)]
            = to_ndarray(std::move(out.value));
        }
        return std::move(result);
      },
      "group"_a, R"doc(
Runs every task of `group` on its node, as a job's groups run (Caffe2's
session.run), and returns the tasks' outputs: {task: {blob: array}}. Given
what a checkpoint manager's init(nodes) returns in Caffe2's form, does
that instead. Raises JobFailed (a task failed), NodeLost.)doc");

  py::class_<local_session, session>(m, "LocalSession", R"doc(
Runs the tasks of jobs on nodes in this process (Caffe2's LocalSession),
each node with a workspace of its own, on a pool of `worker_threads`
threads (None: the hardware threads, at least 4), running the ops of `ops`
(an OpRegistry; None: the builtin ops).)doc")
    .def(py::init([](std::optional<size_t> worker_threads,
                     const std::shared_ptr<op_registry>& ops) {
           auto registry = registry_of(ops);
           py::gil_scoped_release release;
           return std::make_unique<local_session>(worker_threads.value_or(0),
                                                  std::move(registry));
         }),
         "worker_threads"_a = py::none(), "ops"_a = py::none());

  py::class_<distributed_session, session>(m, "DistributedSession", R"doc(
Runs the nodes named in `nodes` ({node: "host:port"}) on node daemons
(`epochrt node`, epochrt.serve_node) and every other node in this
process, as LocalSession does, with `ops`. Every daemon is connected
before the constructor returns: a wrong address, secret or certificate
raises here. A daemon runs the ops it was started with; one that lacks an
op of a task refuses that task's group with an error naming the op.
Options, keyword only, as `epochrt run`'s: `secret_file` (the daemons'
shared secret, chmod 600), `tls_certificate`, `tls_key`, `tls_ca` (mutual
TLS: all three or none), `connection_timeout` (seconds without a word from
a daemon before its nodes are lost), `handshake_timeout`,
`reconnect_timeout` (seconds), `spares` (["host:port"], daemons standing
by for lost hosts), `worker_threads` (for the nodes in this process).
The TLS files and the connection timeout are the runtime's: make the
session before any other object of the module (or once none is alive)
when they are not the defaults.)doc")
    .def(
      py::init([](const std::map<std::string, std::string>& nodes,
                  const std::shared_ptr<op_registry>& ops,
                  const std::optional<std::string>& secret_file,
                  const std::optional<std::string>& tls_certificate,
                  const std::optional<std::string>& tls_key,
                  const std::optional<std::string>& tls_ca,
                  double connection_timeout, double handshake_timeout,
                  double reconnect_timeout,
                  const std::vector<std::string>& spares,
                  std::optional<size_t> worker_threads) {
        std::map<std::string, node_address> remote;
        for (auto& [node, where] : nodes)
          remote.emplace(node, address_of(where, false, "node '" + node + "'"));
        auto network
          = network_of(connection_timeout, tls_certificate, tls_key, tls_ca);
        distributed_session_options options;
        options.secret = secret_of(secret_file);
        options.timeouts.connection_timeout = network.connection_timeout;
        options.timeouts.worker_threads = worker_threads.value_or(0);
        options.handshake_timeout
          = to_milliseconds(handshake_timeout, "handshake_timeout");
        options.reconnect_timeout
          = to_milliseconds(reconnect_timeout, "reconnect_timeout");
        for (auto& spare : spares)
          options.spares.push_back(address_of(spare, false, "spare"));
        auto registry = registry_of(ops);
        py::gil_scoped_release release;
        return std::make_unique<distributed_session>(
          std::move(remote), std::move(registry), network, std::move(options));
      }),
      "nodes"_a, py::kw_only(), "ops"_a = py::none(),
      "secret_file"_a = py::none(), "tls_certificate"_a = py::none(),
      "tls_key"_a = py::none(), "tls_ca"_a = py::none(),
      "connection_timeout"_a = 5.0, "handshake_timeout"_a = 10.0,
      "reconnect_timeout"_a = 30.0, "spares"_a = std::vector<std::string>{},
      "worker_threads"_a = py::none())
    .def("address_of", &distributed_session::address_of, "node"_a,
         "Where `node` runs now (\"host:port\"; a move to a spare changes "
         "it); \"\" for a node in this process.");
}

void bind_node_daemon(py::module_& m) {
  py::class_<node_daemon, std::shared_ptr<node_daemon>>(m, "NodeServer",
                                                        R"doc(
A node daemon serving in this process, made by serve_node: stop() (or
leaving a `with` block) closes its port and drops the nodes a master
attached. Serving needs no GIL: the process's Python threads run on
while it serves, and the GIL is taken only to call a Python op.)doc")
    .def_property_readonly("port", &node_daemon::port)
    .def_property_readonly(
      "address",
      [](const node_daemon& self) {
        return node_address{self.host(), self.port()}.str();
      },
      "\"host:port\", for DistributedSession's nodes.")
    .def_property_readonly("checkpoint_root", &node_daemon::checkpoint_root)
    .def_property_readonly("serving", &node_daemon::serving)
    .def("stop", &node_daemon::stop, py::call_guard<py::gil_scoped_release>(),
         "Closes the port and drops every attached node. Idempotent.")
    .def("__enter__",
         [](const std::shared_ptr<node_daemon>& self) {
           return self;
         })
    .def("__exit__", [](node_daemon& self, py::args) {
      py::gil_scoped_release release;
      self.stop();
    });

  m.def(
    "serve_node",
    [](const std::string& listen, const std::string& checkpoint_root,
       const std::shared_ptr<op_registry>& ops,
       const std::optional<std::string>& secret_file,
       const std::optional<std::string>& tls_certificate,
       const std::optional<std::string>& tls_key,
       const std::optional<std::string>& tls_ca, double connection_timeout,
       double admission_timeout, uint64_t max_tensor_bytes,
       std::optional<size_t> worker_threads, bool shared_root) {
      auto address = address_of(listen, true, "listen");
      auto network
        = network_of(connection_timeout, tls_certificate, tls_key, tls_ca);
      if (max_tensor_bytes == 0)
        bad_argument("max_tensor_bytes must be positive");
      node_server_options options;
      options.host = address.host;
      options.port = address.port;
      options.checkpoint_root = checkpoint_root;
      options.lock_root = !shared_root;
      options.secret = secret_of(secret_file);
      options.max_tensor_bytes = max_tensor_bytes;
      options.admission_timeout
        = to_milliseconds(admission_timeout, "admission_timeout");
      options.worker_threads = worker_threads.value_or(0);
      auto registry = registry_of(ops);
      py::gil_scoped_release release;
      return std::make_shared<node_daemon>(std::move(registry), network,
                                           std::move(options));
    },
    "listen"_a = "127.0.0.1:0", py::kw_only(), "checkpoint_root"_a = ".",
    "ops"_a = py::none(), "secret_file"_a = py::none(),
    "tls_certificate"_a = py::none(), "tls_key"_a = py::none(),
    "tls_ca"_a = py::none(), "connection_timeout"_a = 5.0,
    "admission_timeout"_a = 5.0, "max_tensor_bytes"_a = uint64_t{1} << 30,
    "worker_threads"_a = py::none(), "shared_root"_a = false, R"doc(
Starts a node daemon in this process, as `epochrt node` does, and returns
its NodeServer: it listens on `listen` ("host:port"; port 0 picks a free
one, NodeServer.port says which), serves one master at a time the ops of
`ops` (an OpRegistry, Python ops included; None: the builtin ops), and
writes its nodes' checkpoints and files under `checkpoint_root`, which it
locks unless `shared_root`. Options as the command's flags: `secret_file`,
`tls_certificate`/`tls_key`/`tls_ca`, `connection_timeout`,
`admission_timeout` (seconds), `max_tensor_bytes`, `worker_threads`. A
non-loopback address needs a secret or TLS. Raises BadInput for a bad
option or a root another daemon holds, NodeLost when the address cannot
be listened on.)doc");
}

} // namespace epochrt::python
