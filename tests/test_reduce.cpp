// wulf's own reduces (staged_reduce.hpp): the layout they read, and sums checked exactly
// against the sum of the ranks' values (what MPI_Reduce gives) under mpirun and smpirun,
// for layouts the ranks fill and layouts they do not; seed 002's times on Bunyip.
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "engine/process.hpp"
#include "comm/staged_reduce.hpp"
#include "comm/comm_bench.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <sstream>

namespace wulf {
namespace {

using namespace testing_support;

// Each rank's (group, node).
std::vector<std::pair<int, int>> places(const ReduceLayout& l) {
  std::vector<std::pair<int, int>> p;
  for (const auto& r : l.ranks) p.emplace_back(r.group, r.node);
  return p;
}

// The check lines the ranks print: one per size, every one ok.
void expect_checks_ok(const RanksOutcome& o, std::size_t lines, const std::string& what) {
  ASSERT_EQ(o.code, 0) << what << ": " << o.failure << o.output;
  std::istringstream in(o.output);
  std::string line;
  std::size_t ok = 0;
  while (std::getline(in, line))
    if (!line.empty() && line.front() == '{') {
      const Json j = parse_json(line, "the bench");
      EXPECT_TRUE(j.at("ok").get<bool>()) << what << ": " << line;
      ok += j.at("ok").get<bool>();
    }
  EXPECT_EQ(ok, lines) << what << ": " << o.output;
}

// cmd followed by the rank program's benchmark that checks a reduce of 1 000 and 77 floats to
// root exactly, as its job file (kept while job lives).
std::vector<std::string> with_check(std::vector<std::string> cmd, std::unique_ptr<RankJobArgs>& job,
                                    const std::string& reduce, int root, const std::string& layout) {
  CommBenchConfig c;
  c.what = "reduce", c.sizes = {1000, 77}, c.check = true, c.doubles = false, c.root = root, c.reduce = reduce;
  c.reduce_layout = layout;
  job = std::make_unique<RankJobArgs>(comm_bench_json(c), false);
  cmd.push_back("bench");
  cmd.insert(cmd.end(), job->args().begin(), job->args().end());
  return cmd;
}

TEST(reduce, layout_regular_form_places_outside_ranks_then_groups_nodes_cpus) {
  const ReduceLayout l = ReduceLayout::parse("groups=2,nodes=2,cpus=2,outside=1,fan-in=3", 6);
  ASSERT_EQ(l.ranks.size(), 6u);
  EXPECT_EQ(l.fan_in, 3);
  // Rank 0 outside the groups, then group 0's nodes 0 and 1, then group 1's node 0.
  EXPECT_EQ(places(l), (std::vector<std::pair<int, int>>{{-1, 0}, {0, 0}, {0, 0}, {0, 1}, {0, 1}, {1, 0}}));
  // The explicit form says the same.
  const ReduceLayout e = ReduceLayout::parse(l.to_string(), 6);
  EXPECT_EQ(e.to_string(), l.to_string());
}

TEST(reduce, layout_that_holds_fewer_ranks_than_np_or_is_malformed_is_refused) {
  expect_input_error([] { ReduceLayout::parse("groups=2,nodes=2,cpus=2", 9); }, {"--reduce-layout", "8 ranks"},
                     "9 ranks in a layout of 8 were accepted");
  EXPECT_THROW(ReduceLayout::parse("groups=2,nodes=2", 4), InputError);           // no cpus
  EXPECT_THROW(ReduceLayout::parse("groups=2,nodes=x,cpus=1", 4), InputError);    // not a number
  EXPECT_THROW(ReduceLayout::parse("groups=2,nodes=2,cpus=1,wires=3", 4), InputError);
  EXPECT_THROW(ReduceLayout::parse("places=0:0/zero", 2), InputError);
}

TEST(reduce, a_layout_of_absurd_counts_is_refused_before_its_places_are_made) {
  // 10 million places, more than a run may have ranks (--np's limit). Asserted first: a
  // parse that made every place would take 8 bytes x 1e18 below.
  const std::string ten_million = input_error([] { ReduceLayout::parse("groups=1000,nodes=1000,cpus=10", 4); });
  ASSERT_TRUE(contains(ten_million, "--reduce-layout") && contains(ten_million, "1e+07 places") &&
              contains(ten_million, "1000000"))
      << ten_million;
  expect_input_error([] { ReduceLayout::parse("groups=1000000,nodes=1000000,cpus=1000000,outside=3", 4); },
                     {"--reduce-layout", "groups=1000000 x nodes=1000000 x cpus=1000000 + outside=3", "1e+18 places",
                      "1000000 ranks"});
  // Numbers beyond every integer type are refused without a cast (which would be undefined).
  expect_input_error([] { ReduceLayout::parse("groups=1e300,nodes=1,cpus=1", 4); },
                     {"--reduce-layout", "groups=1e300", "from 1 to 1000000"});
  expect_input_error([] { ReduceLayout::parse("groups=1,nodes=1,cpus=1,fan-in=1e21", 1); }, {"fan-in=1e21"});
  expect_input_error([] { ReduceLayout::parse("places=1e300:0/0:0", 2); }, {"place '1e300:0'"});
  expect_input_error([] { ReduceLayout::parse("places=0:-1e300/0:0", 2); }, {"place '0:-1e300'"});
  // A layout up to the limit is made only as far as the run's ranks.
  EXPECT_EQ(ReduceLayout::parse("groups=1000,nodes=1000,cpus=1", 3).ranks.size(), 3u);
}

TEST(reduce, train_refuses_a_layout_that_does_not_hold_the_ranks_before_any_rank_starts) {
  expect_train_refused({"--problem", "encoder:8", "--engine", "real", "--np", "5", "--strategy", "root", "--reduce",
                        "four-stage", "--reduce-layout", "groups=2,nodes=2,cpus=1"},
                       {"--reduce-layout: it places 4 ranks, but --np is 5"});
  expect_train_refused({"--problem", "encoder:8", "--reduce-layout", "groups=2,nodes=2,cpus=1"},
                       {"--reduce-layout is for --reduce four-stage"});
}

TEST(reduce, a_training_run_with_the_four_stage_reduce_matches_the_library_reduce) {
  // Root updates with a reduce to rank 0: double sums in another order, equal to 1e-12.
  TestDir dir;
  std::vector<Json> records;
  for (const std::string reduce : {"default", "four-stage"})
    records.push_back(train_record(
        dir, reduce,
        {"--problem", "encoder:8", "--epochs", "5", "--block", "8", "--precision", "double", "--engine", "sim",
         "--platform", wulf_platform("bunyip.xml"), "--np", "6", "--strategy", "root", "--reduce", reduce}));
  const auto& a = records[0].at("history");
  const auto& b = records[1].at("history");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 1; i < a.size(); ++i)
    EXPECT_NEAR(a[i].at("train_error").get<double>(), b[i].at("train_error").get<double>(), 1e-12) << i;
  EXPECT_FALSE(records[1].at("config").at("reduce_falls_back").get<bool>());
}

// A time-only run (--numerics off) receives wulf's reduces into memory all simulated ranks
// share and adds nothing (PointToPointReduce::set_unread_storage): the same messages, so
// the same simulated time as the run with the arithmetic, iteration by iteration (60 ranks:
// group A's 24 nodes and 6 of group B's, so that every stage of four-stage runs).
TEST(reduce, a_time_only_run_with_wulfs_reduces_takes_the_arithmetic_runs_times) {
  TestDir dir;
  for (const std::string reduce : {"four-stage", "wulf-binomial"}) {
    std::vector<Json> records;
    for (const std::string numerics : {"on", "off"})
      records.push_back(train_record(
          dir, reduce + "-" + numerics,
          {"--problem", "function", "--epochs", "2", "--block", "128", "--engine", "sim", "--platform",
           wulf_platform("bunyip.xml"), "--np", "60", "--strategy", "root", "--reduce", reduce, "--numerics",
           numerics}));
    const auto& on = records[0].at("history");
    const auto& off = records[1].at("history");
    ASSERT_EQ(on.size(), off.size()) << reduce;
    for (std::size_t i = 0; i < on.size(); ++i) {
      const double t = on[i].at("time_s").get<double>();
      EXPECT_NEAR(off[i].at("time_s").get<double>(), t, 1e-9 * t) << reduce << " iteration " << i;
    }
    EXPECT_GT(on.back().at("time_s").get<double>(), 0.0) << reduce;
  }
}

TEST(reduce, layout_from_the_platform_follows_the_hosts_group_properties) {
  std::vector<PlatformHost> hosts{{"a0", 2, 1e9, "A", 0, 3}, {"a1", 2, 1e9, "A", 1, 3},
                                  {"b0", 2, 1e9, "B", 0, 3}, {"server", 2, 1e9, "", -1, 0}};
  const ReduceLayout l = ReduceLayout::parse(reduce_layout_of(hosts, 7), 7);
  EXPECT_EQ(l.fan_in, 3);
  // Group A's two nodes, then group B's, then the server outside the groups (node: its host's index).
  EXPECT_EQ(places(l), (std::vector<std::pair<int, int>>{{0, 0}, {0, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 0}, {-1, 3}}));
  // A platform without groups gives no layout: the library reduce.
  EXPECT_EQ(reduce_layout_of({{"h0", 1, 1e9, "", -1, 0}, {"h1", 1, 1e9, "", -1, 0}}, 2), "");
}

// Each host used adds its own cores: a 1-core host then an 8-core host place 2 ranks, one on
// each (the count once added the next host's cores, and read past the list's end).
TEST(reduce, layout_counts_each_hosts_own_cores_in_any_order_of_sizes) {
  const std::vector<PlatformHost> small_first{{"s", 1, 1e9, "A", 0, 1}, {"big", 8, 1e9, "A", 1, 1}};
  EXPECT_EQ(reduce_layout_of(small_first, 2), "fan-in=1,places=0:0/0:1");
  EXPECT_EQ(ReduceLayout::parse(reduce_layout_of(small_first, 9), 9).fan_in, 1);
  const std::vector<PlatformHost> big_first{{"big", 8, 1e9, "A", 0, 1}, {"s", 1, 1e9, "A", 1, 1}};
  EXPECT_EQ(reduce_layout_of(big_first, 9), "fan-in=1,places=0:0/0:0/0:0/0:0/0:0/0:0/0:0/0:0/0:1");
}

TEST(reduce, wulf_reduces_give_the_exact_sum_under_mpirun_for_full_and_partial_layouts) {
  const std::string program = wulf_program("wulf-rank-real");
  // 4 ranks fill 2 groups of 2 one-CPU nodes; 3, 5 and 7 ranks fill part of 1 + 3 x 2 x 2.
  const std::vector<std::pair<int, std::string>> cases{
      {4, "groups=2,nodes=2,cpus=1,fan-in=1"},
      {3, "groups=3,nodes=2,cpus=2,outside=1,fan-in=2"},
      {5, "groups=3,nodes=2,cpus=2,outside=1,fan-in=2"},
      {7, "groups=3,nodes=2,cpus=2,outside=1,fan-in=2"}};
  for (const auto& [np, layout] : cases)
    for (int root : {0, np - 1}) {
      const MpiSessionDir session;
      std::unique_ptr<RankJobArgs> job;
      const std::vector<std::string> cmd =
          with_check(mpirun_command(np, "auto", Collectives{}, program, session), job, "four-stage", root, layout);
      expect_checks_ok(run_ranks(cmd, false, true), 2, "four-stage np " + std::to_string(np) + " " + layout);
    }
  const MpiSessionDir session;
  std::unique_ptr<RankJobArgs> job;
  const std::vector<std::string> cmd =
      with_check(mpirun_command(5, "auto", Collectives{}, program, session), job, "wulf-binomial", 2, "");
  expect_checks_ok(run_ranks(cmd, false, true), 2, "wulf-binomial np 5");
}

TEST(reduce, wulf_reduces_give_the_exact_sum_under_smpirun_on_bunyip) {
  // All 194 ranks of seed 002's reduce, and 51 ranks: group A, one node of B and a CPU.
  const std::string file = wulf_platform("bunyip.xml");
  const std::vector<PlatformHost> hosts = platform_hosts(file).hosts;
  const Hostfile hostfile(hosts, 194);
  for (int np : {194, 51})
    for (int root : {0, np - 1})
      for (const std::string reduce : {"four-stage", "wulf-binomial", "binomial"}) {
        const std::string layout = reduce == "four-stage" ? reduce_layout_of(hosts, np) : "";
        ASSERT_TRUE(reduce != "four-stage" || contains(layout, "places=")) << layout;
        std::unique_ptr<RankJobArgs> job;
        const std::vector<std::string> cmd =
            with_check(smpirun_command(file, hostfile, np, {"smpi/reduce:binomial"}, wulf_program("wulf-rank-sim")),
                       job, reduce == "binomial" ? "default" : reduce, root, layout);
        expect_checks_ok(run_ranks(cmd, true, true), 2, reduce + " np " + std::to_string(np));
      }
}

}  // namespace
}  // namespace wulf
