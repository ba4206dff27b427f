// Every message type epochrt registers crosses a real process boundary over
// CAF's middleman on 127.0.0.1 and comes back unchanged. A type registered
// on one side only is silently emptied on the wire (CAF does not fail the
// send), so a binary round trip inside one process cannot prove this: only
// a second process with its own registry can.

#define BOOST_TEST_MODULE wire
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>

#include <boost/core/demangle.hpp>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/meta/annotation.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/others.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/type_id.hpp>

#include "test/messages/message_samples.hpp"
#include "test/wire/field_diff.hpp"
#include "tools/process/child_process.hpp"
#include <epochrt/actors/api/network.hpp>
#include <epochrt/messages/message_types.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

// Generous for a loaded 2-core machine, yet every wait ends.
constexpr auto request_timeout = std::chrono::seconds(10);
constexpr auto connect_timeout = std::chrono::seconds(30);
constexpr auto peer_start_timeout = std::chrono::seconds(30);
constexpr auto peer_exit_timeout = std::chrono::seconds(10);

// A message type only this process registers: the peer has never heard of
// it, as a peer built from an older epochrt would not know a newer type.
struct unregistered_probe {
  std::string text;
  int64_t number = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unregistered_probe& x) {
  return f(caf::meta::type_name("epochrt::test::unregistered_probe"), x.text,
           x.number);
}

struct test_config : caf::actor_system_config {
  test_config() {
    // Plain TCP: nothing to check, nothing that can fail.
    BOOST_REQUIRE(!configure_network(*this));
    add_message_type<unregistered_probe>("epochrt::test::unregistered_probe");
    set("scheduler.max-threads", 2);
  }
};

// The name `add_message_types` gives each registered type, by C++ type.
const caf::actor_system_config::portable_name_map& registered_names() {
  static const auto names = [] {
    caf::actor_system_config cfg;
    add_message_types(cfg);
    return cfg.type_names_by_rtti;
  }();
  return names;
}

template <class T>
std::string name_of() {
  auto& names = registered_names();
  auto i = names.find(std::type_index{typeid(T)});
  if (i != names.end())
    return i->second;
  return "(unregistered) " + boost::core::demangle(typeid(T).name());
}

// A class rather than a function of no arguments: CAF 0.17 spawns such a
// function by dereferencing a null argument tuple, which UBSan rejects.
class idle_actor : public caf::event_based_actor {
public:
  using caf::event_based_actor::event_based_actor;

  caf::behavior make_behavior() override {
    return {
      [](caf::close_atom) {},
    };
  }
};

// wire_echo_peer as a child process. Its stdin is a pipe that only we hold,
// so it exits when we close it or die, however we die; destroying it closes
// that pipe and gives it 5 s before SIGKILL. Its stderr is ours. Throws
// std::runtime_error, the child gone, when it does not listen in time.
process::child_process start_peer() {
  process::child_process::options o;
  o.argv = {WIRE_ECHO_PEER};
  o.stdin_pipe = true;
  o.out = process::output::pipe();
  o.stop_grace = std::chrono::seconds(5);
  std::string error;
  auto peer = process::child_process::start(o, error);
  if (!peer || peer->await_listening(peer_start_timeout, error) == 0)
    throw std::runtime_error(error);
  return std::move(*peer);
}

// One peer process and one actor system for the whole suite: starting them
// costs more than all round trips together.
class wire_session {
public:
  wire_session() : peer_(start_peer()) {
    handles_.remote = connect(peer_.port());
    // Answers nothing: it only needs to be a live actor of this process
    // whose handle the peer must send back.
    handles_.local = sys_.spawn<idle_actor>();
  }

  ~wire_session() {
    // Actors still alive would hold up the actor system's shutdown.
    caf::anon_send_exit(handles_.local, caf::exit_reason::user_shutdown);
  }

  // What `middleman().remote_actor(...)` does, but with a timeout: it
  // waits forever for a peer that accepts the connection and never answers
  // the handshake.
  caf::actor connect(uint16_t port) {
    caf::actor result;
    caf::error err;
    caf::scoped_actor self{sys_};
    self
      ->request(sys_.middleman().actor_handle(), connect_timeout,
                caf::connect_atom::value, std::string{"127.0.0.1"}, port)
      .receive(
        [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
            const std::set<std::string>&) {
          result = caf::actor_cast<caf::actor>(std::move(ptr));
        },
        [&](caf::error& x) {
          err = std::move(x);
        });
    if (!result)
      throw std::runtime_error(
        "cannot reach the echo peer at 127.0.0.1:" + std::to_string(port) + ": "
        + (err ? sys_.render(err) : std::string{"no actor published"}));
    return result;
  }

  const sample_handles& handles() const noexcept {
    return handles_;
  }

  // Sends `msg` to the peer's echo actor and returns the reply, or the
  // error that ended the request (a timeout at the latest).
  caf::expected<caf::message> echo(const caf::message& msg) {
    caf::expected<caf::message> result
      = caf::make_error(caf::sec::runtime_error, "no reply handled");
    caf::scoped_actor self{sys_};
    self->request(handles_.remote, request_timeout, msg)
      .receive(
        [&](caf::error& err) {
          result = std::move(err);
        },
        // Whatever comes back is the result, even when it is not a T.
        caf::others >> [&](caf::message_view& x) -> caf::result<caf::message> {
          result = x.copy_content_to_message();
          return caf::message{};
        });
    return result;
  }

  std::string render(const caf::error& err) {
    return sys_.render(err);
  }

private:
  test_config cfg_;
  caf::actor_system sys_{cfg_};
  process::child_process peer_;
  sample_handles handles_;
};

std::unique_ptr<wire_session>& session_ptr() {
  static std::unique_ptr<wire_session> ptr;
  return ptr;
}

// Started on first use, so that a peer that fails to start fails only the
// tests that use it (the round trips, and the sample checks, whose actor
// handles come from here), not the coverage guard.
wire_session& session() {
  auto& ptr = session_ptr();
  if (!ptr)
    ptr = std::make_unique<wire_session>();
  return *ptr;
}

// Ends the session before main returns: the actor system must not outlive
// Boost's teardown into static destruction.
struct session_teardown {
  ~session_teardown() {
    session_ptr().reset();
  }
};

// Sends `sample` to the peer and checks what comes back: one value of type
// T that `differences(sample, echoed)` finds equal. Empty on success, else
// what went wrong.
template <class T, class Differences>
std::string round_trip_problems(const T& sample, const std::string& name,
                                Differences differences) {
  auto reply = session().echo(caf::make_message(sample));
  if (!reply)
    return "the request failed: " + session().render(reply.error());
  if (!reply->template match_elements<T>())
    return "the reply is " + caf::to_string(*reply) + ", not one " + name;
  auto& echoed = reply->template get_as<T>(0);
  auto problems = differences(sample, echoed);
  if (!problems.empty())
    return "fields changed on the way:" + problems;
  // A second opinion, through the inspectors: what they print must match.
  auto sent_text = caf::deep_to_string(sample);
  auto echoed_text = caf::deep_to_string(echoed);
  if (sent_text != echoed_text)
    return "inspect() output changed on the way:\n  sent   " + sent_text
      + "\n  echoed " + echoed_text;
  return {};
}

template <class T>
std::string field_differences(const T& x, const T& y) {
  field_diff diff;
  diff.compare(name_of<T>(), x, y);
  return diff.report();
}

// Counts the fields an `inspect` overload hands to its inspector.
struct field_counter {
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;

  size_t count = 0;

  template <class... Ts>
  void operator()(Ts&&...) {
    count += (size_t{0} + ... + (caf::meta::is_annotation<Ts>::value ? 0 : 1));
  }
};

template <class T>
size_t inspected_field_count() {
  field_counter f;
  T x;
  inspect(f, x);
  return f.count;
}

/// What an exchange_forward or exchange_relayed carries: each of these, in a
/// `caf::message` of its own.
using exchange_payload_types
  = std::tuple<exchange_put, exchange_take, exchange_close, exchange_reply,
               exchange_part, exchange_result, exchange_task_end,
               exchange_node_lost, exchange_probe, exchange_probe_reply,
               exchange_deadlock, exchange_relay_ack>;

std::string join(const std::set<std::string>& names) {
  std::string result;
  for (auto& name : names)
    result += "\n  " + name;
  return result;
}

} // namespace

BOOST_TEST_GLOBAL_FIXTURE(session_teardown);

BOOST_AUTO_TEST_SUITE(wire)

// The guard against a new type without a cross-process test. CAF registers
// "std::vector<T>" and "stream<T>" with each T on its own; those are not
// epochrt's names and are left out.
BOOST_AUTO_TEST_CASE(every_registered_type_has_a_round_trip) {
  caf::actor_system_config baseline;
  std::set<std::string> all;
  for (auto& kvp : registered_names())
    if (baseline.type_names_by_rtti.count(kvp.first) == 0)
      all.insert(kvp.second);
  std::set<std::string> registered;
  for (auto& name : all) {
    auto companion_of = [&](const std::string& prefix) {
      return name.size() > prefix.size() + 1
        && name.compare(0, prefix.size(), prefix) == 0 && name.back() == '>'
        && all.count(
             name.substr(prefix.size(), name.size() - prefix.size() - 1))
        > 0;
    };
    if (!companion_of("std::vector<") && !companion_of("stream<"))
      registered.insert(name);
  }
  std::set<std::string> tested;
  for_each_type<all_message_types>([&](auto tag) {
    using type = typename decltype(tag)::type;
    tested.insert(name_of<type>());
  });
  std::set<std::string> untested;
  for (auto& name : registered)
    if (tested.count(name) == 0)
      untested.insert(name);
  std::set<std::string> unregistered;
  for (auto& name : tested)
    if (registered.count(name) == 0)
      unregistered.insert(name);
  // Were the registry's names ever not found, this guard would pass empty.
  BOOST_TEST(registered.size() >= 50u);
  BOOST_TEST(untested.empty(),
             "registered by add_message_types but not in "
             "EPOCHRT_ALL_MESSAGES:"
               << join(untested));
  BOOST_TEST(
    unregistered.empty(),
    "in EPOCHRT_ALL_MESSAGES but not registered:" << join(unregistered));
}

// Most `inspect`s are made from the fields of a type's list; those written
// by hand (collective_contribution's views) must hand over every listed
// field too, or field_diff would compare a field that never crosses.
BOOST_AUTO_TEST_CASE_TEMPLATE(inspect_hands_over_every_listed_field, T,
                              all_message_types) {
  field_diff diff;
  diff.compare(name_of<T>(), T{}, T{});
  BOOST_TEST(
    diff.top_fields().size() == inspected_field_count<T>(),
    name_of<T>() << ": field_diff compares " << diff.top_fields().size()
                 << " fields, inspect() has " << inspected_field_count<T>());
}

// A field left at its default would come back "unchanged" even when the wire
// dropped it.
BOOST_AUTO_TEST_CASE_TEMPLATE(the_sample_sets_every_field, T,
                              all_message_types) {
  auto sample = make_sample<T>(session().handles());
  field_diff diff;
  diff.compare(name_of<T>(), T{}, sample);
  if (!std::is_empty<T>::value)
    BOOST_TEST(!diff.top_fields().empty(),
               "field_diff lists no field of " << name_of<T>());
  for (auto& field : diff.top_fields())
    BOOST_TEST(diff.differs_in(field),
               name_of<T>() << "." << field << " keeps its default");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_value_comes_back_unchanged_from_another_process,
                              T, all_message_types) {
  auto sample = make_sample<T>(session().handles());
  auto problems
    = round_trip_problems(sample, name_of<T>(), field_differences<T>);
  BOOST_TEST(problems.empty(), name_of<T>() << ": " << problems);
}

// exchange_forward and exchange_relayed carry an exchange message in a
// caf::message of their own, which the middleman serializes by type name:
// every kind the exchange hub passes on must cross inside both.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_payload_comes_back_unchanged_inside_a_relay, P,
                              exchange_payload_types) {
  auto& handles = session().handles();
  auto payload = caf::make_message(make_sample<P>(handles));
  auto forward_problems = round_trip_problems(
    exchange_forward{handles.remote, payload}, name_of<exchange_forward>(),
    field_differences<exchange_forward>);
  BOOST_TEST(forward_problems.empty(),
             name_of<P>() << " in " << name_of<exchange_forward>() << ": "
                          << forward_problems);
  auto relayed_problems = round_trip_problems(
    exchange_relayed{handles.local, payload}, name_of<exchange_relayed>(),
    field_differences<exchange_relayed>);
  BOOST_TEST(relayed_problems.empty(),
             name_of<P>() << " in " << name_of<exchange_relayed>() << ": "
                          << relayed_problems);
}

// The views a sender puts into an all-reduce's part or result instead of
// copies: written as the tensors they stand for, byte for byte, and
// received as those tensors, also from another process and inside a relay.
namespace {

std::shared_ptr<const tensor> ten_floats() {
  return std::make_shared<const tensor>(
    make_tensor<float>({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

// Elements 3..6 of ten_floats(), and none (an empty piece).
std::vector<tensor> copied_slices() {
  return {make_tensor<float>({4}, {3, 4, 5, 6}), make_tensor<float>({0}, {})};
}

std::vector<tensor_slice_view> viewed_slices() {
  auto source = ten_floats();
  return {tensor_slice_view{source, 3, 7}, tensor_slice_view{source, 10, 10}};
}

template <class T>
std::vector<char> bytes_of(T x) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  auto err = sink(x);
  BOOST_REQUIRE(!err);
  return buf;
}

template <class T>
T read_back(const std::vector<char>& buf) {
  T result;
  caf::binary_deserializer source{nullptr, buf};
  auto err = source(result);
  BOOST_REQUIRE(!err);
  return result;
}

exchange_result result_with(std::vector<tensor> values,
                            std::vector<tensor_slice_view> views) {
  exchange_result x{7, "grads", 2, 4, std::move(values), "", std::move(views)};
  return x;
}

exchange_part part_with(std::vector<tensor> values,
                        std::vector<tensor_slice_view> views) {
  collective_contribution c{1,
                            {dtype::f32, dtype::f32},
                            {{2, 5}, {2, 5}},
                            std::move(values),
                            std::move(views)};
  return exchange_part{7, "grads", 2, 4, {c}};
}

} // namespace

BOOST_AUTO_TEST_CASE(a_view_is_written_as_the_tensor_it_stands_for) {
  auto viewed = result_with({}, viewed_slices());
  auto copied = result_with(copied_slices(), {});
  BOOST_TEST(bytes_of(viewed) == bytes_of(copied));
  auto back = read_back<exchange_result>(bytes_of(viewed));
  BOOST_TEST(back.views.empty());
  BOOST_TEST(field_differences(copied, back) == "");
  auto part_viewed = part_with({}, viewed_slices());
  auto part_copied = part_with(copied_slices(), {});
  BOOST_TEST(bytes_of(part_viewed) == bytes_of(part_copied));
  auto part_back = read_back<exchange_part>(bytes_of(part_viewed));
  BOOST_TEST(part_back.parts.at(0).views.empty());
  BOOST_TEST(field_differences(part_copied, part_back) == "");
}

BOOST_AUTO_TEST_CASE(a_view_arrives_in_another_process_as_the_tensor) {
  auto check = [](caf::message sent, auto expected, const char* what) {
    using T = decltype(expected);
    auto reply = session().echo(std::move(sent));
    // (Boost evaluates a message even when its assertion holds.)
    BOOST_REQUIRE_MESSAGE(
      reply,
      what << ": "
           << (reply ? std::string{} : session().render(reply.error())));
    BOOST_REQUIRE_MESSAGE(reply->template match_elements<T>(),
                          what << ": " << caf::to_string(*reply));
    BOOST_TEST(field_differences(expected, reply->template get_as<T>(0)) == "",
               what);
  };
  check(caf::make_message(result_with({}, viewed_slices())),
        result_with(copied_slices(), {}), "result");
  check(caf::make_message(part_with({}, viewed_slices())),
        part_with(copied_slices(), {}), "part");
  auto& handles = session().handles();
  check(caf::make_message(exchange_forward{
          handles.remote, caf::make_message(part_with({}, viewed_slices()))}),
        exchange_forward{handles.remote,
                         caf::make_message(part_with(copied_slices(), {}))},
        "part in a relay");
}

// The comparison of a nested payload is not vacuous: it sees a change deep
// inside the payload, a payload of another type, a lost payload, and it
// refuses to call equal what it cannot compare.
BOOST_AUTO_TEST_CASE(field_diff_looks_inside_a_payload) {
  sample_handles none;
  auto put = make_sample<exchange_put>(none);
  exchange_forward sent{caf::actor{}, caf::make_message(put)};
  auto changed = put;
  changed.item.front().data.back() ^= 1;
  auto differences = [&](const caf::message& payload) {
    field_diff diff;
    diff.compare("exchange_forward", sent,
                 exchange_forward{caf::actor{}, payload});
    return diff.report();
  };
  BOOST_TEST(differences(caf::make_message(put)).empty());
  auto deep = differences(caf::make_message(changed));
  BOOST_TEST(deep.find("exchange_forward.payload(exchange_put).item[0].data")
               != std::string::npos,
             deep);
  auto take = make_sample<exchange_take>(none);
  BOOST_TEST(!differences(caf::make_message(take)).empty());
  BOOST_TEST(!differences(caf::message{}).empty());
  BOOST_TEST(!differences(caf::make_message(put, take)).empty());
  field_diff unknown;
  auto text = caf::make_message(std::string{"not an exchange message"});
  unknown.compare("exchange_forward", exchange_forward{caf::actor{}, text},
                  exchange_forward{caf::actor{}, text});
  BOOST_TEST(!unknown.report().empty(),
             "a payload field_diff cannot compare passed for equal");
}

// Proves the round trip can fail: CAF empties a value of a type the peer
// does not know instead of refusing to send it.
BOOST_AUTO_TEST_CASE(a_type_the_peer_does_not_know_does_not_come_back) {
  unregistered_probe probe{"sent", 42};
  auto problems = round_trip_problems(
    probe, "epochrt::test::unregistered_probe",
    [](const unregistered_probe& x, const unregistered_probe& y) {
      return x.text == y.text && x.number == y.number
        ? std::string{}
        : std::string{"\n  text or number"};
    });
  BOOST_TEST(!problems.empty(), "the peer echoed a type it never registered");
  BOOST_TEST_MESSAGE("as expected: " << problems);
}

BOOST_AUTO_TEST_CASE(the_peer_still_echoes_after_a_type_it_does_not_know) {
  session().echo(caf::make_message(unregistered_probe{"lost", 1}));
  auto sample = make_sample<ckpt_report>(session().handles());
  auto problems = round_trip_problems(sample, name_of<ckpt_report>(),
                                      field_differences<ckpt_report>);
  BOOST_TEST(problems.empty(), problems);
}

BOOST_AUTO_TEST_CASE(the_peer_exits_when_its_stdin_closes) {
  auto peer = start_peer();
  peer.close_stdin();
  BOOST_TEST(peer.wait(peer_exit_timeout) == 0);
}

BOOST_AUTO_TEST_CASE(the_peer_exits_on_sigterm) {
  auto peer = start_peer();
  peer.signal(SIGTERM);
  BOOST_TEST(peer.wait(peer_exit_timeout) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
