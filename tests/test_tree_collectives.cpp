// wulf's own versions of Open MPI's collectives (comm/tree_collectives): their trees are
// Open MPI's (ompi/mca/coll/base/coll_base_topo.c, the drawings in its comments), and on
// both engines they give the exact sums, broadcasts and gathers, at any root.
#include "comm/comm_bench.hpp"
#include "comm/tree_collectives.hpp"
#include "comm/collective_choice.hpp"
#include "engine/launch.hpp"
#include "util/json.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace wulf {
namespace {

using namespace testing_support;

std::map<int, std::vector<int>> children_of(Tree tree, int size, int root) {
  std::map<int, std::vector<int>> out;
  for (int r = 0; r < size; ++r) {
    const std::vector<int> c = tree_links(tree, r, size, root).children;
    if (!c.empty()) out[r] = c;
  }
  return out;
}

TEST(tree_collectives, trees_are_open_mpis_as_its_source_draws_them) {
  // build_tree, fanout 2, 7 ranks:  0 -> 1 2, 1 -> 3 5, 2 -> 4 6.
  EXPECT_EQ(children_of(Tree::binary, 7, 0), (std::map<int, std::vector<int>>{{0, {1, 2}}, {1, {3, 5}}, {2, {4, 6}}}));
  // build_kmtree, radix 4, 10 ranks: 0 -> 4 8 1 2 3, 4 -> 5 6 7, 8 -> 9.
  EXPECT_EQ(children_of(Tree::knomial, 10, 0),
            (std::map<int, std::vector<int>>{{0, {4, 8, 1, 2, 3}}, {4, {5, 6, 7}}, {8, {9}}}));
  // build_bmtree: a child above each rank's highest bit; in order: below its lowest bit.
  EXPECT_EQ(children_of(Tree::binomial, 8, 0),
            (std::map<int, std::vector<int>>{{0, {1, 2, 4}}, {1, {3, 5}}, {2, {6}}, {3, {7}}}));
  EXPECT_EQ(children_of(Tree::in_order_binomial, 8, 0),
            (std::map<int, std::vector<int>>{{0, {1, 2, 4}}, {2, {3}}, {4, {5, 6}}, {6, {7}}}));
  EXPECT_EQ(children_of(Tree::chain, 4, 0), (std::map<int, std::vector<int>>{{0, {1}}, {1, {2}}, {2, {3}}}));
  // Another root shifts the ranks: root 3 of 5, the chain 3 -> 4 -> 0 -> 1 -> 2.
  EXPECT_EQ(children_of(Tree::chain, 5, 3), (std::map<int, std::vector<int>>{{3, {4}}, {4, {0}}, {0, {1}}, {1, {2}}}));
  EXPECT_EQ(tree_links(Tree::binary, 1, 5, 3).parent, 4);  // shifted 3, the child of shifted 1
}

// Every tree reaches every rank once from the root, each rank its parent's child.
TEST(tree_collectives, every_tree_spans_the_ranks_with_consistent_links) {
  for (const Tree tree : {Tree::chain, Tree::binary, Tree::binomial, Tree::in_order_binomial, Tree::knomial})
    for (int p = 1; p <= 70; ++p)
      for (const int root : {0, p / 2, p - 1}) {
        SCOPED_TRACE(std::to_string(static_cast<int>(tree)) + ": " + std::to_string(p) + " ranks, root " +
                     std::to_string(root));
        std::vector<int> reached(static_cast<std::size_t>(p), 0);
        for (int r = 0; r < p; ++r) {
          const TreeLinks t = tree_links(tree, r, p, root);
          EXPECT_EQ(t.parent < 0, r == root);
          if (t.parent >= 0) {
            const std::vector<int> siblings = tree_links(tree, t.parent, p, root).children;
            EXPECT_EQ(std::count(siblings.begin(), siblings.end(), r), 1);
          }
          for (const int c : t.children) reached.at(static_cast<std::size_t>(c)) += 1;
        }
        reached[static_cast<std::size_t>(root)] += 1;
        EXPECT_EQ(std::count(reached.begin(), reached.end(), 1), p);
      }
}

// The rank program's check of `what` with wulf's own `algorithm` at every root, values of
// odd counts (below and above the ranks), under cmd; every line must say ok.
void expect_exact(std::vector<std::string> cmd, bool sim, const std::string& what, const std::string& algorithm,
                  int np) {
  CommBenchConfig c;
  c.what = what, c.check = true, c.root = CommBenchConfig::every_root, c.sizes = {1, 7, 77, 1001};
  c.doubles = what != "reduce";  // the sums in float, the others in double
  if (what == "reduce") c.reduce = algorithm;
  if (what == "bcast") c.bcast = algorithm;
  if (what == "gather") c.gather = algorithm;  // the others are the library's, forced in cmd
  const RankJobArgs job(comm_bench_json(c), false);
  cmd.push_back("bench");
  cmd.insert(cmd.end(), job.args().begin(), job.args().end());
  const RanksOutcome o = run_ranks(cmd, sim, true);
  const std::string where = what + " " + algorithm + " on " + std::to_string(np) + " ranks";
  ASSERT_EQ(o.code, 0) << where << ": " << o.failure << o.output;
  std::istringstream lines(o.output);
  std::string line;
  int ok = 0;
  while (std::getline(lines, line))
    if (!line.empty() && line.front() == '{') {
      const bool right = parse_json(line, where).at("ok").get<bool>();
      EXPECT_TRUE(right) << where << ": " << line;
      ok += right;
    }
  EXPECT_EQ(ok, np * 4) << where << ": " << o.output;  // 4 sizes at each root
}

const std::vector<std::pair<std::string, std::string>> own_algorithms{
    {"reduce", "chain"},   {"reduce", "pipeline"}, {"reduce", "binary"},  {"bcast", "chain"},
    {"bcast", "pipeline"}, {"bcast", "bintree"},   {"bcast", "binomial"}, {"bcast", "knomial"},
    {"bcast", "scatter-allgather"}, {"bcast", "split-bintree"}, {"gather", "linear-sync"}};

TEST(tree_collectives, wulfs_own_give_exact_values_at_every_root_under_smpirun) {
  const std::string file = wulf_platform("batcave.xml");
  const Hostfile hostfile(platform_hosts(file).hosts, 8);
  for (int np = 1; np <= 8; ++np)
    for (const auto& [what, algorithm] : own_algorithms)
      expect_exact(smpirun_command(file, hostfile, np, {}, wulf_program("wulf-rank-sim")), true, what, algorithm, np);
}

// Under mpirun the same schedules over Open MPI's messages: no message (1 rank), a tree of
// uneven subtrees (5) and a full one (8). Every count from 1 to 8 is the test above's; each
// mpirun costs about a second (it was 1, 2, 3, 5 and 8: 48 s of the suite).
TEST(tree_collectives, wulfs_own_give_exact_values_at_every_root_under_mpirun) {
  for (const int np : {1, 5, 8})
    for (const auto& [what, algorithm] : own_algorithms) {
      const MpiSessionDir session;
      expect_exact(mpirun_command(np, "auto", Collectives{}, wulf_program("wulf-rank-real"), session), false, what,
                   algorithm, np);
    }
}

// The libraries' algorithms wulf forces (SMPI's equal by its name, Open MPI's by its number)
// are accepted by each engine and give the exact values too: every algorithm of every
// collective that is not wulf's own, on 4 and 5 ranks (a power of two and not).
TEST(tree_collectives, the_libraries_algorithms_wulf_forces_give_exact_values_on_both_engines) {
  const std::string file = wulf_platform("batcave.xml");
  const Hostfile hostfile(platform_hosts(file).hosts, 8);
  for (const Collective c : {Collective::reduce, Collective::bcast, Collective::allgather, Collective::gather})
    for (const CollectiveAlgorithm& a : collective_algorithms(c)) {
      if (a.wulfs_own() || (c == Collective::allgather && a.name == "two-proc")) continue;  // two-proc: 2 ranks only
      Collectives forced;
      (c == Collective::reduce ? forced.reduce : c == Collective::bcast ? forced.bcast
                                : c == Collective::allgather        ? forced.allgather
                                                                    : forced.gather) = std::string(a.name);
      const std::string what(to_string(c));
      for (const int np : {4, 5}) {
        // Bruck's and the ring are what Open MPI's rdb and neighbour exchange run there.
        if (c == Collective::allgather && ((a.name == "rdb" && np == 5) || (a.name == "neighbor" && np == 5)))
          continue;
        expect_exact(smpirun_command(file, hostfile, np, smpi_collective_config(forced), wulf_program("wulf-rank-sim")),
                     true, what, std::string(a.name), np);
        const MpiSessionDir session;
        expect_exact(mpirun_command(np, "auto", forced, wulf_program("wulf-rank-real"), session), false, what,
                     std::string(a.name), np);
      }
    }
  Collectives pair;
  pair.allgather = "two-proc";
  expect_exact(smpirun_command(file, hostfile, 2, smpi_collective_config(pair), wulf_program("wulf-rank-sim")), true,
               "allgather", "two-proc", 2);
}

}  // namespace
}  // namespace wulf
