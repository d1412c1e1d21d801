// --allreduce default: Open MPI 4.1's fixed choice (engine/collective_choice), checked at the
// edges of the rules of ompi/mca/coll/tuned/coll_tuned_decision_fixed.c in Open MPI 4.1.4
// (the commutative branch), each edge from both sides.
#include "engine/collective_choice.hpp"
#include "job/train_job.hpp"
#include "util/errors.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "test_support.hpp"

namespace wulf {
namespace {

using namespace testing_support;

std::string choice(long long ranks, std::size_t bytes) {
  return std::string(open_mpi_allreduce_choice(ranks, bytes).name);
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
    EXPECT_EQ(find_allreduce_algorithm(name) == nullptr, name == "default") << name;
  for (long long p = 2; p <= 64; ++p)
    for (std::size_t n = 1; n <= 10'000'000; n = n * 3 + 1) {
      const AllreduceAlgorithm& a = open_mpi_allreduce_choice(p, n * 8);
      EXPECT_EQ(find_allreduce_algorithm(a.name), &a);
      EXPECT_TRUE(a.tuned_id == 2 || a.tuned_id == 3 || a.tuned_id == 4 || a.tuned_id == 6) << a.name;
      EXPECT_FALSE(a.smpi.empty());
    }
}

TEST(collective_choice, a_named_algorithm_is_taken_as_it_is_and_an_unknown_one_refused) {
  const ResolvedAllreduce d = resolve_allreduce("default", 4, 134144);
  EXPECT_EQ(d.name, "rabenseifner");
  EXPECT_TRUE(d.by_default);
  EXPECT_EQ(d.chosen_by, "Open MPI 4.1's choice for 4 ranks and 134144 bytes");
  const ResolvedAllreduce r = resolve_allreduce("ring", 4, 134144);
  EXPECT_EQ(r.name, "ring");
  EXPECT_FALSE(r.by_default);
  expect_input_error([] { resolve_allreduce("lr", 4, 8); }, {"--allreduce", "'lr'", "ring"});
}

}  // namespace
}  // namespace wulf
