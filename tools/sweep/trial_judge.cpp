#include "tools/sweep/trial_judge.hpp"

#include <csignal>

#include "tools/cli_output.hpp"
#include <epochrt/persistence/file_metadata_handler.hpp>

namespace epochrt::cli::sweep {

namespace fs = std::filesystem;

const char* outcome_name(outcome x) {
  switch (x) {
    case outcome::recovered:
      return "recovered";
    case outcome::clear_error:
      return "clear error";
    case outcome::wrong:
      return "WRONG";
    case outcome::hung:
      return "HUNG";
  }
  return "?";
}

std::set<int64_t> committed(const fs::path& dir) {
  std::set<int64_t> result;
  file_metadata_handler handler{(dir / "cwd" / "ckpt").string()};
  if (auto md = handler.load())
    result.insert(md->committed_epochs.begin(), md->committed_epochs.end());
  return result;
}

std::optional<int64_t> uncommitted_load(const std::vector<hit>& master,
                                        std::set<int64_t> committed) {
  for (auto& h : master) {
    if (h.point == fault_point::commit_rename_after) {
      if (h.detail == "write" || h.detail == "write_final")
        committed.insert(h.epoch);
      else if (h.detail == "uncommit")
        committed.erase(h.epoch);
      else if (h.detail == "reset")
        committed.clear();
      continue;
    }
    auto loads = h.point == fault_point::load_open
      || (h.point == fault_point::remote_send && h.detail == "load_checkpoint");
    if (loads && h.epoch >= 0 && committed.count(h.epoch) == 0)
      return h.epoch;
  }
  return std::nullopt;
}

std::string stray_files(const fs::path& dir) {
  std::error_code ec;
  std::string found;
  for (auto& entry : fs::directory_iterator(dir / "cwd", ec))
    if (entry.path().filename() != "ckpt")
      found += (found.empty() ? "" : ", ") + entry.path().filename().string();
  return found;
}

trial_judge::trial_judge(const sweep_case& c, std::string reference_out,
                         int64_t timeout_ms)
  : on_master_(c.where.process == master_process), host_loss_(c.host_loss),
    kind_(c.rule.kind), reference_out_(std::move(reference_out)),
    timeout_ms_(timeout_ms) {
  // nop
}

bool trial_judge::planned_kill(const run_result& r, bool injected) const {
  return injected && on_master_ && kind_ == fault_kind::crash
    && r.status.signal == SIGKILL
    && r.err.find("epochrt: fault plan: crash at") != std::string::npos;
}

std::optional<verdict> trial_judge::judge(const run_result& r, int k,
                                          bool injected) const {
  auto run = "run " + std::to_string(k);
  if (r.status.timed_out)
    return verdict{outcome::hung,
                   run + " outlived " + std::to_string(timeout_ms_) + " ms"};
  if (r.status.signal == 0 && r.status.exit_code == 0
      && r.out != reference_out_)
    return verdict{outcome::wrong, run + " exit 0 with " + one_line(r.out)};
  if (r.status.signal != 0 && !planned_kill(r, injected))
    return verdict{outcome::wrong, run + " " + describe(r.status)};
  if (r.status.signal == 0 && r.status.exit_code != 0
      && error_line(r.err).empty())
    return verdict{outcome::wrong,
                   run + " " + describe(r.status) + " without an error line"};
  // The command is the same every time and was fine for the reference:
  // bad input now means the plan was refused, and nothing was tested.
  if (r.status.signal == 0 && r.status.exit_code == 2)
    return verdict{outcome::wrong, run + ": " + one_line(error_line(r.err))};
  return std::nullopt;
}

std::optional<verdict> trial_judge::judge_loads(const std::vector<hit>& trace,
                                                const std::set<int64_t>& before,
                                                int k) const {
  if (auto e = uncommitted_load(trace, before))
    return verdict{outcome::wrong,
                   "run " + std::to_string(k) + " loaded epoch "
                     + std::to_string(*e) + ", which was not committed"};
  return std::nullopt;
}

std::optional<verdict> trial_judge::judge_lost_work(const run_result& r,
                                                    int k) const {
  if (!host_loss_)
    return std::nullopt;
  // The job runner's words when a committed epoch cannot be loaded.
  auto at = r.err.find("; trying an earlier one");
  if (at == std::string::npos)
    return std::nullopt;
  auto begin = r.err.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return verdict{outcome::wrong,
                 "run " + std::to_string(k) + " lost more than one epoch: "
                   + one_line(r.err.substr(begin, at - begin))};
}

} // namespace epochrt::cli::sweep
