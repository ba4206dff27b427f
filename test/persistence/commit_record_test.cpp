// The changes of the commit record (persistence/commit_record.hpp), as pure
// functions: each on its own, then every sequence of a few against a model.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <epochrt/messages/error_text.hpp>
#include <epochrt/persistence/commit_record.hpp>
#include <epochrt/persistence/persistence_errc.hpp>

using namespace epochrt;

BOOST_AUTO_TEST_SUITE(commit_record)

BOOST_AUTO_TEST_CASE(a_commit_keeps_the_epochs_ascending_and_once_each) {
  checkpoint_metadata record;
  for (int64_t epoch : {3, 1, 2, 3, 1})
    record = with_commit(std::move(record), epoch, false);
  BOOST_TEST(record.committed_epochs == (std::vector<int64_t>{1, 2, 3}));
  BOOST_TEST(record.final_epoch == -1);
}

BOOST_AUTO_TEST_CASE(a_final_commit_is_the_final_epoch) {
  auto record = with_commit(checkpoint_metadata{}, 4, true);
  BOOST_TEST((final_epoch(record) == std::optional<int64_t>{4}));
}

BOOST_AUTO_TEST_CASE(an_uncommitted_final_epoch_is_final_no_more) {
  auto record = with_commit(checkpoint_metadata{}, 4, true);
  record = without_commit(std::move(record), 4);
  BOOST_TEST(record.committed_epochs.empty());
  BOOST_TEST(!final_epoch(record));
  BOOST_TEST(record.final_epoch == -1);
}

BOOST_AUTO_TEST_CASE(only_a_committed_epoch_can_be_made_final) {
  auto refused = with_final(with_commit(checkpoint_metadata{}, 1, false), 2);
  BOOST_REQUIRE(!refused);
  BOOST_TEST(is_error(refused.error(), persistence_errc::not_committed));
  auto made = with_final(with_commit(checkpoint_metadata{}, 2, false), 2);
  BOOST_REQUIRE(made);
  BOOST_TEST((final_epoch(*made) == std::optional<int64_t>{2}));
}

BOOST_AUTO_TEST_CASE(stats_change_nothing_but_the_stats) {
  auto record = with_commit(checkpoint_metadata{}, 1, true);
  checkpoint_stats stats;
  stats.node = "n";
  auto reported = with_stats(record, "checkpoint_save", {stats});
  BOOST_TEST(reported.last_action == "checkpoint_save");
  BOOST_REQUIRE_EQUAL(reported.last_stats.size(), 1u);
  reported.last_action = record.last_action;
  reported.last_stats = record.last_stats;
  BOOST_TEST((reported == record));
}

BOOST_AUTO_TEST_CASE(a_job_resumes_from_the_last_or_the_asked_committed_epoch) {
  checkpoint_metadata record;
  auto none = resume_epoch(record, std::nullopt);
  BOOST_REQUIRE(none);
  BOOST_TEST(!none->has_value());
  record = with_commit(with_commit(std::move(record), 2, false), 5, false);
  auto last = resume_epoch(record, std::nullopt);
  BOOST_REQUIRE(last);
  BOOST_TEST((*last == std::optional<int64_t>{5}));
  auto asked = resume_epoch(record, 2);
  BOOST_REQUIRE(asked);
  BOOST_TEST((*asked == std::optional<int64_t>{2}));
  auto missing = resume_epoch(record, 3);
  BOOST_REQUIRE(!missing);
  BOOST_TEST(is_error(missing.error(), persistence_errc::not_committed));
  BOOST_TEST(error_text(missing.error()).find("committed: 2, 5")
               != std::string::npos,
             error_text(missing.error()));
}

// Every sequence of up to four changes over two epochs, against a model:
// a set of committed epochs and a final one that counts only while it is
// committed.
BOOST_AUTO_TEST_CASE(every_sequence_of_changes_agrees_with_the_model) {
  struct model {
    std::set<int64_t> committed;
    std::optional<int64_t> final;
  };
  struct step {
    std::string name;
    std::function<checkpoint_metadata(checkpoint_metadata)> apply;
    std::function<void(model&)> expect;
  };
  std::vector<step> steps;
  for (int64_t epoch : {1, 2}) {
    auto e = std::to_string(epoch);
    steps.push_back({"commit " + e,
                     [epoch](checkpoint_metadata x) {
                       return with_commit(std::move(x), epoch, false);
                     },
                     [epoch](model& m) {
                       m.committed.insert(epoch);
                     }});
    steps.push_back({"commit final " + e,
                     [epoch](checkpoint_metadata x) {
                       return with_commit(std::move(x), epoch, true);
                     },
                     [epoch](model& m) {
                       m.committed.insert(epoch);
                       m.final = epoch;
                     }});
    steps.push_back({"uncommit " + e,
                     [epoch](checkpoint_metadata x) {
                       return without_commit(std::move(x), epoch);
                     },
                     [epoch](model& m) {
                       m.committed.erase(epoch);
                       if (m.final == epoch)
                         m.final.reset();
                     }});
    steps.push_back({"final " + e,
                     [epoch](checkpoint_metadata x) {
                       auto made = with_final(x, epoch);
                       return made ? std::move(*made) : std::move(x);
                     },
                     [epoch](model& m) {
                       if (m.committed.count(epoch) != 0)
                         m.final = epoch;
                     }});
  }
  size_t sequences = 0;
  std::function<void(checkpoint_metadata, model, std::string, int)> walk
    = [&](checkpoint_metadata record, model m, std::string path, int left) {
        ++sequences;
        std::vector<int64_t> expected_epochs(m.committed.begin(),
                                             m.committed.end());
        BOOST_TEST(record.committed_epochs == expected_epochs, path);
        BOOST_TEST((final_epoch(record) == m.final), path);
        auto last = resume_epoch(record, std::nullopt);
        BOOST_REQUIRE(last);
        BOOST_TEST((*last
                    == (m.committed.empty()
                          ? std::optional<int64_t>{}
                          : std::optional<int64_t>{*m.committed.rbegin()})),
                   path);
        if (left == 0)
          return;
        for (auto& s : steps) {
          auto next = m;
          s.expect(next);
          walk(s.apply(record), next, path + " / " + s.name, left - 1);
        }
      };
  walk(checkpoint_metadata{}, model{}, "", 4);
  BOOST_TEST(sequences == 1u + 8u + 64u + 512u + 4096u);
}

BOOST_AUTO_TEST_SUITE_END()
