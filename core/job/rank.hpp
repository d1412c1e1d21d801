// The work of one rank of wulf-rank-real (under mpirun) and wulf-rank-sim (under smpirun):
// core/comm/mpi/rank_main.cpp hands each its MPI world and its engine's compute charging.
#pragma once

#include "comm/comm.hpp"
#include "comm/compute.hpp"

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace wulf {

// The engine's compute charging for a run's ComputeConfig.
using ComputeFactory = std::function<std::unique_ptr<Compute>(const ComputeConfig&)>;

// One rank of `wulf train --engine real|sim`: args are wulf train's options; comm is MPI's
// world; make_compute is the engine's compute charging. A fault on any rank ends all ranks.
int run_rank(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
             std::ostream& out, std::ostream& err);
// One rank of `wulf platform bench` (comm/comm_bench.hpp).
int run_rank_bench(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
                   std::ostream& out, std::ostream& err);

}  // namespace wulf
