#include <boost/test/unit_test.hpp>

#include <typeinfo>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include "messages/message_types.hpp"
#include "test/messages/sample_values.hpp"

using namespace epochrt;
using namespace epochrt::test;

namespace {

struct config : caf::actor_system_config {
  config() {
    epochrt::add_message_types(*this);
    set("scheduler.max-threads", 1);
  }
};

struct fixture {
  config cfg;
  caf::actor_system sys{cfg};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(caf_serialization, fixture)

// A type CAF does not know is silently emptied on the wire; this round trip
// through a message catches a missing registration or a field left out of
// an `inspect`.
BOOST_AUTO_TEST_CASE(every_registered_type_survives_binary_serialization) {
  for_each_sample([&](const auto& sample) {
    using type = std::decay_t<decltype(sample)>;
    BOOST_TEST_CONTEXT(typeid(type).name()) {
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
      BOOST_REQUIRE(out.match_element<type>(0));
      BOOST_TEST(same(out.get_as<type>(0), sample));
    }
  });
}

BOOST_AUTO_TEST_SUITE_END()
