// One training code, two engines: the same strategy under mpirun (wulf-rank-real) and under
// smpirun (wulf-rank-sim) against the sequential run. These tests start real mpirun and
// smpirun jobs through `wulf train --engine ...`.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "engine/launch.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "engine/process.hpp"
#include "data/partition.hpp"
#include "train/trainer.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "test_support.hpp"

#include <algorithm>
#include <map>
#include <thread>
#include <chrono>
#include <filesystem>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace wulf {
namespace {

using namespace testing_support;

// Trains the problem with the given engine options into DIR/NAME.json: the record.
Json run(const TestDir& dir, const std::string& name, const std::vector<std::string>& engine_args,
         const std::vector<std::string>& problem_args) {
  return train_record(dir, name, with(problem_args, engine_args));
}

const std::vector<std::string> function_problem{"--problem", "function", "--epochs", "3", "--block", "16"};

TEST(engines, one_rank_of_either_engine_is_the_sequential_run_bit_for_bit) {
  TestDir dir;
  const Json seq = run(dir, "seq", {}, function_problem);
  const Json real = run(dir, "real", {"--engine", "real", "--np", "1"}, function_problem);
  const Json sim = run(dir, "sim", {"--engine", "sim", "--np", "1", "--platform", toy4}, function_problem);
  expect_same_history(seq, real, "test_rmse");
  expect_same_history(seq, real, "train_error");
  expect_same_history(seq, sim, "test_rmse");
  expect_same_history(seq, sim, "train_error");
  EXPECT_EQ(real.at("config").at("engine").get<std::string>(), "real");
  EXPECT_EQ(sim.at("config").at("engine").get<std::string>(), "sim");
}

// With two ranks every allreduce algorithm adds the same two numbers; with four, the same
// recursive-doubling order on both engines (--allreduce rdb) gives the same bits.
TEST(engines, mpirun_and_smpirun_give_the_same_errors_after_every_iteration) {
  TestDir dir;
  for (const char* np : {"2", "4"}) {
    const std::vector<std::string> common{"--np", np, "--allreduce", "rdb"};
    const Json real = run(dir, std::string("real") + np, with({"--engine", "real"}, common), function_problem);
    const Json sim =
        run(dir, std::string("sim") + np, with({"--engine", "sim", "--platform", toy4}, common), function_problem);
    SCOPED_TRACE(std::string("np ") + np);
    expect_same_history(real, sim, "test_rmse");
    expect_same_history(real, sim, "train_error");
    EXPECT_EQ(real.at("phases").at("ranks").size(), static_cast<std::size_t>(std::stoi(np)));
    // The others as Open MPI 4.1 chooses them for the function net's 68 100 bytes.
    EXPECT_EQ(sim.at("config").at("collective_algorithm").get<std::string>(),
              np == std::string("2")
                  ? "allreduce:rdb, reduce:linear, bcast:bintree, allgather:two-proc, gather:binomial"
                  : "allreduce:rdb, reduce:binomial, bcast:linear, allgather:rdb, gather:linear");
  }
}

// --allreduce default names one algorithm before any rank starts, Open MPI 4.1's choice for
// the ranks and the gradients' size, and both engines run it: their records name the same.
// (Seed 000's function net, 68 100 bytes on 2 ranks: the ring; an 8-6000-8 encoder's 408 032
// bytes on 4 ranks: Rabenseifner's.)
TEST(engines, default_allreduce_is_one_named_algorithm_on_both_engines) {
  TestDir dir;
  for (const auto& [np, problem, algorithm] : std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>{
           {"2", function_problem, "ring"},
           {"4", {"--problem", "encoder:8", "--hidden", "6000", "--epochs", "1"}, "rabenseifner"}}) {
    SCOPED_TRACE("np " + np + " " + algorithm);
    const Json real = run(dir, "real-default" + np, {"--engine", "real", "--np", np}, problem);
    const Json sim = run(dir, "sim-default" + np, {"--engine", "sim", "--np", np, "--platform", toy4}, problem);
    for (const Json* r : {&real, &sim}) {
      EXPECT_EQ(r->at("config").at("collectives").at("allreduce").get<std::string>(), algorithm);
      EXPECT_TRUE(contains(r->at("config").at("allreduce_chosen_by").get<std::string>(),
                           "default, Open MPI 4.1's choice for " + np + " ranks"));
    }
    EXPECT_EQ(real.at("config").at("allreduce_chosen_by"), sim.at("config").at("allreduce_chosen_by"));
  }
}

// Every collective's default names one algorithm before any rank starts, and both engines
// run it: their records name the same, with how each was chosen, and the same errors follow.
// An 8-100-8 encoder's 6 832 bytes on 4 ranks of root: Open MPI's chain reduce and binomial
// broadcast, both wulf's own on both engines; an 8-2000-8's 136 032 on 2 ranks of scatter:
// the linear gather with synchronisation (wulf's own) and the chain broadcast.
TEST(engines, default_collectives_are_the_same_named_algorithms_on_both_engines) {
  TestDir dir;
  const auto encoder = [](const char* hidden, const char* strategy) {
    return std::vector<std::string>{"--problem", "encoder:8", "--hidden", hidden, "--epochs", "2", "--strategy", strategy};
  };
  for (const auto& [np, problem, expected] : std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>{
           {"4", encoder("100", "root"), "reduce:chain, bcast:binomial"},
           {"2", encoder("2000", "scatter"), "bcast:chain, allgather:two-proc, gather:linear-sync"}}) {
    SCOPED_TRACE("np " + np + ": " + expected);
    const Json real = run(dir, "real-colls" + np, {"--engine", "real", "--np", np}, problem);
    const Json sim = run(dir, "sim-colls" + np, {"--engine", "sim", "--np", np, "--platform", toy4}, problem);
    EXPECT_TRUE(contains(real.at("config").at("collective_algorithm").get<std::string>(), expected))
        << real.at("config").at("collective_algorithm");
    EXPECT_EQ(real.at("config").at("collectives"), sim.at("config").at("collectives"));
    for (const char* c : {"allreduce", "reduce", "bcast", "allgather", "gather"}) {
      const std::string key = std::string(c) + "_chosen_by";
      EXPECT_EQ(real.at("config").at(key), sim.at("config").at(key)) << key;
      EXPECT_TRUE(contains(real.at("config").at(key).get<std::string>(), "default, Open MPI 4.1's choice for " + np))
          << real.at("config").at(key);
    }
    expect_same_history(real, sim, "train_error");
  }
}

// Every rank's phases reach the record in rank order (gather_for_record's binomial tree, at
// 13 ranks: subtrees cut short by the end). Rank q trains share_of(1 024, 13, q) patterns of
// the one block: 78 or 79, in a pattern only rank order gives.
TEST(engines, the_record_holds_every_ranks_phases_in_rank_order) {
  TestDir dir;
  const int np = 13;
  const Json r = run(dir, "ranks13", {"--engine", "sim", "--np", std::to_string(np), "--platform",
                                      wulf_platform("messner.xml")},
                     {"--problem", "function", "--epochs", "1", "--block", "1024"});
  const auto& ranks = r.at("phases").at("ranks");
  ASSERT_EQ(ranks.size(), static_cast<std::size_t>(np));
  for (int q = 0; q < np; ++q)
    EXPECT_EQ(ranks[static_cast<std::size_t>(q)].at("forward_patterns").get<std::size_t>(),
              share_of(1024, np, q).count)
        << "rank " << q;
}

TEST(engines, simulated_times_are_deterministic) {
  TestDir dir;
  const std::vector<std::string> sim{"--engine", "sim", "--np", "4", "--platform", toy4};
  const Json a = run(dir, "a", sim, function_problem);
  const Json b = run(dir, "b", sim, function_problem);
  expect_same_history(a, b, "time_s");
  EXPECT_GT(a.at("history").back().at("time_s").get<double>(), 0.0);
  const auto& ra = a.at("phases").at("ranks");
  const auto& rb = b.at("phases").at("ranks");
  for (std::size_t q = 0; q < ra.size(); ++q)
    for (const char* phase : {"forward_s", "backward_s", "update_s", "comm_s", "test_s"})
      EXPECT_EQ(ra[q].at(phase).get<double>(), rb[q].at(phase).get<double>()) << phase << " of rank " << q;
}

TEST(engines, flops_mode_charges_the_flop_count_over_the_host_speed) {
  // One rank, no communication, on a 1 Gflop/s host: the net 2-128-128-1 without bias
  // (w = 16 768, of which 256 in the first layer). Forward of 1 024 patterns at 2w flops
  // each; backward at 2w of weight gradients plus 2 (w - 256) of delta products (none for
  // the input layer); 64 updates at 4w; the test passes at 2w a pattern.
  TestDir dir;
  const Json r = run(dir, "flops", {"--engine", "sim", "--np", "1", "--platform", toy4},
                     {"--problem", "function", "--epochs", "1", "--block", "16", "--bias", "off"});
  const double w = 16768;
  const auto& rank0 = r.at("phases").at("ranks").at(0);
  EXPECT_NEAR(rank0.at("forward_s").get<double>(), 2 * w * 1024 / 1e9, 1e-12);
  EXPECT_NEAR(rank0.at("backward_s").get<double>(), (2 * w + 2 * (w - 256)) * 1024 / 1e9, 1e-12);
  EXPECT_NEAR(rank0.at("update_s").get<double>(), 64 * 4 * w / 1e9, 1e-12);
  // The test set is evaluated before training, after the iteration and at the end (3 x 128
  // patterns), the training set once at the end (1 024).
  EXPECT_NEAR(rank0.at("test_s").get<double>(), (3 * 128 + 1024) * 2 * w / 1e9, 1e-12);
}

// A time-only run (--numerics off, how 196-rank studies are run) charges what the run with
// the arithmetic charges: every kernel, every collective, the check pass of each iteration
// (the training set's, where there is no test set) and the final pass. On a torus, where
// collectives cost differently by where ranks sit, for every strategy whose control flow
// does not depend on the values; cg's line search does (see cg.cpp), as does a target error.
TEST(engines, numerics_off_charges_the_same_time_without_the_arithmetic) {
  TestDir dir;
  const std::vector<std::string> sim{"--engine", "sim", "--np", "4", "--platform", test_platform("torus.xml")};
  for (const char* problem : {"function", "encoder"})  // with a test set, and without one
    for (const char* strategy : {"block", "average", "ppt", "scatter", "root"}) {
      const std::string name = std::string(problem) + "-" + strategy;
      const std::vector<std::string> args{"--problem", problem, "--epochs", "2", "--block", "64", "--strategy", strategy};
      const Json on = run(dir, name + "-on", sim, args);
      const Json off = run(dir, name + "-off", with(sim, {"--numerics", "off"}), args);
      const double t_on = on.at("final").at("time_s").get<double>(), t_off = off.at("final").at("time_s").get<double>();
      EXPECT_NEAR(t_off, t_on, 1e-9 * t_on) << name;
      const auto& h_on = on.at("history");
      const auto& h_off = off.at("history");
      ASSERT_EQ(h_on.size(), h_off.size()) << name;
      for (std::size_t i = 0; i < h_on.size(); ++i)
        EXPECT_NEAR(h_off[i].at("time_s").get<double>(), h_on[i].at("time_s").get<double>(), 1e-9 * t_on)
            << name << " iteration " << i;
      for (const char* key : {"comm_calls", "test_patterns", "forward_patterns", "updates"})
        EXPECT_EQ(off.at("phases").at(key), on.at("phases").at(key)) << name << " " << key;
      EXPECT_TRUE(h_off.back().at("train_error").is_null()) << name;
      EXPECT_FALSE(off.at("config").at("numerics").get<bool>());
    }
  // cg's line search probes as often as the values need, which a time-only run cannot know:
  // given the real run's mean (--cg-probes) it charges the same probes and takes the same
  // time; on its default, the fewest a search takes (--cg-refinements), it takes less.
  for (const char* problem : {"function", "encoder"}) {
    const std::string name = std::string(problem) + "-cg";
    const std::vector<std::string> args{"--problem", problem, "--epochs", "4", "--strategy", "cg"};
    const Json on = run(dir, name + "-on", sim, args);
    const Json& stats = on.at("final").at("strategy");
    const double mean = stats.at("line_search_probes").get<double>() / stats.at("gradient_passes").get<double>();
    ASSERT_GT(mean, 2.0) << name;  // more than the fewest: the default must fall short
    const Json off = run(dir, name + "-off", with(sim, {"--numerics", "off", "--cg-probes", fmt::format("{}", mean)}), args);
    const Json fewest = run(dir, name + "-fewest", with(sim, {"--numerics", "off"}), args);
    const double t_on = on.at("final").at("time_s").get<double>();
    EXPECT_NEAR(off.at("final").at("time_s").get<double>(), t_on, 1e-9 * t_on) << name;
    EXPECT_EQ(off.at("final").at("strategy").at("line_search_probes"), stats.at("line_search_probes")) << name;
    EXPECT_LT(fewest.at("final").at("time_s").get<double>(), t_on) << name;
  }
  expect_train_refused(with(function_problem, {"--strategy", "cg", "--cg-probes", "5"}), {"--cg-probes", "--numerics off"});
}

// Ranks go on the platform's hosts in the order the file declares them (a fat tree's ft-0,
// ft-1, ft-2, ..., not the name order ft-0, ft-1, ft-10), and every record names the host of
// each rank, on every engine.
TEST(engines, ranks_fill_hosts_in_the_platforms_order_and_the_record_names_them) {
  TestDir dir;
  const std::vector<std::string> problem{"--problem", "encoder:16", "--epochs", "1", "--block", "8"};
  const Json sim = run(dir, "sim", {"--engine", "sim", "--np", "4", "--platform", test_platform("fattree.xml")}, problem);
  EXPECT_EQ(sim.at("hosts"), Json::array({"ft-0", "ft-1", "ft-2", "ft-3"}));
  const Json real = run(dir, "real", {"--engine", "real", "--np", "2"}, problem);
  const Json seq = run(dir, "seq", {}, problem);
  ASSERT_EQ(seq.at("hosts").size(), 1u);
  EXPECT_FALSE(seq.at("hosts")[0].get<std::string>().empty());
  EXPECT_EQ(real.at("hosts"), Json::array({seq.at("hosts")[0], seq.at("hosts")[0]}));  // this machine, twice
  // --hosts places each rank itself, from a list or a file, and is checked against the platform.
  const Json placed = run(dir, "placed",
                          {"--engine", "sim", "--np", "3", "--platform", test_platform("fattree.xml"), "--hosts",
                           "ft-10,ft-3,ft-7"},
                          problem);
  EXPECT_EQ(placed.at("hosts"), Json::array({"ft-10", "ft-3", "ft-7"}));
  EXPECT_EQ(placed.at("config").at("placement"), "--hosts");
  const std::string list = dir.write("hosts.txt", "ft-5\n# a comment\n\nft-9\n");
  const Json from_file =
      run(dir, "file", {"--engine", "sim", "--np", "2", "--platform", test_platform("fattree.xml"), "--hosts", list},
          problem);
  EXPECT_EQ(from_file.at("hosts"), Json::array({"ft-5", "ft-9"}));
  const std::vector<std::string> sim2{"train", "--problem", "encoder:16", "--block", "8", "--engine", "sim",
                                      "--np",  "2",       "--platform", test_platform("fattree.xml")};
  expect_refused(with(sim2, {"--hosts", "ft-1,nobody"}), {"no host 'nobody'"});
  expect_refused(with(sim2, {"--hosts", "ft-1"}), {"1 hosts for --np 2"});
  expect_refused(with(sim2, {"--hosts", "ft-1,ft-1"}), {"2 ranks on host ft-1, which has 1 core"});
  // wulf platform info lists the first hosts in that order too: ft-0 .. ft-5, no ft-10.
  const Outcome info = expect_success({"platform", "info", test_platform("fattree.xml")}, {"  ft-5 ("});
  EXPECT_FALSE(contains(info.out, "  ft-10 (")) << info.out;
}

TEST(engines, every_strategy_gives_the_same_errors_under_mpirun_and_smpirun) {
  TestDir dir;
  const std::vector<std::vector<std::string>> strategies{{"--strategy", "average", "--average-interval", "64"},
                                                         {"--strategy", "ppt", "--local-epoch", "64"},
                                                         {"--strategy", "scatter"},
                                                         {"--strategy", "root", "--threads", "2"}};
  for (const auto& s : strategies) {
    SCOPED_TRACE(s[1]);
    const Json a = run(dir, s[1] + "-real", with({"--engine", "real", "--np", "2"}, s), function_problem);
    const Json b =
        run(dir, s[1] + "-sim", with({"--engine", "sim", "--np", "2", "--platform", toy4}, s), function_problem);
    expect_same_history(a, b, "test_rmse");
    expect_same_history(a, b, "train_error");
    EXPECT_EQ(b.at("config").at("strategy").get<std::string>(), s[1]);
  }
}

// Every registered strategy trains on every engine that runs the arithmetic: seq, real
// (mpirun, 2 ranks) and sim (smpirun, 2 ranks), and its record names it. A strategy that
// needs an option to run at all gets it here; any other runs on its defaults, so a new
// strategy is covered without a word.
TEST(engines, every_registered_strategy_runs_on_seq_real_and_sim) {
  TestDir dir;
  for (const Strategy strategy : registered_strategies()) {
    const std::string name(to_string(strategy));
    // Its defaults, and for an option without one (session's --sweep) its example.
    std::vector<std::string> args{"--strategy", name};
    for (const StrategyOption& o : strategy->options)
      if (o.kind == StrategyOption::Kind::text) args.insert(args.end(), {"--" + std::string(o.name), std::string(o.example)});
    for (const std::vector<std::string>& engine : std::vector<std::vector<std::string>>{
             {}, {"--engine", "real", "--np", "2"}, {"--engine", "sim", "--np", "2", "--platform", toy4}}) {
      const std::string where = engine.empty() ? "seq" : engine[1];
      SCOPED_TRACE(name + " on " + where);
      const Json r = run(dir, name + "-" + where, with(engine, args), function_problem);
      EXPECT_EQ(r.at("config").at("strategy").get<std::string>(), name);
      EXPECT_EQ(r.at("config").at("engine").get<std::string>(), where);
      if (strategy->sessions)
        EXPECT_EQ(r.at("sessions").size(), 4u);  // the example's sweep: 2 values of eta x 2 of alpha
      else
        EXPECT_EQ(r.at("history").size(), 4u);  // the untrained net and 3 iterations
    }
  }
}

TEST(engines, block_step_reaches_every_rank_of_block_average_and_ppt) {
  // Summed updates at eta are mean updates at b eta (e eta for PPT's local epoch): with b
  // and e powers of two the scaling is exact, so the errors match bit for bit.
  TestDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> strategies{
      {{"--strategy", "block"}, "14.4"},
      {{"--strategy", "average", "--average-interval", "64"}, "14.4"},
      {{"--strategy", "ppt", "--local-epoch", "64"}, "57.6"}};
  for (const auto& [s, scaled_eta] : strategies) {
    SCOPED_TRACE(s[1]);
    const std::vector<std::string> sim{"--engine", "sim", "--np", "2", "--platform", toy4};
    const Json a =
        run(dir, s[1] + "-sum", with(sim, with({"--block-step", "sum", "--eta", "0.9"}, s)), function_problem);
    const Json b =
        run(dir, s[1] + "-mean", with(sim, with({"--block-step", "mean", "--eta", scaled_eta}, s)), function_problem);
    expect_same_history(a, b, "test_rmse");
    EXPECT_EQ(a.at("config").at("block_step").get<std::string>(), "sum");
    EXPECT_EQ(b.at("config").at("block_step").get<std::string>(), "mean");
  }
}

TEST(engines, one_rank_of_average_scatter_and_root_is_the_sequential_run) {
  TestDir dir;
  const Json seq = run(dir, "seq", {}, function_problem);
  for (const char* s : {"average", "scatter", "root"}) {
    SCOPED_TRACE(s);
    const Json one = run(dir, s, {"--engine", "real", "--np", "1", "--strategy", s}, function_problem);
    expect_same_history(seq, one, "test_rmse");
  }
}

// RPROP on every engine and every strategy that has it: the gradient of the whole set,
// summed over 2 ranks, is the sequential one to rounding, and RPROP follows only its signs,
// so the errors agree with the sequential run's to 1e-9 (double) and mpirun's with
// smpirun's to the bit (two ranks add the same two numbers).
TEST(engines, rprop_runs_on_every_engine_with_block_scatter_and_root) {
  TestDir dir;
  const std::vector<std::string> rprop{"--problem", "function", "--epochs", "8", "--learning", "rprop",
                                       "--precision", "double"};
  const Json seq = run(dir, "seq", {}, rprop);
  EXPECT_EQ(seq.at("config").at("learning").get<std::string>(), "rprop");
  EXPECT_EQ(seq.at("config").at("rprop").at("increase").get<double>(), 1.2);
  EXPECT_EQ(seq.at("config").at("block").get<long long>(), seq.at("config").at("train_patterns").get<long long>());
  for (const char* s : {"block", "scatter", "root"}) {
    SCOPED_TRACE(s);
    const Json real = run(dir, std::string("real-") + s, {"--engine", "real", "--np", "2", "--strategy", s}, rprop);
    const Json sim = run(dir, std::string("sim-") + s,
                         {"--engine", "sim", "--np", "2", "--platform", toy4, "--strategy", s}, rprop);
    expect_same_history(seq, real, "test_rmse", 1e-9);
    expect_same_history(real, sim, "test_rmse");
    expect_same_history(real, sim, "train_error");
  }
  // The strategies without it, and the options RPROP has no use for, are refused.
  expect_train_refused(with(rprop, {"--strategy", "average"}), {"--learning rprop", "average"});
  expect_train_refused(with(rprop, {"--eta", "0.3"}), {"--eta", "--learning rprop"});
  expect_train_refused(with(function_problem, {"--rprop-increase", "1.3"}), {"--rprop-increase", "--learning rprop"});
  expect_train_refused(with(rprop, {"--rprop-decrease", "1.5"}), {"--rprop-decrease: 1.5 must be less than 1"});
}

TEST(engines, ppt_stops_at_the_same_round_on_both_engines) {
  TestDir dir;
  const std::vector<std::string> parity{"--problem", "parity:4", "--strategy", "ppt", "--local-epoch", "4",
                                        "--error", "class", "--target-error", "0", "--epochs", "5000"};
  const Json a = run(dir, "real", {"--engine", "real", "--np", "4"}, parity);
  const Json b = run(dir, "sim", {"--engine", "sim", "--np", "4", "--platform", toy4}, parity);
  expect_stopped(a, "target_reached", {"confirmed"});
  EXPECT_EQ(a.at("final").at("reason").get<std::string>().substr(0, 40),
            b.at("final").at("reason").get<std::string>().substr(0, 40));
  EXPECT_EQ(a.at("final").at("iterations").get<double>(), b.at("final").at("iterations").get<double>());
  EXPECT_EQ(b.at("final").at("train").at("class_errors").get<double>(), 0);
  // PPT's own account: its rounds and their time, apart from wulf's checks between
  // iterations, so less than the run's time; the allgather is part of every round.
  const Json& ppt = b.at("final").at("strategy");
  const double rounds = ppt.at("rounds").get<double>(), rounds_s = ppt.at("rounds_s").get<double>();
  EXPECT_EQ(ppt.at("rounds_per_iteration").get<double>(), 1);  // 16 patterns = 4 ranks x 4
  EXPECT_GT(rounds, 0);
  EXPECT_LE(rounds, b.at("final").at("iterations").get<double>() * ppt.at("rounds_per_iteration").get<double>());
  EXPECT_GT(ppt.at("allgather_s").get<double>(), 0);
  EXPECT_LT(ppt.at("allgather_s").get<double>(), rounds_s);
  EXPECT_GE(ppt.at("checks").get<double>(), 1);
  EXPECT_LT(rounds_s + ppt.at("check_s").get<double>(), b.at("final").at("time_s").get<double>());
  EXPECT_EQ(a.at("final").at("strategy").at("rounds").get<double>(), rounds);
}

TEST(engines, ppt_rounds_per_iteration_changes_the_records_not_the_training) {
  // The same rounds in iterations of 1 or of 25: the same stop, round and weights; wulf's
  // bookkeeping after each iteration leaves the ranks out of step, so with fewer
  // iterations the rounds take less simulated time.
  TestDir dir;
  const std::vector<std::string> parity{"--problem", "parity:4", "--strategy", "ppt", "--local-epoch", "4",
                                        "--error", "class", "--target-error", "0", "--epochs", "5000"};
  // redbcast: a reduce to rank 0 and a broadcast leave the ranks out of step (recursive
  // doubling, Open MPI's choice for this net, leaves them in step and the times equal).
  const std::vector<std::string> sim{"--engine", "sim", "--np", "4", "--platform", toy4, "--allreduce", "redbcast"};
  const Json one = run(dir, "r1", sim, parity),
             many = run(dir, "r25", with(sim, {"--rounds-per-iteration", "25"}), parity);
  const Json &a = one.at("final"), &b = many.at("final");
  EXPECT_EQ(b.at("strategy").at("rounds_per_iteration").get<double>(), 25);
  EXPECT_EQ(a.at("strategy").at("rounds").get<double>(), b.at("strategy").at("rounds").get<double>());
  EXPECT_EQ(a.at("train").at("mse").get<double>(), b.at("train").at("mse").get<double>());
  const std::string round = "round " + std::to_string(static_cast<long>(a.at("strategy").at("rounds").get<double>()));
  EXPECT_TRUE(contains(b.at("reason").get<std::string>(), round)) << b.at("reason").get<std::string>();
  EXPECT_LT(b.at("strategy").at("rounds_s").get<double>(), a.at("strategy").at("rounds_s").get<double>());
  EXPECT_EQ(many.at("config").at("rounds_per_iteration").get<double>(), 25);
}

TEST(engines, sim_redbcast_reduces_and_broadcasts_by_the_runs_algorithms) {
  // Open MPI's redbcast calls the communicator's reduce and bcast, so mpirun runs the forced
  // --reduce and --bcast; SMPI's would run its own default reduce where --reduce is wulf's
  // own. Under sim wulf composes it of the run's two: a chain of 4 takes 3 hops to the root
  // where the in-order binomial tree takes 2, so the chain's iterations take longer (SMPI's
  // default reduce gave both the same times to the bit). The sums are the same to rounding.
  TestDir dir;
  std::vector<Json> records;
  for (const char* reduce : {"chain", "binomial"})
    records.push_back(run(dir, reduce,
                          {"--engine", "sim", "--np", "4", "--platform", toy4, "--allreduce", "redbcast", "--reduce",
                           reduce, "--bcast", "binomial", "--precision", "double"},
                          function_problem));
  const Json &chain = records[0].at("final"), &binomial = records[1].at("final");
  EXPECT_GT(chain.at("time_s").get<double>(), 1.05 * binomial.at("time_s").get<double>());
  EXPECT_NEAR(chain.at("train_rmse").get<double>(), binomial.at("train_rmse").get<double>(), 1e-12);
  for (const Json& r : records)
    EXPECT_TRUE(contains(r.at("config").at("collective_algorithm").get<std::string>(), "allreduce:redbcast"));
}

TEST(engines, root_and_scatter_account_for_their_own_iterations) {
  // final.strategy.iterations_s: the iterations' own time, without wulf's test pass and
  // error allreduce after each, so less than the run's time but most of it here.
  TestDir dir;
  for (const char* s : {"root", "scatter"}) {
    SCOPED_TRACE(s);
    const Json r = run(dir, s, {"--engine", "sim", "--np", "2", "--platform", toy4, "--strategy", s}, function_problem);
    const double own = r.at("final").at("strategy").at("iterations_s").get<double>();
    const double all = r.at("final").at("time_s").get<double>();
    EXPECT_GT(own, 0.5 * all);
    EXPECT_LT(own, all);
  }
}

TEST(engines, root_threads_add_up_the_same_gradient) {
  // Two threads sum the same patterns' gradients in another order: equal to rounding.
  TestDir dir;
  const std::vector<std::string> problem{"--problem", "function", "--epochs", "3", "--block", "16", "--precision",
                                         "double"};
  const Json one = run(dir, "t1", {"--engine", "real", "--np", "1", "--strategy", "root", "--threads", "1"}, problem);
  const Json two = run(dir, "t2", {"--engine", "real", "--np", "1", "--strategy", "root", "--threads", "2"}, problem);
  const auto& h1 = one.at("history");
  const auto& h2 = two.at("history");
  ASSERT_EQ(h1.size(), h2.size());
  for (std::size_t i = 0; i < h1.size(); ++i)
    EXPECT_NEAR(h1[i].at("test_rmse").get<double>(), h2[i].at("test_rmse").get<double>(), 1e-10) << i;
}

TEST(engines, session_runs_every_point_of_the_sweep_once_over_the_ranks) {
  TestDir dir;
  const Json r = run(dir, "sessions",
                     {"--engine", "sim", "--np", "3", "--platform", toy4, "--strategy", "session", "--sweep",
                      "eta=0.5,2;alpha=0.5,0.9"},
                     {"--problem", "encoder:8", "--epochs", "20"});
  const auto& table = r.at("sessions");
  ASSERT_EQ(table.size(), 4u);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].at("index").get<double>(), static_cast<double>(i));
    EXPECT_EQ(table[i].at("rank").get<double>(), static_cast<double>(i % 3));
    EXPECT_EQ(table[i].at("iterations").get<double>(), 20);
  }
  EXPECT_EQ(table[3].at("eta").get<double>(), 2);
  EXPECT_EQ(table[3].at("alpha").get<double>(), 0.9);
  // Sessions 0 and 3 ran on rank 0, one after the other: the same sequential session on
  // its own gives session 0's result.
  const Json alone = run(dir, "alone", {}, {"--problem", "encoder:8", "--epochs", "20", "--eta", "0.5", "--alpha", "0.5"});
  EXPECT_EQ(table[0].at("train_error").get<double>(),
            alone.at("final").at("train").at("class_errors").get<double>() / 8);
}

TEST(engines, calibrated_mode_charges_the_profiles_phase_times) {
  // Seed 000's eq. (3) for one iteration of the function example on one rank, with the
  // profile's Bat Cave constants: (n + m) Tf + n Tb + n/b (Tu + Tm) + m Ts + To. (The
  // evaluation of the untrained net, iteration 0, comes before the clock starts.)
  TestDir dir;
  const std::string profile = test_platform("example.profile");
  const Json r = run(dir, "cal", {"--engine", "sim", "--np", "1", "--platform", toy4, "--compute", "calibrated",
                                  "--profile", profile},
                     {"--problem", "function", "--epochs", "1", "--block", "16"});
  const double n = 1024, m = 128, b = 16;
  const double eq3 = (n + m) * 0.22e-3 + n * 0.41e-3 + n / b * (0.07e-3 + 0.04e-3) + m * 0.001e-3 + 30.9e-3;
  const auto& h = r.at("history");
  EXPECT_NEAR(h.at(1).at("time_s").get<double>(), eq3, 1e-9);
  EXPECT_EQ(r.at("config").at("compute").get<std::string>(), "calibrated");
}

TEST(engines, measured_mode_charges_the_kernels_wall_time_scaled) {
  TestDir dir;
  const std::vector<std::string> problem{"--problem", "function", "--epochs", "2", "--block", "16"};
  const Json a = run(dir, "m1", {"--engine", "sim", "--np", "2", "--platform", toy4, "--compute", "measured"}, problem);
  const Json b = run(dir, "m1000", {"--engine", "sim", "--np", "2", "--platform", toy4, "--compute", "measured",
                                    "--measured-scale", "1000"}, problem);
  const double fa = a.at("phases").at("forward_s").get<double>(), fb = b.at("phases").at("forward_s").get<double>();
  EXPECT_GT(fa, 0.0);
  // A thousand times the kernel's time here: far more than run-to-run noise can explain.
  EXPECT_GT(fb, 100 * fa);
}

// --engine real --compute calibrated: each kernel sleeps to its profile's time (D = 1), here
// instead of the arithmetic. Every phase then lasts at least its charge, and the record
// holds each rank's ledger: real seconds beside charged seconds.
TEST(engines, real_engine_pads_calibrated_kernels_to_the_profiles_times) {
  TestDir dir;
  const Json r = run(dir, "padded", {"--engine", "real", "--np", "2", "--compute", "calibrated", "--profile",
                                     test_platform("example.profile"), "--numerics", "off"},
                     {"--problem", "function", "--epochs", "1", "--block", "16"});
  EXPECT_EQ(r.at("config").at("compute").get<std::string>(), "calibrated");
  const Json& ranks = r.at("phases").at("ranks");
  ASSERT_EQ(ranks.size(), 2u);
  for (std::size_t q = 0; q < ranks.size(); ++q) {
    const Json& budget = ranks[q].at("compute_budget");
    for (const char* phase : {"forward", "backward", "update", "test"}) {
      EXPECT_GT(budget.at(phase).at("kernels").get<long long>(), 0) << phase << " of rank " << q;
      // Sleeping can only be late: lower bounds.
      EXPECT_GE(ranks[q].at(std::string(phase) + "_s").get<double>(), budget.at(phase).at("charged_s").get<double>())
          << phase << " of rank " << q;
    }
  }
  // The training kernels and To of rank 0 all lie inside the run's clock (the test passes
  // before it starts and after it ends do not).
  const Json& rank0 = ranks[0].at("compute_budget");
  double charged = 0;
  for (const char* what : {"forward", "backward", "update", "iteration_overhead"})
    charged += rank0.at(what).at("charged_s").get<double>();
  // Seed 000's eq. (3) for rank 0's 512 patterns, the 64 updates of blocks of 16 and To: 0.36 s.
  EXPECT_NEAR(charged, 512 * (0.22e-3 + 0.41e-3) + 64 * 0.07e-3 + 30.9e-3, 1e-9);
  EXPECT_GE(r.at("final").at("time_s").get<double>(), charged);
  EXPECT_TRUE(r.at("dilation_too_small").is_boolean());
  EXPECT_EQ(r.at("compute_budget").at("dilation").get<double>(), 1.0);
}

// A profile far faster than this machine: the arithmetic overruns every budget, which the
// run says on its error stream and in the record.
TEST(engines, real_engine_says_when_the_arithmetic_takes_longer_than_the_profile) {
  TestDir dir;
  const std::string fast = dir.write("fast.profile", "Tf_ms = 1e-9\nTb_ms = 1e-9\nTu_ms = 1e-9\nTm_ms = 0\n"
                                                     "Ts_ms = 0\nTo_ms = 0\n");
  // The ranks print on wulf's own standard error: wulf runs as a program of its own here.
  const std::string out = dir.file("fast.json");
  std::string printed, err;
  ASSERT_EQ(run_program_captured({std::string(WULF_BINARY_DIR) + "/wulf", "train", "--quiet", "--problem", "function",
                                  "--epochs", "1", "--block", "16", "--engine", "real", "--np", "2", "--compute",
                                  "calibrated", "--profile", fast, "--out", out},
                                 printed, err),
            0)
      << err;
  EXPECT_TRUE(contains(err, "wulf train: warning: ")) << err;
  EXPECT_TRUE(contains(err, "kernels took longer than their budget (worst: ")) << err;
  EXPECT_TRUE(contains(err, "the profile's times are shorter than this machine's arithmetic")) << err;
  const Json r = read_json_file(out);
  EXPECT_TRUE(r.at("dilation_too_small").get<bool>());
  EXPECT_GT(r.at("compute_budget").at("overruns").get<long long>(), 0);
  EXPECT_GT(r.at("compute_budget").at("worst").at("ratio").get<double>(), 1.0);
}

// The processes below pid (its children, theirs, ...) that are alive, from /proc: each
// process's parent is the fourth field of /proc/PID/stat, its state the third.
std::vector<pid_t> live_descendants(pid_t pid) {
  std::map<pid_t, std::pair<pid_t, char>> parent_state;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    if (rest >> state >> parent) parent_state[std::stoi(name)] = {parent, state};
  }
  std::vector<pid_t> found, frontier{pid};
  while (!frontier.empty()) {
    const pid_t p = frontier.back();
    frontier.pop_back();
    for (const auto& [child, ps] : parent_state)
      if (ps.first == p) {
        frontier.push_back(child);
        if (ps.second != 'Z' && ps.second != 'X') found.push_back(child);
      }
  }
  return found;
}

std::string comm_of(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

// Only the wulf that started a run writes its record. Killed with SIGKILL, wulf leaves
// nothing running that could write --out later: smpirun and smpimain end with it. Killing
// smpirun (the sh that runs the script) with SIGKILL ends smpimain too, and wulf says the
// run failed. The record already at --out stays as it was.
TEST(engines, a_killed_wulf_or_smpirun_leaves_no_process_and_no_record) {
  TestDir dir;
  for (const std::string victim : {"wulf", "smpirun"}) {
    SCOPED_TRACE(victim);
    const std::string out = dir.write("record-" + victim + ".json", "old\n");
    const std::vector<std::string> argv{std::string(WULF_BINARY_DIR) + "/wulf", "train", "--problem", "digits",
                                        "--engine", "sim", "--np", "4", "--platform", test_platform("flat64.xml"),
                                        "--epochs", "200", "--quiet", "--out", out};
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t wulf = ::fork();
    ASSERT_GE(wulf, 0);
    if (wulf == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1), ::dup2(null, 2);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    // Wait for the simulation to run: smpimain below wulf.
    std::vector<pid_t> running;
    pid_t smpirun = 0;
    for (int tries = 0; tries < 200; ++tries) {
      running = live_descendants(wulf);
      const auto main = std::find_if(running.begin(), running.end(), [](pid_t p) { return comm_of(p) == "smpimain"; });
      if (main != running.end()) {
        for (const pid_t p : running)
          if (p != *main && comm_of(p) != "smpimain") smpirun = p;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE(smpirun, 0) << "smpirun and smpimain did not start";
    ::kill(victim == "wulf" ? wulf : smpirun, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(wulf, &status, 0), wulf);
    if (victim == "wulf") EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    else EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;
    // Everything it started ends at once (PR_SET_PDEATHSIG), well before the 200 epochs.
    std::vector<pid_t> left = running;
    for (int tries = 0; tries < 100 && !left.empty(); ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      left.erase(std::remove_if(left.begin(), left.end(),
                                [](pid_t p) {
                                  std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
                                  std::string text;
                                  std::getline(stat, text);
                                  const std::size_t close = text.rfind(')');
                                  return close == std::string::npos || text[close + 2] == 'Z';
                                }),
                 left.end());
    }
    EXPECT_TRUE(left.empty()) << left.size() << " processes of the run still running";
    EXPECT_EQ(read_text_file(out, "the record"), "old\n");
  }
}

TEST(engines, wulf_started_inside_a_users_mpirun_becomes_its_ranks) {
  TestDir dir;
  const MpiSessionDir session;  // a user's mpirun, but apart from concurrent tests' (engine/launch.hpp)
  std::vector<std::string> cmd{find_program("mpirun"), "-np", "2", "--mca", "orte_tmpdir_base", session.str()};
  if (::geteuid() == 0) cmd.push_back("--allow-run-as-root");
  cmd.insert(cmd.end(), {std::string(WULF_BINARY_DIR) + "/wulf", "train", "--problem", "function", "--epochs", "3",
                         "--block", "16", "--engine", "real", "--np", "2", "--quiet", "--out", dir.file("inside.json")});
  std::string out, err;
  ASSERT_EQ(run_program_captured(cmd, out, err), 0) << err;
  const Json inside = read_json_file(dir.file("inside.json"));
  const Json launched = run(dir, "launched", {"--engine", "real", "--np", "2"}, function_problem);
  expect_same_history(inside, launched, "test_rmse");
}

// `mpirun -np 2 wulf train ...` as MPI users type it, with no --engine: wulf becomes the two
// ranks (one record, np 2), not two separate trainings writing one record; an engine that
// cannot be the launcher's ranks is refused with what to type.
TEST(engines, wulf_under_a_users_mpirun_without_engine_becomes_its_ranks_or_says_what_to_type) {
  TestDir dir;
  const MpiSessionDir session;
  std::vector<std::string> mpirun{find_program("mpirun"), "-np", "2", "--oversubscribe", "--mca", "orte_tmpdir_base",
                                  session.str()};
  if (::geteuid() == 0) mpirun.push_back("--allow-run-as-root");
  std::vector<std::string> cmd = mpirun;
  cmd.insert(cmd.end(), {std::string(WULF_BINARY_DIR) + "/wulf", "train", "--problem", "encoder:8", "--epochs", "2",
                         "--block", "4", "--quiet", "--out", dir.file("plain.json")});
  std::string out, err;
  ASSERT_EQ(run_program_captured(cmd, out, err), 0) << err;
  const Json r = read_json_file(dir.file("plain.json"));
  EXPECT_EQ(r.at("config").at("engine"), "real");
  EXPECT_EQ(r.at("config").at("np"), 2);
  EXPECT_EQ(r.at("hosts").size(), 2u);
  cmd = mpirun;
  cmd.insert(cmd.end(), {std::string(WULF_BINARY_DIR) + "/wulf", "train", "--problem", "encoder:8", "--engine", "seq"});
  EXPECT_NE(run_program_captured(cmd, out, err), 0);
  EXPECT_TRUE(contains(err, "started by an MPI launcher as one of 2 processes: --engine seq")) << err;
}

// wulf's own mpirun can span machines: --hostfile and --mpirun-args reach it (a hostfile of
// this machine and a transport choice here), the record keeps both, and both are refused
// where they mean nothing or the file is not there.
TEST(engines, real_engine_takes_a_hostfile_and_mpirun_arguments) {
  TestDir dir;
  const std::string hostfile = dir.write("hosts", "localhost slots=2\n");
  const Json r = run(dir, "spanned",
                     {"--engine", "real", "--np", "2", "--hostfile", hostfile, "--mpirun-args", "--mca btl self,vader"},
                     {"--problem", "encoder:8", "--epochs", "1", "--block", "4"});
  EXPECT_EQ(r.at("config").at("hostfile"), hostfile);
  EXPECT_EQ(r.at("config").at("mpirun_args"), Json::array({"--mca", "btl", "self,vader"}));
  EXPECT_EQ(r.at("hosts").size(), 2u);
  // An argument mpirun refuses fails the run, with mpirun's code.
  const Outcome bad = wulf({"train", "--problem", "encoder:8", "--epochs", "1", "--block", "4", "--engine", "real",
                            "--np", "2", "--mpirun-args", "--no-such-mpirun-flag"});
  EXPECT_NE(bad.code, exit_ok);
  expect_train_refused({"--problem", "encoder:8", "--engine", "real", "--np", "2", "--hostfile", dir.file("none")},
                       {"--hostfile", "none"});
  expect_train_refused({"--problem", "encoder:8", "--hostfile", hostfile}, {"--hostfile is for --engine real"});
}

class engines_bad_input : public ::testing::Test {
 protected:
  TestDir dir_;
};

TEST_F(engines_bad_input, a_block_smaller_than_the_ranks) {
  expect_train_refused({"--problem", "encoder:8", "--block", "2", "--engine", "sim", "--np", "4", "--platform", toy4},
                       {"--block", "2", "4 ranks"});
}

TEST_F(engines_bad_input, more_ranks_than_the_platform_has_cores) {
  expect_train_refused({"--problem", "encoder:8", "--block", "8", "--engine", "sim", "--np", "5", "--platform", toy4},
                       {"--np 5", "only 4 cores", "toy4.xml"});
}

TEST_F(engines_bad_input, a_missing_or_invalid_platform_file) {
  expect_train_refused({"--problem", "encoder:8", "--engine", "sim", "--platform", dir_.file("none.xml")},
                       {"none.xml", "no such file"});
  const std::string bad = dir_.write("bad.xml", "<platform version='4.1'><zone id='z'");
  expect_train_refused({"--problem", "encoder:8", "--engine", "sim", "--platform", bad},
                       {bad, "SimGrid cannot load it"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "sim"}, {"--platform"});
}

TEST_F(engines_bad_input, an_unknown_strategy_collective_engine_or_compute_mode) {
  expect_train_refused({"--problem", "encoder:8", "--engine", "real", "--strategy", "magic"},
                       {"unknown strategy 'magic'"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "real", "--allreduce", "tree"},
                       {"unknown algorithm 'tree'"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "cloud"}, {"unknown engine 'cloud'"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "sim", "--platform", toy4, "--compute", "guess"},
                       {"--compute", "guess"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "real", "--compute", "flops"},
                       {"--compute flops on --engine real", "--engine testbed --platform FILE"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "real", "--numerics", "off"}, {"--numerics off"});
  expect_train_refused({"--problem", "encoder:8", "--np", "2"}, {"--np 2", "--engine real or sim"});
  expect_train_refused({"--problem", "encoder:8", "--engine", "sim", "--platform", toy4, "--compute", "calibrated"},
                       {"--profile"});
}

TEST_F(engines_bad_input, a_profile_of_another_problem_precision_or_net) {
  const std::vector<std::string> sim{"--engine", "sim", "--platform", toy4, "--compute", "calibrated", "--profile"};
  auto with = [&](std::vector<std::string> args, const std::string& profile) {
    args.insert(args.end(), sim.begin(), sim.end());
    args.push_back(profile);
    return args;
  };
  // Seed 000's Bat Cave function profile: problem function, w = 16 768 (no bias).
  expect_train_refused(with({"--problem", "encoder:8", "--bias", "off"}, "batcave-function"),
                       {"batcave-function", "problem function", "encoder:8"});
  expect_train_refused(with({"--problem", "function"}, "batcave-function"), {"16768 weights", "17025", "bias on"});
  const std::string f = dir_.write("f.profile",
                                   "Tf_ms=1\nTb_ms=1\nTu_ms=1\nTm_ms=1\nTs_ms=1\nTo_ms=1\nproblem = encoder:8\n"
                                   "precision = double\n");
  expect_train_refused(with({"--problem", "encoder:8", "--precision", "float"}, f), {f, "double precision", "float"});
  expect_train_refused(with({"--problem", "encoder:16", "--precision", "double"}, f),
                       {"problem encoder:8", "encoder:16"});
  const std::string bad = dir_.write("g.profile", "Tf_ms=1\nTb_ms=1\nTu_ms=1\nTm_ms=1\nTs_ms=1\nTo_ms=1\nprecision = half\n");
  expect_train_refused(with({"--problem", "encoder:8"}, bad), {bad, "half"});
}

TEST_F(engines_bad_input, ppt_on_jocr_at_196_simulated_ranks_is_refused_by_the_memory_estimate_before_any_rank_starts) {
  // A machine of 64 GiB. The platform file does not exist: the refusal comes before anything
  // reads it, and a wulf that did not refuse fails on it instead of starting 196 ranks that
  // allgather 250 GiB.
  const MemoryLimit limit(std::to_string(64LL << 30));
  expect_train_refused({"--problem", "chars:3203", "--train-size", "163480", "--strategy", "ppt", "--engine", "sim",
                        "--np", "196", "--platform", dir_.file("bunyip.xml"), "--numerics", "off"},
                       {"memory estimate is 249.6 GiB", "smpirun process of 196 simulated ranks", "64.0 GiB",
                        "WULF_MEMORY_LIMIT_BYTES", "PPT's allgather buffers", "249.3 GiB", "fewer ranks (--np)",
                        "--strategy block", "--force"});
}

TEST_F(engines_bad_input, a_run_that_fits_runs_and_force_starts_one_the_estimate_refuses) {
  const std::vector<std::string> seq{"--problem", "encoder:8", "--epochs", "1"};
  // This machine's MemAvailable holds it; the record keeps the estimate.
  const Json fits = train_record(dir_, "fits", seq);
  const Json& estimate = fits.at("config").at("memory_estimate");
  EXPECT_GT(estimate.at("machine_bytes").get<double>(), 1e6);
  EXPECT_EQ(estimate.at("where").get<std::string>(), "this process");
  const MemoryLimit tiny("1000");
  expect_train_refused(seq, {"memory estimate", "more than the 1000 bytes", "WULF_MEMORY_LIMIT_BYTES", "--force"});
  train_record(dir_, "forced", with(seq, {"--force"}));
  // A simulated run's ranks do not check again: --force reaches them.
  const std::vector<std::string> sim{"--problem", "encoder:8", "--epochs", "1", "--block", "4", "--engine", "sim",
                                     "--np", "2", "--platform", toy4};
  expect_train_refused(sim, {"memory estimate", "smpirun process of 2 simulated ranks"});
  const Json forced = train_record(dir_, "sim-forced", with(sim, {"--force"}));
  EXPECT_EQ(forced.at("config").at("memory_estimate").at("where").get<std::string>(),
            "the smpirun process of 2 simulated ranks");
}

TEST_F(engines_bad_input, a_hidden_layer_of_100000000_units_is_refused_by_the_memory_estimate) {
  const MemoryLimit limit(std::to_string(1LL << 40));  // a machine of 1 TiB
  expect_train_refused({"--problem", "digits", "--train-size", "100", "--test-size", "100", "--hidden", "100000000"},
                       {"memory estimate is", "TiB (this process)", "the net's parameters and gradients", "--hidden"});
}

TEST_F(engines_bad_input, counts_beyond_what_one_mpi_call_takes_are_refused_before_any_rank_starts) {
  // Forced past the memory estimate, the counts still stop them (the platform does not exist:
  // a wulf that did not refuse fails on it).
  const std::string none = dir_.file("none.xml");
  expect_train_refused({"--problem", "encoder:8", "--hidden", "200000000", "--engine", "sim", "--np", "2",
                        "--block", "4", "--platform", none, "--numerics", "off", "--force"},
                       {"the net's weights", "3400000008 values", "2147483647", "--hidden"});
  expect_train_refused({"--problem", "chars:3203", "--train-size", "1000000", "--strategy", "scatter", "--engine",
                        "sim", "--np", "4", "--platform", none, "--numerics", "off", "--force"},
                       {"--strategy scatter: the scatter of 1000000 patterns x 3203 values", "3203000000 values",
                        "2147483647", "--strategy block"});
}

TEST_F(engines_bad_input, mpirun_or_smpirun_missing_from_path) {
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", dir_.path().c_str(), 1);
  const Outcome real = wulf({"train", "--problem", "encoder:8", "--engine", "real", "--np", "2", "--block", "4"});
  const Outcome sim = wulf({"train", "--problem", "encoder:8", "--engine", "sim", "--platform", toy4});
  ::setenv("PATH", saved.c_str(), 1);
  expect_refusal(real, {"mpirun is not on PATH"});
  expect_refusal(sim, {"smpirun is not on PATH"});
}

}  // namespace
}  // namespace wulf
