#include "comm/collective_choice.hpp"

#include "comm/allreduce_algorithms.hpp"
#include "util/errors.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace wulf {

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::allreduce: return "allreduce";
    case Collective::reduce: return "reduce";
    case Collective::bcast: return "bcast";
    case Collective::allgather: return "allgather";
    case Collective::gather: return "gather";
  }
  throw std::logic_error("to_string: no such collective");
}

namespace {

// Constants, not statics made at run time: the simulated ranks share wulf-rank-sim's
// globals (tests/rank_globals_test.sh). Where SMPI's algorithm of Open MPI's name differs
// (its own segment sizes, fanouts or tree), smpi is empty: wulf's own version runs.
// The allreduces are comm/allreduce_algorithms' table's rows.
constexpr auto allreduces = [] {
  std::array<CollectiveAlgorithm, allreduce_count> rows{};
  for (std::size_t i = 0; i < allreduce_count; ++i)
    rows[i] = {allreduce_table[i].name, allreduce_table[i].tuned_id, allreduce_table[i].smpi};
  return rows;
}();
constexpr CollectiveAlgorithm reduces[] = {
    {"linear", 1, "ompi_basic_linear"},  // the root receives from p - 1, p - 2, ..., 0 in turn
    {"chain", 2, ""},      // the fixed rules' fanout 0 is one chain; SMPI's: p/2 chains, 64 KiB segments
    {"pipeline", 3, ""},   // one chain, unsegmented; SMPI's segments by 1 to 64 KiB
    {"binary", 4, ""},     // Open MPI's binary tree, unsegmented; SMPI's segments by 32 KiB
    // The in-order binomial tree, unsegmented: Open MPI posts the next child's receive before
    // it waits for the current one, SMPI's waits for one child at a time (that is
    // wulf-binomial, as LAM's and MPICH's).
    {"binomial", 5, ""},
    {"in-order-binary", 6, "ompi_in_order_binary"},  // unsegmented on both
    {"wulf-binomial", 0, ""},  // wulf's own reduces (comm/staged_reduce), no library's
    {"four-stage", 0, ""},
};
constexpr CollectiveAlgorithm bcasts[] = {
    {"linear", 1, "flattree"},  // the root sends to every rank at once
    // Open MPI's trees with the whole message (the fixed rules' segment size 0), each node
    // sending to all its children at once: SMPI's of these names segment, or send to one
    // child at a time (its binomial_tree, MPICH's, is also another tree).
    {"chain", 2, ""},
    {"pipeline", 3, ""},
    {"split-bintree", 4, ""},  // halves down the two subtrees of the binary tree, then swapped
    {"bintree", 5, ""},
    {"binomial", 6, ""},
    {"knomial", 7, ""},  // radix 4, coll_tuned_bcast_knomial_radix's default
    {"scatter-allgather", 8, ""},  // a binomial scatter, then a recursive doubling allgather
};
constexpr CollectiveAlgorithm allgathers[] = {
    {"bruck", 2, "bruck"},
    {"rdb", 3, "rdb"},  // on a power of two ranks; Open MPI's runs Bruck's on others, SMPI's another
    {"ring", 4, "NTSLR"},  // blocks forwarded to the next rank (SMPI's `ring` sends each to rank + i)
    {"neighbor", 5, "ompi_neighborexchange"},  // on an even number of ranks
    {"two-proc", 6, "pair"},  // two ranks: one exchange
};
constexpr CollectiveAlgorithm gather_algorithms[] = {
    {"linear", 1, "ompi_basic_linear"},  // the root receives from 0, 1, ..., p - 1 in turn
    {"binomial", 2, "ompi_binomial"},    // the in-order binomial tree
    {"linear-sync", 3, ""},  // unsegmented, as the fixed rules run it; SMPI's sends 1 or 32 KiB first
};

// Open MPI 4.1.4's fixed rules as data, in its order: the first rule whose bounds both
// exceed the communicator's ranks and the message's bytes names the algorithm by its
// coll_tuned number.
struct Rule {
  double ranks_below, bytes_below;
  int tuned_id;
};
constexpr double beyond = std::numeric_limits<double>::infinity();

// Allreduce, commutative: 4 ring, 5 segmented ring, 3 recursive doubling, 6 rabenseifner,
// 2 nonoverlapping.
constexpr Rule allreduce_rules[] = {
    {4, 8, 4},         {4, 4096, 3},      {4, 8192, 4},      {4, 16384, 3},     {4, 65536, 4},
    {4, 262144, 5},    {4, beyond, 6},       {8, 16, 4},        {8, 8192, 3},      {8, beyond, 6},
    {16, 8192, 3},     {16, beyond, 6},      {32, 64, 5},       {32, 4096, 3},     {32, beyond, 6},
    {64, 128, 5},      {64, beyond, 6},      {128, 262144, 3},  {128, beyond, 6},     {256, 131072, 2},
    {256, 262144, 3},  {256, beyond, 6},     {512, 4096, 2},    {512, beyond, 6},     {2048, 2048, 2},
    {2048, 16384, 3},  {2048, beyond, 6},    {4096, 2048, 2},   {4096, 4096, 5},   {4096, 16384, 3},
    {4096, beyond, 6},    {beyond, 2048, 2},    {beyond, 16384, 5},   {beyond, 32768, 3},   {beyond, beyond, 6},
};
// Reduce, commutative: 1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order
// binary, 7 rabenseifner.
constexpr Rule reduce_rules[] = {
    {4, 8, 7},        {4, 16, 4},       {4, 32, 3},       {4, 262144, 1},   {4, 524288, 3},
    {4, 1048576, 2},  {4, beyond, 3},      {8, 4096, 4},     {8, 65536, 2},    {8, 262144, 5},
    {8, 524288, 1},   {8, 1048576, 5},  {8, beyond, 1},      {16, 8192, 4},    {16, beyond, 5},
    {32, 4096, 4},    {32, beyond, 5},     {256, beyond, 5},    {512, 8192, 5},   {512, 16384, 6},
    {512, beyond, 5},    {2048, beyond, 5},   {4096, 512, 5},   {4096, 1024, 6},  {4096, 8192, 5},
    {4096, 16384, 6}, {4096, beyond, 5},   {beyond, 16, 5},     {beyond, 32, 6},     {beyond, 1024, 5},
    {beyond, 2048, 6},   {beyond, 8192, 5},   {beyond, 16384, 6},  {beyond, beyond, 5},
};
// Bcast: 1 basic linear, 2 chain, 3 pipeline, 4 split binary tree, 5 binary tree,
// 6 binomial, 7 knomial, 8 scatter-allgather.
constexpr Rule bcast_rules[] = {
    {4, 32, 3},        {4, 256, 5},       {4, 512, 3},       {4, 1024, 7},      {4, 32768, 1},
    {4, 131072, 5},    {4, 262144, 2},    {4, 524288, 1},    {4, 1048576, 6},   {4, beyond, 5},
    {8, 64, 5},        {8, 128, 6},       {8, 2048, 5},      {8, 8192, 6},      {8, 1048576, 1},
    {8, beyond, 2},       {16, 8, 7},        {16, 64, 5},       {16, 4096, 7},     {16, 16384, 5},
    {16, 32768, 6},    {16, beyond, 1},      {32, 4096, 7},     {32, 1048576, 6},  {32, beyond, 8},
    {64, 2048, 6},     {64, beyond, 7},      {128, beyond, 7},     {256, 2, 6},       {256, 16384, 5},
    {256, 32768, 1},   {256, 65536, 5},   {256, beyond, 7},     {1024, 16384, 7},  {1024, 32768, 4},
    {1024, beyond, 7},    {2048, 524288, 7}, {2048, beyond, 8},    {4096, 262144, 7}, {4096, beyond, 8},
    {beyond, 8192, 7},    {beyond, 16384, 5},   {beyond, 262144, 7},  {beyond, beyond, 8},
};
// Allgather, by each rank's block: 1 linear, 2 bruck, 3 recursive doubling, 4 ring,
// 5 neighbor exchange, 6 two procs (Open MPI's rule: exactly 2 ranks).
constexpr Rule allgather_rules[] = {
    {3, beyond, 6},       {32, beyond, 3},      {64, 1024, 3},     {64, 65536, 5},    {64, beyond, 4},
    {128, 512, 3},     {128, 65536, 5},   {128, beyond, 4},     {256, 512, 3},     {256, 131072, 5},
    {256, 524288, 4},  {256, 1048576, 5}, {256, beyond, 4},     {512, 32, 3},      {512, 128, 2},
    {512, 1024, 3},    {512, 131072, 5},  {512, 524288, 4},  {512, 1048576, 5}, {512, beyond, 4},
    {1024, 64, 3},     {1024, 256, 2},    {1024, 2048, 3},   {1024, beyond, 5},    {2048, 4, 3},
    {2048, 8, 2},      {2048, 16, 3},     {2048, 32, 2},     {2048, 256, 3},    {2048, 512, 2},
    {2048, 4096, 3},   {2048, beyond, 5},    {4096, 32, 2},     {4096, 128, 3},    {4096, 512, 2},
    {4096, 4096, 3},   {4096, beyond, 5},    {beyond, 2, 3},       {beyond, 8, 2},       {beyond, 16, 3},
    {beyond, 512, 2},     {beyond, 4096, 3},    {beyond, beyond, 5},
};
// Gather, by each rank's block: 1 basic linear, 2 binomial, 3 linear with synchronisation.
constexpr Rule gather_rules[] = {
    {4, 2, 3},       {4, 4, 1},      {4, 32768, 2},  {4, 65536, 1},  {4, 131072, 2}, {4, beyond, 3},
    {8, 1024, 2},    {8, 8192, 1},   {8, 32768, 2},  {8, 262144, 1}, {8, beyond, 3},    {256, beyond, 2},
    {512, 2048, 2},  {512, 8192, 1}, {512, beyond, 2},  {beyond, beyond, 2},
};

struct Table {
  std::span<const CollectiveAlgorithm> algorithms;
  std::span<const Rule> rules;
};

Table table_of(Collective c) {
  switch (c) {
    case Collective::allreduce: return {allreduces, allreduce_rules};
    case Collective::reduce: return {reduces, reduce_rules};
    case Collective::bcast: return {bcasts, bcast_rules};
    case Collective::allgather: return {allgathers, allgather_rules};
    case Collective::gather: return {gather_algorithms, gather_rules};
  }
  throw std::logic_error("table_of: no such collective");
}

int rule_for(std::span<const Rule> rules, long long ranks, std::size_t bytes) {
  const auto rule = std::find_if(rules.begin(), rules.end(), [&](const Rule& r) {
    return static_cast<double>(ranks) < r.ranks_below && static_cast<double>(bytes) < r.bytes_below;
  });
  return rule->tuned_id;  // every table ends with {beyond, beyond, ...}
}

bool power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

// What Open MPI runs for the rule's number, where the algorithm hands over (the header).
int runs_as(Collective c, int id, long long ranks) {
  if (c == Collective::allreduce && id == 5) return 4;
  if (c == Collective::reduce && id == 7) return 1;
  if (c == Collective::allgather && id == 3 && !power_of_two(ranks)) return 2;
  if (c == Collective::allgather && id == 5 && ranks % 2 != 0) return 4;
  return id;
}

// Open MPI's own names, for the error of a choice wulf cannot run.
std::string open_mpi_name(Collective c, int id) {
  if (c == Collective::bcast && id == 9) return "scatter-allgather ring";
  return "number " + std::to_string(id);
}

}  // namespace

std::span<const CollectiveAlgorithm> collective_algorithms(Collective c) { return table_of(c).algorithms; }

const CollectiveAlgorithm* find_algorithm(Collective c, std::string_view name) {
  for (const CollectiveAlgorithm& a : collective_algorithms(c))
    if (a.name == name) return &a;
  return nullptr;
}

const CollectiveAlgorithm& open_mpi_choice(Collective c, long long ranks, std::size_t bytes) {
  const Table t = table_of(c);
  const int id = runs_as(c, rule_for(t.rules, ranks, bytes), ranks);
  for (const CollectiveAlgorithm& a : t.algorithms)
    if (a.tuned_id == id) return a;
  throw InputError("--" + std::string(to_string(c)) + " default: Open MPI 4.1 chooses its " + open_mpi_name(c, id) +
                   " for " + std::to_string(ranks) + " ranks and " + std::to_string(bytes) +
                   " bytes, which wulf cannot run on every engine; name another with --" + std::string(to_string(c)));
}

ResolvedCollective resolve_collective(Collective c, std::string_view choice, long long ranks, std::size_t bytes) {
  const std::string option = "--" + std::string(to_string(c));
  if (choice == "default") {
    const CollectiveAlgorithm& a = open_mpi_choice(c, ranks, bytes);
    return {std::string(a.name), true,
            "Open MPI 4.1's choice for " + std::to_string(ranks) + " ranks and " + std::to_string(bytes) + " bytes"};
  }
  if (!find_algorithm(c, choice)) {
    std::string names = "default";
    for (const CollectiveAlgorithm& a : collective_algorithms(c)) names += ", " + std::string(a.name);
    throw InputError(option + ": unknown algorithm '" + std::string(choice) + "' (expected " + names + ")");
  }
  return {std::string(choice), false, option};
}

std::vector<std::string> open_mpi_forcing(Collective c, const CollectiveAlgorithm& a) {
  if (a.tuned_id == 0) return {};
  const std::string prefix = "coll_tuned_" + std::string(to_string(c)) + "_algorithm";
  std::vector<std::string> mca{"--mca", prefix, std::to_string(a.tuned_id)};
  if (a.name == "chain") mca.insert(mca.end(), {"--mca", prefix + "_chain_fanout", "1"});
  return mca;
}

}  // namespace wulf
