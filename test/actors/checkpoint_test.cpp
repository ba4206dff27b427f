// Caffe2's checkpoint_test.py, through epochrt's C++ API: the job runner,
// CheckpointManager and MultiNodeCheckpointManager on local sessions with
// real LevelDB checkpoints on disk.

#define BOOST_TEST_MODULE actors_checkpoint
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include <sstream>

#include <unistd.h>

#include "test/actors/test_support.hpp"
#include "test/support/damaged_database.hpp"
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using epochrt::test::corrupt_database;
using epochrt::test::system_fixture;
using epochrt::test::why;

namespace {

// Totals of the reference pipeline after epochs 0 (init) to 4.
const double expected_totals[] = {100, 103, 115, 136, 145};

const std::vector<std::string> three_nodes{"trainer_0", "trainer_1",
                                           "trainer_2"};

// A durable metadata handler with a fault: slow, failing or throwing at a
// chosen call.
class faulty_metadata : public file_metadata_handler {
public:
  using file_metadata_handler::file_metadata_handler;

  // The save (counting from 1) whose first step, check_writable, takes
  // `save_delay`.
  int slow_save = 0;
  std::chrono::milliseconds save_delay{0};
  // Every read from this one on (counting from 1) fails; 0: none does.
  int failing_read = 0;
  bool throw_on_commit = false;

  int saves = 0;
  int reads = 0;

  caf::expected<std::optional<checkpoint_metadata>> read_record() override {
    if (++reads >= failing_read && failing_read > 0)
      return make_error(persistence_errc::io_error, "metadata unreadable");
    return file_metadata_handler::read_record();
  }

  caf::error check_writable() override {
    if (++saves == slow_save)
      std::this_thread::sleep_for(save_delay);
    return file_metadata_handler::check_writable();
  }

  caf::error write_record(const checkpoint_metadata& x,
                          const record_change& change) override {
    if (throw_on_commit
        && (change.what == "write" || change.what == "write_final"))
      throw std::runtime_error("disk on fire");
    return file_metadata_handler::write_record(x, change);
  }
};

// True when `err` is actors_errc::invalid_argument and its text names every
// part of `parts`.
bool refused_naming(const caf::error& err,
                    const std::vector<std::string>& parts) {
  if (!is_error(err, actors_errc::invalid_argument))
    return false;
  auto text = error_text(err);
  for (auto& part : parts)
    if (text.find(part) == std::string::npos)
      return false;
  return true;
}

// Every file below `dir`, by relative path, with its contents.
std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> result;
  for (auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    auto rel = std::filesystem::relative(entry.path(), dir).string();
    if (!entry.is_regular_file()) {
      result[rel] = "<dir>";
      continue;
    }
    std::ifstream in{entry.path(), std::ios::binary};
    result[rel] = std::string{std::istreambuf_iterator<char>{in},
                              std::istreambuf_iterator<char>{}};
  }
  return result;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(single_node, system_fixture)

// The pipeline job with `limit` epochs at most, total starting at `start`.
job limited_pipeline(int64_t limit, int64_t start = 100) {
  job j{"limited"};
  j.add_task(
    j.init_group(),
    make_task("init", "trainer_0",
              {make_op("ConstantFill", {}, {"total"},
                       {{"shape", make_tensor<int64_t>({1}, {1})},
                        {"value", make_scalar<int64_t>(start)},
                        {"dtype", make_string_tensor({}, {"i64"})}}),
               make_op("ConstantFill", {}, {"one"},
                       {{"shape", make_tensor<int64_t>({1}, {1})},
                        {"value", make_scalar<int64_t>(1)},
                        {"dtype", make_string_tensor({}, {"i64"})}})}));
  j.add_task(j.epoch_group(),
             make_task("add", "trainer_0",
                       {make_op("Add", {"total", "one"}, {"total"})}));
  BOOST_REQUIRE(!epoch_limiter(j, limit));
  return j;
}

BOOST_AUTO_TEST_CASE(a_finished_job_given_a_higher_limit_trains_up_to_it) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  {
    auto sess = new_session();
    job_runner runner{limited_pipeline(3), &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    BOOST_TEST(*epochs == 3);
  }
  auto sess = new_session();
  job_runner runner{limited_pipeline(5), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 5);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 105);
}

BOOST_AUTO_TEST_CASE(a_limit_below_the_committed_epoch_ends_at_once) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  {
    auto sess = new_session();
    job_runner runner{limited_pipeline(4), &ckpt};
    BOOST_REQUIRE(runner.train(*sess));
  }
  auto sess = new_session();
  job_runner runner{limited_pipeline(2), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 104);
  BOOST_TEST(logs.text().find("is below the last committed epoch")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_changed_job_is_refused_before_anything_runs) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  {
    auto sess = new_session();
    job_runner runner{limited_pipeline(2), &ckpt};
    BOOST_REQUIRE(runner.train(*sess));
  }
  auto sess = new_session();
  job_runner runner{limited_pipeline(2, 7), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_error(epochs.error(), actors_errc::job_changed));
  BOOST_TEST(error_text(epochs.error()).find("args.value: 100 -> 7")
             != std::string::npos);
  job_runner_options allowed;
  allowed.allow_job_change = true;
  job_runner anyway{limited_pipeline(2, 7), &ckpt, {}, nullptr, allowed};
  auto resumed = anyway.train(*sess);
  BOOST_REQUIRE_MESSAGE(resumed, why(resumed));
  BOOST_TEST(*resumed == 2);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 102);
}

BOOST_AUTO_TEST_CASE(a_job_without_checkpoints_runs_four_epochs_to_145) {
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json")};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_CASE(a_checkpointed_job_commits_epochs_zero_to_four) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir.str())};
  BOOST_TEST(*metadata.committed_epochs()
               == (std::vector<int64_t>{0, 1, 2, 3, 4}),
             boost::test_tools::per_element());
  for (int epoch = 0; epoch <= 4; ++epoch)
    BOOST_TEST(
      std::filesystem::is_directory(ckpt.get_ckpt_db_name("trainer_0", epoch)));
}

// Two jobs on one node of a session interleaved their epochs on the same
// workspace, and both ended "right" with each other's counts.
BOOST_AUTO_TEST_CASE(a_node_a_running_job_holds_refuses_another_job_and_group) {
  auto slow = parse_job_json(R"({"name": "slow", "epoch_limit": 1,
    "epoch": [{"node": "g", "ops": [{"type": "Sleep", "args": {"ms": 1500}}]}]})",
                             "slow.json", *ops);
  BOOST_REQUIRE_MESSAGE(slow, why(slow));
  auto sess = new_session();
  caf::expected<int64_t> first{caf::error{}};
  std::thread t{[&] {
    job_runner runner{*slow};
    first = runner.train(*sess);
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  job_runner second{load_example("pipeline.json")};
  auto other = parse_job_json(R"({"name": "other", "epoch_limit": 1,
    "epoch": [{"node": "g", "ops": [{"type": "ConstantFill",
                                     "outputs": ["x"]}]}]})",
                              "other.json", *ops);
  BOOST_REQUIRE_MESSAGE(other, why(other));
  job_runner clash{*other};
  auto refused = clash.train(*sess);
  auto group = sess->run(other->def().epoch_group);
  auto elsewhere = second.train(*sess); // trainer_0: not held
  t.join();
  BOOST_REQUIRE_MESSAGE(first, why(first));
  BOOST_REQUIRE(!refused);
  BOOST_TEST(is_error(refused.error(), actors_errc::invalid_argument));
  BOOST_TEST(
    error_text(refused.error()).find("node 'g' is in use by job 'slow'")
    != std::string::npos);
  BOOST_REQUIRE(!group);
  BOOST_TEST(is_error(group.error(), actors_errc::invalid_argument));
  BOOST_TEST(static_cast<bool>(elsewhere), why(elsewhere));
  auto after = clash.train(*sess); // released with the first job's end
  BOOST_TEST(static_cast<bool>(after), why(after));
}

BOOST_AUTO_TEST_CASE(after_train_the_manager_lists_the_checkpointed_blobs) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  BOOST_TEST(ckpt.blob_list().empty());
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  auto blobs = ckpt.blob_list();
  BOOST_TEST(std::count(blobs.begin(), blobs.end(), "total") == 1);
}

BOOST_AUTO_TEST_CASE(cp_accessible_answers_no_for_an_epoch_never_committed) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(ckpt.cp_accessible(4));
  // Written as a port of Caffe2's test would: the answer, not "no error".
  BOOST_TEST(!ckpt.cp_accessible(5));
  if (ckpt.cp_accessible(5))
    BOOST_ERROR("epoch 5 was never committed");
  BOOST_TEST(!ckpt.check_committed(4));
  BOOST_TEST(
    is_error(ckpt.check_committed(5), persistence_errc::not_committed));
}

BOOST_AUTO_TEST_CASE(resuming_from_each_epoch_ends_with_total_145) {
  checkpoint_whole_pipeline();
  for (int64_t epoch = 1; epoch <= 4; ++epoch) {
    BOOST_TEST_CONTEXT("resume from epoch " << epoch) {
      checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
      auto sess = new_session();
      job_runner runner{load_example("pipeline.json"), &ckpt, epoch};
      auto last = runner.train(*sess);
      BOOST_REQUIRE_MESSAGE(last, why(last));
      BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
    }
  }
}

BOOST_AUTO_TEST_CASE(
  loading_the_checkpoint_of_epoch_k_gives_the_total_after_k) {
  checkpoint_whole_pipeline();
  for (int64_t epoch = 0; epoch <= 4; ++epoch) {
    BOOST_TEST_CONTEXT("epoch " << epoch) {
      checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
      auto sess = new_session();
      BOOST_REQUIRE(!ckpt.init(*sess, {}, epoch));
      BOOST_REQUIRE(!ckpt.load(epoch));
      BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[epoch]);
    }
  }
}

// Loads through the C++ API leave the directory as they found it, with
// stray table and log files planted in the databases (LevelDB's own open
// deletes them) and the last batch only in each database's log.
BOOST_AUTO_TEST_CASE(loads_leave_every_byte_of_the_checkpoint_dir) {
  checkpoint_whole_pipeline();
  for (auto db : {"trainer_0.3", "trainer_0.4"}) {
    std::ofstream{dir.path() / db / "000099.ldb", std::ios::binary}
      << std::string(4096, 'Z');
    std::ofstream{dir.path() / db / "000001.log", std::ios::binary}
      << std::string(100, '\0');
  }
  auto before = snapshot(dir.path());
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    auto loaded = runner.load_blobs_from_checkpoints({"total"}, 3, *sess);
    BOOST_REQUIRE_MESSAGE(!loaded, why(loaded));
    BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[3]);
    BOOST_REQUIRE(!ckpt.init(*sess, {}, 4));
    BOOST_REQUIRE(!ckpt.load(4));
    BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[4]);
    auto intact = ckpt.check_db_intact(4);
    BOOST_TEST((intact && *intact == checkpoint_state::usable));
  }
  BOOST_TEST((snapshot(dir.path()) == before), "a load changed the dir");
}

BOOST_AUTO_TEST_CASE(a_partial_load_succeeds_for_saved_epochs_only) {
  checkpoint_whole_pipeline();
  for (int64_t epoch = 1; epoch <= 5; ++epoch) {
    BOOST_TEST_CONTEXT("epoch " << epoch) {
      checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
      auto sess = new_session();
      job_runner runner{load_example("pipeline.json"), &ckpt};
      auto loaded = runner.load_blobs_from_checkpoints({"total"}, epoch, *sess);
      if (epoch == 5) {
        BOOST_TEST(is_error(loaded, persistence_errc::not_found), why(loaded));
      } else {
        BOOST_REQUIRE_MESSAGE(!loaded, why(loaded));
        BOOST_TEST(scalar(*sess, "trainer_0", "total")
                   == expected_totals[epoch]);
        // Only the named blob was loaded.
        BOOST_TEST(!sess->fetch("trainer_0", "dataset"));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_unwritable_checkpoint_dir_costs_a_warning_not_the_job) {
  { std::ofstream{dir.sub("plain-file")} << "not a directory"; }
  auto unwritable = dir.sub("plain-file") + "/ckpt";
  {
    checkpoint_manager ckpt{sys, unwritable, "trainer_0"};
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    BOOST_TEST(*epochs == 4);
    BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
    BOOST_TEST(!ckpt.cp_accessible());
    BOOST_TEST(is_error(ckpt.check_writable(), persistence_errc::not_writable));
    auto resume = ckpt.get_resume_from_epoch_id();
    BOOST_TEST((!resume || !resume->has_value()));
  }
  std::istringstream lines{logs.text()};
  auto warned = false;
  for (std::string line; std::getline(lines, line);)
    warned |= line.rfind("[warn] ", 0) == 0
      && line.find("checkpoint") != std::string::npos;
  BOOST_TEST(warned);
  BOOST_TEST(!std::filesystem::exists(unwritable));
}

BOOST_AUTO_TEST_CASE(the_download_group_runs_after_the_epochs_and_before_exit) {
  auto sess = new_session();
  job_runner runner{load_example("download.json")};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 1);
  for (auto blob : {"output", "download_result"}) {
    auto value = sess->fetch("trainer_0", blob);
    BOOST_REQUIRE(value);
    BOOST_TEST(format_values(*value) == "2,2,2,2,2,2,2,2");
  }
}

BOOST_AUTO_TEST_CASE(an_upload_builder_runs_after_training) {
  checkpoint_manager ckpt{sys, dir.sub("ckpt"), "trainer_0"};
  directory_upload_builder upload{dir.sub("upload")};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt, {}, &upload};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  auto uploaded = dir.path() / "upload" / "trainer_0.4";
  BOOST_TEST(std::filesystem::is_directory(uploaded));
  BOOST_TEST(!std::filesystem::is_empty(uploaded));
}

BOOST_AUTO_TEST_CASE(a_corrupted_last_checkpoint_is_never_resumed_from) {
  checkpoint_whole_pipeline();
  corrupt_database(dir.path() / "trainer_0.4");
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    BOOST_REQUIRE(!ckpt.init(*sess));
    auto intact = ckpt.check_db_intact(4);
    BOOST_TEST((!intact || *intact != checkpoint_state::usable));
    BOOST_TEST(static_cast<bool>(ckpt.load(4))); // an error: never good
  }
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

// The fall-back to an earlier epoch reads the committed set again: when
// that read fails, the job fails; it never starts from scratch over the
// checkpoints as if nothing were committed.
BOOST_AUTO_TEST_CASE(an_unreadable_committed_set_never_restarts_from_scratch) {
  checkpoint_whole_pipeline();
  corrupt_database(dir.path() / "trainer_0.4");
  auto metadata = std::make_shared<faulty_metadata>(dir.str());
  // Reads 1 to 3 find what to resume (the job's definition, the epoch and
  // whether it is final); the 4th is the fall-back's.
  metadata->failing_read = 4;
  checkpoint_options opts;
  opts.metadata = metadata;
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_TEST(!epochs);
  if (!epochs)
    BOOST_TEST(why(epochs).find("metadata unreadable") != std::string::npos,
               why(epochs));
  BOOST_TEST(metadata->reads == 4, "the fall-back was the read that failed");
}

// Deleted metadata (both generations) beside databases: resuming fails and
// writes nothing; reset() (what `run --from-scratch` does) is the way to
// start over.
BOOST_AUTO_TEST_CASE(missing_metadata_beside_checkpoints_fails_the_job) {
  checkpoint_whole_pipeline();
  std::filesystem::remove(dir.path() / file_metadata_handler::file_name);
  std::filesystem::remove(dir.path()
                          / file_metadata_handler::previous_file_name);
  auto before = snapshot(dir.path());
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE(!epochs);
    BOOST_TEST(why(epochs).find(file_metadata_handler::file_name)
                 != std::string::npos,
               why(epochs));
    BOOST_TEST(!ckpt.get_resume_from_epoch_id(),
               "unreadable metadata is an error, not \"nothing to resume\"");
    BOOST_TEST(!ckpt.cp_accessible(4));
    auto committed = ckpt.check_committed(4);
    BOOST_TEST(
      (committed && !is_error(committed, persistence_errc::not_committed)),
      "metadata that cannot be trusted is an error, not a no");
  }
  BOOST_TEST((snapshot(dir.path()) == before), "the checkpoint dir changed");
  BOOST_REQUIRE(!file_metadata_handler{dir.str()}.reset());
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_CASE(a_missing_manifest_makes_a_checkpoint_incomplete) {
  checkpoint_whole_pipeline();
  // Removing the table files drops every record, the manifest among them.
  for (auto& entry :
       std::filesystem::directory_iterator(dir.path() / "trainer_0.3"))
    if (entry.path().extension() == ".ldb"
        || entry.path().extension() == ".log")
      std::filesystem::remove(entry.path());
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto loaded = runner.load_blobs_from_checkpoints({"total"}, 3, *sess);
  BOOST_TEST(is_error(loaded, persistence_errc::incomplete), why(loaded));
}

BOOST_AUTO_TEST_CASE(resuming_from_an_epoch_that_was_never_committed_fails) {
  checkpoint_whole_pipeline();
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt, int64_t{7}};
  auto epochs = runner.train(*sess);
  BOOST_TEST(!epochs);
  BOOST_TEST(!std::filesystem::exists(dir.path() / "trainer_0.5"));
}

BOOST_AUTO_TEST_CASE(a_save_that_outlasts_its_timeout_is_never_committed) {
  auto metadata = std::make_shared<faulty_metadata>(dir.str());
  metadata->slow_save = 3; // epoch 2's
  metadata->save_delay = std::chrono::milliseconds(600);
  checkpoint_options opts;
  opts.metadata = metadata;
  opts.timeout = std::chrono::milliseconds(300);
  {
    checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
  }
  auto committed = file_metadata_handler{dir.str()}.load()->committed_epochs;
  BOOST_TEST(std::count(committed.begin(), committed.end(), 2) == 0);
  // Every epoch that is committed holds exactly its own state.
  for (auto epoch : committed) {
    BOOST_TEST_CONTEXT("epoch " << epoch) {
      checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
      auto sess = new_session();
      BOOST_REQUIRE(!ckpt.init(*sess, {}, epoch));
      BOOST_REQUIRE(!ckpt.load(epoch));
      BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[epoch]);
    }
  }
}

BOOST_AUTO_TEST_CASE(
  a_throwing_metadata_handler_costs_checkpoints_not_the_job) {
  auto metadata = std::make_shared<faulty_metadata>(dir.str());
  metadata->throw_on_commit = true;
  checkpoint_options opts;
  opts.metadata = metadata;
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0", opts};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
  BOOST_TEST(file_metadata_handler{dir.str()}.load()->committed_epochs.empty());
}

BOOST_AUTO_TEST_CASE(a_throwing_epoch_observer_costs_a_warning_not_the_job) {
  job_runner_options opts;
  auto calls = std::make_shared<std::atomic<int>>(0);
  opts.on_epoch = [calls](int64_t, const std::vector<task_output>&) {
    ++*calls;
    throw std::runtime_error("observer bug");
  };
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), nullptr, {}, nullptr, opts};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  // Once per epoch of the epoch loop, 1 to 4.
  BOOST_TEST(calls->load() == 4);
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_CASE(an_epoch_observer_ends_a_job_with_request_stop) {
  job_runner_options opts;
  job_runner* self = nullptr;
  opts.on_epoch = [&self](int64_t epoch, const std::vector<task_output>&) {
    if (epoch == 1)
      self->request_stop();
  };
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), nullptr, {}, nullptr, opts};
  self = &runner;
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(is_error(epochs.error(), actors_errc::stopped), why(epochs));
}

BOOST_AUTO_TEST_CASE(a_job_whose_epoch_loop_cannot_end_is_refused) {
  job endless{"endless"};
  endless.add_task(
    endless.init_group(),
    make_task("init", "trainer_0", {make_op("CreateCursor", {}, {"c"})}));
  auto sess = new_session();
  job_runner runner{endless};
  auto epochs = runner.train(*sess);
  BOOST_TEST(!epochs);
}

BOOST_AUTO_TEST_CASE(a_task_that_outlasts_the_group_timeout_fails_and_stops) {
  job slow{"slow"};
  slow.add_task(
    slow.init_group(),
    make_task("init", "trainer_0", {make_op("CreateCursor", {}, {"c"})}));
  auto spin = make_task("spin", "trainer_0", {}, {"done"});
  spin.steps.push_back(
    step_def{"spin",
             {make_op("Sleep", {}, {}, {{"ms", make_scalar<int64_t>(20)}})},
             1000,
             {}});
  spin.steps.push_back(
    step_def{"done",
             {make_op("ConstantFill", {}, {"done"},
                      {{"value", make_scalar<double>(1)},
                       {"dtype", make_string_tensor({}, {"bool"})}})},
             1,
             {}});
  slow.add_task(slow.epoch_group(), spin);
  slow.add_stop_condition("trainer_0", "done");
  BOOST_REQUIRE(!slow.validate(*ops));
  auto opts = quick_options();
  opts.group_timeout = std::chrono::milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  {
    local_session sess{sys, ops, opts};
    job_runner runner{slow};
    auto epochs = runner.train(sess);
    BOOST_REQUIRE(!epochs);
    BOOST_TEST(error_text(epochs.error()).find("trainer_0")
               != std::string::npos);
  }
  // The 20 s task was asked to stop: nothing waits for it to run out.
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_TEST((took < std::chrono::seconds(10)));
}

BOOST_AUTO_TEST_CASE(a_full_load_replaces_the_whole_workspace) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt};
  BOOST_REQUIRE(runner.train(*sess));
  BOOST_REQUIRE(!sess->put("trainer_0", "stray", make_scalar<int64_t>(7)));
  BOOST_REQUIRE(!ckpt.load(2));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[2]);
  BOOST_TEST(!sess->fetch("trainer_0", "stray"));
}

BOOST_AUTO_TEST_CASE(nothing_is_uploaded_when_the_last_save_failed) {
  { std::ofstream{dir.sub("plain-file")} << "not a directory"; }
  checkpoint_manager ckpt{sys, dir.sub("plain-file") + "/ckpt", "trainer_0"};
  directory_upload_builder upload{dir.sub("upload")};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt, {}, &upload};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(!std::filesystem::exists(dir.path() / "upload" / "trainer_0.4"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(multi_node, system_fixture)

BOOST_AUTO_TEST_CASE(three_nodes_each_reach_145) {
  multi_node_checkpoint_manager ckpt{sys, dir.str()};
  auto sess = new_session();
  job_runner runner{load_example("pipeline3.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  BOOST_TEST(*epochs == 4);
  for (auto& node : three_nodes)
    BOOST_TEST(scalar(*sess, node, "total") == 145);
}

BOOST_AUTO_TEST_CASE(get_ckpt_db_name_is_prefix_slash_node_dot_epoch) {
  multi_node_checkpoint_manager ckpt{sys, dir.str()};
  auto sess = new_session();
  BOOST_REQUIRE(!ckpt.init(*sess, three_nodes));
  for (auto& node : three_nodes)
    BOOST_TEST(ckpt.get_ckpt_db_name(node, 5) == dir.str() + "/" + node + ".5");
}

BOOST_AUTO_TEST_CASE(
  one_manager_serves_second_runners_resuming_from_each_epoch) {
  multi_node_checkpoint_manager ckpt{sys, dir.str()};
  {
    auto sess = new_session();
    job_runner runner{load_example("pipeline3.json"), &ckpt};
    BOOST_REQUIRE(runner.train(*sess));
  }
  for (int64_t epoch = 1; epoch <= 4; ++epoch) {
    BOOST_TEST_CONTEXT("resume from epoch " << epoch) {
      auto sess = new_session();
      job_runner runner{load_example("pipeline3.json"), &ckpt, epoch};
      auto last = runner.train(*sess);
      BOOST_REQUIRE_MESSAGE(last, why(last));
      for (auto& node : three_nodes)
        BOOST_TEST(scalar(*sess, node, "total") == 145);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_single_node_checkpoint_manager_refuses_a_job_of_three) {
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline3.json"), &ckpt};
  std::vector<std::string> expected{
    "CheckpointManager (checkpoint_manager) of node 'trainer_0' cannot "
    "checkpoint 3 nodes (trainer_0, trainer_1, trainer_2)",
    "use a MultiNodeCheckpointManager (multi_node_checkpoint_manager)"};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(refused_naming(epochs.error(), expected),
             error_text(epochs.error()));
  // Refused before anything ran or was written.
  BOOST_TEST(!sess->fetch("trainer_0", "total"));
  BOOST_TEST(std::filesystem::is_empty(dir.path()));
  // The runner's other entry points, and the manager's own, refuse alike.
  BOOST_TEST(refused_naming(runner.save_checkpoints(0, *sess), expected));
  auto loaded = runner.load_blobs_from_checkpoints({"total"}, 0, *sess);
  BOOST_TEST(refused_naming(loaded, expected));
  BOOST_TEST(refused_naming(ckpt.set_params(three_nodes), expected));
  BOOST_TEST(refused_naming(ckpt.init(*sess, three_nodes), expected));
  BOOST_TEST(refused_naming(
    ckpt.set_params({"trainer_1"}),
    {"cannot checkpoint node 'trainer_1'", "multi_node_checkpoint_manager"}));
  BOOST_TEST(std::filesystem::is_empty(dir.path()));
}

BOOST_AUTO_TEST_CASE(a_single_node_checkpoint_manager_checkpoints_its_node) {
  // A job of one node: saved, resumed from, loaded from.
  checkpoint_manager ckpt{sys, dir.str(), "trainer_0"};
  {
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &ckpt};
    auto epochs = runner.train(*sess);
    BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
    BOOST_TEST(*epochs == 4);
  }
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &ckpt, int64_t{2}};
  auto last = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(last, why(last));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
  auto loaded = runner.load_blobs_from_checkpoints({"total"}, 3, *sess);
  BOOST_REQUIRE_MESSAGE(!loaded, why(loaded));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[3]);
  // A job of three nodes that checkpoints only the manager's node is the
  // manager's to save too.
  epochrt::test::temp_dir other;
  checkpoint_manager ckpt0{sys, other.str(), "trainer_0"};
  auto three = load_example("pipeline3.json");
  three.set_nodes_to_checkpoint({"trainer_0"});
  auto sess3 = new_session();
  job_runner runner3{three, &ckpt0};
  auto epochs = runner3.train(*sess3);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  for (auto& node : three_nodes)
    BOOST_TEST(scalar(*sess3, node, "total") == 145);
  record_keeper metadata{std::make_shared<file_metadata_handler>(other.str())};
  BOOST_TEST(*metadata.committed_epochs()
               == (std::vector<int64_t>{0, 1, 2, 3, 4}),
             boost::test_tools::per_element());
  BOOST_TEST(std::filesystem::is_directory(other.path() / "trainer_0.4"));
  BOOST_TEST(!std::filesystem::exists(other.path() / "trainer_1.4"));
}

BOOST_AUTO_TEST_CASE(report_checkpoint_stats_returns_the_figures_it_reports) {
  multi_node_checkpoint_manager ckpt{sys, dir.str()};
  auto sess = new_session();
  job_runner runner{load_example("pipeline3.json"), &ckpt};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(epochs, why(epochs));
  // The job's last save, one entry per node, as the metadata keeps them.
  auto stats = ckpt.report_checkpoint_stats("checkpoint_save");
  BOOST_REQUIRE_MESSAGE(stats, why(stats));
  BOOST_REQUIRE_EQUAL(stats->size(), 3u);
  for (auto& node : *stats) {
    BOOST_TEST(node.duration_us > 0, node.node);
    BOOST_TEST(node.bytes > 0u, node.node);
    BOOST_TEST(node.blobs > 0u, node.node);
    BOOST_TEST(node.snapshot_us + node.sync_us <= node.duration_us, node.node);
  }
  auto metadata = file_metadata_handler{dir.str()}.load();
  BOOST_REQUIRE(metadata);
  BOOST_TEST(metadata->last_action == "checkpoint_save");
  BOOST_TEST((metadata->last_stats == *stats));
}

BOOST_AUTO_TEST_CASE(partial_loads_work_across_nodes) {
  multi_node_checkpoint_manager ckpt{sys, dir.str()};
  {
    auto sess = new_session();
    job_runner runner{load_example("pipeline3.json"), &ckpt};
    BOOST_REQUIRE(runner.train(*sess));
  }
  for (int64_t epoch = 1; epoch <= 5; ++epoch) {
    BOOST_TEST_CONTEXT("epoch " << epoch) {
      auto sess = new_session();
      job_runner runner{load_example("pipeline3.json"), &ckpt};
      auto loaded = runner.load_blobs_from_checkpoints({"total"}, epoch, *sess);
      if (epoch <= 4)
        BOOST_REQUIRE_MESSAGE(!loaded, why(loaded));
      else
        BOOST_TEST(is_error(loaded, persistence_errc::not_found), why(loaded));
      if (epoch <= 4)
        for (auto& node : three_nodes)
          BOOST_TEST(scalar(*sess, node, "total") == expected_totals[epoch]);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// One job per directory: a manager locks its directory before its first
// write and keeps it until destroyed; readers need no lock.
BOOST_FIXTURE_TEST_SUITE(one_job_per_directory, system_fixture)

namespace {

// True when `err` is persistence_errc::locked naming this process.
bool locked_by_us(const caf::error& err) {
  return is_error(err, persistence_errc::locked)
    && error_text(err).find("in use by process " + std::to_string(::getpid()))
    != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_second_manager_on_a_directory_in_use_is_refused) {
  checkpoint_manager first{sys, dir.str(), "trainer_0"};
  {
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &first};
    BOOST_REQUIRE(runner.train(*sess));
  }
  checkpoint_manager second{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  BOOST_TEST(locked_by_us(second.lock_directory()));
  BOOST_TEST(locked_by_us(second.set_params({"trainer_0"})));
  // init writes nothing (a reader binds with it); the save after it is
  // refused.
  BOOST_REQUIRE(!second.init(*sess, {"trainer_0"}));
  BOOST_TEST(locked_by_us(second.save(5)));
  BOOST_TEST(locked_by_us(second.write_checkpoint_metadata(5)));
  job_runner runner{load_example("pipeline.json"), &second};
  auto epochs = runner.train(*sess);
  BOOST_REQUIRE(!epochs);
  BOOST_TEST(locked_by_us(epochs.error()), error_text(epochs.error()));
  // Refused before anything ran: the first job's epochs are as it left them.
  BOOST_TEST(!sess->fetch("trainer_0", "total"));
  record_keeper metadata{std::make_shared<file_metadata_handler>(dir.str())};
  BOOST_TEST(*metadata.committed_epochs()
               == (std::vector<int64_t>{0, 1, 2, 3, 4}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_reader_beside_the_holder_needs_no_lock) {
  checkpoint_manager holder{sys, dir.str(), "trainer_0"};
  {
    auto sess = new_session();
    job_runner runner{load_example("pipeline.json"), &holder};
    BOOST_REQUIRE(runner.train(*sess));
  }
  checkpoint_manager reader{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  auto loaded
    = reader.load_blobs_locally(*sess, {"trainer_0"}, {"total"}, int64_t{3});
  BOOST_REQUIRE_MESSAGE(!loaded, why(loaded));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[3]);
  BOOST_REQUIRE(!reader.init(*sess, {"trainer_0"}, int64_t{4}));
  BOOST_REQUIRE(!reader.load(4));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == expected_totals[4]);
  auto intact = reader.check_db_intact(4);
  BOOST_TEST((intact && *intact == checkpoint_state::usable));
  BOOST_TEST(reader.cp_accessible(4));
  auto resume = reader.get_resume_from_epoch_id();
  BOOST_TEST((resume && *resume == int64_t{4}));
  // The holder still holds it.
  BOOST_TEST(locked_by_us(reader.lock_directory()));
}

BOOST_AUTO_TEST_CASE(a_destroyed_manager_leaves_the_directory_to_the_next) {
  checkpoint_whole_pipeline();
  checkpoint_manager next{sys, dir.str(), "trainer_0"};
  auto sess = new_session();
  job_runner runner{load_example("pipeline.json"), &next, int64_t{2}};
  auto last = runner.train(*sess);
  BOOST_REQUIRE_MESSAGE(last, why(last));
  BOOST_TEST(scalar(*sess, "trainer_0", "total") == 145);
}

BOOST_AUTO_TEST_SUITE_END()
