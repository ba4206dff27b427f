#include "tools/sweep/reference.hpp"

#include <iostream>
#include <iterator>

#include "tools/cli_output.hpp"

namespace epochrt::cli::sweep {

namespace fs = std::filesystem;

int run_reference(const fs::path& work, sweep_processes& procs,
                  std::string& reference_out, std::vector<hit>& hits) {
  auto dir = work / "reference";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "cwd", ec);
  if (ec) {
    print_error("sweep: cannot create " + (dir / "cwd").string() + ": "
                + ec.message());
    return exit_failure;
  }
  for (int phase = 1; phase <= 2; ++phase) {
    // The daemons restart between the two runs, as they do in a case.
    if (auto err = procs.start_daemons(dir, {}, std::nullopt); !err.empty()) {
      print_error("sweep: " + err);
      return exit_failure;
    }
    auto suffix = ".trace." + std::to_string(phase);
    auto r = procs.run_job(dir, phase, std::nullopt, dir / ("master" + suffix));
    procs.stop_daemons();
    for (auto& d : procs.daemons())
      fs::rename(dir / (d.node + ".trace"), dir / (d.node + suffix), ec);
    if (!succeeded(r.status)) {
      auto line = error_line(r.err);
      print_error(std::string{"sweep: "}
                  + (phase == 1 ? "the fault-free run failed ("
                                : "rerunning the finished job failed (")
                  + describe(r.status) + ")" + (line.empty() ? "" : ": " + line)
                  + "; its output is in " + dir.string());
      return exit_failure;
    }
    if (phase == 2 && r.out != reference_out) {
      print_error("sweep: rerunning the finished job did not give the same "
                  "result: the job is not deterministic, and a sweep cannot "
                  "judge it");
      return exit_failure;
    }
    reference_out = r.out;
    auto add = [&](std::vector<hit> more) {
      hits.insert(hits.end(), std::make_move_iterator(more.begin()),
                  std::make_move_iterator(more.end()));
    };
    add(read_trace(dir / ("master" + suffix), phase, master_process));
    for (auto& d : procs.daemons())
      add(read_trace(dir / (d.node + suffix), phase, d.node));
  }
  std::cout << "reference: " << one_line(reference_out) << " (" << hits.size()
            << " injection points reached)\n";
  return exit_ok;
}

} // namespace epochrt::cli::sweep
