#include "engine/collective_choice.hpp"

#include "util/errors.hpp"

#include <array>
#include <limits>

namespace wulf {

namespace {

// A constant, not a static made at run time: the simulated ranks share wulf-rank-sim's
// globals (tests/rank_globals_test.sh).
constexpr std::array<AllreduceAlgorithm, 4> algorithms{{
    {"rdb", 3, "rdb", "recursive doubling: log2(p) exchanges of the whole vector"},
    {"redbcast", 2, "redbcast", "a reduce to rank 0, then a broadcast (Open MPI's nonoverlapping)"},
    {"ring", 4, "lr", "a ring: p - 1 steps of reduce-scatter, then p - 1 of allgather, each moving 1/p of the vector"},
    {"rabenseifner", 6, "rab_rdb",
     "Rabenseifner's: reduce-scatter by recursive halving, then allgather by recursive doubling"},
}};

}  // namespace

std::span<const AllreduceAlgorithm> allreduce_algorithm_table() { return algorithms; }

const AllreduceAlgorithm* find_allreduce_algorithm(std::string_view name) {
  for (const AllreduceAlgorithm& a : allreduce_algorithm_table())
    if (a.name == name) return &a;
  return nullptr;
}

namespace {

// Open MPI 4.1.4's fixed rules for commutative allreduces, as data: for communicators of
// fewer than `ranks_below` ranks, the first step whose `bytes_below` exceeds the message
// names the algorithm by its coll_tuned number (4 ring, 5 segmented ring, 3 recursive
// doubling, 6 rabenseifner, 2 nonoverlapping).
struct Step {
  double bytes_below;
  int tuned_id;
};
struct Band {
  double ranks_below;
  std::array<Step, 7> steps;  // in order; the last one's bytes_below is infinite
};
constexpr double all = std::numeric_limits<double>::infinity();
constexpr std::array<Band, 11> open_mpi_41_bands{{
    {4, {{{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {all, 6}}}},
    {8, {{{16, 4}, {8192, 3}, {all, 6}}}},
    {16, {{{8192, 3}, {all, 6}}}},
    {32, {{{64, 5}, {4096, 3}, {all, 6}}}},
    {64, {{{128, 5}, {all, 6}}}},
    {128, {{{262144, 3}, {all, 6}}}},
    {256, {{{131072, 2}, {262144, 3}, {all, 6}}}},
    {512, {{{4096, 2}, {all, 6}}}},
    {2048, {{{2048, 2}, {16384, 3}, {all, 6}}}},
    {4096, {{{2048, 2}, {4096, 5}, {16384, 3}, {all, 6}}}},
    {all, {{{2048, 2}, {16384, 5}, {32768, 3}, {all, 6}}}},
}};

}  // namespace

const AllreduceAlgorithm& open_mpi_allreduce_choice(long long ranks, std::size_t bytes) {
  int id = 6;
  for (const Band& band : open_mpi_41_bands) {
    if (static_cast<double>(ranks) >= band.ranks_below) continue;
    for (const Step& step : band.steps)
      if (step.bytes_below > 0 && static_cast<double>(bytes) < step.bytes_below) {
        id = step.tuned_id;
        break;
      }
    break;
  }
  if (id == 5) id = 4;  // the segmented ring without a segment size is the ring
  for (const AllreduceAlgorithm& a : allreduce_algorithm_table())
    if (a.tuned_id == id) return a;
  throw std::logic_error("open_mpi_allreduce_choice: no algorithm numbered " + std::to_string(id));
}

ResolvedAllreduce resolve_allreduce(std::string_view choice, long long ranks, std::size_t bytes) {
  if (choice == "default") {
    const AllreduceAlgorithm& a = open_mpi_allreduce_choice(ranks, bytes);
    return {std::string(a.name), true,
            "Open MPI 4.1's choice for " + std::to_string(ranks) + " ranks and " + std::to_string(bytes) + " bytes"};
  }
  if (!find_allreduce_algorithm(choice))
    throw InputError("--allreduce: unknown algorithm '" + std::string(choice) +
                     "' (expected default, rdb, redbcast, ring or rabenseifner)");
  return {std::string(choice), false, "--allreduce"};
}

}  // namespace wulf
