// The record keeper over a metadata handler a host program writes: one
// record read and written whole, and nothing else.

#include <boost/test/unit_test.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;

namespace {

// A host's handler that keeps its record in memory and counts its writes.
class memory_metadata : public metadata_handler {
public:
  std::optional<checkpoint_metadata> record;
  std::vector<record_change> writes;

  caf::expected<std::optional<checkpoint_metadata>> read_record() override {
    return record;
  }

  caf::error write_record(const checkpoint_metadata& x,
                          const record_change& change) override {
    record = x;
    writes.push_back(change);
    return {};
  }

  caf::error check_writable() override {
    return {};
  }
};

struct keeper_fixture {
  std::shared_ptr<memory_metadata> handler
    = std::make_shared<memory_metadata>();
  record_keeper keeper{handler};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(record_keeper_suite, keeper_fixture)

BOOST_AUTO_TEST_CASE(no_record_is_nothing_committed) {
  auto epochs = keeper.committed_epochs();
  BOOST_REQUIRE(epochs);
  BOOST_TEST(epochs->empty());
  auto resume = keeper.resume_epoch(std::nullopt);
  BOOST_REQUIRE(resume);
  BOOST_TEST(!resume->has_value());
  BOOST_TEST(handler->writes.empty(), "reads write nothing");
}

BOOST_AUTO_TEST_CASE(each_change_is_one_write_of_the_whole_record) {
  BOOST_REQUIRE(!keeper.commit(1));
  std::vector<checkpoint_stats> stats{{"trainer_0", "db", 10, 100, 2}};
  BOOST_REQUIRE(!keeper.commit_save(2, true, stats));
  BOOST_REQUIRE(!keeper.uncommit(1));
  BOOST_REQUIRE_EQUAL(handler->writes.size(), 3u);
  BOOST_TEST(handler->writes[0].what == "write");
  BOOST_TEST(handler->writes[0].epoch == 1);
  BOOST_TEST(handler->writes[1].what == "write_final");
  BOOST_TEST(handler->writes[2].what == "uncommit");
  BOOST_TEST(handler->record->committed_epochs == (std::vector<int64_t>{2}));
  BOOST_TEST(handler->record->final_epoch == 2);
  BOOST_TEST((handler->record->last_stats == stats));
  BOOST_TEST(handler->record->last_action == "checkpoint_save");
}

BOOST_AUTO_TEST_CASE(uncommitting_an_epoch_not_committed_writes_nothing) {
  BOOST_REQUIRE(!keeper.commit(1));
  BOOST_REQUIRE(!keeper.uncommit(7));
  BOOST_TEST(handler->writes.size() == 1u);
}

BOOST_AUTO_TEST_CASE(reporting_a_load_writes_nothing) {
  BOOST_REQUIRE(!keeper.report("checkpoint_load", {}));
  BOOST_TEST(handler->writes.empty());
  BOOST_REQUIRE(!keeper.report("save", {}));
  BOOST_TEST(handler->record->last_action == "save");
}

BOOST_AUTO_TEST_CASE(every_write_carries_the_parameters_set) {
  keeper.set_params("/ckpt", {"trainer_0", "trainer_1"});
  keeper.set_job_definition("job v1");
  BOOST_REQUIRE(!keeper.commit(0));
  BOOST_TEST(handler->record->db_prefix == "/ckpt");
  BOOST_TEST(handler->record->node_names
             == (std::vector<std::string>{"trainer_0", "trainer_1"}));
  BOOST_TEST(handler->record->job_definition == "job v1");
}

BOOST_AUTO_TEST_CASE(a_keeper_without_parameters_keeps_those_recorded) {
  checkpoint_metadata recorded;
  recorded.db_prefix = "/ckpt";
  recorded.job_definition = "job v1";
  handler->record = recorded;
  BOOST_REQUIRE(!keeper.commit(3));
  BOOST_TEST(handler->record->db_prefix == "/ckpt");
  BOOST_TEST(handler->record->job_definition == "job v1");
}

BOOST_AUTO_TEST_CASE(a_record_of_another_job_is_not_adopted) {
  keeper.set_job_definition("job v2");
  checkpoint_metadata kept;
  kept.committed_epochs = {4};
  kept.job_definition = "job v1";
  auto err = keeper.adopt(kept);
  BOOST_TEST(is_error(err, persistence_errc::invalid_argument),
             error_text(err));
  BOOST_TEST(handler->writes.empty());
  kept.job_definition = "job v2";
  BOOST_REQUIRE(!keeper.adopt(kept));
  BOOST_TEST(handler->writes.back().what == "adopt");
  BOOST_TEST(handler->record->committed_epochs == (std::vector<int64_t>{4}));
}

BOOST_AUTO_TEST_CASE(a_record_that_cannot_be_read_is_changed_nowhere) {
  struct unreadable : memory_metadata {
    caf::expected<std::optional<checkpoint_metadata>> read_record() override {
      return make_error(persistence_errc::corrupt, "bad record");
    }
  };
  auto bad = std::make_shared<unreadable>();
  record_keeper over_bad{bad};
  BOOST_TEST(is_error(over_bad.commit(1), persistence_errc::corrupt));
  BOOST_TEST(is_error(over_bad.uncommit(1), persistence_errc::corrupt));
  BOOST_TEST(!over_bad.committed_epochs());
  BOOST_TEST(bad->writes.empty());
}

BOOST_AUTO_TEST_SUITE_END()
