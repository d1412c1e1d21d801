// main() of wulf-rank-real (under mpirun) and wulf-rank-sim (under smpirun): the same source,
// built twice. `wulf train --engine real|sim` starts it with its own arguments.
#include "cli.hpp"
#include "compute.hpp"
#include "rank.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  wulf::mpi_init(&argc, &argv);
  int code = 0;
  {
    const std::unique_ptr<wulf::Comm> comm = wulf::make_mpi_comm();
    code = wulf::run_rank(std::vector<std::string>(argv + 1, argv + argc), *comm, wulf::make_compute, std::cout,
                          std::cerr);
  }
  wulf::mpi_finalize();
  return code;
}
