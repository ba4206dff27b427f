// collectives_mpi: the Open MPI baseline of collectives_bench. Run under
// mpirun; every rank all-reduces (sum) f32 buffers of each size with
// MPI_Allreduce. Rank 0 prints, per size and repetition, "KIB SECONDS"
// (seconds per all-reduce) and once per size "check KIB VALUE" (the first
// element of the result: n (n + 1) / 2 for n ranks when correct).
//
//   collectives_mpi SIZES ITERS REPS     e.g. 4K,1M,64M 256,128,2 3
//
// A program of its own rather than a mode of collectives_bench: only it
// links MPI, and mpirun starts it as it starts any MPI program.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mpi.h>

#include "bench/command_line.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> sizes;
  std::vector<int> iters;
  int reps = 0;
  if (argc != 4 || !epochrt::bench::parse_size_list(argv[1], sizes)
      || !epochrt::bench::parse_int_list(argv[2], iters)
      || iters.size() != sizes.size() || (reps = std::atoi(argv[3])) < 1) {
    if (rank == 0)
      std::fprintf(stderr, "usage: %s SIZES ITERS REPS\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  for (size_t s = 0; s < sizes.size(); ++s) {
    auto count = static_cast<size_t>(sizes[s]) << 8; // f32s (sizes in KiB)
    std::vector<float> in(count, static_cast<float>(rank + 1));
    std::vector<float> out(count, 0.0f);
    auto n = static_cast<int>(count);
    // Untimed: connections and pages warm.
    MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("check %d %g\n", sizes[s], static_cast<double>(out[0]));
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      auto start = MPI_Wtime();
      for (int i = 0; i < iters[s]; ++i)
        MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      auto elapsed = MPI_Wtime() - start;
      if (rank == 0)
        std::printf("%d %.9f\n", sizes[s], elapsed / iters[s]);
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
