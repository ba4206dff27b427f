// Retention: removing the databases of old epochs, but payloads that kept
// incremental checkpoints still refer to.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "test/persistence/test_util.hpp"
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/faults/fault_plan.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_retention.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

struct retention_fixture : persistence_fixture {
  writer_options opts;

  retention_fixture() {
    opts.inline_bytes = 1024;
  }

  std::string db(const std::string& node, int64_t epoch) const {
    return (*this)(node + "." + std::to_string(epoch));
  }

  // Writes `node`'s checkpoint of `epoch` with a fresh "w", reusing
  // `reused` entries of earlier manifests.
  manifest save(const std::string& node, int64_t epoch,
                const std::vector<blob_entry>& reused = {}) {
    auto writer = checkpoint_writer::create(db(node, epoch), node, epoch, opts);
    BOOST_REQUIRE(writer);
    for (auto& entry : reused)
      BOOST_REQUIRE(!(*writer)->reuse(entry));
    BOOST_REQUIRE(!(*writer)->put("w", floats(1000, epoch)));
    auto written = (*writer)->finish();
    BOOST_REQUIRE_MESSAGE(written, describe(written));
    return *written;
  }

  std::vector<std::string> kept(const std::string& node,
                                std::vector<int64_t> epochs) const {
    std::vector<std::string> result;
    for (auto e : epochs)
      result.push_back(db(node, e));
    return result;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(retention, retention_fixture)

BOOST_AUTO_TEST_CASE(databases_older_than_the_oldest_kept_one_are_removed) {
  for (int64_t e = 1; e <= 5; ++e)
    save("trainer_0", e);
  auto report = remove_old_databases(kept("trainer_0", {4, 5}));
  BOOST_REQUIRE_MESSAGE(report, describe(report));
  BOOST_TEST(report->removed.size() == 3u);
  BOOST_TEST(report->bytes > 0u);
  for (int64_t e = 1; e <= 3; ++e)
    BOOST_TEST(!fs::exists(db("trainer_0", e)));
  for (int64_t e = 4; e <= 5; ++e)
    BOOST_TEST(static_cast<bool>(checkpoint_reader::open(db("trainer_0", e))));
}

BOOST_AUTO_TEST_CASE(a_database_whose_payload_a_kept_one_refers_to_stays) {
  auto first = save("trainer_0", 1);
  save("trainer_0", 2);
  // Epoch 3 keeps epoch 1's "w" as "frozen".
  auto frozen = entry_of(first, "w");
  frozen.name = "frozen";
  save("trainer_0", 3, {frozen});
  auto report = remove_old_databases(kept("trainer_0", {3}));
  BOOST_REQUIRE_MESSAGE(report, describe(report));
  BOOST_TEST(report->removed == kept("trainer_0", {2}));
  BOOST_TEST(report->referenced == kept("trainer_0", {1}));
  auto reader = checkpoint_reader::open(db("trainer_0", 3));
  BOOST_REQUIRE(reader);
  auto back = (*reader)->read("frozen");
  BOOST_REQUIRE_MESSAGE(back, describe(back));
  BOOST_TEST((*back == floats(1000, 1)));
}

BOOST_AUTO_TEST_CASE(an_old_database_nobody_refers_to_any_more_goes_later) {
  auto first = save("trainer_0", 1);
  auto frozen = entry_of(first, "w");
  frozen.name = "frozen";
  save("trainer_0", 2, {frozen});
  BOOST_REQUIRE(remove_old_databases(kept("trainer_0", {2})));
  BOOST_TEST(fs::exists(db("trainer_0", 1)));
  save("trainer_0", 3); // a full save: no reference left
  auto report = remove_old_databases(kept("trainer_0", {3}));
  BOOST_REQUIRE(report);
  BOOST_TEST(report->removed == kept("trainer_0", {1, 2}));
}

BOOST_AUTO_TEST_CASE(other_nodes_newer_epochs_and_strangers_are_untouched) {
  for (int64_t e = 1; e <= 3; ++e) {
    save("trainer_0", e);
    save("trainer_1", e);
  }
  save("trainer_0", 7); // newer than every kept one: a save in progress
  fs::create_directories((*this)("trainer_0.notanepoch"));
  fs::create_directories((*this)("trainer_0.1.partial"));
  fs::create_directories((*this)("trainer_0.1.copying"));
  fs::create_directories((*this)("trainer_00.1"));
  auto report = remove_old_databases(kept("trainer_0", {3}));
  BOOST_REQUIRE(report);
  BOOST_TEST(report->removed == kept("trainer_0", {1, 2}));
  for (int64_t e = 1; e <= 3; ++e)
    BOOST_TEST(fs::exists(db("trainer_1", e)));
  BOOST_TEST(fs::exists(db("trainer_0", 7)));
  BOOST_TEST(fs::exists((*this)("trainer_0.notanepoch")));
  BOOST_TEST(fs::exists((*this)("trainer_0.1.partial")));
  BOOST_TEST(fs::exists((*this)("trainer_0.1.copying")));
  BOOST_TEST(fs::exists((*this)("trainer_00.1")));
}

BOOST_AUTO_TEST_CASE(
  a_node_whose_name_extends_another_with_a_dot_is_not_its_epoch) {
  // "trainer.1.5" is epoch 5 of node "trainer.1", not of node "trainer".
  save("trainer", 7);
  save("trainer.1", 5);
  save("trainer.1", 8);
  auto report = remove_old_databases(kept("trainer", {7}));
  BOOST_REQUIRE(report);
  BOOST_TEST(report->removed.empty());
  BOOST_TEST(fs::exists(db("trainer.1", 5)));
}

BOOST_AUTO_TEST_CASE(leftovers_of_an_interrupted_removal_are_removed) {
  save("trainer_0", 1);
  save("trainer_0", 2);
  fs::rename(db("trainer_0", 1), db("trainer_0", 1) + ".deleting");
  auto report = remove_old_databases(kept("trainer_0", {2}));
  BOOST_REQUIRE(report);
  BOOST_TEST(!fs::exists(db("trainer_0", 1) + ".deleting"));
}

BOOST_AUTO_TEST_CASE(an_unreadable_kept_database_removes_nothing) {
  save("trainer_0", 1);
  save("trainer_0", 2);
  fs::remove(db("trainer_0", 2) + "/CURRENT");
  auto report = remove_old_databases(kept("trainer_0", {2}));
  BOOST_TEST(!report);
  BOOST_TEST(fs::exists(db("trainer_0", 1)));
}

BOOST_AUTO_TEST_CASE(a_missing_kept_database_removes_nothing) {
  save("trainer_0", 1);
  auto report = remove_old_databases(kept("trainer_0", {2}));
  BOOST_TEST(has_code(report, persistence_errc::not_found));
  BOOST_TEST(fs::exists(db("trainer_0", 1)));
}

// A daemon's copies: it need not hold every kept epoch of another node.
BOOST_AUTO_TEST_CASE(a_kept_database_allowed_missing_refers_to_nothing) {
  save("trainer_0", 1);
  save("trainer_0", 2);
  retention_options copies;
  copies.kept_may_be_missing = true;
  auto report = remove_old_databases(kept("trainer_0", {3, 4}), copies);
  BOOST_REQUIRE_MESSAGE(report, describe(report));
  BOOST_TEST(report->removed.size() == 2u);
  BOOST_TEST(!fs::exists(db("trainer_0", 1)));
  BOOST_TEST(!fs::exists(db("trainer_0", 2)));
}

BOOST_AUTO_TEST_CASE(
  a_damaged_kept_database_removes_nothing_even_allowed_missing) {
  save("trainer_0", 1);
  save("trainer_0", 2);
  // CURRENT there but unreadable: a damaged database, not a missing one.
  std::ofstream{db("trainer_0", 2) + "/CURRENT", std::ios::trunc} << "garbage";
  retention_options copies;
  copies.kept_may_be_missing = true;
  auto report = remove_old_databases(kept("trainer_0", {2}), copies);
  BOOST_TEST(!report);
  BOOST_TEST(fs::exists(db("trainer_0", 1)));
}

BOOST_AUTO_TEST_CASE(a_directory_allowed_missing_holds_nothing_to_remove) {
  retention_options copies;
  copies.kept_may_be_missing = true;
  auto report = remove_old_databases({(*this)("absent/trainer_0.3")}, copies);
  BOOST_REQUIRE_MESSAGE(report, describe(report));
  BOOST_TEST(report->removed.empty());
  BOOST_TEST(has_code(remove_old_databases({(*this)("absent/trainer_0.3")}),
                      persistence_errc::not_found));
}

BOOST_AUTO_TEST_CASE(kept_paths_of_two_nodes_are_refused) {
  save("trainer_0", 1);
  save("trainer_1", 1);
  std::vector<std::string> mixed{db("trainer_0", 1), db("trainer_1", 1)};
  BOOST_TEST(
    has_code(remove_old_databases(mixed), persistence_errc::invalid_argument));
  BOOST_TEST(
    has_code(remove_old_databases({}), persistence_errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(
  a_failure_between_two_removals_leaves_every_kept_epoch_loadable) {
  auto first = save("trainer_0", 1);
  auto frozen = entry_of(first, "w");
  frozen.name = "frozen";
  save("trainer_0", 2, {frozen});
  save("trainer_0", 3, {frozen});
  save("trainer_0", 4, {frozen});
  auto plan = parse_fault_plan(
    R"({"faults": [{"point": "gc.remove.after", "fault": "io_error"}]})",
    "plan");
  BOOST_REQUIRE(plan);
  fault_injector faults{std::move(*plan)};
  retention_options opts;
  opts.faults = &faults;
  opts.node = "trainer_0";
  BOOST_TEST(!remove_old_databases(kept("trainer_0", {4}), opts));
  // One database went, then the "crash": the rest is intact, and the next
  // pass finishes the job.
  for (int64_t e : {4}) {
    auto reader = checkpoint_reader::open(db("trainer_0", e));
    BOOST_REQUIRE(reader);
    BOOST_TEST(!(*reader)->verify());
  }
  auto report = remove_old_databases(kept("trainer_0", {4}));
  BOOST_REQUIRE(report);
  BOOST_TEST(!fs::exists(db("trainer_0", 2)));
  BOOST_TEST(!fs::exists(db("trainer_0", 3)));
  BOOST_TEST(fs::exists(db("trainer_0", 1)));
}

BOOST_AUTO_TEST_CASE(a_plan_keeps_the_last_epochs_up_to_the_one_saved) {
  auto plan = plan_retention({5, 1, 3, 2, 3, 4}, 2, 3);
  BOOST_TEST(plan.dropped == (std::vector<int64_t>{1}),
             boost::test_tools::per_element());
  BOOST_TEST(plan.kept == (std::vector<int64_t>{2, 3, 4, 5}),
             boost::test_tools::per_element());
  plan = plan_retention({1, 2, 3}, 5);
  BOOST_TEST(plan.dropped.empty());
  BOOST_TEST(plan.kept.size() == 3u);
  plan = plan_retention({1, 2, 3}, 0);
  BOOST_TEST(plan.dropped.empty());
  BOOST_TEST(plan_retention({}, 1).kept.empty());
}

BOOST_AUTO_TEST_SUITE_END()
