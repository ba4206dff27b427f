#include <epochrt/runtime/workspace.hpp>

#include <thread>

#include "test_util.hpp"

using namespace epochrt;
using namespace epochrt::test;

BOOST_AUTO_TEST_SUITE(workspace_suite)

BOOST_AUTO_TEST_CASE(get_returns_null_for_an_absent_blob) {
  workspace ws;
  BOOST_TEST(!ws.get("x"));
  BOOST_TEST(!ws.has("x"));
  BOOST_TEST(ws.blob_count() == 0u);
}

BOOST_AUTO_TEST_CASE(set_get_erase_and_sorted_names) {
  workspace ws;
  ws.set("b", make_scalar<int64_t>(2));
  ws.set("a", make_scalar<int64_t>(1));
  BOOST_TEST(ws.has("a"));
  BOOST_TEST(ws.names() == (std::vector<std::string>{"a", "b"}),
             boost::test_tools::per_element());
  BOOST_TEST(ints(*ws.get("b")) == std::vector<int64_t>{2},
             boost::test_tools::per_element());
  ws.erase("a");
  ws.erase("missing");
  BOOST_TEST(ws.blob_count() == 1u);
}

BOOST_AUTO_TEST_CASE(set_refuses_a_name_no_checkpoint_could_save) {
  workspace ws;
  for (std::string name :
       {std::string{"learning rate"}, std::string{}, std::string(300, 'w'),
        std::string{"a\tb"}, std::string{"caf\xc3\xa9"}}) {
    auto err = ws.set(name, make_scalar<int64_t>(1));
    BOOST_TEST(is_code(err, runtime_errc::bad_argument));
    BOOST_TEST(ws.blob_count() == 0u);
  }
  BOOST_TEST(!ws.set("trainer_0/w", make_scalar<int64_t>(1)));
}

BOOST_AUTO_TEST_CASE(set_all_stores_every_pair) {
  workspace ws;
  ws.set_all({{"x", make_scalar<int64_t>(1)}, {"y", make_scalar<int64_t>(2)}});
  BOOST_TEST(ws.blob_count() == 2u);
  BOOST_TEST(ints(*ws.get("y")) == std::vector<int64_t>{2},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(snapshot_fails_naming_a_missing_blob) {
  workspace ws;
  ws.set("a", make_scalar<int64_t>(1));
  auto snap = ws.snapshot({"a", "nope"});
  BOOST_REQUIRE(!snap);
  BOOST_TEST(is_code(snap.error(), runtime_errc::missing_blob));
  BOOST_TEST(error_text(snap.error()).find("'nope'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(snapshot_never_changes_when_ops_write_in_place) {
  workspace ws;
  ws.set("total", i64s({1}, {100}));
  ws.set("x", i64s({1}, {5}));
  auto snap = ws.snapshot({"total"});
  BOOST_REQUIRE(snap);
  auto held = (*snap)[0].value;
  BOOST_REQUIRE(!run_ops(ws, {make_op("Add", {"total", "x"}, {"total"})}));
  BOOST_TEST(ints(*held) == std::vector<int64_t>{100},
             boost::test_tools::per_element());
  BOOST_TEST(ints(*ws.get("total")) == std::vector<int64_t>{105},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(mutable_blob_clones_only_a_shared_tensor) {
  workspace ws;
  ws.set("c", make_scalar<int64_t>(3));
  const tensor* before = nullptr;
  ws.with_lock([&](workspace::access& acc) {
    before = acc.find("c");
  });
  // Unshared: written in place.
  ws.with_lock([&](workspace::access& acc) {
    auto& c = acc.mutable_blob("c");
    BOOST_TEST(&c == before);
    c.values<int64_t>()[0] = 4;
  });
  // Shared with a snapshot: cloned, the snapshot keeps 4.
  auto held = ws.get("c");
  ws.with_lock([&](workspace::access& acc) {
    auto& c = acc.mutable_blob("c");
    BOOST_TEST(&c != held.get());
    c.values<int64_t>()[0] = 5;
  });
  BOOST_TEST(ints(*held) == std::vector<int64_t>{4},
             boost::test_tools::per_element());
  BOOST_TEST(ints(*ws.get("c")) == std::vector<int64_t>{5},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(mutable_blob_creates_an_absent_blob) {
  workspace ws;
  ws.with_lock([](workspace::access& acc) {
    acc.mutable_blob("new") = make_scalar<int64_t>(7);
  });
  BOOST_TEST(ints(*ws.get("new")) == std::vector<int64_t>{7},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(snapshots_taken_while_tasks_write_are_consistent) {
  workspace ws;
  ws.set("a", i64s({1}, {0}));
  ws.set("one", i64s({1}, {1}));
  task_def task = make_task("inc", "n", {make_op("Add", {"a", "one"}, {"a"})});
  task.steps[0].num_iter = 2000;
  std::thread writer{[&] {
    auto result = run_task(task, ws, builtins());
    BOOST_CHECK(result);
  }};
  int64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    auto snap = ws.snapshot_all();
    for (auto& [name, value, version, exposed] : snap)
      if (name == "a") {
        auto now = value->values<int64_t>()[0];
        BOOST_CHECK(now >= last); // monotone, never torn
        last = now;
      }
  }
  writer.join();
  BOOST_TEST(ints(*ws.get("a")) == std::vector<int64_t>{2000},
             boost::test_tools::per_element());
}

// -- versions -----------------------------------------------------------------

namespace {

uint64_t version_of(const workspace& ws, const std::string& name) {
  auto snap = ws.snapshot({name});
  BOOST_REQUIRE(snap);
  return (*snap)[0].version;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_blob_nobody_writes_keeps_its_version) {
  workspace ws;
  ws.set("w", i64s({1}, {1}));
  auto before = version_of(ws, "w");
  ws.set("other", i64s({1}, {2}));
  ws.with_lock([](workspace::access& acc) {
    acc.find("w");
  });
  BOOST_TEST(version_of(ws, "w") == before);
}

BOOST_AUTO_TEST_CASE(every_kind_of_write_gives_a_new_version) {
  workspace ws;
  ws.set("w", i64s({1}, {1}));
  auto v1 = version_of(ws, "w");
  ws.with_lock([](workspace::access& acc) {
    acc.mutable_blob("w");
  });
  auto v2 = version_of(ws, "w");
  ws.with_lock([](workspace::access& acc) {
    acc.put("w", i64s({1}, {3}));
  });
  auto v3 = version_of(ws, "w");
  auto v4 = ws.set_all({{"w", i64s({1}, {4})}})[0];
  auto v5 = ws.replace_all({{"w", i64s({1}, {5})}})[0];
  BOOST_TEST(version_of(ws, "w") == v5);
  std::vector<uint64_t> seen{v1, v2, v3, v4, v5};
  for (size_t i = 1; i < seen.size(); ++i)
    BOOST_TEST(seen[i] > seen[i - 1]);
}

BOOST_AUTO_TEST_CASE(a_blob_erased_and_written_again_never_reuses_a_version) {
  workspace ws;
  ws.set("w", i64s({1}, {1}));
  auto before = version_of(ws, "w");
  ws.erase("w");
  ws.set("w", i64s({1}, {1}));
  BOOST_TEST(version_of(ws, "w") != before);
}

BOOST_AUTO_TEST_CASE(replace_all_reports_the_version_of_the_pair_that_wins) {
  workspace ws;
  auto versions
    = ws.replace_all({{"w", i64s({1}, {1})}, {"w", i64s({1}, {2})}});
  BOOST_REQUIRE(versions.size() == 2u);
  BOOST_TEST(version_of(ws, "w") == versions[1]);
  BOOST_TEST(ints(*ws.get("w")) == std::vector<int64_t>{2},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_exposed_blob_shared_with_a_snapshot_is_cloned_first) {
  workspace ws;
  ws.set("w", i64s({2}, {1, 2}));
  auto snap = ws.snapshot_all();
  auto exposed = ws.with_lock([](workspace::access& acc) {
    return acc.expose("w");
  });
  BOOST_REQUIRE(exposed);
  BOOST_TEST(exposed.get() != snap[0].value.get());
  exposed->values<int64_t>()[0] = 7; // as user code writes it
  BOOST_TEST(ints(*snap[0].value) == (std::vector<int64_t>{1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(ints(*ws.get("w")) == (std::vector<int64_t>{7, 2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_exposed_blob_held_by_nobody_else_is_not_copied) {
  workspace ws;
  ws.set("w", i64s({2}, {1, 2}));
  const tensor* before = ws.get("w").get();
  auto exposed = ws.with_lock([](workspace::access& acc) {
    return acc.expose("w");
  });
  BOOST_TEST(exposed.get() == before);
}

BOOST_AUTO_TEST_CASE(exposing_a_blob_gives_it_a_new_version_marked_exposed) {
  workspace ws;
  ws.set("w", i64s({1}, {1}));
  auto before = version_of(ws, "w");
  BOOST_TEST(!ws.snapshot_all()[0].exposed);
  ws.with_lock([](workspace::access& acc) {
    acc.expose("w");
  });
  auto snap = ws.snapshot_all();
  BOOST_TEST(snap[0].version > before);
  BOOST_TEST(snap[0].exposed);
  // Any other write makes it an ordinary version again.
  ws.with_lock([](workspace::access& acc) {
    acc.put("w", i64s({1}, {2}));
  });
  BOOST_TEST(!ws.snapshot_all()[0].exposed);
}

BOOST_AUTO_TEST_CASE(exposing_an_absent_blob_gives_null) {
  workspace ws;
  auto exposed = ws.with_lock([](workspace::access& acc) {
    return acc.expose("missing");
  });
  BOOST_TEST(!exposed);
}

BOOST_AUTO_TEST_CASE(a_disowned_tensor_is_no_longer_the_blob) {
  workspace ws;
  ws.set("w", i64s({1}, {1}));
  auto kept = ws.with_lock([](workspace::access& acc) {
    return acc.expose("w");
  });
  auto version = version_of(ws, "w");
  ws.with_lock([&](workspace::access& acc) {
    acc.disown("w", kept.get());
  });
  kept->values<int64_t>()[0] = 9; // a reference kept past the op
  BOOST_TEST(ws.get("w").get() != kept.get());
  BOOST_TEST(ints(*ws.get("w")) == std::vector<int64_t>{1},
             boost::test_tools::per_element());
  BOOST_TEST(version_of(ws, "w") == version);
}

BOOST_AUTO_TEST_SUITE_END()
