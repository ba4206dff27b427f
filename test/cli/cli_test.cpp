// The `epochrt` command through its process interface: exit codes, stdout
// and stderr, as scripts see them. The checkpoint cases follow Caffe2's
// checkpoint_test.py: a job resumed from any epoch ends with the result of
// an uninterrupted run, the checkpoint of epoch k holds the values after
// epoch k, a failed save does not fail the job, and a corrupt checkpoint is
// never resumed from.

#define BOOST_TEST_MODULE cli
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include <epochrt/persistence/dir_lock.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/persistence_errc.hpp>
#include <epochrt/persistence/record_keeper.hpp>

namespace fs = std::filesystem;
namespace bdata = boost::unit_test::data;

using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::temp_dir;

using epochrt::test::read_file;
using epochrt::test::value_of;

namespace {

const std::string jobs_dir = EPOCHRT_SOURCE_DIR "/examples/jobs/";
const std::string pipeline = jobs_dir + "pipeline.json";
const std::string pipeline3 = jobs_dir + "pipeline3.json";
const std::string download = jobs_dir + "download.json";

// Totals of pipeline.json after epochs 0 (init) to 4.
const char* const totals[] = {"100", "103", "115", "136", "145"};

process_result cli(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, std::chrono::seconds(60)}.run(args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    result.push_back(line);
  return result;
}

using epochrt::test::contains;

/// One line on stderr, "epochrt: error: ..." (logs aside, which epochrt
/// writes with a "[epochrt]" tag).
std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> result;
  for (auto& line : lines_of(err))
    if (line.rfind("epochrt: error: ", 0) == 0)
      result.push_back(line);
  return result;
}

std::string describe(const process_result& r) {
  return "exit " + std::to_string(r.exit_code)
    + (r.timed_out ? " (timed out)" : "") + "\n--- stdout\n" + r.out
    + "--- stderr\n" + r.err;
}

// `result` must name a variable: the macro evaluates it more than once.
#define REQUIRE_EXIT(result, code)                  \
  BOOST_REQUIRE_MESSAGE(result.exit_code == (code), \
                        "expected exit " #code ", got " << describe(result))

/// A failed command: exit `code` and exactly one error line.
void check_one_error(const process_result& r, int code) {
  BOOST_TEST_MESSAGE(describe(r));
  BOOST_TEST(r.exit_code == code);
  BOOST_TEST(!r.timed_out);
  BOOST_TEST(error_lines(r.err).size() == 1u);
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out{path, std::ios::binary};
  out << text;
  BOOST_REQUIRE(out.good());
}

/// Every file under `dir` with its size and contents: equal snapshots mean
/// nothing was written. The lock file is left out: every run that takes
/// the directory's lock writes its own pid there, checkpoints or not.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> result;
  for (auto& entry : fs::recursive_directory_iterator(dir)) {
    auto rel = fs::relative(entry.path(), dir).string();
    if (rel == epochrt::dir_lock::file_name)
      continue;
    result[rel] = entry.is_regular_file() ? read_file(entry.path()) : "<dir>";
  }
  return result;
}

/// Flips bytes in the middle of the largest LevelDB data file (.ldb or
/// .log) of database `db`, where the blob records are.
void corrupt_database(const fs::path& db) {
  fs::path largest;
  uintmax_t largest_size = 0;
  for (auto& entry : fs::directory_iterator(db)) {
    auto ext = entry.path().extension().string();
    if (ext != ".ldb" && ext != ".log")
      continue;
    auto size = fs::file_size(entry.path());
    if (size > largest_size) {
      largest = entry.path();
      largest_size = size;
    }
  }
  BOOST_REQUIRE_MESSAGE(largest_size >= 64, "no data file in " << db);
  std::fstream f{largest, std::ios::in | std::ios::out | std::ios::binary};
  for (auto pos :
       {largest_size / 3, largest_size / 2, (2 * largest_size) / 3}) {
    f.seekg(static_cast<std::streamoff>(pos));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(~c);
    f.seekp(static_cast<std::streamoff>(pos));
    f.write(&c, 1);
  }
  BOOST_REQUIRE(f.good());
}

/// A temporary directory with a checkpoint dir `ckpt` that a straight run
/// of pipeline.json filled: epochs 0..4 committed.
struct checkpointed_pipeline {
  temp_dir tmp;
  std::string ckpt = tmp.sub("ckpt");

  checkpointed_pipeline() {
    auto r = cli({"run", pipeline, "--checkpoint-dir", ckpt});
    REQUIRE_EXIT(r, 0);
  }

  process_result run(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"run", pipeline,  "--checkpoint-dir",
                                  ckpt,  "--fetch", "trainer_0:total"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli(args);
  }

  process_result ls() const {
    return cli({"ckpt", "ls", ckpt});
  }
};

} // namespace

// -- running jobs -------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(run)

BOOST_AUTO_TEST_CASE(without_checkpoints_runs_four_epochs_to_total_145) {
  auto r = cli({"run", pipeline, "--fetch", "trainer_0:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(lines_of(r.out)
               == (std::vector<std::string>{"trainer_0:total=145", "epochs=4"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_node_named_as_caffe2_names_them_is_run_and_fetched) {
  // Caffe2's tests name nodes "trainer:0": the fetch's node is the part
  // before the ':' that the job has as a node.
  temp_dir tmp;
  std::ifstream in{pipeline};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  for (auto at = text.find("\"trainer_0\""); at != std::string::npos;
       at = text.find("\"trainer_0\"", at))
    text.replace(at, 11, "\"trainer:0\"");
  auto job = tmp.sub("colon.json");
  write_file(job, text);
  auto r = cli({"run", job, "--checkpoint-dir", tmp.sub("ckpt"), "--fetch",
                "trainer:0:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(lines_of(r.out)
               == (std::vector<std::string>{"trainer:0:total=145", "epochs=4"}),
             boost::test_tools::per_element());
  BOOST_TEST(fs::is_directory(fs::path{tmp.sub("ckpt")} / "trainer:0.4"));
}

BOOST_AUTO_TEST_CASE(with_a_checkpoint_dir_commits_epochs_zero_to_four) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto r = cli(
    {"run", pipeline, "--checkpoint-dir", ckpt, "--fetch", "trainer_0:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(value_of(r.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(r.out, "epochs") == "4");
  for (int epoch = 0; epoch <= 4; ++epoch)
    BOOST_TEST(fs::is_directory(ckpt + "/trainer_0." + std::to_string(epoch)),
               "trainer_0." << epoch);
  auto ls = cli({"ckpt", "ls", ckpt});
  REQUIRE_EXIT(ls, 0);
  auto lines = lines_of(ls.out);
  BOOST_REQUIRE_EQUAL(lines.size(), 6u);
  for (int epoch = 0; epoch <= 4; ++epoch) {
    std::istringstream in{lines[epoch]};
    std::string node, state;
    int64_t listed_epoch = -1;
    uint64_t bytes = 0;
    in >> node >> listed_epoch >> state >> bytes;
    BOOST_TEST(node == "trainer_0");
    BOOST_TEST(listed_epoch == epoch);
    BOOST_TEST(state == "complete");
    BOOST_TEST(bytes > 0u);
  }
  BOOST_TEST(lines.back() == "last_committed=4");
}

// The job stopped after epoch 4 and the metadata says so: running the same
// command again resumes from epoch 4 and runs no further epoch, so a
// finished job (or one killed after its last checkpoint) gives the same
// result again. (Caffe2 would run one more epoch.)
BOOST_AUTO_TEST_CASE(a_second_run_of_a_finished_job_changes_nothing) {
  checkpointed_pipeline job;
  auto r = job.run();
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(value_of(r.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(r.out, "epochs") == "4");
  BOOST_TEST(contains(lines_of(job.ls().out).back(), "last_committed=4"));
}

BOOST_DATA_TEST_CASE(resuming_from_epoch_k_ends_with_total_145,
                     bdata::xrange(1, 5), epoch) {
  checkpointed_pipeline job;
  auto r = job.run({"--resume-from", std::to_string(epoch)});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(value_of(r.out, "trainer_0:total") == "145");
  // Epochs k+1 .. 4 run again; from 4, the final epoch, none does.
  BOOST_TEST(value_of(r.out, "epochs") == "4");
}

BOOST_AUTO_TEST_CASE(three_nodes_each_end_with_total_145) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto r = cli({"run", pipeline3, "--checkpoint-dir", ckpt, "--fetch",
                "trainer_0:total", "--fetch", "trainer_1:total", "--fetch",
                "trainer_2:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(
    lines_of(r.out)
      == (std::vector<std::string>{"trainer_0:total=145", "trainer_1:total=145",
                                   "trainer_2:total=145", "epochs=4"}),
    boost::test_tools::per_element());
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"}) {
    auto show = cli({"ckpt", "show", ckpt, node, "4", "total"});
    REQUIRE_EXIT(show, 0);
    BOOST_TEST(show.out == "total=145\n");
  }
}

BOOST_AUTO_TEST_CASE(the_download_group_runs_once_after_one_epoch) {
  auto r = cli({"run", download, "--fetch", "trainer_0:output", "--fetch",
                "trainer_0:download_result"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(lines_of(r.out)
               == (std::vector<std::string>{
                 "trainer_0:output=2,2,2,2,2,2,2,2",
                 "trainer_0:download_result=2,2,2,2,2,2,2,2", "epochs=1"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fetches_print_in_the_order_given) {
  auto r = cli({"run", pipeline, "--fetch", "trainer_0:total", "--fetch",
                "trainer_0:dataset", "--fetch", "trainer_0:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(lines_of(r.out)
               == (std::vector<std::string>{"trainer_0:total=145",
                                            "trainer_0:dataset=0,1,2,3,4,5,6,"
                                            "7,8,9",
                                            "trainer_0:total=145", "epochs=4"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_upload_dir_receives_the_last_epochs_checkpoint) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto upload = tmp.sub("upload");
  auto r
    = cli({"run", pipeline, "--checkpoint-dir", ckpt, "--upload-dir", upload});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(value_of(r.out, "epochs") == "4");
  auto copied = fs::path{upload} / "trainer_0.4";
  BOOST_REQUIRE(fs::is_directory(copied));
  BOOST_TEST(!fs::is_empty(copied));
  // The copy is a complete checkpoint in its own right.
  auto show = cli({"ckpt", "show", upload, "trainer_0", "4", "total"});
  REQUIRE_EXIT(show, 0);
  BOOST_TEST(show.out == "total=145\n");
}

// A failed save does not fail the job (Caffe2): a checkpoint directory
// below a regular file cannot be created, even by root.
BOOST_AUTO_TEST_CASE(an_unwritable_checkpoint_dir_warns_and_commits_nothing) {
  temp_dir tmp;
  write_file(tmp.path() / "file", "not a directory\n");
  auto ckpt = tmp.sub("file/ckpt");
  auto r = cli(
    {"run", pipeline, "--checkpoint-dir", ckpt, "--fetch", "trainer_0:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(value_of(r.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(r.out, "epochs") == "4");
  BOOST_TEST(contains(r.err, "warn"), "no warning logged:\n" << r.err);
  BOOST_TEST(fs::is_regular_file(tmp.path() / "file"));
  BOOST_TEST(!fs::exists(ckpt));
}

BOOST_AUTO_TEST_CASE(a_run_never_resumes_from_a_corrupt_epoch) {
  checkpointed_pipeline job;
  corrupt_database(job.ckpt + "/trainer_0.4");
  auto r = job.run();
  REQUIRE_EXIT(r, 0);
  // Epoch 4 is rejected; the run falls back to epoch 3 and redoes epoch 4.
  BOOST_TEST(value_of(r.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(r.out, "epochs") == "4");
  auto verify = cli({"ckpt", "verify", job.ckpt});
  BOOST_TEST(verify.exit_code == 0, describe(verify));
}

BOOST_AUTO_TEST_CASE(fetching_a_missing_blob_fails_after_the_job) {
  auto r = cli({"run", pipeline, "--fetch", "trainer_0:total", "--fetch",
                "trainer_0:no_such_blob"});
  check_one_error(r, 1);
  BOOST_TEST(lines_of(r.out)
               == (std::vector<std::string>{"trainer_0:total=145"}),
             boost::test_tools::per_element());
  BOOST_TEST(contains(r.err, "no_such_blob"));
}

BOOST_AUTO_TEST_CASE(fetching_from_a_node_outside_the_job_is_refused_first) {
  temp_dir tmp;
  auto r = cli({"run", pipeline, "--checkpoint-dir", tmp.sub("ckpt"), "--fetch",
                "trainer_9:total"});
  check_one_error(r, 2);
  BOOST_TEST(contains(r.err, "trainer_9"));
  BOOST_TEST(!std::filesystem::exists(tmp.sub("ckpt")));
}

BOOST_AUTO_TEST_CASE(resuming_from_an_uncommitted_epoch_changes_nothing) {
  checkpointed_pipeline job;
  auto ls_before = job.ls();
  auto before = snapshot(job.ckpt);
  auto r = job.run({"--resume-from", "7"});
  check_one_error(r, 2);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(contains(r.err, "7"));
  BOOST_TEST((snapshot(job.ckpt) == before), "the checkpoint dir changed");
  BOOST_TEST(job.ls().out == ls_before.out);
}

BOOST_AUTO_TEST_CASE(resuming_from_a_dir_that_does_not_exist_creates_nothing) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto r
    = cli({"run", pipeline, "--checkpoint-dir", ckpt, "--resume-from", "1"});
  check_one_error(r, 2);
  BOOST_TEST(!fs::exists(ckpt));
}

BOOST_AUTO_TEST_SUITE_END()

// -- bad input ----------------------------------------------------------------

namespace {

struct bad_job {
  const char* name;
  const char* text;
};

std::ostream& operator<<(std::ostream& out, const bad_job& x) {
  return out << x.name;
}

const bad_job bad_jobs[] = {
  {"syntax_error", R"({"name": "broken", "init": [ )"},
  {"unknown_op",
   R"({"name": "j", "init": [{"node": "n", "ops": [
       {"type": "NoSuchOp", "outputs": ["x"]}]}]})"},
  {"wrong_arg_type",
   R"({"name": "j", "init": [{"node": "n", "ops": [
       {"type": "ConstantFill", "outputs": ["x"],
        "args": {"shape": [1], "value": "abc"}}]}]})"},
  {"stop_condition_on_unknown_node",
   R"({"name": "j",
       "init": [{"node": "n", "ops": [{"type": "CreateCursor",
                                       "outputs": ["c"]}]}],
       "epoch": [{"node": "n", "outputs": ["done"], "ops": [
         {"type": "ConstantFill", "outputs": ["done"],
          "args": {"shape": [1], "value": 1, "dtype": "bool"}}]}],
       "stop_conditions": [{"node": "elsewhere", "blob": "done"}]})"},
  {"no_epoch_task",
   R"({"name": "j", "init": [{"node": "n", "ops": [
       {"type": "CreateCursor", "outputs": ["c"]}]}]})"},
  {"duplicate_task_names",
   R"({"name": "j", "init": [
       {"name": "t", "node": "n", "ops": [{"type": "CreateCursor",
                                           "outputs": ["a"]}]},
       {"name": "t", "node": "n", "ops": [{"type": "CreateCursor",
                                           "outputs": ["b"]}]}]})"},
};

} // namespace

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_DATA_TEST_CASE(an_invalid_job_file_exits_2_and_writes_nothing,
                     bdata::make(bad_jobs), job) {
  temp_dir tmp;
  auto file = tmp.path() / (std::string{job.name} + ".json");
  write_file(file, job.text);
  auto ckpt = tmp.sub("ckpt");
  auto r = cli({"run", file.string(), "--checkpoint-dir", ckpt});
  check_one_error(r, 2);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(contains(r.err, file.filename().string()));
  BOOST_TEST(!fs::exists(ckpt));
}

BOOST_AUTO_TEST_CASE(a_missing_job_file_exits_2) {
  temp_dir tmp;
  auto r = cli({"run", tmp.sub("absent.json")});
  check_one_error(r, 2);
  BOOST_TEST(contains(r.err, "absent.json"));
}

namespace {

struct bad_args {
  const char* name;
  std::vector<std::string> args;
};

std::ostream& operator<<(std::ostream& out, const bad_args& x) {
  return out << x.name;
}

const bad_args bad_arg_lists[] = {
  {"no_command", {}},
  {"unknown_command", {"frobnicate"}},
  {"unknown_option", {"run", pipeline, "--no-such-option"}},
  {"missing_job_file", {"run"}},
  {"missing_option_value", {"run", pipeline, "--checkpoint-dir"}},
  {"non_integer_epoch",
   {"run", pipeline, "--checkpoint-dir", "/nonexistent/ckpt", "--resume-from",
    "abc"}},
  {"negative_epoch",
   {"run", pipeline, "--checkpoint-dir", "/nonexistent/ckpt", "--resume-from",
    "-1"}},
  {"fetch_without_colon", {"run", pipeline, "--fetch", "nocolon"}},
  {"fetch_with_bad_node_name", {"run", pipeline, "--fetch", "../x:total"}},
  {"fetch_with_empty_blob", {"run", pipeline, "--fetch", "trainer_0:"}},
  {"resume_without_checkpoint_dir", {"run", pipeline, "--resume-from", "1"}},
  {"upload_without_checkpoint_dir",
   {"run", pipeline, "--upload-dir", "/nonexistent/up"}},
  {"ckpt_without_subcommand", {"ckpt"}},
  {"ckpt_show_non_integer_epoch",
   {"ckpt", "show", "/tmp", "trainer_0", "four"}},
  {"ckpt_ls_extra_argument", {"ckpt", "ls", "/tmp", "/tmp"}},
  {"quiet_and_verbose", {"-q", "-v", "ckpt", "ls", "/tmp"}},
};

} // namespace

BOOST_DATA_TEST_CASE(bad_arguments_exit_2_with_one_error_line,
                     bdata::make(bad_arg_lists), bad) {
  auto r = cli(bad.args);
  check_one_error(r, 2);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_SUITE_END()

// -- inspecting checkpoints ---------------------------------------------------

BOOST_AUTO_TEST_SUITE(ckpt)

BOOST_AUTO_TEST_CASE(show_gives_the_total_after_epoch_k) {
  checkpointed_pipeline job;
  for (int epoch = 0; epoch <= 4; ++epoch) {
    BOOST_TEST_CONTEXT("epoch " << epoch) {
      auto r = cli({"ckpt", "show", job.ckpt, "trainer_0",
                    std::to_string(epoch), "total"});
      BOOST_TEST(r.exit_code == 0, describe(r));
      BOOST_TEST(r.out == std::string{"total="} + totals[epoch] + "\n");
    }
  }
}

BOOST_AUTO_TEST_CASE(show_without_blob_names_prints_every_blob) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "show", job.ckpt, "trainer_0", "4"});
  REQUIRE_EXIT(r, 0);
  std::vector<std::string> names;
  for (auto& line : lines_of(r.out))
    names.push_back(line.substr(0, line.find('=')));
  std::sort(names.begin(), names.end());
  BOOST_TEST(names == (std::vector<std::string>{"cursor", "dataset", "total"}),
             boost::test_tools::per_element());
  BOOST_TEST(value_of(r.out, "dataset") == "0,1,2,3,4,5,6,7,8,9");
  BOOST_TEST(value_of(r.out, "total") == "145");
}

BOOST_AUTO_TEST_CASE(show_prints_blobs_in_the_order_named) {
  checkpointed_pipeline job;
  auto r
    = cli({"ckpt", "show", job.ckpt, "trainer_0", "2", "total", "dataset"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "total=115\ndataset=0,1,2,3,4,5,6,7,8,9\n");
}

BOOST_AUTO_TEST_CASE(show_of_a_missing_epoch_exits_1) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "show", job.ckpt, "trainer_0", "9", "total"});
  check_one_error(r, 1);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_CASE(show_of_a_missing_blob_exits_1) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "show", job.ckpt, "trainer_0", "1", "no_such_blob"});
  check_one_error(r, 1);
  BOOST_TEST(contains(r.err, "no_such_blob"));
}

BOOST_AUTO_TEST_CASE(show_of_a_corrupt_checkpoint_exits_1) {
  checkpointed_pipeline job;
  corrupt_database(job.ckpt + "/trainer_0.2");
  auto r = cli({"ckpt", "show", job.ckpt, "trainer_0", "2"});
  BOOST_TEST_MESSAGE(describe(r));
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(error_lines(r.err).size() == 1u);
}

BOOST_AUTO_TEST_CASE(ls_of_a_missing_dir_exits_2) {
  temp_dir tmp;
  auto r = cli({"ckpt", "ls", tmp.sub("absent")});
  check_one_error(r, 2);
}

BOOST_AUTO_TEST_CASE(ls_of_an_empty_dir_lists_nothing_committed) {
  temp_dir tmp;
  auto r = cli({"ckpt", "ls", tmp.path().string()});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "last_committed=none\n");
}

BOOST_AUTO_TEST_CASE(ls_lists_every_node_of_a_multi_node_job) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto run = cli({"run", pipeline3, "--checkpoint-dir", ckpt});
  REQUIRE_EXIT(run, 0);
  auto r = cli({"ckpt", "ls", ckpt});
  REQUIRE_EXIT(r, 0);
  auto lines = lines_of(r.out);
  BOOST_REQUIRE_MESSAGE(lines.size() == 16u, r.out);
  for (int node = 0; node < 3; ++node)
    for (int epoch = 0; epoch <= 4; ++epoch)
      BOOST_TEST(lines[node * 5 + epoch].rfind("trainer_" + std::to_string(node)
                                                 + " " + std::to_string(epoch)
                                                 + " complete ",
                                               0)
                   == 0u,
                 lines[node * 5 + epoch]);
  BOOST_TEST(lines.back() == "last_committed=4");
}

BOOST_AUTO_TEST_CASE(ls_json_lists_databases_and_committed_epochs) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "ls", job.ckpt, "--json"});
  REQUIRE_EXIT(r, 0);
  auto doc = nlohmann::json::parse(r.out);
  BOOST_TEST(doc["last_committed"].get<int64_t>() == 4);
  BOOST_TEST(doc["committed_epochs"]
             == nlohmann::json::parse("[0, 1, 2, 3, 4]"));
  BOOST_REQUIRE(doc["databases"].size() == 5u);
  for (int epoch = 0; epoch <= 4; ++epoch) {
    auto& db = doc["databases"][epoch];
    BOOST_TEST(db["node"].get<std::string>() == "trainer_0");
    BOOST_TEST(db["epoch"].get<int64_t>() == epoch);
    BOOST_TEST(db["complete"].get<bool>());
    BOOST_TEST(db["bytes"].get<uint64_t>() > 0u);
  }
}

BOOST_AUTO_TEST_CASE(ls_json_of_an_empty_dir_has_no_last_committed_epoch) {
  temp_dir tmp;
  auto r = cli({"ckpt", "ls", tmp.path().string(), "--json"});
  REQUIRE_EXIT(r, 0);
  auto doc = nlohmann::json::parse(r.out);
  BOOST_TEST(doc["last_committed"].is_null());
  BOOST_TEST(doc["databases"].empty());
}

BOOST_AUTO_TEST_CASE(show_json_gives_the_values_that_show_prints) {
  checkpointed_pipeline job;
  auto r = cli(
    {"ckpt", "show", job.ckpt, "trainer_0", "2", "total", "dataset", "--json"});
  REQUIRE_EXIT(r, 0);
  auto doc = nlohmann::json::parse(r.out);
  BOOST_TEST(doc["node"].get<std::string>() == "trainer_0");
  BOOST_TEST(doc["epoch"].get<int64_t>() == 2);
  auto& blobs = doc["blobs"];
  BOOST_REQUIRE(blobs.size() == 2u);
  BOOST_TEST(blobs[0]["name"].get<std::string>() == "total");
  BOOST_TEST(blobs[0]["values"] == nlohmann::json::parse("[115]"));
  BOOST_TEST(blobs[1]["name"].get<std::string>() == "dataset");
  BOOST_TEST(blobs[1]["shape"] == nlohmann::json::parse("[10]"));
  BOOST_TEST(blobs[1]["values"]
             == nlohmann::json::parse("[0,1,2,3,4,5,6,7,8,9]"));
  BOOST_TEST(blobs[1]["digest"].get<std::string>().size() == 16u);
}

BOOST_AUTO_TEST_CASE(show_json_of_a_corrupt_checkpoint_prints_nothing) {
  checkpointed_pipeline job;
  corrupt_database(job.ckpt + "/trainer_0.2");
  auto r = cli({"ckpt", "show", job.ckpt, "trainer_0", "2", "--json"});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.out.empty(), r.out);
}

BOOST_AUTO_TEST_CASE(diff_lists_the_blobs_an_epoch_changed) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  REQUIRE_EXIT(
    cli({"run", jobs_dir + "incremental.json", "--checkpoint-dir", ckpt}), 0);
  // Every epoch trains w and b, adds to acc and moves the cursor; the data
  // (X, y) and the constant `one` never change.
  auto r = cli({"ckpt", "diff", ckpt, "trainer_0", "3", "4"});
  REQUIRE_EXIT(r, 0);
  auto lines = lines_of(r.out);
  for (auto* name : {"w", "b", "acc", "cursor"})
    BOOST_TEST(
      (std::find(lines.begin(), lines.end(), std::string{"changed "} + name)
       != lines.end()),
      name);
  for (auto& line : lines)
    for (auto* name : {"X", "y", "one"})
      BOOST_TEST(line != std::string{"changed "} + name);
  BOOST_TEST(lines.back().rfind("diff: 0 added, 0 removed, ", 0) == 0u,
             lines.back());
  auto json = cli({"ckpt", "diff", ckpt, "trainer_0", "3", "4", "--json"});
  REQUIRE_EXIT(json, 0);
  auto doc = nlohmann::json::parse(json.out);
  auto& unchanged = doc["unchanged"];
  for (auto* name : {"X", "y", "one"})
    BOOST_TEST(
      (std::find(unchanged.begin(), unchanged.end(), name) != unchanged.end()),
      name);
  BOOST_TEST(doc["added"].empty());
  BOOST_TEST(doc["removed"].empty());
}

BOOST_AUTO_TEST_CASE(diff_lists_a_blob_the_epoch_added_and_backwards_removed) {
  // incremental.json's epoch limiter writes epoch_limiter/finished from
  // epoch 1 on: init's checkpoint has no such blob.
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  REQUIRE_EXIT(
    cli({"run", jobs_dir + "incremental.json", "--checkpoint-dir", ckpt}), 0);
  auto forward = cli({"ckpt", "diff", ckpt, "trainer_0", "0", "1"});
  REQUIRE_EXIT(forward, 0);
  BOOST_TEST(contains(forward.out, "added epoch_limiter/finished\n"),
             forward.out);
  BOOST_TEST(contains(forward.out, "diff: 1 added, 0 removed, "), forward.out);
  auto backward = cli({"ckpt", "diff", ckpt, "trainer_0", "1", "0"});
  REQUIRE_EXIT(backward, 0);
  BOOST_TEST(contains(backward.out, "removed epoch_limiter/finished\n"),
             backward.out);
  BOOST_TEST(contains(backward.out, "diff: 0 added, 1 removed, "),
             backward.out);
}

BOOST_AUTO_TEST_CASE(diff_of_an_epoch_with_itself_lists_nothing) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "diff", job.ckpt, "trainer_0", "2", "2"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "diff: 0 added, 0 removed, 0 changed, 3 unchanged\n");
}

BOOST_AUTO_TEST_CASE(diff_of_a_missing_epoch_exits_1) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "diff", job.ckpt, "trainer_0", "1", "9"});
  check_one_error(r, 1);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_CASE(diff_of_a_bad_node_name_exits_2) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "diff", job.ckpt, "../etc", "1", "2"});
  check_one_error(r, 2);
}

// Read-only commands leave the checkpoint directory as it was (LevelDB's
// info log is off, and a reader never rewrites the database).
BOOST_AUTO_TEST_CASE(ls_show_and_verify_change_nothing) {
  checkpointed_pipeline job;
  auto before = snapshot(job.ckpt);
  auto first_ls = job.ls();
  REQUIRE_EXIT(first_ls, 0);
  auto show = cli({"ckpt", "show", job.ckpt, "trainer_0", "3"});
  REQUIRE_EXIT(show, 0);
  auto verify = cli({"ckpt", "verify", job.ckpt});
  REQUIRE_EXIT(verify, 0);
  BOOST_TEST((snapshot(job.ckpt) == before), "the checkpoint dir changed");
  BOOST_TEST(job.ls().out == first_ls.out);
}

/// Plants files LevelDB considers obsolete in database `db`: a table file
/// no manifest lists and a log older than the current one. DB::Open on the
/// database itself deletes both.
void plant_stray_files(const fs::path& db) {
  write_file(db / "000099.ldb", std::string(4096, '\x5a'));
  write_file(db / "000001.log", std::string(100, '\x00'));
}

/// Whether the last batch of database `db` is still only in its log (no
/// table file yet): what a reader must see without rewriting the log.
bool data_only_in_log(const fs::path& db) {
  bool log = false;
  for (auto& entry : fs::directory_iterator(db)) {
    auto ext = entry.path().extension();
    if (ext == ".ldb" || ext == ".sst")
      return false;
    log = log || (ext == ".log" && fs::file_size(entry.path()) > 0);
  }
  return log;
}

// Readers never change a byte of the checkpoint directory, nor its set of
// files: not with stray table and log files in a database (which LevelDB's
// own open deletes), and not where the last batch lies only in the log
// (which LevelDB's own open replays into a new log or table).
BOOST_AUTO_TEST_CASE(readers_leave_stray_files_and_logs_as_they_were) {
  checkpointed_pipeline job;
  BOOST_REQUIRE(data_only_in_log(job.ckpt + "/trainer_0.4"));
  plant_stray_files(job.ckpt + "/trainer_0.4");
  plant_stray_files(job.ckpt + "/trainer_0.2");
  auto before = snapshot(job.ckpt);
  auto ls = job.ls();
  REQUIRE_EXIT(ls, 0);
  BOOST_TEST((snapshot(job.ckpt) == before), "ls changed the checkpoint dir");
  auto show = cli({"ckpt", "show", job.ckpt, "trainer_0", "4", "total"});
  REQUIRE_EXIT(show, 0);
  BOOST_TEST(show.out == "total=145\n");
  BOOST_TEST((snapshot(job.ckpt) == before), "show changed the checkpoint dir");
  auto verify = cli({"ckpt", "verify", job.ckpt});
  REQUIRE_EXIT(verify, 0);
  BOOST_TEST((snapshot(job.ckpt) == before),
             "verify changed the checkpoint dir");
  // A rerun of the finished job loads epoch 4 and runs nothing: a resume
  // that writes no checkpoint changes nothing, the metadata file included.
  auto rerun = job.run();
  REQUIRE_EXIT(rerun, 0);
  BOOST_TEST(value_of(rerun.out, "trainer_0:total") == "145");
  BOOST_TEST((snapshot(job.ckpt) == before), "resuming changed the dir");
}

BOOST_AUTO_TEST_CASE(verify_passes_on_a_good_dir) {
  checkpointed_pipeline job;
  auto r = cli({"ckpt", "verify", job.ckpt});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(
    lines_of(r.out)
      == (std::vector<std::string>{"epoch 0 ok", "epoch 1 ok", "epoch 2 ok",
                                   "epoch 3 ok", "epoch 4 ok"}),
    boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(verify_fails_and_names_a_corrupt_checkpoint) {
  checkpointed_pipeline job;
  corrupt_database(job.ckpt + "/trainer_0.2");
  auto r = cli({"ckpt", "verify", job.ckpt});
  check_one_error(r, 1);
  BOOST_TEST(contains(r.err, "epoch 2: trainer_0: "), r.err);
  BOOST_TEST(!contains(r.out, "epoch 2 ok"));
  BOOST_TEST(contains(r.out, "epoch 1 ok"));
  BOOST_TEST(contains(r.out, "epoch 3 ok"));
}

BOOST_AUTO_TEST_CASE(verify_fails_when_a_committed_database_is_gone) {
  checkpointed_pipeline job;
  fs::remove_all(job.ckpt + "/trainer_0.3");
  auto r = cli({"ckpt", "verify", job.ckpt});
  check_one_error(r, 1);
  BOOST_TEST(contains(r.err, "epoch 3: trainer_0: "), r.err);
}

BOOST_AUTO_TEST_CASE(verify_of_an_empty_dir_finds_no_committed_epochs) {
  temp_dir tmp;
  auto r = cli({"ckpt", "verify", tmp.path().string()});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "no committed epochs\n");
}

BOOST_AUTO_TEST_CASE(verify_of_a_missing_dir_exits_2) {
  temp_dir tmp;
  auto r = cli({"ckpt", "verify", tmp.sub("absent")});
  check_one_error(r, 2);
}

// -- incremental checkpoints and retention ------------------------------------

BOOST_AUTO_TEST_CASE(keep_last_leaves_the_last_epochs_and_their_result) {
  checkpointed_pipeline plain;
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto r = cli({"run", pipeline, "--checkpoint-dir", ckpt, "--keep-last", "2",
                "--fetch", "trainer_0:total"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(contains(r.out, "trainer_0:total=145"), r.out);
  BOOST_TEST(!fs::exists(ckpt + "/trainer_0.2"));
  BOOST_TEST(fs::exists(ckpt + "/trainer_0.3"));
  auto verify = cli({"ckpt", "verify", ckpt});
  REQUIRE_EXIT(verify, 0);
  BOOST_TEST(lines_of(verify.out)
               == (std::vector<std::string>{"epoch 3 ok", "epoch 4 ok"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(
  an_incremental_job_killed_and_resumed_ends_as_a_plain_run) {
  temp_dir tmp;
  auto job = jobs_dir + "incremental.json";
  std::vector<std::string> fetch{"--fetch",       "trainer_0:w", "--fetch",
                                 "trainer_0:acc", "--fetch",     "trainer_1:w"};
  auto plain_args = std::vector<std::string>{"run", job};
  plain_args.insert(plain_args.end(), fetch.begin(), fetch.end());
  auto plain = cli(plain_args);
  REQUIRE_EXIT(plain, 0);
  // Killed as epoch 5 starts: epochs 3 and 4 are kept, and 4 refers to the
  // frozen payloads of 3 (a full save: --full-every 3). The rerun resumes
  // from 4 through those references.
  auto plan = tmp.sub("plan.json");
  {
    std::ofstream out{plan};
    out << R"({"faults": [{"point": "job.epoch.start", "epoch": 5,
                           "fault": "crash"}]})";
  }
  auto ckpt = tmp.sub("ckpt");
  auto args
    = std::vector<std::string>{"run",         job, "--checkpoint-dir", ckpt,
                               "--keep-last", "2", "--full-every",     "3"};
  args.insert(args.end(), fetch.begin(), fetch.end());
  auto killed_args = args;
  killed_args.insert(killed_args.end(), {"--fault-plan", plan});
  auto killed = cli(killed_args);
  BOOST_TEST(killed.exit_code != 0);
  auto resumed = cli(args);
  REQUIRE_EXIT(resumed, 0);
  BOOST_TEST(resumed.out == plain.out);
  // 7 and 8 are kept, and refer to the full save of 6.
  for (int epoch = 0; epoch <= 5; ++epoch)
    BOOST_TEST(!fs::exists(ckpt + "/trainer_0." + std::to_string(epoch)));
  BOOST_TEST(fs::exists(ckpt + "/trainer_0.6"));
}

BOOST_AUTO_TEST_CASE(epochs_referring_to_a_damaged_payload_fall_back_past_it) {
  temp_dir tmp;
  auto job = jobs_dir + "incremental.json";
  std::vector<std::string> fetch{"--fetch", "trainer_0:w", "--fetch",
                                 "trainer_1:w"};
  auto plain_args = std::vector<std::string>{"run", job};
  plain_args.insert(plain_args.end(), fetch.begin(), fetch.end());
  auto plain = cli(plain_args);
  REQUIRE_EXIT(plain, 0);
  // Killed once epoch 5 is committed; 4 and 5 refer to the frozen
  // payloads of the full save of 3, and 1 and 2 to those of 0.
  auto plan = tmp.sub("plan.json");
  {
    std::ofstream out{plan};
    out << R"({"faults": [{"point": "commit.rename.after", "epoch": 5,
                           "detail": "write", "fault": "crash"}]})";
  }
  auto ckpt = tmp.sub("ckpt");
  auto args = std::vector<std::string>{
    "run", job, "--checkpoint-dir", ckpt, "--full-every", "3"};
  args.insert(args.end(), fetch.begin(), fetch.end());
  auto killed_args = args;
  killed_args.insert(killed_args.end(), {"--fault-plan", plan});
  BOOST_TEST(cli(killed_args).exit_code != 0);
  // A bad disk damages epoch 3's data file: 5, 4 and 3 cannot be loaded.
  auto data = ckpt + "/trainer_0.3/blobs.data";
  {
    std::fstream f{data, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(static_cast<std::streamoff>(fs::file_size(data) / 2));
    f.put('\x55');
  }
  auto verify = cli({"ckpt", "verify", ckpt});
  BOOST_TEST(verify.exit_code == 1);
  BOOST_TEST(contains(verify.err, "epoch 5: trainer_0: "), verify.err);
  BOOST_TEST(contains(verify.out, "epoch 2 ok"), verify.out);
  // The rerun falls back to epoch 2, runs 3 to 8 again, and ends as a
  // plain run does.
  auto resumed = cli(args);
  REQUIRE_EXIT(resumed, 0);
  BOOST_TEST(resumed.out == plain.out);
  BOOST_TEST(contains(resumed.err, "epoch 2"), resumed.err);
}

BOOST_AUTO_TEST_CASE(gc_keeps_the_last_epochs_and_what_they_refer_to) {
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  // Killed right after epoch 7 is committed: epoch 7 refers to the frozen
  // payloads of epoch 0 (the last epoch of a finished job would not: its
  // save is full).
  auto plan = tmp.sub("plan.json");
  {
    std::ofstream out{plan};
    out << R"({"faults": [{"point": "commit.rename.after", "epoch": 7,
                           "detail": "write", "fault": "crash"}]})";
  }
  auto killed = cli({"run", jobs_dir + "incremental.json", "--checkpoint-dir",
                     ckpt, "--fault-plan", plan});
  BOOST_TEST(killed.exit_code != 0);
  auto r = cli({"ckpt", "gc", ckpt, "--keep-last", "1"});
  REQUIRE_EXIT(r, 0);
  // Epoch 0 holds the frozen payloads epoch 7 refers to; 1..6 go.
  BOOST_TEST(contains(r.out, "referenced " + ckpt + "/trainer_0.0"), r.out);
  BOOST_TEST(contains(r.out, "removed " + ckpt + "/trainer_0.6"), r.out);
  BOOST_TEST(
    contains(lines_of(r.out).back(), "gc: kept epochs 7..7, removed 12 "),
    r.out);
  BOOST_TEST(!fs::exists(ckpt + "/trainer_0.6"));
  BOOST_TEST(fs::exists(ckpt + "/trainer_0.0"));
  auto verify = cli({"ckpt", "verify", ckpt});
  REQUIRE_EXIT(verify, 0);
  BOOST_TEST(verify.out == "epoch 7 ok\n");
  auto show = cli({"ckpt", "show", ckpt, "trainer_0", "7", "X"});
  REQUIRE_EXIT(show, 0);
}

BOOST_AUTO_TEST_CASE(the_last_epoch_of_a_finished_job_stands_alone) {
  // What an upload copies, or what is left after gc --keep-last 1: the
  // last epoch's save writes every payload.
  temp_dir tmp;
  auto ckpt = tmp.sub("ckpt");
  auto up = tmp.sub("up");
  REQUIRE_EXIT(cli({"run", jobs_dir + "incremental.json", "--checkpoint-dir",
                    ckpt, "--upload-dir", up}),
               0);
  REQUIRE_EXIT(cli({"ckpt", "gc", ckpt, "--keep-last", "1"}), 0);
  BOOST_TEST(!fs::exists(ckpt + "/trainer_0.0"));
  for (auto* dir : {&ckpt, &up}) {
    auto show = cli({"ckpt", "show", *dir, "trainer_0", "8", "X", "acc"});
    REQUIRE_EXIT(show, 0);
  }
}

BOOST_AUTO_TEST_CASE(gc_refuses_a_missing_dir_and_a_keep_last_of_zero) {
  temp_dir tmp;
  check_one_error(cli({"ckpt", "gc", tmp.sub("absent"), "--keep-last", "1"}),
                  2);
  check_one_error(cli({"ckpt", "gc", tmp.path().string(), "--keep-last", "0"}),
                  2);
  check_one_error(cli({"ckpt", "gc", tmp.path().string()}), 2);
}

BOOST_AUTO_TEST_CASE(gc_of_a_dir_without_commits_removes_nothing) {
  temp_dir tmp;
  auto r = cli({"ckpt", "gc", tmp.path().string(), "--keep-last", "3"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out == "gc: no committed epochs\n");
}

BOOST_AUTO_TEST_CASE(gc_with_a_damaged_kept_epoch_removes_nothing) {
  checkpointed_pipeline job;
  fs::remove(job.ckpt + "/trainer_0.4/CURRENT");
  auto r = cli({"ckpt", "gc", job.ckpt, "--keep-last", "1"});
  check_one_error(r, 1);
  BOOST_TEST(contains(r.err, "nothing was removed"), r.err);
  BOOST_TEST(fs::exists(job.ckpt + "/trainer_0.0"));
}

BOOST_AUTO_TEST_SUITE_END()

// -- the metadata file --------------------------------------------------------

BOOST_AUTO_TEST_SUITE(metadata_file)

namespace {

bool is_corrupt(const caf::error& err) {
  return epochrt::is_error(err, epochrt::persistence_errc::corrupt);
}

template <class T>
bool is_corrupt(const caf::expected<T>& x) {
  return !x && is_corrupt(x.error());
}

// Every read of the handler on the file as it is on disk now.
void check_every_read_is_corrupt(const std::string& dir) {
  auto handler = std::make_shared<epochrt::file_metadata_handler>(dir);
  epochrt::record_keeper keeper{handler};
  BOOST_TEST(is_corrupt(handler->load()));
  BOOST_TEST(is_corrupt(handler->read_record()));
  BOOST_TEST(is_corrupt(keeper.resume_epoch(std::nullopt)));
  BOOST_TEST(is_corrupt(keeper.committed_epochs()));
  BOOST_TEST(is_corrupt(keeper.final_epoch()));
  BOOST_TEST(is_corrupt(handler->check_writable()));
}

fs::path metadata_path(const std::string& ckpt) {
  return fs::path{ckpt} / epochrt::file_metadata_handler::file_name;
}

fs::path previous_metadata_path(const std::string& ckpt) {
  return fs::path{ckpt} / epochrt::file_metadata_handler::previous_file_name;
}

} // namespace

// Exhaustive, through the C++ API on the file a real run wrote: no single
// flipped bit and no truncation passes for metadata. (Without the previous
// generation, which the reads would fall back to.)
BOOST_AUTO_TEST_CASE(every_flipped_bit_of_a_real_metadata_file_is_corrupt) {
  checkpointed_pipeline job;
  BOOST_REQUIRE(fs::remove(previous_metadata_path(job.ckpt)));
  auto file = metadata_path(job.ckpt);
  auto good = read_file(file);
  BOOST_REQUIRE(good.size() > 16);
  size_t undetected = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      write_file(file, bad);
      epochrt::file_metadata_handler handler{job.ckpt};
      if (!is_corrupt(handler.load()) || !is_corrupt(handler.read_record())) {
        ++undetected;
        BOOST_TEST_MESSAGE("undetected: byte " << i << " bit " << bit);
      }
    }
  }
  BOOST_TEST(undetected == 0u);
  for (size_t n = 0; n < good.size(); ++n) {
    write_file(file, good.substr(0, n));
    BOOST_TEST_CONTEXT("truncated to " << n << " bytes") {
      check_every_read_is_corrupt(job.ckpt);
    }
  }
  write_file(file, good);
  epochrt::file_metadata_handler handler{job.ckpt};
  auto committed = handler.load();
  BOOST_REQUIRE(committed);
  BOOST_TEST(committed->committed_epochs
               == (std::vector<int64_t>{0, 1, 2, 3, 4}),
             boost::test_tools::per_element());
}

// A sample of the flips through the CLI, with no previous generation to
// fall back to: verify and run each refuse with one line naming the file,
// and leave the directory as it was. The bytes include the header, the
// record's first word and its finalEpoch field (bytes 16-23 of the record,
// the flip of issue 8) and the last byte.
BOOST_AUTO_TEST_CASE(a_flipped_bit_without_a_previous_generation_is_refused) {
  checkpointed_pipeline job;
  BOOST_REQUIRE(fs::remove(previous_metadata_path(job.ckpt)));
  auto file = metadata_path(job.ckpt);
  auto good = read_file(file);
  std::vector<std::pair<size_t, int>> flips{{0, 0},
                                            {7, 0},
                                            {8, 3},
                                            {15, 7},
                                            {16, 0},
                                            {32, 0},
                                            {32, 2},
                                            {33, 1},
                                            {good.size() / 2, 4},
                                            {good.size() - 1, 7}};
  for (auto [pos, bit] : flips) {
    BOOST_TEST_CONTEXT("byte " << pos << " bit " << bit) {
      auto bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ (1 << bit));
      write_file(file, bad);
      auto before = snapshot(job.ckpt);
      auto verify = cli({"ckpt", "verify", job.ckpt});
      check_one_error(verify, 1);
      BOOST_TEST(contains(verify.err, file.string()), verify.err);
      auto rerun = job.run();
      check_one_error(rerun, 1);
      BOOST_TEST(contains(rerun.err, file.string()), rerun.err);
      BOOST_TEST(!contains(rerun.out, "epochs="), rerun.out);
      auto resume = job.run({"--resume-from", "2"});
      check_one_error(resume, 1);
      BOOST_TEST(contains(resume.err, file.string()), resume.err);
      BOOST_TEST((snapshot(job.ckpt) == before), "the checkpoint dir changed");
    }
  }
}

// A flipped bit in the latest generation costs its last commit, not the
// job: run warns, resumes from the previous generation's last epoch and
// gets the uninterrupted result, and its commits make the latest sound
// again; verify reports the damage until then.
BOOST_AUTO_TEST_CASE(a_flipped_bit_resumes_from_the_previous_generation) {
  checkpointed_pipeline job;
  auto file = metadata_path(job.ckpt);
  auto bad = read_file(file);
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x04);
  write_file(file, bad);
  auto verify = cli({"ckpt", "verify", job.ckpt});
  BOOST_TEST(verify.exit_code == 1);
  BOOST_TEST(contains(verify.err, "previous generation"), verify.err);
  auto rerun = job.run();
  REQUIRE_EXIT(rerun, 0);
  BOOST_TEST(contains(rerun.err, "warning"), rerun.err);
  BOOST_TEST(contains(rerun.err, file.string()), rerun.err);
  BOOST_TEST(value_of(rerun.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(rerun.out, "epochs") == "4");
  auto again = cli({"ckpt", "verify", job.ckpt});
  REQUIRE_EXIT(again, 0);
  BOOST_TEST(again.err.empty(), again.err);
}

// Deleting the metadata (both generations) never turns a directory of
// checkpoints into a fresh one: verify and ls fail, run refuses and names
// --from-scratch, and nothing is overwritten until --from-scratch is given.
BOOST_AUTO_TEST_CASE(missing_metadata_beside_databases_is_refused) {
  checkpointed_pipeline job;
  fs::remove(metadata_path(job.ckpt));
  fs::remove(previous_metadata_path(job.ckpt));
  auto before = snapshot(job.ckpt);
  auto verify = cli({"ckpt", "verify", job.ckpt});
  check_one_error(verify, 1);
  BOOST_TEST(contains(verify.err, metadata_path(job.ckpt).string()),
             verify.err);
  BOOST_TEST(!contains(verify.out, "no committed epochs"));
  auto ls = job.ls();
  BOOST_TEST(ls.exit_code == 1);
  auto rerun = job.run();
  check_one_error(rerun, 1);
  BOOST_TEST(contains(rerun.err, metadata_path(job.ckpt).string()), rerun.err);
  BOOST_TEST(contains(rerun.err, "--from-scratch"), rerun.err);
  BOOST_TEST((snapshot(job.ckpt) == before), "the checkpoint dir changed");
  auto fresh = job.run({"--from-scratch"});
  REQUIRE_EXIT(fresh, 0);
  BOOST_TEST(value_of(fresh.out, "trainer_0:total") == "145");
  BOOST_TEST(value_of(fresh.out, "epochs") == "4");
  auto again = cli({"ckpt", "verify", job.ckpt});
  REQUIRE_EXIT(again, 0);
  BOOST_TEST(lines_of(again.out).size() == 5u);
}

BOOST_AUTO_TEST_CASE(from_scratch_needs_a_checkpoint_dir) {
  auto r = cli({"run", pipeline, "--from-scratch"});
  check_one_error(r, 2);
}

// The checkpoints belong to the job that committed them: a job file edited
// since is refused before anything runs, naming the first difference, and
// --allow-job-change resumes them anyway (then recording the new job).
BOOST_AUTO_TEST_CASE(an_edited_job_does_not_resume_another_jobs_checkpoints) {
  checkpointed_pipeline job;
  auto edited = job.tmp.sub("edited.json");
  auto text = read_file(pipeline);
  auto at = text.find("\"value\": 100");
  BOOST_REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"value\": 107");
  write_file(edited, text);
  auto before = snapshot(job.ckpt);
  auto refused = cli({"run", edited, "--checkpoint-dir", job.ckpt});
  check_one_error(refused, 2);
  BOOST_TEST(contains(refused.err,
                      "init[0].steps[0].ops[0].args.value: 100 "
                      "-> 107"),
             refused.err);
  BOOST_TEST(contains(refused.err, "--allow-job-change"), refused.err);
  BOOST_TEST((snapshot(job.ckpt) == before), "the checkpoint dir changed");
  // The unchanged job still resumes its own.
  REQUIRE_EXIT(job.run(), 0);
  auto allowed
    = cli({"run", edited, "--checkpoint-dir", job.ckpt, "--resume-from", "2",
           "--allow-job-change", "--fetch", "trainer_0:total"});
  REQUIRE_EXIT(allowed, 0);
  BOOST_TEST(value_of(allowed.out, "trainer_0:total") == "145");
  // Its commits recorded the edited job: now the original is the other one.
  auto original = job.run();
  check_one_error(original, 2);
  BOOST_TEST(contains(original.err, "107 -> 100"), original.err);
}

// A job's epoch limit is not part of what it is: training it for longer
// resumes its checkpoints.
BOOST_AUTO_TEST_CASE(a_changed_epoch_limit_resumes_the_same_jobs_checkpoints) {
  temp_dir tmp;
  auto limited = [&](int epochs) {
    auto text = read_file(pipeline);
    auto at = text.find("\"stop_conditions\"");
    BOOST_REQUIRE(at != std::string::npos);
    text.insert(at, "\"epoch_limit\": " + std::to_string(epochs) + ",\n  ");
    auto path = tmp.sub("limit" + std::to_string(epochs) + ".json");
    write_file(path, text);
    return path;
  };
  auto ckpt = tmp.sub("ckpt");
  auto two = cli({"run", limited(2), "--checkpoint-dir", ckpt});
  REQUIRE_EXIT(two, 0);
  auto three = cli({"run", limited(3), "--checkpoint-dir", ckpt});
  REQUIRE_EXIT(three, 0);
}

BOOST_AUTO_TEST_SUITE_END()

// -- help and version ---------------------------------------------------------

namespace {

struct help_case {
  const char* name;
  std::vector<std::string> args;
  const char* usage_of;
};

std::ostream& operator<<(std::ostream& out, const help_case& x) {
  return out << x.name;
}

const help_case help_cases[] = {
  {"top", {"--help"}, "epochrt"},
  {"run", {"run", "--help"}, "run"},
  {"ckpt", {"ckpt", "--help"}, "ckpt"},
  {"ckpt_ls", {"ckpt", "ls", "--help"}, "ls"},
  {"ckpt_show", {"ckpt", "show", "-h"}, "show"},
  {"ckpt_verify", {"ckpt", "verify", "--help"}, "verify"},
};

} // namespace

BOOST_AUTO_TEST_SUITE(help)

BOOST_DATA_TEST_CASE(help_of_every_command_exits_0_and_prints_usage,
                     bdata::make(help_cases), hc) {
  auto r = cli(hc.args);
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(contains(r.out, "Usage:"), r.out);
  BOOST_TEST(contains(r.out, hc.usage_of), r.out);
  BOOST_TEST(r.err.empty(), r.err);
}

BOOST_AUTO_TEST_CASE(run_help_lists_every_option) {
  auto r = cli({"run", "--help"});
  REQUIRE_EXIT(r, 0);
  for (auto opt : {"--checkpoint-dir", "--resume-from", "--from-scratch",
                   "--upload-dir", "--fetch"})
    BOOST_TEST(contains(r.out, opt), opt);
}

BOOST_AUTO_TEST_CASE(version_exits_0_and_prints_the_version) {
  auto r = cli({"--version"});
  REQUIRE_EXIT(r, 0);
  BOOST_TEST(r.out.rfind("epochrt ", 0) == 0u, r.out);
}

BOOST_AUTO_TEST_SUITE_END()
