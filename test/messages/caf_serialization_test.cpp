#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <typeinfo>

#include <boost/core/demangle.hpp>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include "test/messages/member_count.hpp"
#include "test/messages/message_samples.hpp"
#include <epochrt/messages/message_types.hpp>

using namespace epochrt;
using namespace epochrt::test;

namespace {

// Members that are not fields: the views an all-reduce's sender hands over
// instead of values, which go on the wire as those values.
template <class T>
constexpr size_t unlisted_members = 0;

template <>
constexpr size_t unlisted_members<collective_contribution> = 1;

template <>
constexpr size_t unlisted_members<exchange_result> = 1;

// Equality through CAF's inspectors, which hand over every listed field.
template <class T>
bool same(const T& x, const T& y) {
  return caf::deep_to_string(x) == caf::deep_to_string(y);
}

struct config : caf::actor_system_config {
  config() {
    epochrt::add_message_types(*this);
    set("scheduler.max-threads", 1);
  }
};

struct fixture {
  config cfg;
  caf::actor_system sys{cfg};

  // Serializes `sample` inside a message, reads it back, and checks that
  // the same value came out.
  template <class T>
  void round_trip(const T& sample) {
    auto msg = caf::make_message(sample);
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    auto err = sink(msg);
    BOOST_REQUIRE_MESSAGE(!err, sys.render(err));
    BOOST_TEST(buf.size() > 8u);
    caf::message out;
    caf::binary_deserializer source{sys, buf};
    err = source(out);
    BOOST_REQUIRE_MESSAGE(!err, sys.render(err));
    BOOST_REQUIRE(out.size() == 1u);
    BOOST_REQUIRE(out.match_element<T>(0));
    BOOST_TEST(same(out.get_as<T>(0), sample));
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(caf_serialization, fixture)

// A type CAF does not know is silently emptied on the wire; this round trip
// through a message catches a missing registration.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_message_survives_binary_serialization, T,
                              all_message_types) {
  round_trip(make_sample<T>(sample_handles{}));
}

// The names are the wire protocol: "epochrt::" and the name of the type.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_message_is_registered_by_its_name, T,
                              all_message_types) {
  std::string name = message_fields<T>::name;
  auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || c == '_';
  };
  BOOST_TEST(name.rfind("epochrt::", 0) == 0u, name);
  BOOST_TEST(std::all_of(name.begin() + 9, name.end(), is_name_char), name);
  BOOST_TEST(boost::core::demangle(typeid(T).name()) == name);
}

// A member left out of its type's list would neither cross the wire nor be
// compared by any test. The compiler counts the members of each struct.
BOOST_AUTO_TEST_CASE_TEMPLATE(every_member_of_a_message_is_listed, T,
                              all_message_types) {
  BOOST_TEST(member_count<T>()
               == message_fields<T>::count + unlisted_members<T>,
             message_fields<T>::name << " has " << member_count<T>()
                                     << " members, its list "
                                     << message_fields<T>::count);
}

BOOST_AUTO_TEST_SUITE_END()
