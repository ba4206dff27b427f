// The pieces of remote nodes that need no second process: addresses,
// secrets, proofs, and the checks a daemon makes on every request.

#define BOOST_TEST_MODULE remote_unit
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "test/support/temp_dir.hpp"
#include <epochrt/actors/api/actors_errc.hpp>
#include <epochrt/actors/api/configure.hpp>
#include <epochrt/actors/api/node_address.hpp>
#include <epochrt/actors/api/secret_file.hpp>
#include <epochrt/actors/remote/proof.hpp>
#include <epochrt/actors/remote/replica_store_actor.hpp>
#include <epochrt/actors/remote/request_validation.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/replica_protocol.hpp>
#include <epochrt/persistence/path_guard.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/runtime/builtin_ops.hpp>
#include <epochrt/runtime/op_registry.hpp>
#include <epochrt/runtime/runtime_errc.hpp>

using namespace epochrt;
using epochrt::test::temp_dir;

namespace {

bool rejected(const caf::error& err) {
  return is_error(err, actors_errc::rejected);
}

bool says(const caf::error& err, const std::string& part) {
  return error_text(err).find(part) != std::string::npos;
}

std::string write_file(const temp_dir& dir, const std::string& name,
                       const std::string& text, mode_t mode) {
  auto path = dir.sub(name);
  std::ofstream{path} << text;
  ::chmod(path.c_str(), mode);
  return path;
}

struct ops_fixture {
  op_registry ops;
  request_limits limits;
  ops_fixture() {
    BOOST_REQUIRE(!add_builtin_ops(ops));
    limits.max_tensor_bytes = 1024;
  }

  static op_def op(std::string type, std::vector<std::string> outputs = {},
                   std::map<std::string, tensor> args = {}) {
    op_def result;
    result.type = std::move(type);
    result.outputs = std::move(outputs);
    result.args = std::move(args);
    return result;
  }

  static run_tasks tasks_with(op_def the_op, std::string node = "n1") {
    task_def task;
    task.name = "t";
    task.node = std::move(node);
    task.steps.push_back(step_def{"s", {std::move(the_op)}, 1, ""});
    return run_tasks{"epoch", 1, {std::move(task)}};
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(addresses)

BOOST_AUTO_TEST_CASE(host_and_port_parse) {
  auto x = node_address::parse("127.0.0.1:7001");
  BOOST_REQUIRE(x);
  BOOST_TEST(x->host == "127.0.0.1");
  BOOST_TEST(x->port == 7001);
  BOOST_TEST(x->str() == "127.0.0.1:7001");
}

BOOST_AUTO_TEST_CASE(ipv6_literals_are_bracketed) {
  auto x = node_address::parse("[::1]:9");
  BOOST_REQUIRE(x);
  BOOST_TEST(x->host == "::1");
  BOOST_TEST(x->str() == "[::1]:9");
}

BOOST_AUTO_TEST_CASE(malformed_addresses_are_refused_with_the_reason) {
  for (auto text : {"127.0.0.1", ":80", "host:", "host:0", "host:65536",
                    "host:12a", "::1:80", "[::1]80"})
    BOOST_TEST(!static_cast<bool>(node_address::parse(text)), text);
  auto err = node_address::parse("host:99999").error();
  BOOST_TEST(says(err, "from 1 to 65535"));
}

BOOST_AUTO_TEST_CASE(port_zero_is_for_listeners_only) {
  BOOST_TEST(!static_cast<bool>(node_address::parse("127.0.0.1:0")));
  BOOST_TEST(static_cast<bool>(node_address::parse("127.0.0.1:0", true)));
}

BOOST_AUTO_TEST_CASE(only_loopback_addresses_count_as_loopback) {
  BOOST_TEST(is_loopback("127.0.0.1"));
  BOOST_TEST(is_loopback("127.1.2.3"));
  BOOST_TEST(is_loopback("::1"));
  BOOST_TEST(is_loopback("localhost"));
  BOOST_TEST(!is_loopback("0.0.0.0"));
  BOOST_TEST(!is_loopback("10.0.0.1"));
  BOOST_TEST(!is_loopback("::"));
  BOOST_TEST(!is_loopback("example.com"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(secrets)

BOOST_AUTO_TEST_CASE(a_private_secret_file_is_read_without_its_line_break) {
  temp_dir dir;
  auto path = write_file(dir, "s", "0123456789abcdefXYZ\n", 0600);
  auto secret = read_secret_file(path);
  BOOST_REQUIRE(secret);
  BOOST_TEST(*secret == "0123456789abcdefXYZ");
}

BOOST_AUTO_TEST_CASE(a_secret_file_others_can_read_is_refused) {
  temp_dir dir;
  auto path = write_file(dir, "s", "0123456789abcdefXYZ", 0644);
  auto secret = read_secret_file(path);
  BOOST_REQUIRE(!secret);
  BOOST_TEST(says(secret.error(), "chmod 600"));
}

BOOST_AUTO_TEST_CASE(a_short_or_missing_secret_is_refused) {
  temp_dir dir;
  BOOST_TEST(!static_cast<bool>(
    read_secret_file(write_file(dir, "s", "short\n", 0600))));
  BOOST_TEST(!static_cast<bool>(read_secret_file(dir.sub("missing"))));
}

BOOST_AUTO_TEST_CASE(proofs_depend_on_secret_nonce_node_and_prover) {
  auto nonce = detail::make_nonce();
  BOOST_TEST(nonce.size() == detail::nonce_size);
  BOOST_TEST(detail::make_nonce() != nonce);
  auto proof = detail::make_proof("secret-1234567890", detail::prover::master,
                                  nonce, "n1");
  BOOST_TEST(detail::same_proof(proof,
                                detail::make_proof("secret-1234567890",
                                                   detail::prover::master,
                                                   nonce, "n1")));
  BOOST_TEST(!detail::same_proof(proof,
                                 detail::make_proof("secret-1234567891",
                                                    detail::prover::master,
                                                    nonce, "n1")));
  BOOST_TEST(!detail::same_proof(proof,
                                 detail::make_proof("secret-1234567890",
                                                    detail::prover::daemon,
                                                    nonce, "n1")));
  BOOST_TEST(!detail::same_proof(
    proof,
    detail::make_proof("secret-1234567890", detail::prover::master,
                       detail::make_nonce(), "n1")));
  BOOST_TEST(!detail::same_proof(proof,
                                 detail::make_proof("secret-1234567890",
                                                    detail::prover::master,
                                                    nonce, "n2")));
  BOOST_TEST(!detail::same_proof(proof, std::vector<char>{}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(paths_under_a_root)

BOOST_AUTO_TEST_CASE(absolute_paths_are_placed_under_the_root) {
  temp_dir root;
  auto placed = resolve_under(root.str(), "/ckpt/job/n1.3");
  BOOST_REQUIRE(placed);
  BOOST_TEST(*placed == root.str() + "/ckpt/job/n1.3");
}

BOOST_AUTO_TEST_CASE(dot_dot_cannot_leave_the_root) {
  temp_dir root;
  BOOST_TEST(!static_cast<bool>(resolve_under(root.str(), "../escape")));
  BOOST_TEST(!static_cast<bool>(resolve_under(root.str(), "/a/../../escape")));
  BOOST_TEST(!static_cast<bool>(resolve_under(root.str(), "/")));
  BOOST_TEST(!static_cast<bool>(resolve_under(root.str(), "")));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(request_checks, ops_fixture)

BOOST_AUTO_TEST_CASE(well_formed_tasks_pass) {
  auto msg = tasks_with(op("ConstantFill", {"x"},
                           {{"shape", make_tensor<int64_t>({1}, {4})},
                            {"value", make_scalar<double>(1.0)}}));
  BOOST_TEST(!static_cast<bool>(check_tasks(msg, "n1", ops, limits, {})));
}

BOOST_AUTO_TEST_CASE(an_unknown_op_is_rejected_naming_it) {
  auto msg = tasks_with(op("NoSuchOp", {"x"}));
  auto err = check_tasks(msg, "n1", ops, limits, {});
  BOOST_TEST(rejected(err));
  BOOST_TEST(says(err, "NoSuchOp"));
}

BOOST_AUTO_TEST_CASE(a_host_check_that_throws_is_rejected_naming_the_op) {
  // What a daemon's gate runs for every request: host code must not throw
  // out of it.
  op_schema throws;
  throws.type = "ThrowingCheck";
  throws.fn = [](op_context&) -> caf::error {
    return {};
  };
  throws.check = [](const op_def&) -> std::string {
    throw std::logic_error("bad host code");
  };
  BOOST_REQUIRE(!ops.add(throws));
  auto msg = tasks_with(op("ThrowingCheck"));
  auto err = check_tasks(msg, "n1", ops, limits, {});
  BOOST_TEST(rejected(err));
  BOOST_TEST(says(err,
                  "the check of op 'ThrowingCheck' threw an exception: "
                  "bad host code"),
             error_text(err));
}

BOOST_AUTO_TEST_CASE(tasks_for_another_node_are_rejected) {
  auto msg = tasks_with(op("CreateCounter", {"c"}), "n2");
  auto err = check_tasks(msg, "n1", ops, limits, {});
  BOOST_TEST(rejected(err));
  BOOST_TEST(says(err, "not for node 'n1'"));
}

BOOST_AUTO_TEST_CASE(invalid_blob_names_are_rejected) {
  auto msg = tasks_with(op("CreateCounter", {"has space"}));
  BOOST_TEST(rejected(check_tasks(msg, "n1", ops, limits, {})));
  put_blobs put;
  put.blobs.push_back(blob_value{"", make_scalar<int64_t>(1)});
  BOOST_TEST(rejected(check_put(put, limits)));
  BOOST_TEST(rejected(check_fetch(fetch_blobs{{"tab\tname"}})));
}

BOOST_AUTO_TEST_CASE(a_tensor_over_the_limit_is_rejected_naming_the_limit) {
  put_blobs put;
  put.blobs.push_back(
    blob_value{"big", make_tensor<float>({512}, std::vector<float>(512))});
  auto err = check_put(put, limits);
  BOOST_TEST(rejected(err));
  BOOST_TEST(says(err, "at most 1024"));
  auto msg = tasks_with(
    op("GivenTensorFill", {"x"},
       {{"shape", make_tensor<int64_t>({1}, {512})},
        {"values", make_tensor<double>({512}, std::vector<double>(512))}}));
  BOOST_TEST(rejected(check_tasks(msg, "n1", ops, limits, {})));
}

BOOST_AUTO_TEST_CASE(a_shape_whose_size_overflows_is_rejected) {
  tensor x;
  x.type = dtype::u8;
  x.shape = {int64_t{1} << 32, int64_t{1} << 32};
  auto err = check_tensor(x, "x", limits);
  BOOST_TEST(rejected(err));
  x.shape = {-1};
  BOOST_TEST(rejected(check_tensor(x, "x", limits)));
}

BOOST_AUTO_TEST_CASE(a_malformed_tensor_is_rejected) {
  auto x = make_tensor<int32_t>({2}, {1, 2});
  x.data.pop_back();
  BOOST_TEST(says(check_tensor(x, "x", limits), "malformed"));
}

BOOST_AUTO_TEST_CASE(path_arguments_are_placed_under_the_file_root) {
  temp_dir root;
  auto msg
    = tasks_with(op("CopyDirectory", {},
                    {{"source", make_string_tensor({}, {"/ckpt/n1.3"})},
                     {"destination", make_string_tensor({}, {"up/n1.3"})}}));
  BOOST_REQUIRE(!check_tasks(msg, "n1", ops, limits, root.str()));
  auto& args = msg.tasks[0].steps[0].ops[0].args;
  BOOST_TEST(args.at("source").strings[0] == root.str() + "/ckpt/n1.3");
  BOOST_TEST(args.at("destination").strings[0] == root.str() + "/up/n1.3");
}

BOOST_AUTO_TEST_CASE(a_path_argument_leaving_the_root_is_rejected) {
  temp_dir root;
  auto msg = tasks_with(op("CopyDirectory", {},
                           {{"source", make_string_tensor({}, {"../../etc"})},
                            {"destination", make_string_tensor({}, {"x"})}}));
  BOOST_TEST(rejected(check_tasks(msg, "n1", ops, limits, root.str())));
}

BOOST_AUTO_TEST_SUITE_END()

// A daemon's replica store against a peer that lies: it bounds what a
// transfer may make it create and hold, whatever the peer announces.
BOOST_AUTO_TEST_SUITE(replica_store_bounds)

namespace {

struct store_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  temp_dir root;
  caf::actor store;

  store_fixture() {
    configure(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    store = spawn_replica_store(*sys, root.str(), nullptr);
  }

  ~store_fixture() {
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
  }

  template <class Reply, class Request>
  caf::expected<Reply> ask(Request msg) {
    caf::scoped_actor self{*sys};
    caf::expected<Reply> result{Reply{}};
    auto on_error = [&](caf::error& err) {
      result = std::move(err);
    };
    auto request
      = self->request(store, std::chrono::seconds(10), std::move(msg));
    // A request answered with nothing has a reply handler without argument.
    if constexpr (std::is_same_v<Reply, caf::unit_t>)
      request.receive([] {}, on_error);
    else
      request.receive(
        [&](Reply& x) {
          result = std::move(x);
        },
        on_error);
    return result;
  }
};

database_listing one_file(uint64_t bytes) {
  return database_listing{0, 0, 0, {database_file{"blobs.data", bytes}}};
}

} // namespace

BOOST_FIXTURE_TEST_CASE(a_listing_of_thousands_of_files_is_refused,
                        store_fixture) {
  database_listing listing{0, 0, 0, {}};
  for (int i = 0; i < 5000; ++i)
    listing.files.push_back(database_file{"f" + std::to_string(i), 1});
  auto ticket
    = ask<copy_ticket>(copy_offer{"trainer_0", "/ckpt/trainer_0.0", listing});
  BOOST_REQUIRE(!ticket);
  BOOST_TEST(is_error(ticket.error(), actors_errc::rejected));
  BOOST_TEST(!std::filesystem::exists(root.sub("ckpt/trainer_0.0.copying")));
}

BOOST_FIXTURE_TEST_CASE(pieces_out_of_order_are_held_up_to_a_byte_bound,
                        store_fixture) {
  auto ticket = ask<copy_ticket>(
    copy_offer{"trainer_0", "/ckpt/trainer_0.0", one_file(uint64_t{1} << 30)});
  BOOST_REQUIRE(ticket);
  BOOST_REQUIRE(ticket->id != 0);
  // The first piece never comes; the later ones must not pile up.
  std::vector<char> piece(size_t{8} << 20, 'x');
  caf::error refused;
  for (uint64_t i = 1; i <= 16 && !refused; ++i) {
    auto put = ask<caf::unit_t>(
      copy_data{ticket->id, "blobs.data", i * piece.size(), piece});
    if (!put)
      refused = std::move(put.error());
  }
  BOOST_REQUIRE(refused);
  BOOST_TEST(is_error(refused, actors_errc::rejected));
}

BOOST_FIXTURE_TEST_CASE(a_piece_sent_twice_is_written_once, store_fixture) {
  auto ticket = ask<copy_ticket>(
    copy_offer{"trainer_0", "/ckpt/trainer_0.0", one_file(4)});
  BOOST_REQUIRE(ticket);
  std::vector<char> two{'a', 'b'};
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(
      ask<caf::unit_t>(copy_data{ticket->id, "blobs.data", 2, two}));
  BOOST_REQUIRE(ask<caf::unit_t>(copy_data{ticket->id, "blobs.data", 0, two}));
  // Four bytes "abab": a close with the wrong digest fails as corrupt,
  // not as a file of the wrong size.
  auto closed = ask<caf::unit_t>(copy_close{ticket->id, {0}});
  BOOST_REQUIRE(!closed);
  BOOST_TEST(is_error(closed.error(), persistence_errc::corrupt));
  BOOST_TEST(error_text(closed.error()).find("digest") != std::string::npos,
             error_text(closed.error()));
}

BOOST_AUTO_TEST_SUITE_END()
