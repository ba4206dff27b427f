// One job per checkpoint directory, as other programs see it: a run holds
// the lock of its --checkpoint-dir, a daemon that of its --checkpoint-root;
// a second run, `ckpt gc` or a second daemon on a held directory exits 2
// naming the holder's pid before doing anything, readers (`ckpt ls`,
// `show`, `verify`, `diff`) work beside the holder, and a holder killed by
// SIGKILL leaves the directory free. Real processes; every wait bounded.

#define BOOST_TEST_MODULE lock_cli
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "test/support/node_daemons.hpp"
#include "test/support/process_runner.hpp"
#include "test/support/temp_dir.hpp"
#include "test/support/text.hpp"
#include <epochrt/persistence/file_metadata_handler.hpp>

using epochrt::process::child_process;
using epochrt::test::contains;
using epochrt::test::process_result;
using epochrt::test::process_runner;
using epochrt::test::run_in_background;
using epochrt::test::temp_dir;
using namespace std::chrono_literals;

using epochrt::test::read_file;
using epochrt::test::value_of;

namespace {

const std::string pipeline = EPOCHRT_SOURCE_DIR "/examples/jobs/pipeline.json";
std::string describe(const process_result& r) {
  std::ostringstream out;
  out << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "")
      << "\nstdout:\n"
      << r.out << "stderr:\n"
      << r.err;
  return out.str();
}

/// The committed epochs of a checkpoint directory, as "0,1,2".
std::string committed(const std::string& dir) {
  epochrt::file_metadata_handler handler{dir};
  auto metadata = handler.load();
  if (!metadata)
    return "<unreadable>";
  std::string text;
  for (auto epoch : metadata->committed_epochs)
    text += (text.empty() ? "" : ",") + std::to_string(epoch);
  return text;
}

process_result cli(const std::vector<std::string>& args) {
  return process_runner{EPOCHRT_CLI, 60s}.run(args);
}

std::vector<std::string> run_args(const std::string& ckpt,
                                  const std::string& plan = {}) {
  std::vector<std::string> args{"run", pipeline,  "--checkpoint-dir",
                                ckpt,  "--fetch", "trainer_0:total"};
  if (!plan.empty()) {
    args.emplace_back("--fault-plan");
    args.push_back(plan);
  }
  return args;
}

/// A fault plan under which every epoch group waits `ms` before its tasks
/// start: a run that holds its directory long enough to be watched.
std::string slow_epochs_plan(const temp_dir& dir, int ms) {
  auto path = dir.sub("slow.json");
  std::ofstream{path}
    << R"({"faults": [{"point": "job.group.start", "fault": "delay",)"
    << R"( "detail": "epoch", "count": 0, "ms": )" << ms << "}]}";
  return path;
}

/// `epochrt run` in the background on `ckpt`, paced by `slow_epochs_plan`.
struct paced_run {
  paced_run(const temp_dir& dir, const std::string& ckpt)
    : out(dir.sub("paced.out")), err(dir.sub("paced.err")) {
    proc = run_in_background(
      EPOCHRT_CLI, run_args(ckpt, slow_epochs_plan(dir, 600)), out, err);
  }

  /// Waits until its stderr holds `text`; false after 20 s.
  bool wait_for(const std::string& text) {
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(5ms))
      if (contains(read_file(err), text))
        return true;
    return false;
  }

  std::string holder() const {
    return "in use by process " + std::to_string(proc->pid());
  }

  std::string out;
  std::string err;
  std::optional<child_process> proc;
};

/// A complete checkpoint directory (epochs 0 to 4) at `ckpt`, its run over.
void checkpoint_pipeline(const std::string& ckpt) {
  auto r = cli(run_args(ckpt));
  BOOST_TEST_REQUIRE(r.exit_code == 0, describe(r));
}

} // namespace

BOOST_AUTO_TEST_SUITE(lock_cli)

BOOST_AUTO_TEST_CASE(
  a_second_run_on_a_directory_in_use_exits_2_naming_the_pid) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  paced_run first{dir, ckpt};
  BOOST_TEST_REQUIRE(first.wait_for("starting epoch 1"), read_file(first.err));
  auto second = cli(run_args(ckpt));
  BOOST_TEST(second.exit_code == 2, describe(second));
  BOOST_TEST(contains(second.err, first.holder()), second.err);
  BOOST_TEST(contains(second.err, ckpt), second.err);
  // Refused before anything ran.
  BOOST_TEST(second.out.empty(), second.out);
  BOOST_TEST(!contains(second.err, "starting"), second.err);
  // The first run is none the worse.
  BOOST_TEST_REQUIRE(first.proc->wait(30s) == 0, read_file(first.err));
  BOOST_TEST(value_of(read_file(first.out), "trainer_0:total") == "145");
  BOOST_TEST(committed(ckpt) == "0,1,2,3,4");
}

BOOST_AUTO_TEST_CASE(
  ckpt_gc_on_a_directory_in_use_exits_2_and_removes_nothing) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  paced_run first{dir, ckpt};
  BOOST_TEST_REQUIRE(first.wait_for("starting epoch 2"), read_file(first.err));
  auto gc = cli({"ckpt", "gc", ckpt, "--keep-last", "1"});
  BOOST_TEST(gc.exit_code == 2, describe(gc));
  BOOST_TEST(contains(gc.err, first.holder()), gc.err);
  BOOST_TEST(!contains(gc.out, "removed"), gc.out);
  BOOST_TEST_REQUIRE(first.proc->wait(30s) == 0, read_file(first.err));
  BOOST_TEST(committed(ckpt) == "0,1,2,3,4");
}

BOOST_AUTO_TEST_CASE(ckpt_ls_works_while_a_run_holds_the_directory) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  paced_run first{dir, ckpt};
  BOOST_TEST_REQUIRE(first.wait_for("starting epoch 2"), read_file(first.err));
  auto ls = cli({"ckpt", "ls", ckpt});
  BOOST_TEST(ls.exit_code == 0, describe(ls));
  BOOST_TEST(contains(ls.out, "trainer_0"), ls.out);
  BOOST_TEST_REQUIRE(first.proc->wait(30s) == 0, read_file(first.err));
}

// The holder here is a daemon whose root is the directory: it holds the
// lock for as long as it runs, with the directory's checkpoints complete.
BOOST_AUTO_TEST_CASE(
  every_reader_works_beside_the_holder_and_only_gc_is_refused) {
  temp_dir dir;
  auto ckpt = dir.sub("holder-root");
  checkpoint_pipeline(ckpt);
  auto holder = epochrt::test::start_daemon(dir.str(), "holder");
  auto held_by = "in use by process " + std::to_string(holder.pid());
  for (auto args : std::vector<std::vector<std::string>>{
         {"ckpt", "ls", ckpt},
         {"ckpt", "show", ckpt, "trainer_0", "4", "total"},
         {"ckpt", "verify", ckpt},
         {"ckpt", "diff", ckpt, "trainer_0", "3", "4"}}) {
    auto r = cli(args);
    BOOST_TEST(r.exit_code == 0, args[1] << ": " << describe(r));
  }
  auto gc = cli({"ckpt", "gc", ckpt, "--keep-last", "1"});
  BOOST_TEST(gc.exit_code == 2, describe(gc));
  BOOST_TEST(contains(gc.err, held_by), gc.err);
  auto run = cli(run_args(ckpt));
  BOOST_TEST(run.exit_code == 2, describe(run));
  BOOST_TEST(contains(run.err, held_by), run.err);
  BOOST_TEST(committed(ckpt) == "0,1,2,3,4");
}

BOOST_AUTO_TEST_CASE(a_run_killed_by_sigkill_leaves_the_directory_free) {
  temp_dir dir;
  auto ckpt = dir.sub("ckpt");
  {
    paced_run first{dir, ckpt};
    BOOST_TEST_REQUIRE(first.wait_for("starting epoch 2"),
                       read_file(first.err));
    first.proc->signal(SIGKILL);
    BOOST_TEST_REQUIRE(first.proc->wait(20s) == 128 + SIGKILL);
  }
  auto rerun = cli(run_args(ckpt));
  BOOST_TEST_REQUIRE(rerun.exit_code == 0, describe(rerun));
  BOOST_TEST(value_of(rerun.out, "trainer_0:total") == "145");
}

BOOST_AUTO_TEST_CASE(a_second_daemon_on_a_root_in_use_exits_2_naming_the_pid) {
  temp_dir dir;
  auto first = epochrt::test::start_daemon(dir.str(), "a");
  auto second = cli(
    {"node", "--listen", "127.0.0.1:0", "--checkpoint-root", first.root()});
  BOOST_TEST(second.exit_code == 2, describe(second));
  BOOST_TEST(
    contains(second.err, "in use by process " + std::to_string(first.pid())),
    second.err);
  BOOST_TEST(!contains(second.out, "listening on"), second.out);
}

// `epochrt sweep` runs the daemons of one job on one root, each with its
// own nodes: --shared-root leaves the root unlocked for them.
BOOST_AUTO_TEST_CASE(daemons_sharing_a_root_on_purpose_both_start) {
  temp_dir dir;
  auto first = epochrt::test::start_daemon(dir.str(), "a", {"--shared-root"});
  epochrt::process::node_daemon::options opts;
  opts.program = EPOCHRT_CLI;
  opts.root = first.root();
  opts.args = {"--shared-root"};
  opts.log_path = dir.sub("b.err");
  std::string error;
  auto second = epochrt::process::node_daemon::start(opts, error);
  BOOST_TEST(second.has_value(), error);
}

BOOST_AUTO_TEST_SUITE_END()
