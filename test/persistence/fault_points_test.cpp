// The persistence fault points (save.*, commit.*, load.*): each fires at its
// step, an injected io_error fails that step as a real one would, and what
// a bad disk does at the writing points (short_write, corrupt_write) is
// found at load, never loaded as if it were good. Crashes are not tested
// here: they end the process (see the CLI's fault tests).

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "test/persistence/test_util.hpp"
#include <epochrt/faults/fault_errc.hpp>
#include <epochrt/faults/fault_injector.hpp>
#include <epochrt/messages/error_text.hpp>
#include <epochrt/messages/tensor.hpp>
#include <epochrt/persistence/checkpoint_reader.hpp>
#include <epochrt/persistence/checkpoint_writer.hpp>
#include <epochrt/persistence/file_metadata_handler.hpp>
#include <epochrt/persistence/record_keeper.hpp>

using namespace epochrt;
using namespace epochrt::test;
namespace fs = std::filesystem;

namespace {

// The commit record in `dir`, changed as a checkpoint manager changes it,
// through a file handler that consults `faults`.
record_keeper keeper_of(const std::string& dir,
                        std::shared_ptr<fault_injector> faults = nullptr) {
  return record_keeper{
    std::make_shared<file_metadata_handler>(dir, std::move(faults))};
}

using blob_list = std::vector<std::pair<std::string, tensor>>;

tensor floats(size_t n, float base = 0) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), base);
  return make_tensor<float>({static_cast<int64_t>(n)}, values);
}

// Several chunks and batches: "w" alone fills three batches.
blob_list blobs(float base = 0) {
  return {
    {"w", floats(3000, base)}, // 12000 bytes: 3 chunks of 4096
    {"iter", make_scalar<int64_t>(42)},
    {"names", make_string_tensor({3}, {"a", "", "long string"})},
    {"mask", make_tensor<bool>({3}, {true, false, true})},
    {"bytes", make_tensor<uint8_t>({4}, {0, 1, 254, 255})},
  };
}

fault_rule rule(fault_point point, fault_kind kind) {
  fault_rule x;
  x.point = point;
  x.kind = kind;
  if (kind == fault_kind::io_error)
    x.error = EIO;
  return x;
}

std::shared_ptr<fault_injector> plan(std::vector<fault_rule> rules,
                                     uint64_t seed = 0) {
  fault_plan p;
  p.seed = seed;
  p.faults = std::move(rules);
  return std::make_shared<fault_injector>(std::move(p));
}

std::shared_ptr<fault_injector> plan(fault_rule x, uint64_t seed = 0) {
  return plan(std::vector<fault_rule>{std::move(x)}, seed);
}

bool injected(const caf::error& err) {
  return is_error(err, fault_errc::injected);
}

template <class T>
bool injected(const caf::expected<T>& x) {
  return !x && injected(x.error());
}

std::string text(const caf::error& err) {
  return err ? caf::to_string(err) : std::string{"ok"};
}

caf::expected<manifest> write_db(const std::string& path, int64_t epoch,
                                 const blob_list& values,
                                 fault_injector* faults = nullptr,
                                 const std::string& node = "trainer_0") {
  writer_options opts;
  opts.chunk_bytes = 4096;
  opts.batch_bytes = 4000; // a batch per chunk of "w", then one for the rest
  opts.faults = faults;
  auto writer = checkpoint_writer::create(path, node, epoch, opts);
  if (!writer)
    return std::move(writer.error());
  for (auto& [name, value] : values)
    if (auto err = (*writer)->put(name, value))
      return err;
  return (*writer)->finish();
}

// How a load of `values` from `path` ended: "ok" when every blob came back
// equal, "error" when the open, a read or the verification failed with a
// persistence error; "WRONG <blob>" when a blob came back different: the
// one outcome that must never happen.
std::string load_outcome(const std::string& path, const blob_list& values) {
  auto reader = checkpoint_reader::open(path);
  if (!reader)
    return in_category(reader.error(), persistence_category)
      ? "error"
      : "unexpected " + text(reader.error());
  bool failed = false;
  for (auto& [name, value] : values) {
    auto back = (*reader)->read(name);
    if (!back) {
      if (!in_category(back.error(), persistence_category))
        return "unexpected " + text(back.error());
      failed = true;
    } else if (!(*back == value)) {
      return "WRONG " + name;
    }
  }
  return failed ? "error" : "ok";
}

// The points hit while `run` runs, in order, from the injector's trace.
template <class F>
std::vector<std::string>
trace(const std::string& file, fault_injector& faults, F run) {
  fs::remove(file);
  BOOST_REQUIRE(!faults.trace_to(file));
  run();
  std::vector<std::string> points;
  std::ifstream in{file};
  std::string line;
  while (std::getline(in, line))
    points.push_back(line.substr(0, line.find('\t')));
  return points;
}

// The lines of a trace, with runs of one point folded into one entry.
std::vector<std::string> folded(const std::vector<std::string>& xs) {
  std::vector<std::string> result;
  for (auto& x : xs)
    if (result.empty() || result.back() != x)
      result.push_back(x);
  return result;
}

bool partial_left(const std::string& path) {
  return fs::exists(path + ".partial");
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(fault_points, persistence_fixture)

// -- when the points fire ----------------------------------------------------

BOOST_AUTO_TEST_CASE(a_save_passes_its_points_in_order) {
  auto faults = plan(std::vector<fault_rule>{});
  auto path = (*this)("trainer_0.1");
  auto points = trace((*this)("trace"), *faults, [&] {
    BOOST_REQUIRE(write_db(path, 1, blobs(), faults.get()));
  });
  // Each chunk batch is a before/after pair, so batches alternate.
  size_t i = 1;
  while (i + 1 < points.size() && points[i] == "save.batch.before"
         && points[i + 1] == "save.batch.after")
    i += 2;
  BOOST_TEST(i >= 7u); // three batches at least, for "w"
  std::vector<std::string> rest(points.begin() + static_cast<ptrdiff_t>(i),
                                points.end());
  std::vector<std::string> expected{
    "save.manifest.before", "save.manifest.after", "save.fsync.after",
    "save.rename.before",   "save.rename.after",   "save.dirsync.before",
    "save.dirsync.after"};
  BOOST_TEST(points.front() == "save.open");
  BOOST_TEST(rest == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_load_passes_load_open_then_load_chunk_per_chunk) {
  auto path = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(path, 1, blobs()));
  auto faults = plan(std::vector<fault_rule>{});
  auto points = trace((*this)("trace"), *faults, [&] {
    reader_options opts;
    opts.faults = faults.get();
    auto reader = checkpoint_reader::open(path, opts);
    BOOST_REQUIRE(reader);
    BOOST_REQUIRE(!(*reader)->verify());
  });
  BOOST_REQUIRE(!points.empty());
  BOOST_TEST(points.front() == "load.open");
  // w: 3 chunks; iter, names, mask, bytes: 1 each.
  BOOST_TEST(points.size() == 1u + 7u);
  BOOST_TEST(
    (folded(points) == std::vector<std::string>{"load.open", "load.chunk"}));
}

BOOST_AUTO_TEST_CASE(a_commit_passes_its_points_in_order) {
  auto faults = plan(std::vector<fault_rule>{});
  auto handler = keeper_of((*this)("ckpt"), faults);
  auto points = trace((*this)("trace"), *faults, [&] {
    BOOST_REQUIRE(!handler.commit(3));
  });
  std::vector<std::string> expected{
    "load.metadata", "commit.write.before", "commit.write.after",
    "commit.rename.before", "commit.rename.after"};
  BOOST_TEST(points == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_commit_with_its_stats_is_one_write_of_the_metadata) {
  auto faults = plan(std::vector<fault_rule>{});
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(dir, faults);
  std::vector<checkpoint_stats> stats{{"trainer_0", "db", 10, 100, 2}};
  auto points = trace((*this)("trace"), *faults, [&] {
    BOOST_REQUIRE(!handler.commit_save(3, true, stats));
  });
  std::vector<std::string> expected{
    "load.metadata", "commit.write.before", "commit.write.after",
    "commit.rename.before", "commit.rename.after"};
  BOOST_TEST(points == expected, boost::test_tools::per_element());
  auto state = file_metadata_handler{dir}.load();
  BOOST_REQUIRE(state);
  BOOST_TEST(state->committed_epochs == (std::vector<int64_t>{3}));
  BOOST_TEST(state->final_epoch == 3);
  BOOST_TEST(state->last_action == "checkpoint_save");
  BOOST_TEST((state->last_stats == stats));
}

BOOST_AUTO_TEST_CASE(commit_points_report_the_epoch_and_the_change) {
  auto faults = plan([] {
    auto x = rule(fault_point::commit_write_before, fault_kind::io_error);
    x.epoch = 4;
    x.detail = "write_final";
    return x;
  }());
  auto handler = keeper_of((*this)("ckpt"), faults);
  BOOST_TEST(!handler.commit(4));       // another change: no match
  BOOST_TEST(!handler.commit(5, true)); // another epoch: no match
  auto err = handler.commit(4, true);
  BOOST_TEST(injected(err), text(err));
  BOOST_TEST(text(err).find("commit.write.before") != std::string::npos);
}

// -- io_error: the step fails, and leaves what a real failure would ----------

BOOST_AUTO_TEST_CASE(io_error_at_save_open_creates_nothing) {
  auto path = (*this)("trainer_0.1");
  auto faults = plan(rule(fault_point::save_open, fault_kind::io_error));
  auto written = write_db(path, 1, blobs(), faults.get());
  BOOST_TEST(injected(written), describe(written));
  BOOST_TEST(text(written.error())
               .find("EIO at save.open (node trainer_0, "
                     "epoch 1)")
             != std::string::npos);
  BOOST_TEST(!fs::exists(path));
  BOOST_TEST(!partial_left(path));
}

BOOST_AUTO_TEST_CASE(
  io_error_at_any_save_point_fails_the_save_and_removes_the_partial_directory) {
  for (auto point :
       {fault_point::save_batch_before, fault_point::save_batch_after,
        fault_point::save_manifest_before, fault_point::save_manifest_after,
        fault_point::save_fsync_after, fault_point::save_rename_before}) {
    auto path = (*this)("trainer_0." + std::to_string(static_cast<int>(point)));
    auto faults = plan(rule(point, fault_kind::io_error));
    auto written = write_db(path, 1, blobs(), faults.get());
    BOOST_TEST(injected(written),
               info(point).name << ": " << describe(written));
    BOOST_TEST(!partial_left(path), info(point).name);
    BOOST_TEST(!fs::exists(path), info(point).name);
  }
}

BOOST_AUTO_TEST_CASE(io_error_at_save_rename_before_leaves_the_old_database) {
  auto path = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(path, 1, blobs(0)));
  auto faults
    = plan(rule(fault_point::save_rename_before, fault_kind::io_error));
  auto written = write_db(path, 1, blobs(1000), faults.get());
  BOOST_TEST(injected(written), describe(written));
  BOOST_TEST(!partial_left(path));
  BOOST_TEST(load_outcome(path, blobs(0)) == "ok");
}

BOOST_AUTO_TEST_CASE(
  io_error_after_the_rename_leaves_the_new_database_and_no_old_one) {
  // The swap happened: whatever fails later, `path` holds the new database
  // and the old one (swapped to the partial directory) is gone.
  for (auto point :
       {fault_point::save_rename_after, fault_point::save_dirsync_before,
        fault_point::save_dirsync_after}) {
    auto path = (*this)("trainer_0." + std::to_string(static_cast<int>(point)));
    BOOST_REQUIRE(write_db(path, 1, blobs(0)));
    auto faults = plan(rule(point, fault_kind::io_error));
    auto written = write_db(path, 1, blobs(1000), faults.get());
    BOOST_TEST(injected(written),
               info(point).name << ": " << describe(written));
    BOOST_TEST(!partial_left(path), info(point).name);
    BOOST_TEST(!fs::exists(path + ".old"), info(point).name);
    BOOST_TEST(load_outcome(path, blobs(1000)) == "ok", info(point).name);
  }
}

BOOST_AUTO_TEST_CASE(io_error_at_load_open_fails_the_open) {
  auto path = (*this)("trainer_0.2");
  BOOST_REQUIRE(write_db(path, 2, blobs()));
  auto faults = plan([] {
    auto x = rule(fault_point::load_open, fault_kind::io_error);
    x.error = EACCES;
    return x;
  }());
  reader_options opts;
  opts.faults = faults.get();
  auto reader = checkpoint_reader::open(path, opts);
  BOOST_TEST(injected(reader), describe(reader));
  // The site comes from the database's name.
  BOOST_TEST(describe(reader).find("EACCES at load.open (node trainer_0, "
                                   "epoch 2)")
             != std::string::npos);
  BOOST_TEST(static_cast<bool>(checkpoint_reader::open(path, opts)));
}

BOOST_AUTO_TEST_CASE(io_error_at_load_chunk_fails_the_read_of_that_blob) {
  auto path = (*this)("trainer_0.2");
  BOOST_REQUIRE(write_db(path, 2, blobs()));
  auto faults = plan([] {
    auto x = rule(fault_point::load_chunk, fault_kind::io_error);
    x.detail = "w"; // the blob's name
    x.hit = 2;
    return x;
  }());
  reader_options opts;
  opts.faults = faults.get();
  auto reader = checkpoint_reader::open(path, opts);
  BOOST_REQUIRE(reader);
  BOOST_TEST(static_cast<bool>((*reader)->read("iter")));
  auto w = (*reader)->read("w");
  BOOST_TEST(injected(w), describe(w));
  BOOST_TEST(static_cast<bool>((*reader)->read("w"))); // count: 1
}

BOOST_AUTO_TEST_CASE(io_error_at_load_metadata_fails_the_read) {
  auto faults = plan(rule(fault_point::load_metadata, fault_kind::io_error));
  auto handler = keeper_of((*this)("ckpt"), faults);
  auto epochs = handler.committed_epochs();
  BOOST_TEST(injected(epochs), describe(epochs));
  BOOST_TEST(static_cast<bool>(handler.committed_epochs()));
}

BOOST_AUTO_TEST_CASE(
  io_error_before_the_metadata_rename_keeps_the_old_commits) {
  for (auto point :
       {fault_point::commit_write_before, fault_point::commit_write_after,
        fault_point::commit_rename_before}) {
    auto dir = (*this)("ckpt" + std::to_string(static_cast<int>(point)));
    auto plain = keeper_of(dir);
    BOOST_REQUIRE(!plain.commit(1));
    auto handler = keeper_of(dir, plan(rule(point, fault_kind::io_error)));
    auto err = handler.commit(2);
    BOOST_TEST(injected(err), info(point).name << ": " << text(err));
    auto epochs = plain.committed_epochs();
    BOOST_REQUIRE_MESSAGE(epochs, describe(epochs));
    BOOST_TEST(*epochs == std::vector<int64_t>{1}, info(point).name);
    BOOST_TEST(!fs::exists(file_metadata_handler{dir}.file_path() + ".tmp"),
               info(point).name);
  }
}

BOOST_AUTO_TEST_CASE(io_error_at_commit_rename_after_comes_after_the_commit) {
  auto dir = (*this)("ckpt");
  auto handler = keeper_of(
    dir, plan(rule(fault_point::commit_rename_after, fault_kind::io_error)));
  auto err = handler.commit(2);
  BOOST_TEST(injected(err), text(err));
  auto epochs = keeper_of(dir).committed_epochs();
  BOOST_REQUIRE(epochs);
  BOOST_TEST(*epochs == std::vector<int64_t>{2});
}

// -- a bad disk: damage reported as success is found at load -----------------

BOOST_AUTO_TEST_CASE(damaged_writes_at_save_points_are_never_loaded_as_good) {
  // Every seed damages another record, byte or file; over all of them, some
  // damage is found (a flip in padding may change nothing that is read).
  for (auto point :
       {fault_point::save_batch_before, fault_point::save_manifest_before,
        fault_point::save_fsync_after}) {
    for (auto kind : {fault_kind::corrupt_write, fault_kind::short_write}) {
      size_t found = 0;
      constexpr uint64_t seeds = 24;
      for (uint64_t seed = 0; seed < seeds; ++seed) {
        std::ostringstream name;
        name << "trainer_0." << static_cast<int>(point)
             << static_cast<int>(kind) << seed;
        auto path = (*this)(name.str());
        auto x = rule(point, kind); // the draws depend on the seed
        if (point == fault_point::save_batch_before)
          x.hit = 1 + seed % 3; // not always the first batch
        auto faults = plan(x, seed);
        auto written = write_db(path, 1, blobs(), faults.get());
        BOOST_REQUIRE_MESSAGE(written, describe(written));
        BOOST_REQUIRE_EQUAL(faults->strikes().size(), 1u);
        auto outcome = load_outcome(path, blobs());
        BOOST_TEST((outcome == "ok" || outcome == "error"),
                   info(point).name << " " << fault_kind_name(kind) << " seed "
                                    << seed << ": " << outcome);
        if (outcome == "error")
          ++found;
        else if (kind == fault_kind::short_write)
          BOOST_ERROR(info(point).name << " short_write seed " << seed
                                       << ": lost bytes went unnoticed");
      }
      BOOST_TEST(found > seeds / 2,
                 info(point).name << " " << fault_kind_name(kind) << ": "
                                  << found << " of " << seeds);
    }
  }
}

// A bad disk's damage is found at the next read, which falls back to the
// generation before the damaged write, and says so.
BOOST_AUTO_TEST_CASE(damaged_metadata_writes_fall_back_at_the_next_read) {
  for (auto kind : {fault_kind::corrupt_write, fault_kind::short_write}) {
    for (uint64_t seed = 0; seed < 32; ++seed) {
      auto dir = (*this)("ckpt" + std::to_string(static_cast<int>(kind)) + "_"
                         + std::to_string(seed));
      auto plain = keeper_of(dir);
      BOOST_REQUIRE(!plain.commit(1));
      auto x = rule(fault_point::commit_write_before, kind);
      auto handler = keeper_of(dir, plan(x, seed));
      BOOST_REQUIRE(!handler.commit(2)); // reports success, as a bad disk
      std::string damage;
      auto state = file_metadata_handler{dir}.load(&damage);
      BOOST_REQUIRE_MESSAGE(state,
                            fault_kind_name(kind)
                              << " seed " << seed << ": " << describe(state));
      BOOST_TEST(state->committed_epochs == (std::vector<int64_t>{1}),
                 fault_kind_name(kind) << " seed " << seed);
      BOOST_TEST(!damage.empty(), fault_kind_name(kind) << " seed " << seed);
    }
  }
}

// -- delay, and which hits a rule strikes
// --------------------------------------

BOOST_AUTO_TEST_CASE(delay_at_a_save_point_delays_the_save) {
  auto x = rule(fault_point::save_rename_before, fault_kind::delay);
  x.ms = 300;
  auto faults = plan(x);
  auto start = std::chrono::steady_clock::now();
  BOOST_REQUIRE(write_db((*this)("trainer_0.1"), 1, blobs(), faults.get()));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - start);
  BOOST_TEST(took.count() >= 300);
  BOOST_TEST(load_outcome((*this)("trainer_0.1"), blobs()) == "ok");
}

BOOST_AUTO_TEST_CASE(node_filter_strikes_only_that_node) {
  auto x = rule(fault_point::save_manifest_before, fault_kind::io_error);
  x.node = "trainer_1";
  x.count = 0;
  auto faults = plan(x);
  BOOST_TEST(static_cast<bool>(
    write_db((*this)("trainer_0.1"), 1, blobs(), faults.get(), "trainer_0")));
  BOOST_TEST(injected(
    write_db((*this)("trainer_1.1"), 1, blobs(), faults.get(), "trainer_1")));
}

BOOST_AUTO_TEST_CASE(epoch_filter_strikes_only_that_epoch) {
  auto x = rule(fault_point::save_open, fault_kind::io_error);
  x.epoch = 2;
  x.count = 0;
  auto faults = plan(x);
  BOOST_TEST(static_cast<bool>(
    write_db((*this)("trainer_0.1"), 1, blobs(), faults.get())));
  BOOST_TEST(
    injected(write_db((*this)("trainer_0.2"), 2, blobs(), faults.get())));
  BOOST_TEST(static_cast<bool>(
    write_db((*this)("trainer_0.3"), 3, blobs(), faults.get())));
}

BOOST_AUTO_TEST_CASE(hit_strikes_only_the_nth_matching_hit) {
  auto x = rule(fault_point::save_batch_after, fault_kind::io_error);
  x.hit = 3;
  auto faults = plan(x);
  auto written = write_db((*this)("trainer_0.1"), 1, blobs(), faults.get());
  BOOST_TEST(injected(written), describe(written));
  auto strikes = faults->strikes();
  BOOST_REQUIRE_EQUAL(strikes.size(), 1u);
  BOOST_TEST(strikes[0]
             == "io_error at save.batch.after (node trainer_0, "
                "epoch 1, hit 3)");
  // The third hit is gone: the next save passes every point.
  BOOST_TEST(static_cast<bool>(
    write_db((*this)("trainer_0.2"), 2, blobs(), faults.get())));
}

BOOST_AUTO_TEST_CASE(no_plan_writes_and_reads_as_before) {
  auto path = (*this)("trainer_0.1");
  BOOST_REQUIRE(write_db(path, 1, blobs(), nullptr));
  BOOST_TEST(load_outcome(path, blobs()) == "ok");
}

BOOST_AUTO_TEST_SUITE_END()
