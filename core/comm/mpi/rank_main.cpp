// main() of wulf-rank-real (under mpirun) and wulf-rank-sim (under smpirun): the same source,
// built twice. `wulf train --engine real|sim` starts it with its own arguments.
#include "job/rank.hpp"
#include "comm/compute.hpp"
#include "comm/mpi/rank.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  wulf::mpi_init(&argc, &argv);
  int code = 0;
  {
    const std::unique_ptr<wulf::Comm> comm = wulf::make_mpi_comm();
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "bench")  // `wulf platform bench` measures the platform
      code = wulf::run_rank_bench(std::vector<std::string>(args.begin() + 1, args.end()), *comm, wulf::make_compute,
                                  std::cout, std::cerr);
    else
      code = wulf::run_rank(args, *comm, wulf::make_compute, std::cout, std::cerr);
  }
  wulf::mpi_finalize();
  return code;
}
