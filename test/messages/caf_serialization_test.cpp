#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
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
#include <caf/stream_deserializer.hpp>
#include <caf/stream_serializer.hpp>
#include <caf/streambuf.hpp>

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

// A tensor's bytes are read by hand (tensor.hpp): on the wire they must
// stay exactly what CAF writes for a std::vector<char>.
BOOST_AUTO_TEST_CASE(a_tensor_goes_on_the_wire_as_its_fields_would) {
  auto x = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<char> as_tensor;
  std::vector<char> as_fields;
  caf::binary_serializer tensor_sink{sys, as_tensor};
  caf::binary_serializer fields_sink{sys, as_fields};
  BOOST_REQUIRE(!tensor_sink(x));
  BOOST_REQUIRE(!fields_sink(x.type, x.shape, x.data, x.strings));
  BOOST_TEST(as_tensor == as_fields);
}

BOOST_AUTO_TEST_CASE(a_tensor_read_from_a_binary_deserializer_has_its_bytes) {
  auto x = make_tensor<double>({3}, {0.5, -1.25, 1e300});
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  BOOST_REQUIRE(!sink(x));
  tensor out = make_tensor<float>({1}, {7}); // bytes to be replaced
  caf::binary_deserializer source{sys, buf};
  BOOST_REQUIRE(!source(out));
  BOOST_TEST(source.remaining() == 0u);
  BOOST_TEST((out.type == x.type));
  BOOST_TEST(out.shape == x.shape);
  BOOST_TEST(out.data == x.data);
}

// Any other deserializer reads them as CAF reads a vector.
BOOST_AUTO_TEST_CASE(a_tensor_read_from_a_stream_deserializer_has_its_bytes) {
  auto x = make_tensor<int32_t>({2, 2}, {1, -2, 3, -4});
  std::vector<char> buf;
  {
    caf::containerbuf<std::vector<char>> out{buf};
    caf::stream_serializer<caf::containerbuf<std::vector<char>>&> sink{sys,
                                                                       out};
    BOOST_REQUIRE(!sink(x));
  }
  caf::charbuf in{buf.data(), buf.size()};
  caf::stream_deserializer<caf::charbuf&> source{sys, in};
  tensor out;
  BOOST_REQUIRE(!source(out));
  BOOST_TEST(out.data == x.data);
  BOOST_TEST(out.shape == x.shape);
}

// A count of bytes past the end of the input is refused before anything is
// allocated for it: a peer cannot make a process allocate 4 GiB with a
// message of a few bytes (CAF writes counts of 32 bits).
BOOST_AUTO_TEST_CASE(
  a_tensor_claiming_more_bytes_than_the_input_holds_is_refused) {
  auto x = make_tensor<float>({4}, {1, 2, 3, 4});
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  size_t claimed = std::numeric_limits<uint32_t>::max();
  BOOST_REQUIRE(!sink(x.type, x.shape));
  BOOST_REQUIRE(!sink.begin_sequence(claimed));
  BOOST_REQUIRE(!sink.apply_raw(x.data.size(), x.data.data()));
  tensor out;
  caf::binary_deserializer source{sys, buf};
  auto err = source(out);
  BOOST_TEST((err == caf::sec::end_of_stream), sys.render(err));
  BOOST_TEST(out.data.capacity() < claimed);
}

BOOST_AUTO_TEST_SUITE_END()
