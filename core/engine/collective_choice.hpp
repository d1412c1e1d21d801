// Which allreduce algorithm a run uses, named once for every engine.
//
// `--allreduce default` used to mean each engine's own choice: Open MPI 4.1's tuned
// component picks by ranks and message size, SMPI's default is a reduce then a broadcast. On
// Bat Cave that made the simulation 2 to 5 times slower than the testbed's real Open MPI
// (issue 32). Now `default` resolves, before any rank starts, to the algorithm Open MPI
// 4.1's fixed decision rules choose for the run's ranks and message size
// (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c of Open MPI 4.1.4, the commutative
// branch: wulf's reductions are sums), and that algorithm is forced on every engine: on
// Open MPI through coll_tuned's dynamic rules, on SMPI through smpi/allreduce. The record
// names it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wulf {

// An allreduce algorithm both engines run: wulf's name, Open MPI 4.1's coll_tuned number
// (coll_tuned_allreduce_algorithm) and SMPI's name (smpi/allreduce).
struct AllreduceAlgorithm {
  std::string_view name;   // rdb, redbcast, ring, rabenseifner
  int tuned_id = 0;        // Open MPI: 2 nonoverlapping, 3 recursive doubling, 4 ring, 6 rabenseifner
  std::string_view smpi;   // SMPI: redbcast, rdb, lr, rab_rdb
};

// The algorithm of that name: one of --allreduce's (job/train_job.hpp's allreduce_algorithms)
// but `default`; nullptr for any other.
const AllreduceAlgorithm* find_allreduce_algorithm(std::string_view name);

// Open MPI 4.1's fixed choice for an allreduce of `bytes` bytes (a commutative operation)
// on `ranks` ranks, as find_allreduce_algorithm gives it. Its segmented ring (5) is the
// ring: the fixed rules give it no segment size, and without one Open MPI runs the plain
// ring. Its linear algorithm (1) is chosen only for operations that do not commute.
const AllreduceAlgorithm& open_mpi_allreduce_choice(long long ranks, std::size_t bytes);

// The allreduce a run uses: `choice` as given (--allreduce), or where it is "default", Open
// MPI 4.1's choice for `ranks` and `bytes`. Throws InputError for an unknown name.
struct ResolvedAllreduce {
  std::string name;  // find_allreduce_algorithm finds it
  bool by_default = false;
  // How it was chosen, for records and the plan: "Open MPI 4.1's choice for 4 ranks and
  // 134144 bytes" or "--allreduce".
  std::string chosen_by;
};
ResolvedAllreduce resolve_allreduce(std::string_view choice, long long ranks, std::size_t bytes);

}  // namespace wulf
