#include "tools/sweep/sweep_report.hpp"

#include <fstream>
#include <iomanip>
#include <iostream>

#include "tools/cli_output.hpp"

namespace epochrt::cli::sweep {

namespace fs = std::filesystem;

sweep_report::sweep_report(fs::path work, bool temporary)
  : work_(std::move(work)), temporary_(temporary) {
  // nop
}

void sweep_report::cases(const case_plan& plan, uint64_t seed) {
  std::cout << "cases: " << plan.cases.size() << " of " << plan.total
            << (plan.cases.size() < plan.total
                  ? " (sampled with seed " + std::to_string(seed) + ")"
                  : std::string{})
            << '\n';
}

void sweep_report::header() {
  std::cout << std::left << std::setw(5) << "case" << std::setw(22) << "point"
            << std::setw(12) << "where" << std::setw(7) << "epoch"
            << std::setw(6) << "hit" << std::setw(20) << "fault"
            << std::setw(12) << "outcome"
            << "note\n";
}

void sweep_report::row(const sweep_case& c, outcome result,
                       const std::string& note) {
  ++runs_;
  ++counts_[result];
  auto where = c.where.process == master_process
    ? (c.where.node.empty() ? "master" : c.where.node)
    : c.where.process + "@d"; // the daemon of that node
  auto fault = fault_label(c);
  if (c.rule.kind == fault_kind::io_error)
    fault += " " + errno_name(c.rule.error);
  if (c.where.phase == 2)
    fault += " (r)";
  std::cout << std::left << std::setw(5) << c.index << std::setw(22)
            << info(c.rule.point).name << std::setw(12) << where << std::setw(7)
            << (c.where.epoch >= 0 ? std::to_string(c.where.epoch) : "-")
            << std::setw(6) << c.where.n << std::setw(20) << fault
            << std::setw(12) << outcome_name(result) << note << std::endl;
  std::error_code ec;
  if (result == outcome::wrong || result == outcome::hung)
    keep_failure(c, note);
  else
    fs::remove_all(work_ / ("case-" + std::to_string(c.index)), ec);
}

int sweep_report::finish() {
  if (failures_kept_ > 0)
    std::cout << "failing cases: " << failures_kept_ << " plan files in "
              << (work_ / "failures").string() << '\n';
  if (!temporary_ || failures_kept_ > 0)
    std::cout << "work directory: " << work_.string() << '\n';
  std::cout << "sweep: " << runs_ << " runs, " << counts_[outcome::recovered]
            << " recovered, " << counts_[outcome::clear_error]
            << " clear errors, " << counts_[outcome::wrong] << " wrong, "
            << counts_[outcome::hung] << " hung" << std::endl;
  return counts_[outcome::wrong] + counts_[outcome::hung] == 0 ? exit_ok
                                                               : exit_failure;
}

void sweep_report::keep_failure(const sweep_case& c, const std::string& note) {
  auto dir = work_ / "failures";
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto base = dir / ("case-" + std::to_string(c.index));
  fs::copy_file(work_ / ("case-" + std::to_string(c.index)) / "plan.json",
                base.string() + ".json", fs::copy_options::overwrite_existing,
                ec);
  std::ofstream out{base.string() + ".txt"};
  auto on_master = c.where.process == master_process;
  out << "outcome: " << note << "\n"
      << "plan: " << base.string() << ".json, for "
      << (on_master ? "the master: epochrt run ... --fault-plan PLAN"
                    : "the daemon of node " + c.where.process
              + ": epochrt node ... --fault-plan PLAN")
      << "\n"
      << (c.where.phase == 2 ? "the plan applies to the second run of the job "
                               "(the first, fault-free, runs it from scratch)\n"
                             : "")
      << "case directory: "
      << (work_ / ("case-" + std::to_string(c.index))).string() << "\n";
  ++failures_kept_;
}

} // namespace epochrt::cli::sweep
