// The collectives as the model counts them (predict/comm_plan, issue 65) against the schedules
// the ranks run (comm/nb_allreduce, comm/shard_schedules): step by step, the messages every rank
// sends and the bytes of the longest.
#include "comm/shard_schedules.hpp"
#include "predict/comm_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>

namespace wulf {
namespace {

// One step of the schedules: every rank's message (from, to) and the longest, in bytes.
struct Expected {
  std::set<Message> messages;
  double bytes = 0;
};

// The plan expanded step by step.
std::vector<Expected> expanded(const PatternBook& book, const CommPlan& plan) {
  std::vector<Expected> out;
  for (const PlanPhase& f : plan.phases)
    for (std::size_t i = 0; i < f.count; ++i) {
      const Pattern& p = book.at(f.pattern);
      out.push_back({std::set<Message>(p.begin(), p.end()), f.bytes});
    }
  return out;
}

// The ranks' lanes merged by step index; a rank that `late` names starts `late` steps after the
// others (the ranks that do not fold in beyond a power of two: the model counts the fold as a
// step every rank waits out).
std::vector<Expected> from_schedules(const std::vector<std::vector<std::vector<NbStep>>>& lanes_of_rank,
                                     std::size_t value_bytes, const std::function<int(int)>& late = {}) {
  std::vector<Expected> out;
  for (std::size_t r = 0; r < lanes_of_rank.size(); ++r)
    for (const std::vector<NbStep>& lane : lanes_of_rank[r]) {
      const std::size_t shift = late ? static_cast<std::size_t>(late(static_cast<int>(r))) : 0;
      for (std::size_t s = 0; s < lane.size(); ++s) {
        if (out.size() <= s + shift) out.resize(s + shift + 1);
        if (lane[s].to < 0 || lane[s].send_n == 0) continue;
        out[s + shift].messages.emplace(static_cast<int>(r), lane[s].to);
        out[s + shift].bytes =
            std::max(out[s + shift].bytes, static_cast<double>(lane[s].send_n) * static_cast<double>(value_bytes));
      }
    }
  return out;
}

void expect_same(const std::vector<Expected>& model, const std::vector<Expected>& ranks, const std::string& what) {
  ASSERT_EQ(model.size(), ranks.size()) << what;
  for (std::size_t s = 0; s < model.size(); ++s) {
    EXPECT_EQ(model[s].messages, ranks[s].messages) << what << ", step " << s;
    EXPECT_EQ(model[s].bytes, ranks[s].bytes) << what << ", step " << s;
  }
}

// The ranks beyond the largest power of two fold in first; the others wait that step out.
std::function<int(int)> fold_wait(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return [rem = p - q](int r) { return rem > 0 && r >= 2 * rem ? 1 : 0; };
}

TEST(comm_plan, every_flat_allreduce_sends_what_the_ranks_schedules_send) {
  for (const NbAlgorithm a : {NbAlgorithm::ring, NbAlgorithm::rdb, NbAlgorithm::rabenseifner})
    for (const int p : {2, 3, 4, 6, 8, 12})
      for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{100}, std::size_t{1001}}) {
        PatternBook book(p);
        const CommPlan plan = allreduce_plan(book, a, n, 4);
        std::vector<std::vector<std::vector<NbStep>>> lanes;
        for (int r = 0; r < p; ++r) lanes.push_back(nb_lanes(a, p, r, n, {}));
        const bool ring = a == NbAlgorithm::ring && n >= static_cast<std::size_t>(p);
        expect_same(expanded(book, plan), from_schedules(lanes, 4, ring ? std::function<int(int)>{} : fold_wait(p)),
                    std::string(to_string(a)) + " p " + std::to_string(p) + " n " + std::to_string(n));
      }
}

TEST(comm_plan, the_hierarchical_allreduces_go_within_across_and_within_again) {
  for (const NbAlgorithm a : {NbAlgorithm::hierarchical, NbAlgorithm::hierarchical_rabenseifner})
    for (const auto& [nodes, per] : std::vector<std::pair<int, int>>{{2, 4}, {4, 2}, {4, 8}, {3, 4}, {8, 1}, {1, 4}})
      for (const std::size_t n : {std::size_t{3}, std::size_t{640}, std::size_t{1000}}) {
        const int p = nodes * per;
        // Ranks interleaved over the nodes: node_of need not follow rank order.
        std::vector<int> node_of(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r) node_of[static_cast<std::size_t>(r)] = 10 + r % nodes;
        PatternBook book(p, {.node_of = node_of});
        const CommPlan plan = allreduce_plan(book, a, n, 8);
        std::vector<std::vector<std::vector<NbStep>>> lanes;
        for (int r = 0; r < p; ++r) lanes.push_back(nb_lanes(a, p, r, n, {.node_of = node_of}));
        // The model counts a fold in beyond a power of two as a step every rank waits out, and the
        // result's way back as after the others' exchanges: a rank that does not fold waits one
        // step, one that folds waits the exchanges out after its send. Over all ranks where the
        // values are fewer than a node's ranks (recursive doubling over all); else Rabenseifner
        // across 3 nodes (2 exchanges), after the reduce-scatter within, the first node's ranks
        // folding and the third's waiting.
        // Each rank's waits: (where, steps), in order.
        std::vector<std::vector<std::pair<std::size_t, std::size_t>>> waits(static_cast<std::size_t>(p));
        if (n < static_cast<std::size_t>(per)) {
          const std::function<int(int)> late = fold_wait(p);
          for (int r = 0; r < p; ++r) waits[static_cast<std::size_t>(r)] = {{0, static_cast<std::size_t>(late(r))}};
        } else if (a == NbAlgorithm::hierarchical_rabenseifner && nodes == 3) {
          const auto within = static_cast<std::size_t>(per - 1);
          for (int r = 0; r < p; ++r)
            if (r % nodes == 2)  // waits the fold in and the way back
              waits[static_cast<std::size_t>(r)] = {{within, 1}, {within + 3, 1}};
            else if (r % nodes == 0)  // folds in, waits the 2 exchanges
              waits[static_cast<std::size_t>(r)] = {{within + 1, 2}};
        }
        for (int r = 0; r < p; ++r) {
          std::vector<NbStep>& lane = lanes[static_cast<std::size_t>(r)][0];
          for (const auto& [at, steps] : waits[static_cast<std::size_t>(r)])
            lane.insert(lane.begin() + static_cast<std::ptrdiff_t>(at), steps, NbStep{});
        }
        const std::vector<Expected> ranks = from_schedules(lanes, 8);
        expect_same(expanded(book, plan), ranks,
                    std::string(to_string(a)) + " " + std::to_string(nodes) + " nodes of " + std::to_string(per) +
                        ", n " + std::to_string(n));
      }
}

TEST(comm_plan, rings_run_their_lanes_at_once_each_around_its_ring) {
  const int p = 8;
  // Two rings: rank order, and its reverse.
  std::vector<int> forward(p), backward(p);
  std::iota(forward.begin(), forward.end(), 0);
  std::reverse_copy(forward.begin(), forward.end(), backward.begin());
  const NbLayout layout{.rings = {forward, backward}};
  for (const std::size_t n : {std::size_t{3}, std::size_t{16}, std::size_t{1001}}) {
    PatternBook book(p, layout);
    const CommPlan plan = allreduce_plan(book, NbAlgorithm::rings, n, 4);
    std::vector<std::vector<std::vector<NbStep>>> lanes;
    for (int r = 0; r < p; ++r) lanes.push_back(nb_lanes(NbAlgorithm::rings, p, r, n, layout));
    expect_same(expanded(book, plan), from_schedules(lanes, 4), "rings n " + std::to_string(n));
  }
  // Each pattern is held once, however many collectives use it.
  PatternBook book(p);
  for (int i = 0; i < 5; ++i) allreduce_plan(book, NbAlgorithm::ring, 800 + i, 4);
  EXPECT_EQ(book.size(), 1u);
  EXPECT_EQ(book.pairs().size(), 16u);  // each message and its way back
}

TEST(comm_plan, each_sharding_gathers_and_reduces_what_the_ranks_schedules_do) {
  const int p = 6;
  std::vector<int> order(p);
  std::iota(order.begin(), order.end(), 0);
  const std::vector<int> other = {0, 2, 4, 1, 3, 5};
  const std::vector<int> node_of = {7, 8, 7, 8, 7, 8};  // 2 nodes of 3, interleaved
  struct Case {
    Sharding sharding;
    std::vector<std::vector<int>> rings;
  };
  for (const Case& c : std::vector<Case>{{Sharding::full, {}},
                                         {Sharding::grad_op, {order, other}},
                                         {Sharding::full, {order, other, order}},
                                         {Sharding::hybrid, {}},
                                         {Sharding::none, {}}})
    for (const std::size_t values : {std::size_t{1}, std::size_t{7}, std::size_t{600}}) {
      PatternBook book(p, {.node_of = node_of, .rings = c.rings});
      std::vector<std::vector<std::vector<NbStep>>> gathers, reduces;
      std::size_t shard = 0, padded = 0;
      for (int r = 0; r < p; ++r) {
        const ShardPlan s = shard_plan(c.sharding, p, r, values, node_of, c.rings);
        gathers.push_back(s.gather), reduces.push_back(s.reduce), shard = s.shard, padded = s.padded;
      }
      const std::string what = std::string(sharding_names[static_cast<std::size_t>(c.sharding)]) + ", " +
                               std::to_string(c.rings.size()) + " rings, " + std::to_string(values) + " values";
      const ShardComm plan = shard_comm_plan(book, c.sharding, values, 2);
      EXPECT_EQ(plan.shard, shard) << what;
      EXPECT_EQ(plan.padded, padded) << what;
      // none with fewer values than ranks runs recursive doubling, whose fold the others wait out.
      const bool folds = c.sharding == Sharding::none && values < static_cast<std::size_t>(p);
      expect_same(expanded(book, plan.gather), from_schedules(gathers, 2), "gather, " + what);
      expect_same(expanded(book, plan.reduce), from_schedules(reduces, 2, folds ? fold_wait(p) : std::function<int(int)>{}),
                  "reduce, " + what);
    }
}

}  // namespace
}  // namespace wulf
