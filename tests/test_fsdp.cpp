// Sharded data parallelism (--strategy fsdp): the shards' collectives' schedules, the errors of
// block with real arithmetic on every engine, the gathers and reductions each sharding makes,
// and time-only runs on a layer net.
#include "comm/shard_schedules.hpp"
#include "util/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

using namespace wulf;
using namespace wulf::testing_support;

namespace {

// Runs the plans' schedules of `ranks` ranks for one unit of n values as the ranks would,
// message by message (no MPI): each rank's gradient i + 1 + rank * 1000 at value i; returns
// each rank's padded gradient buffer after the reduction and its parameters after the gather
// of the shards (each rank's shard filled with its rank + 1 before it).
struct Simulated {
  std::vector<std::vector<double>> reduced, gathered;
  std::vector<ShardPlan> plans;
};

// Every rank's steps run as MPI would run them: a step's send posted when the step begins
// (buffered), the step done once its receive has come, messages between two ranks in order.
void run_steps(const std::vector<std::vector<NbStep>>& steps, std::vector<std::vector<double>>& data) {
  const std::size_t p = steps.size();
  std::map<std::pair<int, int>, std::deque<std::vector<double>>> wire;
  std::vector<std::size_t> at(p, 0);
  std::vector<bool> posted(p, false);
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t r = 0; r < p; ++r) {
      if (at[r] >= steps[r].size()) continue;
      const NbStep& s = steps[r][at[r]];
      const auto me = static_cast<int>(r);
      if (!posted[r]) {
        if (s.to >= 0) {
          const auto from = data[r].begin() + static_cast<std::ptrdiff_t>(s.send_at);
          wire[{me, s.to}].emplace_back(from, from + static_cast<std::ptrdiff_t>(s.send_n));
        }
        posted[r] = true, moved = true;
      }
      if (s.from >= 0) {
        std::deque<std::vector<double>>& q = wire[{s.from, me}];
        if (q.empty()) continue;
        const std::vector<double> m = std::move(q.front());
        q.pop_front();
        ASSERT_EQ(m.size(), s.recv_n);
        for (std::size_t i = 0; i < s.recv_n; ++i) {
          double& into = data[r][s.recv_at + i];
          into = s.add ? into + m[i] : m[i];
        }
      }
      ++at[r], posted[r] = false, moved = true;
    }
  }
  for (std::size_t r = 0; r < p; ++r) ASSERT_EQ(at[r], steps[r].size()) << "rank " << r << " is stuck";
}

Simulated simulate(Sharding sharding, int ranks, std::size_t n, const std::vector<int>& node_of = {},
                   const std::vector<std::vector<int>>& rings = {}) {
  Simulated s;
  for (int r = 0; r < ranks; ++r) s.plans.push_back(shard_plan(sharding, ranks, r, n, node_of, rings));
  const std::size_t padded = s.plans[0].padded;
  for (int r = 0; r < ranks; ++r) {
    std::vector<double> g(padded, 0.0);
    for (std::size_t i = 0; i < n; ++i) g[i] = static_cast<double>(i + 1) + r * 1000.0;
    s.reduced.push_back(g);
    std::vector<double> w(padded, -1.0);
    const ShardPlan& plan = s.plans[static_cast<std::size_t>(r)];
    std::fill_n(w.begin() + static_cast<std::ptrdiff_t>(plan.owned_at), plan.shard, r + 1.0);
    s.gathered.push_back(w);
  }
  // Lane by lane: the lanes move parts of the buffers of their own.
  const std::size_t lanes = s.plans[0].reduce.size();
  for (std::size_t c = 0; c < lanes; ++c) {
    std::vector<std::vector<NbStep>> reduce, gather;
    for (const ShardPlan& plan : s.plans) {
      EXPECT_EQ(plan.reduce.size(), lanes);
      EXPECT_EQ(plan.gather.size(), lanes);
      reduce.push_back(plan.reduce.at(c)), gather.push_back(plan.gather.at(c));
    }
    run_steps(reduce, s.reduced);
    run_steps(gather, s.gathered);
  }
  return s;
}

// Each rank holds the sum over the ranks of its own shard, and, sharded, every rank's shard
// in its place; the shards tile the padded buffer.
void expect_shards_summed_and_gathered(const Simulated& s, bool sharded, int p, std::size_t n) {
  for (int r = 0; r < p; ++r) {
    const ShardPlan& plan = s.plans[static_cast<std::size_t>(r)];
    EXPECT_EQ(plan.padded % static_cast<std::size_t>(sharded ? p : 1), 0u);
    EXPECT_LT(plan.padded - n, static_cast<std::size_t>(sharded ? p : 1));
    EXPECT_EQ(plan.shard, sharded ? plan.padded / static_cast<std::size_t>(p) : n);
    for (std::size_t i = plan.owned_at; i < plan.owned_at + plan.shard; ++i) {
      const double sum = i < n ? p * static_cast<double>(i + 1) + 1000.0 * p * (p - 1) / 2 : 0.0;
      ASSERT_EQ(s.reduced[static_cast<std::size_t>(r)][i], sum) << "rank " << r << " value " << i;
    }
    if (!sharded) continue;
    for (int q = 0; q < p; ++q) {  // rank q's shard in its place on every rank
      const ShardPlan& theirs = s.plans[static_cast<std::size_t>(q)];
      for (std::size_t i = theirs.owned_at; i < theirs.owned_at + theirs.shard; ++i)
        ASSERT_EQ(s.gathered[static_cast<std::size_t>(r)][i], q + 1.0) << "rank " << r << " value " << i;
    }
  }
  if (!sharded) return;
  std::vector<std::size_t> starts;
  for (const ShardPlan& plan : s.plans) starts.push_back(plan.owned_at);
  std::ranges::sort(starts);
  for (std::size_t q = 0; q < starts.size(); ++q) EXPECT_EQ(starts[q], q * s.plans[0].shard);
}

}  // namespace

// Each rank ends the reduce-scatter with the sum over all ranks of its own shard, and the
// allgather gives every rank every shard, for every sharding, count of ranks and unit size
// (padding included: a unit of n values is padded to a multiple of the shard group).
TEST(fsdp, the_shards_reduce_scatter_and_allgather_give_each_rank_its_sum_and_every_shard) {
  for (const Sharding sharding : {Sharding::full, Sharding::grad_op, Sharding::none})
    for (int p = 1; p <= 7; ++p)
      for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{64}, std::size_t{101}}) {
        SCOPED_TRACE(fmt::format("{} p = {} n = {}", sharding_names[static_cast<std::size_t>(sharding)], p, n));
        expect_shards_summed_and_gathered(simulate(sharding, p, n), sharding != Sharding::none && p > 1, p, n);
      }
}

// The rings, as NCCL's channels: each shard cut in a part a ring, each ring any order of the
// ranks (a DGX's: each leaves the server from another GPU), the same sums and shards as the
// one ring, also where a shard has fewer values than rings (empty lanes).
TEST(fsdp, rings_carry_a_part_of_each_shard_around_each_ring) {
  const std::vector<std::vector<std::vector<int>>> ring_sets{
      {{0, 1, 2, 3}, {1, 0, 3, 2}}, {{0, 2, 1, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}},
      {{0, 1, 2, 3, 4, 5}, {2, 1, 0, 5, 4, 3}, {1, 0, 5, 4, 3, 2}, {0, 5, 4, 3, 2, 1}}, {{0}}, {{1, 0}, {0, 1}}};
  for (const Sharding sharding : {Sharding::full, Sharding::grad_op})
    for (const auto& rings : ring_sets)
      for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{64}, std::size_t{101}}) {
        const int p = static_cast<int>(rings[0].size());
        SCOPED_TRACE(fmt::format("{} p = {} rings {} n = {}", sharding_names[static_cast<std::size_t>(sharding)], p,
                                 rings.size(), n));
        const Simulated s = simulate(sharding, p, n, {}, rings);
        EXPECT_EQ(s.plans[0].gather.size(), p > 1 ? rings.size() : 1u);
        expect_shards_summed_and_gathered(s, p > 1, p, n);
      }
  EXPECT_THROW(shard_plan(Sharding::hybrid, 2, 0, 8, std::vector<int>{0, 1}, std::vector<std::vector<int>>{{0, 1}}),
               std::invalid_argument);
  EXPECT_THROW(shard_plan(Sharding::full, 3, 0, 8, {}, std::vector<std::vector<int>>{{0, 1, 1}}), std::invalid_argument);
}

// Hybrid: sharded within each node, each shard's sum made across the nodes too.
TEST(fsdp, hybrid_shards_within_a_node_and_sums_across_the_nodes) {
  for (const std::vector<int>& nodes : std::vector<std::vector<int>>{
           {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 1, 1, 1}, {3, 3, 3, 3}, {0, 1, 2}, {0, 0, 1, 1, 2, 2, 3, 3}})
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
      const int p = static_cast<int>(nodes.size());
      SCOPED_TRACE(fmt::format("nodes {} n = {}", fmt::join(nodes, ","), n));
      const Simulated s = simulate(Sharding::hybrid, p, n, nodes);
      std::map<int, int> per_node;
      for (int node : nodes) ++per_node[node];
      const int local = per_node.begin()->second;
      for (int r = 0; r < p; ++r) {
        const ShardPlan& plan = s.plans[static_cast<std::size_t>(r)];
        EXPECT_EQ(plan.group, local);
        EXPECT_EQ(plan.shard * static_cast<std::size_t>(local), plan.padded);
        for (std::size_t i = plan.owned_at; i < plan.owned_at + plan.shard; ++i) {
          const double sum = i < n ? p * static_cast<double>(i + 1) + 1000.0 * p * (p - 1) / 2 : 0.0;
          ASSERT_EQ(s.reduced[static_cast<std::size_t>(r)][i], sum) << "rank " << r << " value " << i;
        }
        for (int q = 0; q < p; ++q) {  // the node's shards in their places
          if (nodes[static_cast<std::size_t>(q)] != nodes[static_cast<std::size_t>(r)] || local == 1) continue;
          const ShardPlan& theirs = s.plans[static_cast<std::size_t>(q)];
          for (std::size_t i = theirs.owned_at; i < theirs.owned_at + theirs.shard; ++i)
            ASSERT_EQ(s.gathered[static_cast<std::size_t>(r)][i], q + 1.0) << "rank " << r << " value " << i;
        }
      }
    }
  EXPECT_THROW(shard_plan(Sharding::hybrid, 3, 0, 8, std::vector<int>{0, 0, 1}), std::invalid_argument);
}

namespace {

const std::vector<std::string> function_problem{"--problem", "function", "--epochs", "3", "--block", "32"};

}  // namespace

// With two ranks a value's sum is one addition in any order, and the shards' updates are
// block's step value for value: fsdp's errors are block's to the bit on seq, real and sim,
// for every sharding, unit and prefetch. Where --sharding full freed a unit's parameters (NaN
// in the net until they are gathered again) a missed gather would show in the errors.
TEST(fsdp, with_two_ranks_the_errors_are_blocks_to_the_bit_on_every_engine) {
  TestDir dir;
  int runs = 0;
  for (const std::vector<std::string>& engine : std::vector<std::vector<std::string>>{
           {}, {"--engine", "real", "--np", "2"}, {"--engine", "sim", "--np", "2", "--platform", toy4}}) {
    const std::string where = engine.empty() ? "seq" : engine[1];
    const Json block = train_record(dir, "block-" + where, with(function_problem, engine));
    for (const std::vector<std::string>& fsdp : std::vector<std::vector<std::string>>{
             {"--sharding", "full"},
             {"--sharding", "full", "--shard-unit", "2", "--forward-prefetch", "on", "--gather-limit", "0"},
             {"--sharding", "full", "--backward-prefetch", "off"},
             {"--sharding", "grad-op"},
             {"--sharding", "hybrid"},
             {"--sharding", "none"}}) {
      SCOPED_TRACE(where + " " + fmt::format("{}", fmt::join(fsdp, " ")));
      const Json f = train_record(dir, where + "-" + std::to_string(++runs),
                                  with(function_problem, with(engine, with({"--strategy", "fsdp"}, fsdp))));
      expect_same_history(block, f, "test_rmse");
      expect_same_history(block, f, "train_error");
      EXPECT_EQ(f.at("config").at("sharding").get<std::string>(), fsdp[1]);
    }
  }
}

// Adam on the shards, its two moments sharded: block's Adam to the bit with two ranks.
TEST(fsdp, adam_on_the_shards_is_blocks_adam_to_the_bit_with_two_ranks) {
  TestDir dir;
  const std::vector<std::string> adam{"--learning", "adam", "--eta", "0.01"};
  for (const std::vector<std::string>& engine : std::vector<std::vector<std::string>>{
           {}, {"--engine", "real", "--np", "2"}, {"--engine", "sim", "--np", "2", "--platform", toy4}}) {
    const std::string where = engine.empty() ? "seq" : engine[1];
    SCOPED_TRACE(where);
    const Json block = train_record(dir, "block-" + where, with(function_problem, with(engine, adam)));
    const Json f = train_record(dir, "fsdp-" + where,
                                with(function_problem, with(engine, with(adam, {"--strategy", "fsdp"}))));
    expect_same_history(block, f, "test_rmse");
    expect_same_history(block, f, "train_error");
    EXPECT_EQ(f.at("config").at("learning").get<std::string>(), "adam");
    EXPECT_EQ(f.at("config").at("adam").at("beta2").get<double>(), 0.999);
  }
  // Adam trains the function net further than momentum in the same 3 iterations.
  const Json momentum = train_record(dir, "momentum", function_problem);
  const Json adam_seq = train_record(dir, "adam-again", with(function_problem, adam));
  EXPECT_LT(adam_seq.at("history").back().at("test_rmse").get<double>(),
            momentum.at("history").back().at("test_rmse").get<double>());
  expect_train_refused(with(function_problem, with(adam, {"--alpha", "0.5"})), {"--alpha", "--learning adam"});
  expect_train_refused(with(function_problem, {"--adam-beta1", "0.5"}), {"--adam-beta1", "--learning adam"});
  expect_train_refused(with(function_problem, with(adam, {"--adam-beta2", "1"})), {"--adam-beta2"});
}

// With more ranks the ring sums each shard in another order than block's allreduce: the same
// errors within round-off, 1e-12 relative after 3 iterations in double precision.
TEST(fsdp, with_more_ranks_the_errors_agree_with_blocks_within_round_off) {
  TestDir dir;
  for (const char* np : {"3", "4"}) {
    const std::vector<std::string> engine{"--engine", "sim", "--np", np, "--platform", toy4, "--precision", "double"};
    const Json block = train_record(dir, std::string("block-") + np, with(function_problem, engine));
    for (const char* sharding : {"full", "grad-op", "none"}) {
      SCOPED_TRACE(std::string(sharding) + " on " + np);
      const Json f = train_record(dir, std::string(sharding) + np,
                                  with(function_problem, with(engine, {"--strategy", "fsdp", "--sharding", sharding})));
      expect_same_history(block, f, "test_rmse", 1e-12);
      expect_same_history(block, f, "train_error", 1e-12);
    }
  }
}

// The rings carry the same sums in another order: on a DGX A100's 8 GPUs (8 rings, each
// leaving at another GPU) and on this machine's one ring, block's errors within round-off.
TEST(fsdp, the_rings_give_blocks_errors_within_round_off) {
  TestDir dir;
  for (const std::vector<std::string>& engine :
       std::vector<std::vector<std::string>>{{"--engine", "sim", "--np", "8", "--platform", wulf_platform("dgx-a100.xml")},
                                             {"--engine", "real", "--np", "3"}}) {
    SCOPED_TRACE(engine[1]);
    const std::vector<std::string> run = with(engine, {"--precision", "double"});
    const Json block = train_record(dir, "block-" + engine[1], with(function_problem, run));
    for (const char* sharding : {"full", "grad-op"}) {
      const Json f = train_record(dir, std::string(sharding) + "-rings-" + engine[1],
                                  with(function_problem, with(run, {"--strategy", "fsdp", "--sharding", sharding,
                                                                    "--shard-algorithm", "rings"})));
      expect_same_history(block, f, "test_rmse", 1e-12);
      expect_same_history(block, f, "train_error", 1e-12);
    }
  }
}

// The record counts each block's gathers and reductions: the function net 2-128-128-1 has 3
// layers; 1 024 patterns in blocks of 32 are 32 blocks. full gathers each unit for its forward
// and again for its backward, but the last (kept from its forward to its backward): 5 a block;
// grad-op once a unit, 3; none never. Every unit's gradients are reduced once a block.
TEST(fsdp, the_record_counts_each_shardings_gathers_and_reductions) {
  TestDir dir;
  const std::vector<std::string> engine{"--engine", "sim", "--np", "2", "--platform", toy4};
  for (const auto& [sharding, gathers] : std::vector<std::pair<std::string, double>>{
           {"full", 5.0 * 32}, {"grad-op", 3.0 * 32}, {"hybrid", 5.0 * 32}, {"none", 0}}) {
    SCOPED_TRACE(sharding);
    const Json r = train_record(dir, sharding, with(function_problem, with(engine, {"--strategy", "fsdp",
                                                                                   "--sharding", sharding})));
    const Json& last = r.at("history").back();
    EXPECT_EQ(last.at("units").get<double>(), 3.0);
    EXPECT_EQ(last.at("gathers").get<double>(), gathers);
    EXPECT_EQ(last.at("reductions").get<double>(), 3.0 * 32);
    EXPECT_GE(last.at("reduce_wait_s").get<double>(), 0.0);
    EXPECT_EQ(last.contains("eval_gather_s"), sharding != "none");
  }
  // Units of two layers: 2 units, the last kept: 3 gathers a block under full.
  const Json two = train_record(dir, "two", with(function_problem, with(engine, {"--strategy", "fsdp",
                                                                                 "--shard-unit", "2"})));
  EXPECT_EQ(two.at("history").back().at("units").get<double>(), 2.0);
  EXPECT_EQ(two.at("history").back().at("gathers").get<double>(), 3.0 * 32);
}

// Time only, on ResNet-50's layers and 4 simulated ranks: prefetching the gathers hides some
// of them, so an iteration with it takes no longer than one without.
TEST(fsdp, a_layer_net_runs_time_only_and_prefetch_hides_gathers) {
  TestDir dir;
  const std::vector<std::string> args{"--problem", "layers:resnet50", "--numerics", "off", "--epochs", "1",
                                      "--block", "128", "--train-size", "128", "--engine", "sim", "--np", "4",
                                      "--platform", toy4, "--strategy", "fsdp"};
  const Json on = train_record(dir, "on", with(args, {"--forward-prefetch", "on"}));
  const Json off = train_record(dir, "off", with(args, {"--backward-prefetch", "off"}));
  const double t_on = on.at("history").back().at("time_s").get<double>();
  const double t_off = off.at("history").back().at("time_s").get<double>();
  EXPECT_GT(t_off, 0.0);
  EXPECT_LE(t_on, t_off);
  EXPECT_LT(on.at("history").back().at("gather_wait_s").get<double>(),
            off.at("history").back().at("gather_wait_s").get<double>());
  EXPECT_FALSE(on.at("history").back().contains("eval_gather_s"));
}

// --shard-progress-flops: a layer's compute in slices with a progress point between them, as a GPU
// library's streams move the collectives on by themselves; a prefetched gather then goes on
// during the layers' compute instead of only between layers, and is waited for less; the
// slices' compute is the layer's (the iteration's compute the same).
TEST(fsdp, progress_between_slices_moves_the_prefetched_gathers_on_during_the_compute) {
  TestDir dir;
  const std::vector<std::string> args{"--problem", "layers:resnet50", "--numerics", "off", "--epochs", "1",
                                      "--block", "128", "--train-size", "128", "--engine", "sim", "--np", "4",
                                      "--platform", toy4, "--strategy", "fsdp", "--forward-prefetch", "on"};
  const Json layers = train_record(dir, "layers", args);
  const Json slices = train_record(dir, "slices", with(args, {"--shard-progress-flops", "1e8"}));
  EXPECT_LT(slices.at("history").back().at("gather_wait_s").get<double>(),
            layers.at("history").back().at("gather_wait_s").get<double>());
  EXPECT_LT(slices.at("history").back().at("train_s").get<double>(),
            layers.at("history").back().at("train_s").get<double>());
  EXPECT_NEAR(slices.at("phases").at("backward_s").get<double>(), layers.at("phases").at("backward_s").get<double>(),
              1e-9 * layers.at("phases").at("backward_s").get<double>());
}

// --shard-stream one: the collectives one after another in the order issued (one NCCL stream a
// process group). The same messages, so the same errors to the bit on every engine; without
// prefetch a unit's gather waits behind the reduction of the unit before, so the iteration
// takes longer than with each collective on its own, and prefetch, which issues the gather
// before that reduction, gains more.
TEST(fsdp, one_stream_runs_the_collectives_in_the_order_issued) {
  TestDir dir;
  for (const std::vector<std::string>& engine :
       std::vector<std::vector<std::string>>{{"--engine", "sim", "--np", "4", "--platform", toy4},
                                             {"--engine", "real", "--np", "3"}}) {
    SCOPED_TRACE(engine[1]);
    const std::vector<std::string> run = with(function_problem, with(engine, {"--strategy", "fsdp"}));
    const Json many = train_record(dir, "many-" + engine[1], run);
    const Json one = train_record(dir, "one-" + engine[1], with(run, {"--shard-stream", "one"}));
    expect_same_history(many, one, "test_rmse", 0);
    expect_same_history(many, one, "train_error", 0);
    EXPECT_EQ(one.at("config").at("shard_stream").get<std::string>(), "one");
  }
  const std::vector<std::string> args{"--problem", "layers:resnet50", "--numerics", "off", "--epochs", "1",
                                      "--block", "128", "--train-size", "128", "--engine", "sim", "--np", "4",
                                      "--platform", toy4, "--strategy", "fsdp"};
  const auto time = [&](const std::string& name, const std::vector<std::string>& more) {
    return train_record(dir, name, with(args, more)).at("history").back().at("time_s").get<double>();
  };
  const double many_off = time("many-off", {"--backward-prefetch", "off"});
  const double one_off = time("one-off", {"--backward-prefetch", "off", "--shard-stream", "one"});
  const double many_on = time("many-on", {});
  const double one_on = time("one-on", {"--shard-stream", "one"});
  EXPECT_GT(one_off, many_off);
  EXPECT_GT(one_off - one_on, many_off - many_on);
}

// A layer file's units are fsdp's by default: the layers before the first unit line are one
// more; --shard-unit N cuts every N layers instead.
TEST(fsdp, a_layer_files_units_are_the_default_units) {
  TestDir dir;
  const std::string file = dir.write("units.layers",
                                     "wulf-layers 1\nlayer emb embedding 0 10x4\nunit block.0\nlayer a linear 80 4x4 4\n"
                                     "layer b other 4\nunit block.1\nlayer c linear 80 4x4 4\nlayer d other 4\n"
                                     "unit head\nlayer out linear 8 4x10\n");
  const std::vector<std::string> args{"--problem", "layers:" + file, "--numerics", "off", "--epochs", "1",
                                      "--block", "4", "--train-size", "4", "--engine", "sim", "--np", "2",
                                      "--platform", toy4, "--strategy", "fsdp"};
  EXPECT_EQ(train_record(dir, "file", args).at("history").back().at("units").get<double>(), 4.0);
  EXPECT_EQ(train_record(dir, "each", with(args, {"--shard-unit", "1"})).at("history").back().at("units").get<double>(),
            6.0);
  EXPECT_EQ(train_record(dir, "four", with(args, {"--shard-unit", "4"})).at("history").back().at("units").get<double>(),
            2.0);
}

namespace {

// 3 300 parameters in 4 units (the embedding's, two blocks, the head), their activations per
// sample 0, 240, 240 and 10 (each unit's first layer's 0, 40, 40, 10).
constexpr const char* small_llm =
    "wulf-layers 1\nlayer emb embedding 0 100x10\nunit b0\nlayer a linear 1000 activations=40 10x100 100\n"
    "layer b other 10 activations=200\nunit b1\nlayer c linear 1000 activations=40 10x100 100\n"
    "layer d other 10 activations=200\nunit head\nlayer out linear 100 activations=10 10x10\n";

// A platform of two hosts whose devices hold `bytes` each, and with speed16 their 16-bit rate.
std::string two_devices(const TestDir& dir, double bytes, double speed16 = 0) {
  std::string host = fmt::format(R"(<prop id="wulf:memory" value="{:.0f}"/>)", bytes);
  if (speed16 > 0) host += fmt::format(R"(<prop id="wulf:speed16" value="{:.0f}"/>)", speed16);
  return dir.write(fmt::format("two-{:.0f}-{:.0f}.xml", bytes, speed16),
                   "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                   "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
                   "<host id=\"g0\" speed=\"1Tf\">" + host + "</host>\n<host id=\"g1\" speed=\"1Tf\">" + host +
                   "</host>\n<link id=\"l\" bandwidth=\"1MBps\" latency=\"1us\"/>\n"
                   "<route src=\"g0\" dst=\"g1\"><link_ctn id=\"l\"/></route>\n</zone>\n</platform>\n");
}

double device_bytes(const Json& r, const std::string& what_starts) {
  double sum = 0;
  for (const Json& p : r.at("config").at("device_memory").at("parts"))
    if (p.at("what").get<std::string>().rfind(what_starts, 0) == 0) sum += p.at("bytes").get<double>();
  return sum;
}

}  // namespace

// The modelled device's memory per rank, by hand for 2 ranks, blocks of 8 (4 patterns a rank),
// float: block holds w parameters, w gradients, w of momentum and the activations; fsdp full
// the shards (each unit padded to an even count: 500 + 550 + 550 + 50 = 1 650), the 3 largest
// units gathered (--gather-limit 2), the 2 largest units' gradients; Adam's two moments;
// --recompute keeps each unit's input and one unit's whole (90 + 240 values a pattern).
TEST(fsdp, the_device_memory_of_each_strategy_is_its_parts) {
  TestDir dir;
  const std::string file = dir.write("small.layers", small_llm);
  const std::vector<std::string> args{"--problem", "layers:" + file, "--numerics", "off", "--epochs", "1",
                                      "--block", "8", "--train-size", "8", "--engine", "sim", "--np", "2",
                                      "--platform", toy4};
  const Json block = train_record(dir, "block", args);
  EXPECT_EQ(device_bytes(block, "parameters"), 3300.0 * 4);
  EXPECT_EQ(device_bytes(block, "gradients"), 3300.0 * 4);
  EXPECT_EQ(device_bytes(block, "the optimizer's state"), 3300.0 * 4);
  EXPECT_EQ(device_bytes(block, "activations"), 490.0 * 4 * 4);
  EXPECT_EQ(block.at("config").at("device_memory").at("per_rank_bytes").get<double>(), 3 * 13200.0 + 7840);
  const Json overlap = train_record(dir, "overlap", with(args, {"--strategy", "overlap"}));
  EXPECT_EQ(device_bytes(overlap, "the buckets' flat copy"), 3300.0 * 4);
  const Json full = train_record(dir, "full", with(args, {"--strategy", "fsdp"}));
  EXPECT_EQ(device_bytes(full, "parameters, this rank's shards"), 1650.0 * 4);
  EXPECT_EQ(device_bytes(full, "parameters gathered"), (1100.0 + 1100 + 1000) * 4);
  EXPECT_EQ(device_bytes(full, "gradients, this rank's shards"), 1650.0 * 4);
  EXPECT_EQ(device_bytes(full, "gradients of the two largest units"), 2200.0 * 4);
  EXPECT_EQ(device_bytes(full, "the optimizer's state"), 1650.0 * 4);
  const Json adam = train_record(dir, "adam", with(args, {"--strategy", "fsdp", "--learning", "adam"}));
  EXPECT_EQ(device_bytes(adam, "the optimizer's state"), 2 * 1650.0 * 4);
  const Json grad_op = train_record(dir, "grad-op", with(args, {"--strategy", "fsdp", "--sharding", "grad-op"}));
  EXPECT_EQ(device_bytes(grad_op, "parameters gathered"), 3300.0 * 4);
  const Json recompute = train_record(dir, "recompute", with(args, {"--recompute", "on"}));
  EXPECT_EQ(device_bytes(recompute, "activations"), (90.0 + 240) * 4 * 4);
  // --recompute charges every layer's forward a second time.
  EXPECT_NEAR(recompute.at("phases").at("forward_s").get<double>(), 2 * block.at("phases").at("forward_s").get<double>(),
              1e-12);
  EXPECT_TRUE(recompute.at("config").at("recompute").get<bool>());
  EXPECT_FALSE(block.at("config").contains("recompute"));
}

// A platform's wulf:memory holds the run to its devices, before any rank starts: block's 47 440
// bytes a rank are refused on devices of 40 000, with the parts and what makes it fit; fsdp
// with recompute fits them.
TEST(fsdp, a_run_that_does_not_fit_the_devices_is_refused_with_what_makes_it_fit) {
  TestDir dir;
  const std::string file = dir.write("small.layers", small_llm);
  const std::vector<std::string> args{"--problem", "layers:" + file, "--numerics", "off", "--epochs", "1",
                                      "--block", "8", "--train-size", "8", "--engine", "sim", "--np", "2"};
  const std::string small = two_devices(dir, 45000);
  expect_train_refused(with(args, {"--platform", small}),
                       {"does not fit host g0's device", "wulf:memory", "parameters, all w values",
                        "what makes it fit: --strategy fsdp --sharding full"});
  EXPECT_EQ(train_record(dir, "fits", with(args, {"--platform", small, "--strategy", "fsdp", "--sharding", "full",
                                                   "--recompute", "on", "--gather-limit", "1"}))
                .at("config")
                .at("strategy")
                .get<std::string>(),
            "fsdp");
  train_record(dir, "big", with(args, {"--platform", two_devices(dir, 1e6)}));
  expect_train_refused(with(args, {"--platform", two_devices(dir, 0.5)}), {"wulf:memory", "expected the device's memory"});
}

// A time-only run keeps the net and the buckets in SMPI's shared memory, which costs this
// machine its page tables and a block, not its 210 GiB: T5-11B as DDP on a DGX A100 meets the
// 80 GB devices' refusal (Zhao et al.'s out of memory), not this machine's memory check, also
// where the machine is given 2 GiB.
TEST(fsdp, a_time_only_run_too_big_for_the_devices_is_refused_by_them_not_by_this_machines_memory) {
  const MemoryLimit limit(std::string("2147483648"));
  expect_train_refused({"--problem", "layers:t5_11b", "--strategy", "overlap", "--numerics", "off", "--engine", "sim",
                        "--platform", wulf_platform("dgx-a100.xml"), "--np", "8", "--block", "64", "--train-size", "64", "--test-size",
                        "0", "--epochs", "1"},
                       {"does not fit host dgxa100-0-gpu0's device", "80 GiB", "--strategy fsdp --sharding full"});
}

// wulf recommend never proposes what the devices cannot hold: on devices of 45 000 bytes every
// candidate of the small net is skipped saying so; on larger ones they are timed.
TEST(fsdp, recommend_skips_the_candidates_that_do_not_fit_the_devices) {
  TestDir dir;
  const std::string file = dir.write("small.layers", small_llm);
  const std::vector<std::string> args{"recommend", "--problem", "layers:" + file, "--target-epoch-seconds", "1000",
                                      "--train-size", "16", "--np", "1,2", "--blocks", "8", "--strategies", "block"};
  const Outcome small = expect_success(with(args, {"--platform", two_devices(dir, 45000)}),
                                       {"does not fit the devices", "wulf:memory", "no candidate could be timed"});
  EXPECT_FALSE(contains(small.out, "recommended"));
  const Outcome big = expect_success(with(args, {"--platform", two_devices(dir, 1e6)}));
  EXPECT_FALSE(contains(big.out, "does not fit")) << big.out;
  EXPECT_FALSE(contains(big.out, "no candidate could be timed")) << big.out;
}

// --precision bf16 (time only): the parameters and gradients go in 2 bytes, so the messages
// carry half the bytes; the linear layers are charged at the host's 16-bit rate (twice its
// speed here: 2 100 of the 2 120 forward flops a sample are linear), the others at its speed;
// the device holds 2-byte parameters, gradients and activations, and float master weights and
// momentum.
TEST(fsdp, sixteen_bit_precision_halves_the_bytes_sent_and_charges_the_tensor_rate) {
  TestDir dir;
  const std::string file = dir.write("small.layers", small_llm);
  const std::vector<std::string> args{"--problem", "layers:" + file, "--numerics", "off", "--epochs", "1",
                                      "--block", "8", "--train-size", "8", "--engine", "sim", "--np", "2",
                                      "--platform", two_devices(dir, 1e9, 2e12), "--strategy", "fsdp"};
  const Json f = train_record(dir, "float", args);
  const Json h = train_record(dir, "bf16", with(args, {"--precision", "bf16"}));
  EXPECT_EQ(h.at("config").at("precision").get<std::string>(), "bf16");
  EXPECT_NEAR(h.at("phases").at("forward_s").get<double>() / f.at("phases").at("forward_s").get<double>(),
              (2100.0 / 2 + 20) / 2120, 1e-9);
  // An iteration on a 1 MB/s link whose messages' bytes are nearly all of its time (two blocks
  // of 100 100 parameters): about half as long.
  std::string big_text = small_llm;
  for (std::size_t at; (at = big_text.find(" 10x100 ")) != std::string::npos;) big_text.replace(at, 8, " 1000x100 ");
  const std::string big = dir.write("big.layers", big_text);
  std::vector<std::string> big_args = args;
  big_args[1] = "layers:" + big;
  const double ratio =
      train_record(dir, "big-bf16", with(big_args, {"--precision", "bf16"})).at("history").back().at("time_s").get<double>() /
      train_record(dir, "big-float", big_args).at("history").back().at("time_s").get<double>();
  EXPECT_GT(ratio, 0.45);
  EXPECT_LT(ratio, 0.55);
  EXPECT_EQ(device_bytes(h, "parameters, this rank's shards"), 1650.0 * 2);
  EXPECT_EQ(device_bytes(h, "the optimizer's state"), 1650.0 * 4);
  EXPECT_EQ(device_bytes(h, "the master weights in float"), 1650.0 * 4);
  EXPECT_EQ(device_bytes(h, "activations"), 490.0 * 4 * 2);
  const Json again = train_record(dir, "again", {"--rerun", dir.file("bf16.json")});
  expect_same_history(h, again, "time_s");
  expect_train_refused(with(function_problem, {"--precision", "bf16"}), {"--precision bf16", "time only"});
  expect_train_refused({"--problem", "function", "--numerics", "off", "--engine", "sim", "--np", "2", "--platform", toy4,
                        "--strategy", "ppt", "--precision", "fp16"},
                       {"--precision fp16", "--strategy block, overlap or fsdp"});
  expect_train_refused(with(args, {"--precision", "half"}), {"--precision", "bf16 or fp16"});
  std::ifstream good(two_devices(dir, 1e9, 2e12));
  std::string text((std::istreambuf_iterator<char>(good)), std::istreambuf_iterator<char>());
  text.replace(text.find("2000000000000"), 13, "fast");
  const std::vector<std::string> on_bad{"--problem", "layers:" + file, "--numerics", "off", "--engine", "sim",
                                        "--np", "2", "--block", "8", "--train-size", "8",
                                        "--platform", dir.write("bad16.xml", text)};
  expect_train_refused(on_bad, {"bad16.xml", "wulf:speed16 \"fast\"", "16-bit tensor rate"});
}

TEST(fsdp, bad_settings_are_refused_naming_the_option) {
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--sharding", "zero3"}),
                       {"--sharding", "zero3", "full, grad-op, hybrid or none"});
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--forward-prefetch", "yes"}),
                       {"--forward-prefetch", "on or off"});
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--shard-unit", "-1"}), {"--shard-unit"});
  expect_train_refused(with(function_problem, {"--sharding", "full"}), {"--sharding", "fsdp"});
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--learning", "rprop"}), {"rprop"});
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--shard-algorithm", "tree"}),
                       {"--shard-algorithm", "tree", "ring or rings"});
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--shard-stream", "two"}),
                       {"--shard-stream", "two", "many or one"});
  expect_train_refused(with(function_problem, {"--strategy", "fsdp", "--sharding", "hybrid", "--shard-algorithm", "rings"}),
                       {"--shard-algorithm rings", "--sharding hybrid"});
}
