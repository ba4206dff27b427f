// The one loss a test cannot place in a real daemon's life on purpose: the
// node is lost after it took the last epoch's snapshot and before the
// manager heard that the write ended. A remote node's proxy then answers
// `end_save` with node_lost; here an actor between the manager and a real
// persistence actor answers the same, once the real write is done.

#include <boost/test/unit_test.hpp>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "test/actors/test_support.hpp"
#include <epochrt/actors/core/node_handle.hpp>
#include <epochrt/messages/manager_protocol.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using namespace std::chrono_literals;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

// Forwards everything to `real`; the first end_save of `epoch` gets the
// error a lost remote node's proxy gives, after the real write ended.
caf::behavior cut_last_commit(caf::event_based_actor* self, caf::actor real,
                              int64_t epoch, std::shared_ptr<int> cuts) {
  self->set_default_handler(
    [real](caf::scheduled_actor* ptr,
           caf::message_view& x) -> caf::result<caf::message> {
      auto* me = static_cast<caf::event_based_actor*>(ptr);
      auto rp = me->make_response_promise();
      rp.delegate(real, x.move_content_to_message());
      return rp;
    });
  return {
    [=](end_save& msg) -> caf::result<caf::message> {
      auto rp = self->make_response_promise();
      if (msg.epoch != epoch || *cuts > 0) {
        rp.delegate(real, std::move(msg));
        return rp;
      }
      ++*cuts;
      self->request(real, 30s, std::move(msg))
        .then(
          [rp](checkpoint_stats&) mutable {
            rp.deliver(make_error(actors_errc::node_lost,
                                  "lost the connection to node trainer_0 at "
                                  "127.0.0.1:1 (its process is gone)"));
          },
          [rp](caf::error& err) mutable {
            rp.deliver(std::move(err));
          });
      return rp;
    },
  };
}

// A local session whose node trainer_0 writes its checkpoints through
// cut_last_commit, and whose lost nodes "come back" at once.
class losing_session : public session {
public:
  losing_session(caf::actor_system& sys, std::shared_ptr<const op_registry> ops,
                 session_options opts, int64_t epoch)
    : session(opts), inner_(sys, std::move(ops), opts), epoch_(epoch) {
    // nop
  }

  ~losing_session() override {
    // A stopped actor holds up the system's shutdown by no request timeout.
    if (interposer_)
      caf::anon_send_exit(interposer_, caf::exit_reason::user_shutdown);
  }

  caf::actor_system& system() override {
    return inner_.system();
  }

  caf::expected<node_handle> node(const std::string& name) override {
    auto handle = inner_.node(name);
    if (!handle || name != "trainer_0")
      return handle;
    // The interposer is untyped: it forwards every request as it came.
    if (!interposer_)
      interposer_ = system().spawn(
        cut_last_commit, caf::actor_cast<caf::actor>(handle->persistence),
        epoch_, cuts);
    handle->persistence = caf::actor_cast<persistence_actor>(interposer_);
    return handle;
  }

  caf::error recover_lost_nodes() override {
    ++recoveries;
    return {};
  }

  std::shared_ptr<int> cuts = std::make_shared<int>(0);
  int recoveries = 0;

private:
  local_session inner_;
  int64_t epoch_;
  caf::actor interposer_;
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(recovery, system_fixture)

BOOST_AUTO_TEST_CASE(a_node_lost_during_the_last_commit_is_recovered) {
  losing_session sess{sys, ops, quick_options(), 4};
  job_runner_options opts;
  opts.max_node_failures = 1;
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    job_runner runner{load_example("pipeline.json"), &ckpt, {}, nullptr, opts};
    auto epochs = runner.train(sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    BOOST_TEST(*epochs == 4);
  }
  BOOST_TEST(*sess.cuts == 1);
  BOOST_TEST(sess.recoveries == 1);
  auto value = sess.fetch("trainer_0", "total");
  BOOST_REQUIRE(value);
  BOOST_TEST(value->values<int64_t>()[0] == 145);
  // The job did not end without its last checkpoint.
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir.str())};
  auto final = metadata.final_epoch();
  BOOST_TEST((final && *final == 4));
}

BOOST_AUTO_TEST_CASE(a_node_lost_during_the_last_commit_fails_the_job_at_k_0) {
  losing_session sess{sys, ops, quick_options(), 4};
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(sess);
  BOOST_REQUIRE(!epochs);
  auto text = error_text(epochs.error());
  BOOST_TEST(epochs.error().code()
               == static_cast<uint8_t>(actors_errc::node_lost),
             text);
  BOOST_TEST(text.find("committing the checkpoint of epoch 4")
               != std::string::npos,
             text);
}

BOOST_AUTO_TEST_SUITE_END()
