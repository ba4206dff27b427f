#include <boost/test/unit_test.hpp>

#include <typeinfo>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include "test/messages/sample_values.hpp"
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/messages/message_types.hpp>

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

// The job runner and checkpoint manager protocol, which has no codec.
template <class F>
void for_each_manager_sample(F&& f) {
  f(node_ref{"trainer_1", persistence_actor{}, "10.0.0.1:7001"});
  f(ckpt_set_params{{"trainer_0", "trainer_1"}, "/tmp/p/", "{}", true});
  f(ckpt_init{{node_ref{"trainer_0", persistence_actor{}, {}}}, 3, "/x/"});
  f(ckpt_save{7});
  f(ckpt_load{4, "/y/", {"total", "w"}, true});
  f(ckpt_exists{2, true});
  f(ckpt_verify_copies{2});
  f(ckpt_retain{2});
  f(retention_result{{3, 4}, {"/ckpt/trainer_0.1"}, 4096});
  f(database_checks{
    {database_check{"trainer_0", "127.0.0.1:7001", false,
                    checkpoint_status{true, true, false, "bad digest"}}}});
  f(ckpt_resume_epoch{5, 9, {}});
  f(resume_point{4, true});
  f(ckpt_write_metadata{6});
  f(ckpt_report{"checkpoint_save"});
  f(ckpt_accessible{3});
  f(run_job{2});
  f(run_attempt{2, true});
  f(job_result{8});
  f(reset_workspace{"no usable checkpoint"});
  f(check_ops{{"Add", "PyScale"}});
  f(begin_save{"trainer_0", 3, "/ckpt/trainer_0.3"});
  f(snapshot_taken{3});
  f(end_save{"trainer_0", 3});
  f(ckpt_save_async{3, true});
  f(ckpt_flush{4});
  f(ckpt_result{{sample_checkpoint_stats()}, {"trainer_0"}, {{"a", "b"}}});
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(caf_serialization, fixture)

// A type CAF does not know is silently emptied on the wire; this round trip
// through a message catches a missing registration or a field left out of
// an `inspect`.
BOOST_AUTO_TEST_CASE(every_registered_type_survives_binary_serialization) {
  for_each_sample([&](const auto& sample) {
    BOOST_TEST_CONTEXT(typeid(sample).name()) {
      round_trip(sample);
    }
  });
}

BOOST_AUTO_TEST_CASE(
  every_manager_protocol_type_survives_binary_serialization) {
  for_each_manager_sample([&](const auto& sample) {
    BOOST_TEST_CONTEXT(typeid(sample).name()) {
      round_trip(sample);
    }
  });
}

BOOST_AUTO_TEST_SUITE_END()
