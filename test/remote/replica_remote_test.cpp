// Copies of checkpoints on other hosts (`--replicas`): every process real,
// every socket on 127.0.0.1, every wait bounded. A host lost with its disk
// is a daemon killed and its checkpoint root deleted.

#define BOOST_TEST_MODULE replicas
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/remote/daemon_jobs.hpp"
#include "test/support/eventually.hpp"
#include "test/support/node_daemons.hpp"
#include "test/support/text.hpp"
#include "tools/process/text_file.hpp"
#include <epochrt/persistence/file_metadata_handler.hpp>

namespace fs = std::filesystem;

using namespace std::chrono_literals;
using epochrt::process::node_daemon;
using epochrt::process::read_text;
using epochrt::test::check_totals;
using epochrt::test::cli;
using epochrt::test::contains;
using epochrt::test::epoch_committed;
using epochrt::test::start_daemon;
using epochrt::test::three_daemons;
using epochrt::test::value_of;
using epochrt::test::with_download_and_exit;
using epochrt::test::write_paced_job;

namespace {

// Where daemon `daemon` keeps node `node`'s database of `epoch` of the
// master's checkpoint directory `ckpt`.
std::string db_on(const node_daemon& daemon, const std::string& ckpt,
                  const std::string& node, int epoch) {
  return daemon.root() + ckpt + "/" + node + "." + std::to_string(epoch);
}

// Replaces the daemon of trainer_1 in `args` (`--node trainer_1=...`).
void move_trainer_1(std::vector<std::string>& args,
                    const std::string& address) {
  for (auto& arg : args)
    if (arg.rfind("trainer_1=", 0) == 0)
      arg = "trainer_1=" + address;
}

// The epoch a rerun resumed from, as its log says; -1 for none.
int resumed_epoch(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex{"resuming from epoch ([0-9]+)"}))
    return -1;
  return std::stoi(m[1]);
}

// Overwrites every file of a database with zeros, keeping sizes: what a
// disk that lost the data would leave.
void zero_database(const std::string& db) {
  for (auto& entry : fs::directory_iterator(db)) {
    if (!entry.is_regular_file())
      continue;
    auto size = entry.file_size();
    std::ofstream out{entry.path(), std::ios::binary | std::ios::trunc};
    out << std::string(size, '\0');
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(copies_on_other_hosts)

BOOST_AUTO_TEST_CASE(each_database_is_copied_to_the_next_nodes_daemon) {
  three_daemons d;
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  auto run = cli(args);
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  check_totals(run.out);
  auto ckpt = args[3];
  // In name order, trainer_i's copies go to the daemon of trainer_i+1.
  for (int i = 0; i < 3; ++i) {
    auto node = "trainer_" + std::to_string(i);
    auto& holder = *d.daemons[(i + 1) % 3];
    auto& other = *d.daemons[(i + 2) % 3];
    for (int epoch = 0; epoch <= 4; ++epoch) {
      BOOST_TEST(fs::is_directory(db_on(holder, ckpt, node, epoch)),
                 node << " epoch " << epoch);
      BOOST_TEST(!fs::exists(db_on(other, ckpt, node, epoch)),
                 node << " epoch " << epoch);
    }
  }
}

BOOST_AUTO_TEST_CASE(
  the_first_replicas_plus_one_daemons_keep_the_commit_record) {
  three_daemons d;
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  auto run = cli(args);
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  auto ckpt = args[3];
  auto committed = [&](int daemon) {
    epochrt::file_metadata_handler kept{d.daemons[daemon]->root() + ckpt};
    auto record = kept.read_record();
    BOOST_REQUIRE(record);
    return *record ? (*record)->committed_epochs : std::vector<int64_t>{};
  };
  // Those of trainer_0 and trainer_1, in node order; not every daemon,
  // which would cost the master n^2 bytes a commit. The third was told
  // to forget any record it kept, which an earlier run may have left.
  BOOST_TEST(!committed(0).empty());
  BOOST_TEST(committed(0).back() == 4);
  BOOST_TEST((committed(1) == committed(0)));
  BOOST_TEST(committed(2).empty());
}

BOOST_AUTO_TEST_CASE(a_database_is_copied_while_its_node_makes_it_durable) {
  three_daemons d;
  // trainer_1's daemon is slow to make its database of epoch 2 durable.
  auto plan = d.dir.sub("plan.json");
  std::ofstream{plan} << R"({"faults": [{"point": "save.fsync.after",)"
                      << R"( "fault": "delay", "ms": 4000,)"
                      << R"( "node": "trainer_1", "epoch": 2}]})";
  d.daemons[1]->kill();
  d.daemons[1] = std::make_unique<node_daemon>(
    start_daemon(d.dir.str(), "d1-slow", {"--fault-plan", plan}));
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  auto ckpt = args[3];
  auto run = d.start_run(args);
  auto own = db_on(*d.daemons[1], ckpt, "trainer_1", 2);
  auto copy = db_on(*d.daemons[2], ckpt, "trainer_1", 2);
  // The copy is in place on the holder while the node's own database is
  // still being made durable: the copy did not wait for it.
  BOOST_TEST(epochrt::test::eventually(
    [&] {
      return fs::is_directory(copy) && fs::is_directory(own + ".partial")
        && !fs::exists(own);
    },
    30s));
  BOOST_REQUIRE_EQUAL(run->wait(60s), 0);
  check_totals(read_text(d.dir.sub("run.out")));
  BOOST_TEST(fs::is_directory(own));
}

BOOST_AUTO_TEST_CASE(a_save_whose_own_sync_fails_commits_nothing_it_copied) {
  three_daemons d;
  // trainer_1's daemon fails to make its database of epoch 2 durable, once,
  // while the database is copied to its holder.
  auto plan = d.dir.sub("plan.json");
  std::ofstream{plan} << R"({"faults": [{"point": "save.fsync.after",)"
                      << R"( "fault": "io_error", "node": "trainer_1",)"
                      << R"( "epoch": 2}]})";
  d.daemons[1]->kill();
  d.daemons[1] = std::make_unique<node_daemon>(
    start_daemon(d.dir.str(), "d1-failing", {"--fault-plan", plan}));
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  auto ckpt = args[3];
  auto run = cli(args);
  // Epoch 2 is not committed (a failed save is a warning, as in Caffe2);
  // the job goes on to the uninterrupted result.
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  check_totals(run.out);
  BOOST_TEST(contains(run.err, "unable to write checkpoint for epoch 2"),
             run.err);
  BOOST_TEST(!fs::exists(db_on(*d.daemons[1], ckpt, "trainer_1", 2)));
  // Every committed epoch has its databases and copies; what the failed
  // save copied counts for nothing.
  std::vector<std::string> verify{"ckpt", "verify", ckpt};
  for (auto& arg : d.node_args())
    verify.push_back(arg);
  verify.insert(verify.end(), {"--replicas", "1"});
  auto verified = cli(verify);
  BOOST_TEST(verified.exit_code == 0, verified.out << verified.err);
}

BOOST_AUTO_TEST_CASE(replicas_beyond_the_daemons_are_bad_input) {
  three_daemons d;
  auto run = cli(d.run_args(epochrt::test::pipeline3, {"--replicas", "3"}));
  BOOST_TEST(run.exit_code == 2);
  BOOST_TEST(contains(run.err, "--replicas 3 needs at least 4 node daemons"),
             run.err);
}

BOOST_AUTO_TEST_CASE(replicas_without_a_checkpoint_directory_are_bad_input) {
  three_daemons d;
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  args.erase(args.begin() + 2, args.begin() + 4);
  auto run = cli(args);
  BOOST_TEST(run.exit_code == 2);
  BOOST_TEST(contains(run.err, "--replicas needs --checkpoint-dir"), run.err);
}

BOOST_AUTO_TEST_CASE(a_lost_host_costs_at_most_one_epoch_on_a_new_daemon) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job, {"--replicas", "1"});
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(2), 30s));
  // The host of trainer_1 is gone, disk and all.
  auto lost_root = d.daemons[1]->root();
  d.daemons[1]->kill();
  BOOST_TEST(run->wait(30s) == 1);
  fs::remove_all(lost_root);
  auto replacement = start_daemon(d.dir.str(), "d3");
  move_trainer_1(args, replacement.address());
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  check_totals(rerun.out);
  // Resumed from an epoch committed before the loss, not from scratch.
  BOOST_TEST(resumed_epoch(rerun.err) >= 2, rerun.err);
  BOOST_TEST(!contains(rerun.err, "starting from scratch"), rerun.err);
  BOOST_TEST(contains(replacement.log(), "restored from the copy"),
             replacement.log());
}

BOOST_AUTO_TEST_CASE(
  a_host_lost_after_the_job_ended_gets_its_copies_back_on_a_rerun) {
  three_daemons d;
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  auto first = cli(args);
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  // trainer_1's host is gone after the job's last commit: with it, its
  // own databases and the copies it held of trainer_0's.
  auto lost_root = d.daemons[1]->root();
  d.daemons[1]->kill();
  fs::remove_all(lost_root);
  auto replacement = start_daemon(d.dir.str(), "d3");
  move_trainer_1(args, replacement.address());
  auto verify = [&] {
    std::vector<std::string> argv{"ckpt", "verify", args[3], "--replicas", "1"};
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "--node")
        argv.insert(argv.end(), {"--node", args[i + 1]});
    return cli(argv);
  };
  BOOST_TEST(verify().exit_code == 1); // nothing has rebuilt them yet
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  check_totals(rerun.out);
  auto verified = verify();
  BOOST_TEST(verified.exit_code == 0, verified.err);
  BOOST_TEST(contains(verified.out, "epoch 4 ok (3 databases, 3 copies)"),
             verified.out);
}

BOOST_AUTO_TEST_CASE(a_rerun_with_fewer_replicas_prunes_the_copies_left_over) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job, {"--replicas", "2", "--keep-last", "2"});
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(2), 30s));
  run->kill();
  // One copy from now on: the daemon two places on is no holder any more,
  // but keeps the copies of the first run.
  BOOST_REQUIRE(args[args.size() - 4] == "--replicas");
  args[args.size() - 3] = "1";
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  check_totals(rerun.out);
  auto ckpt = args[3];
  for (int i = 0; i < 3; ++i) {
    auto node = "trainer_" + std::to_string(i);
    for (int epoch = 0; epoch <= 2; ++epoch)
      BOOST_TEST(!fs::exists(db_on(*d.daemons[(i + 2) % 3], ckpt, node, epoch)),
                 node << " epoch " << epoch);
  }
}

BOOST_AUTO_TEST_CASE(a_damaged_database_is_repaired_from_its_copy) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job, {"--replicas", "1"});
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(2), 30s));
  // The master dies; trainer_1's newest committed database is damaged
  // where it runs.
  run->kill();
  // Whichever epoch the master committed last.
  auto ckpt = args[3];
  BOOST_REQUIRE(fs::is_directory(db_on(*d.daemons[1], ckpt, "trainer_1", 2)));
  for (int epoch = 2; epoch <= 4; ++epoch)
    if (auto db = db_on(*d.daemons[1], ckpt, "trainer_1", epoch);
        fs::is_directory(db))
      zero_database(db);
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  check_totals(rerun.out);
  BOOST_TEST(resumed_epoch(rerun.err) >= 2, rerun.err);
  BOOST_TEST(contains(d.daemons[1]->log(), "restored from the copy"),
             d.daemons[1]->log());
}

BOOST_AUTO_TEST_CASE(
  a_master_host_lost_with_its_disk_resumes_from_the_daemons) {
  three_daemons d;
  auto job = write_paced_job(d.dir);
  auto args = d.run_args(job, {"--replicas", "1"});
  auto run = d.start_run(args);
  // The daemons are sent the commit record of an epoch after the master
  // wrote it (and its stats line): once epoch 3 is committed, the record
  // of epoch 2 has reached them.
  BOOST_REQUIRE(d.reached(epoch_committed(3), 30s));
  // The master's host is gone, its checkpoint directory with it; a new
  // master runs the same command with the same (now empty) directory.
  run->kill();
  auto ckpt = args[3];
  fs::remove_all(ckpt);
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  check_totals(rerun.out);
  BOOST_TEST(contains(rerun.err, "the node daemons keep one"), rerun.err);
  BOOST_TEST(resumed_epoch(rerun.err) >= 2, rerun.err);
}

BOOST_AUTO_TEST_CASE(from_scratch_ignores_the_record_the_daemons_keep) {
  three_daemons d;
  auto args = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
  BOOST_REQUIRE_EQUAL(cli(args).exit_code, 0);
  fs::remove_all(args[3]);
  args.push_back("--from-scratch");
  auto rerun = cli(args);
  BOOST_REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  check_totals(rerun.out);
  BOOST_TEST(!contains(rerun.err, "the node daemons keep one"), rerun.err);
  BOOST_TEST(resumed_epoch(rerun.err) == -1, rerun.err);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(nodes_that_move)

namespace {

// What a run that survives one lost node needs: copies, one failure, short
// waits for a daemon that will not come back, and the spare, if any.
std::vector<std::string> surviving_one_loss(const std::string& spare = {}) {
  std::vector<std::string> result{"--replicas",
                                  "1",
                                  "--max-failures",
                                  "1",
                                  "--connection-timeout-ms",
                                  "1000",
                                  "--reconnect-timeout-ms",
                                  "1000"};
  if (!spare.empty())
    result.insert(result.end(), {"--spare", spare});
  return result;
}

// Kills trainer_1's daemon once epoch 2 is committed, and deletes its
// checkpoint root: its host is gone.
void lose_trainer_1s_host(three_daemons& d) {
  BOOST_REQUIRE(d.reached(epoch_committed(2), 30s));
  auto lost_root = d.daemons[1]->root();
  d.daemons[1]->kill();
  fs::remove_all(lost_root);
}

// Three daemons and a spare; trainer_1's host is lost in the middle of a
// paced run that survives one lost node.
struct losing_a_host_with_a_spare {
  three_daemons d;
  node_daemon spare = start_daemon(d.dir.str(), "spare");
  std::vector<std::string> args
    = d.run_args(write_paced_job(d.dir), surviving_one_loss(spare.address()));

  losing_a_host_with_a_spare() {
    auto run = d.start_run(args);
    lose_trainer_1s_host(d);
    BOOST_REQUIRE_EQUAL(run->wait(90s), 0);
  }

  std::string err() const {
    return read_text(d.dir.sub("run.err"));
  }

  // The run's --stats-json lines (three_daemons::run_args) of type `type`.
  std::vector<nlohmann::json> stats_of_type(const std::string& type) const {
    std::vector<nlohmann::json> result;
    std::istringstream in{read_text(d.dir.sub("run.stats"))};
    for (std::string line; std::getline(in, line);)
      if (auto doc = nlohmann::json::parse(line, nullptr, false);
          doc.is_object() && doc.value("type", "") == type)
        result.push_back(std::move(doc));
    return result;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_lost_host_moves_its_node_to_a_spare_within_the_run,
                        losing_a_host_with_a_spare) {
  check_totals(read_text(d.dir.sub("run.out")));
  BOOST_TEST(contains(err(),
                      "moved from " + d.daemons[1]->address()
                        + " to the spare daemon at " + spare.address()),
             err());
  BOOST_TEST(!contains(err(), "starting from scratch"), err());
  BOOST_TEST(contains(spare.log(), "restored from the copy"), spare.log());
}

// What a program that watches the job (epochrt sweep, a dashboard) reads
// instead of the note on stderr: one node_moved line, before the
// recovery's.
BOOST_FIXTURE_TEST_CASE(a_move_to_a_spare_is_a_line_of_the_stats,
                        losing_a_host_with_a_spare) {
  auto moved = stats_of_type("node_moved");
  BOOST_REQUIRE_EQUAL(moved.size(), 1u);
  BOOST_TEST(moved[0].value("node", "") == "trainer_1");
  BOOST_TEST(moved[0].value("address", "") == spare.address());
  auto recovered = stats_of_type("recovered");
  BOOST_REQUIRE_EQUAL(recovered.size(), 1u);
  BOOST_TEST(moved[0].value("time_s", 0.0)
             <= recovered[0].value("time_s", 0.0));
}

BOOST_FIXTURE_TEST_CASE(copies_are_rebuilt_on_the_spare_after_a_move,
                        losing_a_host_with_a_spare) {
  // trainer_0's copies went to trainer_1's daemon, now the spare: every
  // committed epoch is copied there again before the next commit, the
  // earlier ones too, and every later one as it commits.
  auto resumed = resumed_epoch(err());
  BOOST_REQUIRE(resumed >= 2);
  for (int epoch = 0; epoch <= 4; ++epoch)
    BOOST_TEST(fs::is_directory(db_on(spare, args[3], "trainer_0", epoch)),
               "epoch " << epoch);
}

BOOST_FIXTURE_TEST_CASE(every_committed_epoch_has_its_copies_after_a_move,
                        losing_a_host_with_a_spare) {
  // The moved node's own older databases are restored on the spare from
  // their copies, and every database has one intact copy again.
  move_trainer_1(args, spare.address());
  std::vector<std::string> verify{"ckpt", "verify", args[3], "--replicas", "1"};
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--node")
      verify.insert(verify.end(), {"--node", args[i + 1]});
  auto result = cli(verify);
  BOOST_TEST(result.exit_code == 0, result.err);
  BOOST_TEST(contains(result.out, "epoch 0 ok (3 databases, 3 copies)"),
             result.out);
}

BOOST_AUTO_TEST_CASE(
  without_a_spare_a_lost_host_fails_the_job_saying_how_to_go_on) {
  three_daemons d;
  auto args = d.run_args(write_paced_job(d.dir), surviving_one_loss());
  auto run = d.start_run(args);
  lose_trainer_1s_host(d);
  BOOST_REQUIRE_EQUAL(run->wait(90s), 1);
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_TEST(
    contains(err,
             "node trainer_1 did not come back at " + d.daemons[1]->address()),
    err);
  BOOST_TEST(contains(err, "no spare daemon left"), err);
  BOOST_TEST(contains(err, "resumes on a new daemon: --node NAME=HOST:PORT"),
             err);
}

BOOST_AUTO_TEST_CASE(a_spare_without_max_failures_is_bad_input) {
  three_daemons d;
  auto run
    = cli(d.run_args(epochrt::test::pipeline3, {"--spare", "127.0.0.1:1"}));
  BOOST_TEST(run.exit_code == 2);
  BOOST_TEST(contains(run.err, "--spare needs --max-failures"), run.err);
}

BOOST_AUTO_TEST_CASE(a_spare_that_is_a_nodes_daemon_is_bad_input) {
  three_daemons d;
  auto run = cli(
    d.run_args(epochrt::test::pipeline3,
               {"--max-failures", "1", "--spare", d.daemons[0]->address()}));
  BOOST_TEST(run.exit_code == 2);
  BOOST_TEST(contains(run.err, "the daemon of a --node"), run.err);
}

namespace {

// Where trainer_1's daemon dies in each phase of with_download_and_exit(),
// as the daemon's fault trace names the place.
struct phase {
  const char* name;
  const char* point;
  int epoch;
  const char* detail; // empty: any
};

std::ostream& operator<<(std::ostream& out, const phase& p) {
  return out << p.name;
}

const phase every_phase[] = {
  {"init", "task.start", 0, "init_1"},
  {"epoch 1", "task.start", 1, "read_1"},
  {"epoch 2", "task.start", 2, "read_1"},
  {"epoch 3", "task.start", 3, "read_1"},
  {"epoch 4", "task.start", 4, "read_1"},
  {"the last save", "save.fsync.after", 4, ""},
  {"download", "task.start", 4, "download_1"},
  {"exit", "task.start", 4, "exit_1"},
};

// A plan that crashes the daemon at `p`, written into `dir`.
std::string crash_plan(const epochrt::test::temp_dir& dir, const phase& p) {
  std::string rule = std::string{R"({"point": ")"} + p.point
    + R"(", "fault": "crash", "node": "trainer_1", "epoch": )"
    + std::to_string(p.epoch);
  if (*p.detail != '\0')
    rule += std::string{R"(, "detail": ")"} + p.detail + "\"";
  auto path = dir.sub("plan.json");
  std::ofstream{path} << R"({"faults": [)" << rule << "}]}";
  return path;
}

} // namespace

BOOST_DATA_TEST_CASE(a_host_lost_in_any_phase_costs_no_rerun_with_a_spare,
                     boost::unit_test::data::make(every_phase), p) {
  three_daemons d;
  // trainer_1's daemon crashes at the phase's place...
  d.daemons[1]->kill();
  d.daemons[1] = std::make_unique<node_daemon>(start_daemon(
    d.dir.str(), "d1-planned", {"--fault-plan", crash_plan(d.dir, p)}));
  auto spare = start_daemon(d.dir.str(), "spare");
  auto job = d.dir.sub("job.json");
  std::ofstream{job} << with_download_and_exit();
  auto run = d.start_run(d.run_args(job, surviving_one_loss(spare.address())));
  // ...and its host is gone with it.
  BOOST_REQUIRE(epochrt::test::eventually(
    [&] {
      return !d.daemons[1]->running();
    },
    30s));
  fs::remove_all(d.daemons[1]->root());
  auto code = run->wait(90s);
  auto out = read_text(d.dir.sub("run.out"));
  auto err = read_text(d.dir.sub("run.err"));
  BOOST_REQUIRE_MESSAGE(code == 0, "exit " << code << ":\n" << err);
  for (auto node : {"trainer_0", "trainer_1", "trainer_2"})
    BOOST_TEST(value_of(out, std::string{node} + ":total") == "1146", node);
  BOOST_TEST(contains(err, "to the spare daemon at " + spare.address()), err);
  BOOST_TEST(!contains(err, "trying an earlier one"), err);
}

BOOST_AUTO_TEST_SUITE_END()

// `epochrt ckpt verify DIR --node ...`: every database of a distributed job
// and every copy of it, checked where they lie, without repairing anything;
// `epochrt ckpt gc DIR --node ...`: retention by hand, where they lie.
BOOST_AUTO_TEST_SUITE(verify_and_gc_on_the_daemons)

namespace {

// A job of three daemons run to its end with one copy of each database;
// `verify(extra)` checks its checkpoints with the job's --node arguments.
struct verified_job {
  three_daemons d;
  std::vector<std::string> run;
  std::string ckpt;

  verified_job() {
    run = d.run_args(epochrt::test::pipeline3, {"--replicas", "1"});
    ckpt = run[3];
    auto result = cli(run);
    BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  }

  epochrt::test::process_result verify(std::vector<std::string> extra = {}) {
    return ckpt_command({"ckpt", "verify", ckpt}, std::move(extra));
  }

  epochrt::test::process_result gc(std::vector<std::string> extra) {
    return ckpt_command({"ckpt", "gc", ckpt}, std::move(extra));
  }

  epochrt::test::process_result
  ckpt_command(std::vector<std::string> args,
               const std::vector<std::string>& extra) {
    for (auto& arg : d.node_args())
      args.push_back(arg);
    args.insert(args.end(), extra.begin(), extra.end());
    return cli(args);
  }

  std::string address(int i) const {
    return d.daemons[i]->address();
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(every_database_and_copy_is_checked_on_the_daemons,
                        verified_job) {
  auto result = verify({"--replicas", "1"});
  BOOST_TEST(result.exit_code == 0, result.err);
  for (int epoch = 0; epoch <= 4; ++epoch)
    BOOST_TEST(contains(result.out,
                        "epoch " + std::to_string(epoch)
                          + " ok (3 databases, 3 copies)"),
               result.out);
}

BOOST_FIXTURE_TEST_CASE(a_damaged_copy_fails_verification_and_stays_damaged,
                        verified_job) {
  // trainer_1's copies lie with trainer_2's daemon.
  auto copy = db_on(*d.daemons[2], ckpt, "trainer_1", 2);
  zero_database(copy);
  auto result = verify();
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(
    contains(result.err, "epoch 2: trainer_1: copy at " + address(2) + ": "),
    result.err);
  BOOST_TEST(contains(result.out, "epoch 3 ok"), result.out);
  // Verification reads only: the copy was not repaired.
  auto again = verify();
  BOOST_TEST(again.exit_code == 1);
}

BOOST_FIXTURE_TEST_CASE(a_missing_database_fails_verification_and_stays_missing,
                        verified_job) {
  auto own = db_on(*d.daemons[0], ckpt, "trainer_0", 3);
  fs::remove_all(own);
  auto result = verify();
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(contains(result.err, "epoch 3: trainer_0 at " + address(0) + ": "),
             result.err);
  BOOST_TEST(!fs::exists(own));
}

BOOST_FIXTURE_TEST_CASE(fewer_intact_copies_than_replicas_fail_verification,
                        verified_job) {
  auto result = verify({"--replicas", "2"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(contains(result.err,
                      "epoch 4: trainer_0: 1 intact copies, --replicas 2 "
                      "wants 2"),
             result.err);
}

BOOST_FIXTURE_TEST_CASE(an_unreachable_daemon_fails_verification,
                        verified_job) {
  d.daemons[1]->kill();
  auto result = verify({"--connection-timeout-ms", "500"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(contains(result.err, "trainer_1"), result.err);
}

BOOST_AUTO_TEST_CASE(verification_beside_a_running_job_is_refused_unharmed) {
  three_daemons d;
  // Three epochs of 1.5 s each after epoch 1 is committed: the verify's
  // process starts and attaches well within them, even under ASan (with
  // 150 ms, the job once ended first and the verify passed).
  auto args = d.run_args(write_paced_job(d.dir, 1500), {"--replicas", "1"});
  auto run = d.start_run(args);
  BOOST_REQUIRE(d.reached(epoch_committed(1), 30s));
  std::vector<std::string> verify{"ckpt", "verify", args[3]};
  for (auto& arg : d.node_args())
    verify.push_back(arg);
  auto refused = cli(verify);
  BOOST_TEST(refused.exit_code == 1);
  BOOST_TEST(contains(refused.err, "serves another master"), refused.err);
  BOOST_REQUIRE_EQUAL(run->wait(60s), 0);
  check_totals(read_text(d.dir.sub("run.out")));
}

BOOST_FIXTURE_TEST_CASE(a_node_the_checkpoint_lacks_is_bad_input,
                        verified_job) {
  auto result
    = cli({"ckpt", "verify", ckpt, "--node", "trainer_9=127.0.0.1:1"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(contains(result.err, "the checkpoint has no node 'trainer_9'"),
             result.err);
}

BOOST_FIXTURE_TEST_CASE(replicas_without_nodes_are_bad_input, verified_job) {
  auto result = cli({"ckpt", "verify", ckpt, "--replicas", "1"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(contains(result.err, "--replicas needs --node"), result.err);
}

BOOST_FIXTURE_TEST_CASE(gc_removes_old_databases_and_their_copies_there,
                        verified_job) {
  auto result = gc({"--keep-last", "2", "--replicas", "1"});
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  BOOST_TEST(contains(result.out, "gc: kept epochs 3..4, removed 18 databases"),
             result.out);
  for (int i = 0; i < 3; ++i) {
    auto node = "trainer_" + std::to_string(i);
    auto& own = *d.daemons[i];
    auto& holder = *d.daemons[(i + 1) % 3];
    for (int epoch = 0; epoch <= 4; ++epoch) {
      auto kept = epoch >= 3;
      BOOST_TEST(fs::exists(db_on(own, ckpt, node, epoch)) == kept,
                 node << " epoch " << epoch);
      BOOST_TEST(fs::exists(db_on(holder, ckpt, node, epoch)) == kept,
                 node << " copy, epoch " << epoch);
    }
  }
  auto verified = verify({"--replicas", "1"});
  BOOST_TEST(verified.exit_code == 0, verified.err);
  BOOST_TEST(!contains(verified.out, "epoch 2"), verified.out);
}

BOOST_AUTO_TEST_CASE(gc_with_fewer_replicas_removes_old_copies_everywhere) {
  three_daemons d;
  auto run = d.run_args(epochrt::test::pipeline3, {"--replicas", "2"});
  auto ckpt = run[3];
  auto first = cli(run);
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  std::vector<std::string> gc{"ckpt", "gc", ckpt};
  for (auto& arg : d.node_args())
    gc.push_back(arg);
  gc.insert(gc.end(), {"--keep-last", "2", "--replicas", "1"});
  auto result = cli(gc);
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  // With --replicas 1 the daemon two places on holds no copies any more:
  // those of the dropped epochs go there too; those of the kept ones stay.
  for (int i = 0; i < 3; ++i) {
    auto node = "trainer_" + std::to_string(i);
    auto& second_holder = *d.daemons[(i + 2) % 3];
    for (int epoch = 0; epoch <= 4; ++epoch)
      BOOST_TEST(fs::exists(db_on(second_holder, ckpt, node, epoch))
                   == (epoch >= 3),
                 node << " epoch " << epoch);
  }
}

BOOST_FIXTURE_TEST_CASE(gc_that_cannot_read_a_kept_database_removes_nothing,
                        verified_job) {
  zero_database(db_on(*d.daemons[1], ckpt, "trainer_1", 4));
  auto result = gc({"--keep-last", "2", "--replicas", "1"});
  BOOST_TEST(result.exit_code == 1);
  BOOST_TEST(contains(result.err, "trainer_1"), result.err);
  for (int epoch = 0; epoch <= 4; ++epoch)
    BOOST_TEST(fs::exists(db_on(*d.daemons[0], ckpt, "trainer_0", epoch)),
               "epoch " << epoch);
  auto listed = cli({"ckpt", "ls", ckpt});
  BOOST_TEST(contains(listed.out, "last_committed=4"), listed.out);
}

BOOST_FIXTURE_TEST_CASE(gc_replicas_without_nodes_are_bad_input, verified_job) {
  auto result
    = cli({"ckpt", "gc", ckpt, "--keep-last", "2", "--replicas", "1"});
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(contains(result.err, "--replicas needs --node"), result.err);
}

BOOST_AUTO_TEST_SUITE_END()
