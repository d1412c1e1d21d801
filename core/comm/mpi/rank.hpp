// What the two rank programs (wulf-rank-real, wulf-rank-sim) are made of: one main, the MPI
// communication seam (compiled once per engine) and the engine's compute charging.
#pragma once

#include "comm/comm.hpp"

#include <memory>

namespace wulf {

void mpi_init(int* argc, char*** argv);
void mpi_finalize();
std::unique_ptr<Comm> make_mpi_comm();  // the world communicator, between the two

}  // namespace wulf
