#include "engine/collective_choice.hpp"

#include "util/errors.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>

namespace wulf {

namespace {

// A constant, not a static made at run time: the simulated ranks share wulf-rank-sim's
// globals (tests/rank_globals_test.sh).
constexpr std::array<AllreduceAlgorithm, 4> algorithms{{
    {"rdb", 3, "rdb"},            // recursive doubling: log2(p) exchanges of the whole vector
    {"redbcast", 2, "redbcast"},  // a reduce to rank 0, then a broadcast (Open MPI's nonoverlapping)
    {"ring", 4, "lr"},            // p - 1 steps of reduce-scatter, then p - 1 of allgather, 1/p each
    {"rabenseifner", 6, "rab_rdb"},  // reduce-scatter by recursive halving, allgather by doubling
}};

}  // namespace

const AllreduceAlgorithm* find_allreduce_algorithm(std::string_view name) {
  for (const AllreduceAlgorithm& a : algorithms)
    if (a.name == name) return &a;
  return nullptr;
}

namespace {

// Open MPI 4.1.4's fixed rules for commutative allreduces, as data, in its order: the first
// rule whose bounds both exceed the communicator's ranks and the message's bytes names the
// algorithm by its coll_tuned number (4 ring, 5 segmented ring, 3 recursive doubling,
// 6 rabenseifner, 2 nonoverlapping).
struct Rule {
  double ranks_below, bytes_below;
  int tuned_id;
};
constexpr double all = std::numeric_limits<double>::infinity();
constexpr Rule open_mpi_41_rules[] = {
    {4, 8, 4},         {4, 4096, 3},      {4, 8192, 4},      {4, 16384, 3},     {4, 65536, 4},
    {4, 262144, 5},    {4, all, 6},       {8, 16, 4},        {8, 8192, 3},      {8, all, 6},
    {16, 8192, 3},     {16, all, 6},      {32, 64, 5},       {32, 4096, 3},     {32, all, 6},
    {64, 128, 5},      {64, all, 6},      {128, 262144, 3},  {128, all, 6},     {256, 131072, 2},
    {256, 262144, 3},  {256, all, 6},     {512, 4096, 2},    {512, all, 6},     {2048, 2048, 2},
    {2048, 16384, 3},  {2048, all, 6},    {4096, 2048, 2},   {4096, 4096, 5},   {4096, 16384, 3},
    {4096, all, 6},    {all, 2048, 2},    {all, 16384, 5},   {all, 32768, 3},   {all, all, 6},
};

}  // namespace

const AllreduceAlgorithm& open_mpi_allreduce_choice(long long ranks, std::size_t bytes) {
  const Rule* rule = std::find_if(std::begin(open_mpi_41_rules), std::end(open_mpi_41_rules), [&](const Rule& r) {
    return static_cast<double>(ranks) < r.ranks_below && static_cast<double>(bytes) < r.bytes_below;
  });
  const int id = rule->tuned_id == 5 ? 4 : rule->tuned_id;  // the segmented ring without a segment size is the ring
  for (const AllreduceAlgorithm& a : algorithms)
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
