// --allreduce default: Open MPI 4.1's fixed choice (comm/collective_choice), checked at the
// edges of the rules of ompi/mca/coll/tuned/coll_tuned_decision_fixed.c in Open MPI 4.1.4
// (the commutative branch), each edge from both sides.
#include "comm/collective_choice.hpp"
#include "comm/allreduce_algorithms.hpp"
#include "comm/nb_allreduce.hpp"
#include "comm/own_comm.hpp"
#include "comm/staged_reduce.hpp"
#include "comm/tree_collectives.hpp"
#include "job/train_job.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "util/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>
#include <vector>

#include "test_support.hpp"

namespace wulf {
namespace {

using namespace testing_support;

std::string choice(long long ranks, std::size_t bytes) {
  return std::string(open_mpi_choice(Collective::allreduce, ranks, bytes).name);
}

TEST(collective_choice, open_mpi_41_rules_at_their_edges) {
  // ranks, bytes, Open MPI's number there (5, the segmented ring, runs as the ring), wulf's name
  const std::vector<std::tuple<long long, std::size_t, std::string>> cells{
      {2, 7, "ring"},          {2, 8, "rdb"},          {2, 4095, "rdb"},          {2, 4096, "ring"},
      {3, 8191, "ring"},       {3, 8192, "rdb"},       {3, 16383, "rdb"},         {3, 16384, "ring"},
      {2, 65535, "ring"},      {2, 65536, "ring"},     {2, 262143, "ring"},       {2, 262144, "rabenseifner"},
      {4, 15, "ring"},         {4, 16, "rdb"},         {7, 8191, "rdb"},          {7, 8192, "rabenseifner"},
      {8, 8191, "rdb"},        {15, 8192, "rabenseifner"}, {16, 63, "ring"},      {16, 64, "rdb"},
      {31, 4095, "rdb"},       {31, 4096, "rabenseifner"}, {32, 127, "ring"},     {63, 128, "rabenseifner"},
      {64, 262143, "rdb"},     {127, 262144, "rabenseifner"}, {128, 131071, "redbcast"}, {255, 131072, "rdb"},
      {255, 262144, "rabenseifner"}, {256, 4095, "redbcast"}, {511, 4096, "rabenseifner"},
      {512, 2047, "redbcast"}, {2047, 2048, "rdb"},    {2047, 16384, "rabenseifner"}, {2048, 2047, "redbcast"},
      {2048, 2048, "ring"},    {4095, 4096, "rdb"},    {4095, 16384, "rabenseifner"}, {4096, 2048, "ring"},
      {1000000, 16383, "ring"}, {1000000, 16384, "rdb"}, {1000000, 32768, "rabenseifner"},
  };
  for (const auto& [ranks, bytes, name] : cells) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(bytes) + " bytes");
    EXPECT_EQ(choice(ranks, bytes), name);
  }
}

// The grid of issue 32 (Bat Cave, doubles): the ring for 2 ranks' smaller vectors, then
// Rabenseifner's.
TEST(collective_choice, bat_caves_grid) {
  for (const std::size_t n : {4096, 16768}) EXPECT_EQ(choice(2, n * 8), "ring");
  EXPECT_EQ(choice(2, 54912 * 8), "rabenseifner");
  for (const long long p : {4, 8})
    for (const std::size_t n : {4096, 16768, 54912}) EXPECT_EQ(choice(p, n * 8), "rabenseifner");
}

// From 1 to 10^7 doubles on 2 to 64 ranks every choice is an algorithm both engines run:
// an Open MPI number and an SMPI name; so is every name --allreduce takes but default.
TEST(collective_choice, every_choice_runs_on_both_engines) {
  for (const std::string_view name : allreduce_algorithms)
    EXPECT_EQ(find_algorithm(Collective::allreduce, name) == nullptr, name == "default") << name;
  for (long long p = 2; p <= 64; ++p)
    for (std::size_t n = 1; n <= 10'000'000; n = n * 3 + 1) {
      const CollectiveAlgorithm& a = open_mpi_choice(Collective::allreduce, p, n * 8);
      EXPECT_EQ(find_algorithm(Collective::allreduce, a.name), &a);
      EXPECT_TRUE(a.tuned_id == 2 || a.tuned_id == 3 || a.tuned_id == 4 || a.tuned_id == 6) << a.name;
      EXPECT_FALSE(a.smpi.empty());
    }
}

TEST(collective_choice, a_named_algorithm_is_taken_as_it_is_and_an_unknown_one_refused) {
  const ResolvedCollective d = resolve_collective(Collective::allreduce, "default", 4, 134144);
  EXPECT_EQ(d.name, "rabenseifner");
  EXPECT_TRUE(d.by_default);
  EXPECT_EQ(d.chosen_by, "Open MPI 4.1's choice for 4 ranks and 134144 bytes");
  const ResolvedCollective r = resolve_collective(Collective::allreduce, "ring", 4, 134144);
  EXPECT_EQ(r.name, "ring");
  EXPECT_FALSE(r.by_default);
  expect_input_error([] { resolve_collective(Collective::allreduce, "lr", 4, 8); }, {"--allreduce", "'lr'", "ring"});
}

// `--allreduce default` is Open MPI's choice for what the library's allreduce moves: block's
// gradients (an 8-6000-8 encoder's 408 032 bytes on 4 ranks: Rabenseifner's); under overlap,
// whose buckets go by --bucket-allreduce, only the error sums' 4 doubles (32 bytes: Open MPI's
// recursive doubling on 4 ranks, as it chooses for a call of that size).
TEST(collective_choice, default_allreduce_is_chosen_for_what_the_librarys_allreduce_moves) {
  const auto options = train_options();
  const auto job_of = [&](const char* strategy) {
    return resolve(parse_train({"--engine", "real", "--np", "4", "--problem", "encoder:8", "--hidden", "6000",
                                "--strategy", strategy},
                               options));
  };
  const TrainJob block = job_of("block");
  EXPECT_EQ(block.allreduce, "rabenseifner");
  EXPECT_EQ(block.allreduce_chosen_by, "default, Open MPI 4.1's choice for 4 ranks and 408032 bytes, the gradients' size");
  const TrainJob overlap = job_of("overlap");
  EXPECT_EQ(overlap.allreduce, choice(4, 32));
  EXPECT_EQ(overlap.allreduce, "rdb");
  EXPECT_EQ(overlap.allreduce_chosen_by,
            "default, Open MPI 4.1's choice for 4 ranks and 32 bytes, the error sums' size (no allreduce of this strategy "
            "moves the gradients)");
}

}  // namespace
}  // namespace wulf

namespace wulf {
namespace {

std::string choice_of(Collective c, long long ranks, std::size_t bytes) {
  return std::string(open_mpi_choice(c, ranks, bytes).name);
}

struct Cell {
  long long ranks;
  std::size_t bytes;
  std::string name;
};

void expect_choices(Collective c, const std::vector<Cell>& cells) {
  for (const Cell& cell : cells) {
    SCOPED_TRACE(std::string(to_string(c)) + ", " + std::to_string(cell.ranks) + " ranks, " +
                 std::to_string(cell.bytes) + " bytes");
    EXPECT_EQ(choice_of(c, cell.ranks, cell.bytes), cell.name);
  }
}

// ompi_coll_tuned_reduce_intra_dec_fixed's commutative branch, read by hand: each edge from
// both sides. Its Rabenseifner's (below 8 bytes on fewer than 4 ranks: one float) has fewer
// values than ranks and runs the linear reduce.
TEST(collective_choice, open_mpi_41_reduce_rules_at_their_edges) {
  expect_choices(Collective::reduce,
                 {{2, 4, "linear"},           {3, 8, "binary"},          {3, 15, "binary"},
                  {2, 16, "pipeline"},        {2, 31, "pipeline"},       {2, 32, "linear"},
                  {3, 262143, "linear"},      {3, 262144, "pipeline"},   {2, 524287, "pipeline"},
                  {2, 524288, "chain"},       {2, 1048575, "chain"},     {2, 1048576, "pipeline"},
                  {4, 4095, "binary"},        {7, 4096, "chain"},        {4, 65535, "chain"},
                  {4, 65536, "binomial"},     {7, 262144, "linear"},     {7, 524288, "binomial"},
                  {4, 1048576, "linear"},     {8, 8191, "binary"},       {15, 8192, "binomial"},
                  {16, 4095, "binary"},       {31, 4096, "binomial"},    {32, 8, "binomial"},
                  {64, 80000000, "binomial"}, {256, 8192, "in-order-binary"}, {511, 16384, "binomial"},
                  {4096, 31, "in-order-binary"}, {5000, 16383, "in-order-binary"}});
}

// ompi_coll_tuned_bcast_intra_dec_fixed.
TEST(collective_choice, open_mpi_41_bcast_rules_at_their_edges) {
  expect_choices(Collective::bcast,
                 {{2, 31, "pipeline"},   {2, 32, "bintree"},    {3, 256, "pipeline"},  {3, 512, "knomial"},
                  {2, 1024, "linear"},   {2, 32767, "linear"},  {2, 32768, "bintree"}, {2, 131072, "chain"},
                  {2, 262144, "linear"}, {2, 524288, "binomial"}, {2, 1048576, "bintree"},
                  {4, 63, "bintree"},    {5, 64, "binomial"},   {6, 128, "bintree"},   {7, 2048, "binomial"},
                  {4, 8192, "linear"},   {7, 1048575, "linear"}, {7, 1048576, "chain"}, {8, 8, "bintree"},
                  {9, 64, "knomial"},    {15, 4096, "bintree"}, {15, 16384, "binomial"}, {8, 32768, "linear"},
                  {16, 4095, "knomial"}, {31, 4096, "binomial"}, {32, 2047, "binomial"}, {63, 2048, "knomial"},
                  {64, 80000000, "knomial"}, {128, 1, "binomial"}, {255, 16384, "linear"}, {255, 65536, "knomial"}});
}

// ompi_coll_tuned_allgather_intra_dec_fixed, by each rank's block: recursive doubling runs
// Bruck's on ranks that are not a power of two, the neighbour exchange the ring on odd ones.
TEST(collective_choice, open_mpi_41_allgather_rules_at_their_edges) {
  expect_choices(Collective::allgather,
                 {{2, 8, "two-proc"},       {2, 80000000, "two-proc"}, {4, 8, "rdb"},        {16, 80000000, "rdb"},
                  {3, 8, "bruck"},          {31, 8, "bruck"},          {32, 1023, "rdb"},    {48, 1024, "neighbor"},
                  {49, 1024, "ring"},       {63, 65535, "ring"},       {32, 65536, "ring"},  {64, 511, "rdb"},
                  {100, 512, "neighbor"},   {128, 131072, "ring"},     {300, 64, "bruck"},   {2000, 4, "bruck"}});
}

// ompi_coll_tuned_gather_intra_dec_fixed, by each rank's block.
TEST(collective_choice, open_mpi_41_gather_rules_at_their_edges) {
  expect_choices(Collective::gather,
                 {{2, 1, "linear-sync"},   {2, 2, "linear"},        {3, 4, "binomial"},       {3, 32767, "binomial"},
                  {2, 32768, "linear"},    {2, 65536, "binomial"},  {3, 131072, "linear-sync"}, {4, 1023, "binomial"},
                  {7, 1024, "linear"},     {4, 8192, "binomial"},   {5, 32768, "linear"},     {7, 262144, "linear-sync"},
                  {8, 80000000, "binomial"}, {255, 8, "binomial"},  {256, 2048, "linear"},    {600, 8192, "binomial"}});
}

// From 1 to 10^7 doubles on 2 to 64 ranks, and on larger counts up to 4 096, every choice of
// every collective is an algorithm both engines run: an Open MPI number, and SMPI's equal or
// wulf's own version (the split binary tree bcast, Open MPI's choice for 257-1 024 ranks and
// 16-32 KiB, was refused until wulf made its own).
TEST(collective_choice, every_default_of_every_collective_runs_on_both_engines) {
  std::vector<long long> ranks;
  for (long long p = 2; p <= 64; ++p) ranks.push_back(p);
  for (const long long p : {100, 255, 256, 257, 300, 511, 512, 513, 1000, 1023, 1024, 1025, 2048, 2049, 4096})
    ranks.push_back(p);
  for (const Collective c :
       {Collective::allreduce, Collective::reduce, Collective::bcast, Collective::allgather, Collective::gather})
    for (const long long p : ranks)
      for (std::size_t n = 1; n <= 10'000'000; n = n * 3 + 1) {
        SCOPED_TRACE(std::string(to_string(c)) + ", " + std::to_string(p) + " ranks, " + std::to_string(n) + " doubles");
        const CollectiveAlgorithm* a = nullptr;
        ASSERT_NO_THROW(a = &open_mpi_choice(c, p, n * 8));
        EXPECT_EQ(find_algorithm(c, a->name), a);
        EXPECT_GT(a->tuned_id, 0);
        const bool wulfs = (c == Collective::reduce && own_reduce_tree(a->name)) ||
                           (c == Collective::bcast && is_own_bcast(a->name)) ||
                           (c == Collective::gather && is_own_gather(a->name));
        EXPECT_EQ(a->wulfs_own(), wulfs) << a->name;
      }
}

// The names the options take are the tables' (and default), wulf's own reduces included; the
// algorithms SMPI has no equal of are exactly those wulf makes itself.
TEST(collective_choice, the_options_names_are_the_tables_and_wulfs_own_are_those_smpi_lacks) {
  const auto names_of = [](Collective c) {
    std::vector<std::string_view> names{"default"};
    for (const CollectiveAlgorithm& a : collective_algorithms(c)) names.push_back(a.name);
    return names;
  };
  const auto as_vector = [](const auto& list) { return std::vector<std::string_view>(list.begin(), list.end()); };
  EXPECT_EQ(names_of(Collective::allreduce), as_vector(allreduce_algorithms));
  EXPECT_EQ(names_of(Collective::reduce), as_vector(reduce_algorithms));
  EXPECT_EQ(names_of(Collective::allgather), as_vector(allgather_algorithms));
  EXPECT_EQ(names_of(Collective::gather), as_vector(gather_algorithms));
  EXPECT_EQ(names_of(Collective::bcast), as_vector(bcast_algorithms));
  for (const CollectiveAlgorithm& a : collective_algorithms(Collective::reduce))
    EXPECT_EQ(a.wulfs_own(), is_point_to_point_reduce(std::string(a.name))) << a.name;
  for (const CollectiveAlgorithm& a : collective_algorithms(Collective::bcast))
    EXPECT_EQ(a.wulfs_own(), is_own_bcast(a.name)) << a.name;
  for (const CollectiveAlgorithm& a : collective_algorithms(Collective::gather))
    EXPECT_EQ(a.wulfs_own(), is_own_gather(a.name)) << a.name;
}

// An allreduce algorithm is one row of allreduce_table: every row reaches every place that
// names algorithms without a line of its own there (ARCHITECTURE.md, "How to add ...").
TEST(collective_choice, every_allreduce_row_reaches_the_options_the_library_the_schedules_and_the_help) {
  // The help texts with their line breaks and indents as single spaces.
  const auto flat = [](const std::string& text) {
    std::string out;
    for (const char c : text) {
      const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
      if (!space) out += c;
      else if (!out.empty() && out.back() != ' ') out += ' ';
    }
    return out;
  };
  const std::string help = flat(wulf({"train", "--help"}).out);
  const std::string recommend_help = flat(wulf({"recommend", "--help"}).out);
  for (const AllreduceAlgorithm& a : allreduce_table) {
    const std::string name(a.name);
    SCOPED_TRACE(name);
    EXPECT_EQ(find_allreduce(a.name), &a);
    // --allreduce takes it, and the library gets Open MPI's number and SMPI's name
    EXPECT_NE(std::find(allreduce_algorithms.begin(), allreduce_algorithms.end(), a.name), allreduce_algorithms.end());
    const CollectiveAlgorithm* library = find_algorithm(Collective::allreduce, a.name);
    ASSERT_NE(library, nullptr);
    EXPECT_EQ(library->tuned_id, a.tuned_id);
    EXPECT_EQ(library->smpi, a.smpi);
    EXPECT_EQ(is_own_blocking_allreduce(a.name), a.own_only());
    // train --help says what it is
    EXPECT_NE(help.find(name + " (" + std::string(a.help)), std::string::npos) << help;
    if (a.scheduled) {  // overlap's buckets and recommend's search run it
      EXPECT_EQ(parse_nb_algorithm(a.name, "--bucket-allreduce"), a.schedule);
      EXPECT_EQ(to_string(a.schedule), a.name);
      EXPECT_EQ(is_hierarchical(a.schedule), a.needs == AllreduceNeeds::nodes);
      EXPECT_NE(allreduce_names(AllreduceRows::scheduled).find(name), std::string::npos);
      EXPECT_NE(recommend_help.find(name), std::string::npos);
    } else {
      EXPECT_THROW(parse_nb_algorithm(a.name, "--bucket-allreduce"), InputError);
    }
  }
  // and nothing else: the errors list exactly the rows, in the table's order
  for (const AllreduceRows rows : {AllreduceRows::all, AllreduceRows::scheduled}) {
    std::vector<std::string> names;
    for (const AllreduceAlgorithm& a : allreduce_table)
      if (rows == AllreduceRows::all || a.scheduled)
        names.emplace_back(a.name);
    ASSERT_GE(names.size(), 2u);
    EXPECT_EQ(allreduce_names(rows),
              fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back()));
  }
  EXPECT_EQ(allreduce_names(AllreduceRows::scheduled),
            "rdb, ring, rabenseifner, hierarchical, hierarchical-rabenseifner or rings");  // wulf's own schedules
  EXPECT_EQ(find_allreduce("default"), nullptr);
}

// Open MPI gets the algorithm's number and, for a chain, the fixed rules' one chain (a forced
// chain would otherwise get coll_tuned's default fanout of 4).
TEST(collective_choice, open_mpi_is_forced_as_its_fixed_rules_run_the_algorithm) {
  EXPECT_EQ(open_mpi_forcing(Collective::reduce, *find_algorithm(Collective::reduce, "chain")),
            (std::vector<std::string>{"--mca", "coll_tuned_reduce_algorithm", "2", "--mca",
                                      "coll_tuned_reduce_algorithm_chain_fanout", "1"}));
  EXPECT_EQ(open_mpi_forcing(Collective::bcast, *find_algorithm(Collective::bcast, "knomial")),
            (std::vector<std::string>{"--mca", "coll_tuned_bcast_algorithm", "7"}));
  EXPECT_EQ(open_mpi_forcing(Collective::gather, *find_algorithm(Collective::gather, "linear-sync")),
            (std::vector<std::string>{"--mca", "coll_tuned_gather_algorithm", "3"}));
  EXPECT_TRUE(open_mpi_forcing(Collective::reduce, *find_algorithm(Collective::reduce, "four-stage")).empty());
  expect_input_error([] { resolve_collective(Collective::bcast, "flattree", 4, 8); },
                     {"--bcast", "'flattree'", "knomial"});
  // The split binary tree (300 ranks, 20 000 bytes): wulf's own on both engines, Open MPI's 4.
  const CollectiveAlgorithm& split = open_mpi_choice(Collective::bcast, 300, 20000);
  EXPECT_EQ(split.name, "split-bintree");
  EXPECT_TRUE(split.wulfs_own());
  EXPECT_EQ(open_mpi_forcing(Collective::bcast, split),
            (std::vector<std::string>{"--mca", "coll_tuned_bcast_algorithm", "4"}));
}

// comm/'s rule (the rank programs include nothing from engine/) against the tables: Open
// MPI's redbcast runs the run's reduce and bcast where both have Open MPI's number to force.
TEST(collective_choice, redbcast_runs_the_runs_where_both_have_open_mpis_number) {
  int reduces = 0, bcasts = 0;
  for (const CollectiveAlgorithm& r : collective_algorithms(Collective::reduce))
    for (const CollectiveAlgorithm& b : collective_algorithms(Collective::bcast)) {
      EXPECT_EQ(redbcast_runs_the_runs(r.name, b.name), r.tuned_id != 0 && b.tuned_id != 0) << r.name << " " << b.name;
      reduces += r.tuned_id == 0, bcasts += b.tuned_id == 0;
    }
  EXPECT_GT(reduces, 0);  // wulf-binomial and four-stage, each with every bcast
  EXPECT_EQ(bcasts, 0);
  EXPECT_FALSE(redbcast_runs_the_runs("default", "binomial"));
  EXPECT_FALSE(redbcast_runs_the_runs("binomial", "default"));
}

}  // namespace
}  // namespace wulf

