// wulf's allreduce algorithms, one row each. Everything that names one reads this table: wulf
// train's --allreduce and overlap's --bucket-allreduce (their values and errors), the help
// that lists them, Open MPI's and SMPI's names of the library's algorithms
// (comm/collective_choice: the default's resolution, mpirun's and smpirun's settings), wulf's
// own schedules (comm/nb_allreduce), what a run must know of where its ranks are, and
// recommend's candidates (--allreduces). Adding an algorithm is its schedule in
// comm/nb_allreduce.cpp and one row here (ARCHITECTURE.md, "Adding things").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wulf {

// wulf's own non-blocking schedules (comm/nb_allreduce.hpp says how each runs).
enum class NbAlgorithm { rdb, ring, rabenseifner, hierarchical, hierarchical_rabenseifner, rings };

// What an algorithm needs to know of where the ranks are: each rank's node (the hosts'
// wulf:node), or the rings (the hosts' wulf:rings).
enum class AllreduceNeeds { nothing, nodes, rings };

struct AllreduceAlgorithm {
  std::string_view name;
  // Open MPI 4.1's coll_tuned number for it; 0: no library runs it, only wulf's own code.
  int tuned_id = 0;
  // SMPI's name for Open MPI's algorithm (smpi/allreduce); "": wulf's own code runs it there.
  std::string_view smpi;
  // Whether a non-blocking schedule of wulf's own runs it (comm/nb_allreduce: overlap's
  // buckets, recommend's candidates), and which; wulf model works each such out
  // (predict/comm_plan).
  bool scheduled = false;
  NbAlgorithm schedule = NbAlgorithm::rdb;
  AllreduceNeeds needs = AllreduceNeeds::nothing;
  std::string_view help;  // what it does, a phrase for the options' help
  // --allreduce runs wulf's own code for it on every engine, no library's.
  constexpr bool own_only() const { return tuned_id == 0; }
};

inline constexpr AllreduceAlgorithm allreduce_table[] = {
    // log2(p) exchanges of the whole vector
    {.name = "rdb", .tuned_id = 3, .smpi = "rdb", .scheduled = true, .schedule = NbAlgorithm::rdb,
     .help = "recursive doubling, seed 000"},
    // Open MPI's nonoverlapping: the run's own reduce and bcast; SMPI's where they are SMPI's,
    // else composed by wulf (comm/own_comm.hpp's redbcast_runs_the_runs).
    {.name = "redbcast", .tuned_id = 2, .smpi = "redbcast", .help = "the run's --reduce to rank 0, then its --bcast"},
    // p - 1 steps of reduce-scatter, then p - 1 of allgather, 1/p each
    {.name = "ring", .tuned_id = 4, .smpi = "lr", .scheduled = true, .schedule = NbAlgorithm::ring,
     .help = "reduce-scatter then allgather around a ring, as Horovod's and NCCL's"},
    {.name = "rabenseifner", .tuned_id = 6, .smpi = "rab_rdb", .scheduled = true,
     .schedule = NbAlgorithm::rabenseifner,
     .help = "reduce-scatter by recursive halving, then allgather by doubling, as Gloo's halving-doubling"},
    {.name = "hierarchical", .tuned_id = 0, .smpi = "", .scheduled = true, .schedule = NbAlgorithm::hierarchical,
     .needs = AllreduceNeeds::nodes,
     .help = "a ring within each node, a ring across the nodes, a ring within again; nodes by the hosts' wulf:node"},
    {.name = "hierarchical-rabenseifner", .tuned_id = 0, .smpi = "", .scheduled = true,
     .schedule = NbAlgorithm::hierarchical_rabenseifner, .needs = AllreduceNeeds::nodes,
     .help = "hierarchical with Rabenseifner's across the nodes"},
    {.name = "rings", .tuned_id = 0, .smpi = "", .scheduled = true, .schedule = NbAlgorithm::rings,
     .needs = AllreduceNeeds::rings,
     .help = "k rings at once, as NCCL's channels, each around all ranks in an order of the hosts' wulf:rings; on "
             "this machine one ring"},
};
inline constexpr std::size_t allreduce_count = std::size(allreduce_table);

// The row of that name; nullptr for any other (and for `default`).
const AllreduceAlgorithm* find_allreduce(std::string_view name);
// The row of a schedule.
const AllreduceAlgorithm& allreduce_of(NbAlgorithm a);

// Which rows a list takes: all, or those a schedule of wulf's own runs (which wulf model
// works out too).
enum class AllreduceRows { all, scheduled };
// The names of the rows, as an error lists them: "rdb, redbcast, ... or rings".
std::string allreduce_names(AllreduceRows rows);
// The same with each one's help, as an option's help lists them: "rdb (recursive doubling,
// seed 000), ..., or wulf's own rings (...)".
std::string allreduce_help(AllreduceRows rows);

}  // namespace wulf
