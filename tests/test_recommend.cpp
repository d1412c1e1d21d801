// `wulf recommend` (issue 7 item 6): the search's pieces on hand-made candidates, and the
// command end to end on encoder:16 and the toy platform: its choice, re-run with `wulf
// train`, reaches the target in the predicted time; its speed-up is the sequential
// reference's time over the choice's; bad input is refused before anything runs.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "predict/recommend.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace wulf {
namespace {

using namespace testing_support;

const std::string profile = test_platform("example.profile");

SearchSpace small_space() {
  SearchSpace s;
  s.strategies = {parse_strategy("block"), parse_strategy("average")};
  s.nps = {1, 2, 4};
  s.blocks = {2, 8};
  s.etas = {1.5};
  s.alphas = {0.5, 0.9};
  s.intervals = {0, 32};
  s.train_patterns = 16;
  return s;
}

TEST(recommend, candidates_cover_the_space_once_and_say_why_one_is_skipped) {
  const SearchSpace s = small_space();
  const std::vector<LearningPoint> points = learning_points(s);
  ASSERT_EQ(points.size(), 4u);  // b 2, 8 x alpha 0.5, 0.9
  const std::vector<Candidate> cs = make_candidates(s, points);
  // Per point: one sequential; per p in {2, 4}: block, and average with each interval.
  ASSERT_EQ(cs.size(), 4u * (1 + 2 * (1 + 2)));
  int sequential = 0, skipped = 0;
  for (const Candidate& c : cs) {
    sequential += c.sequential();
    const ConvergenceBasis basis = c.sequential()                  ? ConvergenceBasis::exact
                                   : c.strategy == parse_strategy("block") ? ConvergenceBasis::same
                                                                   : ConvergenceBasis::assumed;
    EXPECT_EQ(c.basis, basis) << c.label();
    if (c.skipped.empty()) continue;
    ++skipped;
    // Block b = 2 cannot be shared by 4 ranks; average b = 8 is above a rank's 16 / 4.
    const bool block_small = c.strategy == parse_strategy("block") && c.b == 2 && c.p == 4;
    const bool average_big = c.strategy == parse_strategy("average") && c.b == 8 && c.p == 4;
    EXPECT_TRUE(block_small || average_big) << c.label() << " p " << c.p << " b " << c.b << ": " << c.skipped;
    if (block_small) {
      EXPECT_TRUE(contains(c.skipped, "b = 2 is below p = 4")) << c.skipped;
    }
  }
  EXPECT_EQ(sequential, 4);
  EXPECT_EQ(skipped, 2 * 1 + 2 * 2);  // per alpha: block p4 b2; average p4 b8 at both intervals
}

TEST(recommend, estimates_multiply_iterations_by_time_and_finalists_lead_with_the_sequential_reference) {
  const SearchSpace s = small_space();
  const std::vector<LearningPoint> points = learning_points(s);
  std::vector<Candidate> cs = make_candidates(s, points);
  // Point k reaches the target in 100 (k + 1) iterations, except point 3, which never does;
  // an iteration takes 1 / p s, plus 0.1 s when b = 2 (more updates).
  std::vector<RunOutcome> conv(points.size());
  for (std::size_t k = 0; k < points.size(); ++k) {
    conv[k].reached = k != 3;
    conv[k].iterations = static_cast<int>(100 * (k + 1));
  }
  for (Candidate& c : cs)
    if (c.skipped.empty()) c.iteration_s = 1.0 / c.p + (c.b == 2 ? 0.1 : 0.0);
  estimate(cs, conv);
  for (const Candidate& c : cs) {
    if (!c.skipped.empty()) continue;
    EXPECT_EQ(c.estimate_reached, c.point != 3);
    if (c.estimate_reached) {
      EXPECT_DOUBLE_EQ(c.estimate_s, 100.0 * static_cast<double>(c.point + 1) * c.iteration_s);
    }
  }
  // The points: (b 2, alpha 0.5), (b 2, 0.9), (b 8, 0.5), (b 8, 0.9).
  const std::vector<std::size_t> f = pick_finalists(cs, 2);
  ASSERT_EQ(f.size(), 4u);
  // First the fastest sequential one, point 0: 100 x (1 + 0.1) = 110 s.
  EXPECT_TRUE(cs[f[0]].sequential());
  EXPECT_EQ(cs[f[0]].point, 0u);
  EXPECT_DOUBLE_EQ(cs[f[0]].estimate_s, 110.0);
  // Then the two fastest: average on p = 4 at point 0, 100 x (0.25 + 0.1) = 35 s, at both
  // intervals (block cannot share b = 2 over 4 ranks); at equal times the list's order holds.
  for (std::size_t i : {1, 2}) {
    EXPECT_EQ(cs[f[i]].p, 4);
    EXPECT_EQ(cs[f[i]].strategy, parse_strategy("average"));
    EXPECT_DOUBLE_EQ(cs[f[i]].estimate_s, 35.0);
  }
  EXPECT_EQ(cs[f[1]].interval, 0u);
  EXPECT_EQ(cs[f[2]].interval, 32u);
  // And the fastest block one, which the averaging guesses would have pushed out: p = 2 at
  // point 0, 100 x (0.5 + 0.1) = 60 s (p = 4 at point 2 takes 300 x 0.25 = 75 s).
  EXPECT_EQ(cs[f[3]].strategy, parse_strategy("block"));
  EXPECT_EQ(cs[f[3]].p, 2);
  EXPECT_DOUBLE_EQ(cs[f[3]].estimate_s, 60.0);
  // With K large enough to hold the sequential one, it is not added twice.
  const std::vector<std::size_t> all = pick_finalists(cs, cs.size());
  std::size_t reaching = 0;
  for (const Candidate& c : cs) reaching += c.skipped.empty() && c.estimate_reached;
  EXPECT_EQ(all.size(), reaching);
}

TEST(recommend, screening_times_each_strategy_p_b_and_interval_once_whatever_eta_and_alpha) {
  const SearchSpace s = small_space();
  std::vector<Candidate> cs = make_candidates(s, learning_points(s));
  const TimingPlan plan = plan_timings(cs);
  // Sequential b 2 and 8; block p 2 b 2, 8 and p 4 b 8; average p 2 b 2, 8 and p 4 b 2,
  // at two intervals each: 2 + 3 + 3 x 2 distinct timings over the two alphas.
  ASSERT_EQ(plan.timed.size(), 11u);
  // A time per iteration made of the timing's fields: each candidate run gets its own back.
  auto time_of = [](const Candidate& c) {
    return static_cast<double>(c.p) + 0.01 * static_cast<double>(c.b) + 1e-4 * static_cast<double>(c.interval) +
           (c.strategy == parse_strategy("average") ? 0.5 : 0.0);
  };
  std::vector<IterationTiming> times;
  for (std::size_t i : plan.timed) times.push_back({.time_s = time_of(cs[i])});
  set_iteration_times(cs, plan, times);
  for (const Candidate& c : cs) {
    if (c.skipped.empty()) {
      EXPECT_DOUBLE_EQ(c.iteration_s, time_of(c)) << c.label() << " p " << c.p << " b " << c.b;
    } else {
      EXPECT_TRUE(std::isnan(c.iteration_s)) << c.label();
    }
  }
}

TEST(recommend, overlap_is_searched_by_bucket_size_and_allreduce_and_says_how_much_of_blocks_comm_it_hides) {
  SearchSpace s;
  s.strategies = {parse_strategy("block"), parse_strategy("overlap")};
  s.nps = {1, 2};
  s.blocks = {4};
  s.etas = {1};
  s.alphas = {0.5};
  s.allreduces = {"ring", "rdb"};
  // A bucket per tensor (6), 100 bytes (3), 1 MiB and 2 MiB (the whole net: 1 each).
  s.bucket_bytes = {0, 100, 1 << 20, 2 << 20};
  s.bucket_counts = {6, 3, 1, 1};
  s.bucket_same_as = {0, 1, 2, 2};
  s.train_patterns = 16;
  std::vector<Candidate> cs = make_candidates(s, learning_points(s));
  // One sequential; on p = 2 block with each algorithm, overlap with each algorithm and size.
  ASSERT_EQ(cs.size(), 1u + 2 + 2 * 4);
  auto find = [&](std::string_view label) -> Candidate& {
    const auto at = std::find_if(cs.begin(), cs.end(), [&](const Candidate& c) { return c.label() == label; });
    if (at == cs.end()) throw std::runtime_error("no candidate " + std::string(label));
    return *at;
  };
  const Candidate& tensor_ring = find("overlap tensor ring");
  EXPECT_EQ(tensor_ring.buckets, 6u);
  EXPECT_EQ(candidate_args(tensor_ring), (std::vector<std::string>{"--np", "2", "--strategy", "overlap", "--block", "4",
                                                                    "--eta", "1", "--alpha", "0.5",
                                                                    "--bucket-allreduce", "ring", "--bucket-bytes",
                                                                    "0"}));
  EXPECT_EQ(candidate_args(find("block rdb")),
            (std::vector<std::string>{"--np", "2", "--strategy", "block", "--block", "4", "--eta", "1", "--alpha",
                                      "0.5", "--allreduce", "rdb"}));
  EXPECT_EQ(find("sequential").allreduce, "");  // one rank: no allreduce to choose
  // 2 MiB cuts what 1 MiB cuts: not timed twice, and it says so.
  for (const char* label : {"overlap 2.0 MiB ring", "overlap 2.0 MiB rdb"})
    EXPECT_TRUE(contains(find(label).skipped, "--bucket-bytes 2097152 cuts the same 1 bucket(s) as 1048576"))
        << find(label).skipped;
  const TimingPlan plan = plan_timings(cs);
  ASSERT_EQ(plan.timed.size(), 1u + 2 + 2 * 3);
  // Alone, the buckets' communication takes 0.2 s an iteration (ring) or 0.3 s (rdb); 0.05 s
  // of it is left exposed with a bucket per tensor, 0.1 s with 100 bytes, all with one bucket.
  auto timing_of = [](const Candidate& c) {
    IterationTiming t{.time_s = 1};
    if (!c.hides()) return t;
    t.alone_s = c.allreduce == "ring" ? 0.2 : 0.3;
    t.exposed_s = c.bucket_bytes == 0 ? 0.05 : c.bucket_bytes == 100 ? 0.1 : t.alone_s;
    return t;
  };
  std::vector<IterationTiming> timings;
  for (std::size_t i : plan.timed) timings.push_back(timing_of(cs[i]));
  set_iteration_times(cs, plan, timings);
  EXPECT_DOUBLE_EQ(find("overlap tensor ring").hidden, 0.75);
  EXPECT_DOUBLE_EQ(find("overlap tensor rdb").hidden, 1 - 0.05 / 0.3);
  EXPECT_DOUBLE_EQ(find("overlap 100 bytes ring").hidden, 0.5);
  EXPECT_DOUBLE_EQ(find("overlap 100 bytes ring").exposed_s, 0.1);
  EXPECT_DOUBLE_EQ(find("overlap 100 bytes ring").alone_s, 0.2);
  EXPECT_DOUBLE_EQ(find("overlap 1.0 MiB rdb").hidden, 0);
  EXPECT_FALSE(find("block ring").hides());  // block hides nothing
  EXPECT_TRUE(std::isnan(find("block ring").hidden));
  EXPECT_TRUE(std::isnan(find("overlap 2.0 MiB ring").hidden));  // skipped
}

TEST(recommend, each_finalist_is_bounded_by_the_fastest_time_confirmed_before_it) {
  std::vector<Candidate> cs(4);
  for (std::size_t i = 0; i < cs.size(); ++i) cs[i].p = static_cast<int>(i + 1);
  // Confirmed in the order 2, 0, 3, 1: 20 s, 30 s (slower: stopped), 10 s, never.
  const std::vector<std::size_t> finalists{2, 0, 3, 1};
  const std::vector<double> seconds{20, 30, 10, 0};
  std::vector<double> bounds;
  auto run = [&](const Candidate& c, std::size_t f) {
    bounds.push_back(c.bound_s);
    RunOutcome o;
    o.reached = seconds[f] > 0 && (c.bound_s == 0 || seconds[f] < c.bound_s);
    o.status = o.reached ? "target_reached" : seconds[f] > 0 ? "time_limit" : "max_iterations";
    o.time_s = o.reached || c.bound_s == 0 ? seconds[f] : c.bound_s;
    return o;
  };
  confirm_finalists(cs, finalists, true, run);
  EXPECT_EQ(bounds, (std::vector<double>{0, 20, 20, 10}));
  for (std::size_t i : finalists) EXPECT_TRUE(cs[i].finalist && cs[i].confirmed);
  // Those that reached the target first, fastest first; then the others as confirmed.
  EXPECT_EQ(order_by_confirmed(cs, finalists), (std::vector<std::size_t>{3, 2, 0, 1}));
  EXPECT_EQ(best_confirmed(cs), 3);

  // Without pruning no run is bounded.
  std::vector<Candidate> unbounded(4);
  bounds.clear();
  confirm_finalists(unbounded, finalists, false, run);
  EXPECT_EQ(bounds, (std::vector<double>(4, 0.0)));
  EXPECT_TRUE(unbounded[0].confirmed->reached);  // 30 s, run to the end
}

TEST(recommend, the_choice_rerun_reaches_the_target_in_the_predicted_time_and_its_speedup_is_the_references) {
  // encoder:16 on 4 simulated hosts with seed 000's Bat Cave phase times (the example
  // profile): blocks of 4 and 8 on 1, 2, 4 ranks, every pattern right (class error 0).
  TestDir dir;
  const std::vector<std::string> common{"--problem", "encoder:16", "--target-error", "0.001",
                                        "--compute", "calibrated", "--profile",      profile};
  std::vector<std::string> args{
      "recommend",    "--platform", toy4,          "--np", "1,2,4", "--blocks",          "4,8",
      "--max-epochs", "3000",       "--finalists", "2",    "--out", dir.file("rec.json")};
  args.insert(args.end(), common.begin(), common.end());
  const Outcome r = expect_success(args, {"recommended: ", "wall time: screening "});
  const Json rec = read_json_file(dir.file("rec.json"));
  ASSERT_FALSE(rec.at("choice").is_null()) << r.out;
  const Json& choice = rec.at("choice");
  const Json& reference = rec.at("reference");
  ASSERT_FALSE(reference.is_null());
  EXPECT_EQ(reference.at("p").get<double>(), 1);
  // Here 4 ranks at b = 4 win (the allreduce of 148 weights is small beside 4 patterns'
  // 0.63 ms of compute): the test covers a parallel choice, not only the sequential one.
  EXPECT_EQ(choice.at("p").get<double>(), 4) << r.out;
  EXPECT_EQ(choice.at("strategy").get<std::string>(), "block");
  EXPECT_GT(choice.at("speedup").get<double>(), 1.0);
  // Its speed-up is the sequential reference's confirmed time over its own.
  const double ref_s = reference.at("confirmed").at("time_s").get<double>();
  EXPECT_DOUBLE_EQ(choice.at("speedup").get<double>(), ref_s / choice.at("time_s").get<double>());
  // Nothing confirmed reached the target sooner, and no sequential candidate was estimated
  // faster than the reference.
  for (const Json& c : rec.at("candidates")) {
    if (!c.at("confirmed").is_null() && c.at("confirmed").at("reached").get<bool>()) {
      EXPECT_GE(c.at("confirmed").at("time_s").get<double>(), choice.at("time_s").get<double>());
    }
    if (c.at("p").get<double>() == 1 && c.at("screening").at("reached").get<bool>()) {
      EXPECT_GE(c.at("screening").at("time_s").get<double>(), reference.at("screening").at("time_s").get<double>());
    }
  }
  // The sequential estimate is exact: the same arithmetic as the confirming simulation, and
  // the same time per iteration (up to rounding in the sum of iterations).
  EXPECT_NEAR(reference.at("screening").at("time_s").get<double>(), ref_s, 1e-9 * ref_s);

  // Re-run both with wulf train, options rebuilt here from the record's fields.
  auto rerun = [&](const Json& c, const std::string& name) {
    const int p = static_cast<int>(c.at("p").get<double>());
    const std::vector<std::string> options{"--engine",   "sim",
                                           "--platform", toy4,
                                           "--np",       std::to_string(p),
                                           "--strategy", p == 1 ? "block" : c.at("strategy").get<std::string>(),
                                           "--block",    std::to_string(static_cast<int>(c.at("b").get<double>())),
                                           "--eta",      shortest(c.at("eta").get<double>()),
                                           "--alpha",    shortest(c.at("alpha").get<double>()),
                                           "--error",    "class",
                                           "--epochs",   "3000"};
    return train_record(dir, name, with(options, common));
  };
  // Simulated time is deterministic: the same iterations, the same seconds to 1e-9.
  const Json again = rerun(choice, "again");
  EXPECT_EQ(again.at("final").at("status").get<std::string>(), "target_reached");
  EXPECT_EQ(again.at("final").at("iterations").get<double>(), choice.at("iterations").get<double>());
  EXPECT_NEAR(again.at("final").at("time_s").get<double>(), choice.at("time_s").get<double>(),
              1e-9 * choice.at("time_s").get<double>());
  const Json seq = rerun(reference, "seq");
  EXPECT_EQ(seq.at("final").at("status").get<std::string>(), "target_reached");
  EXPECT_NEAR(seq.at("final").at("time_s").get<double>(), ref_s, 1e-9 * ref_s);
  EXPECT_NEAR(seq.at("final").at("time_s").get<double>() / again.at("final").at("time_s").get<double>(),
              choice.at("speedup").get<double>(), 1e-9);
}

TEST(recommend, overlap_on_a_platform_prints_the_comm_each_bucket_size_hides_and_one_bucket_hides_none) {
  // encoder:16 on the toy platform, block and overlap with the ring: a bucket per tensor,
  // and one bucket, which starts only after the backward pass and so hides nothing.
  TestDir dir;
  const Outcome r = expect_success(
      {"recommend", "--platform", toy4, "--problem", "encoder:16", "--target-error", "0.001", "--np", "1,4", "--blocks",
       "4", "--strategies", "block,overlap", "--allreduces", "ring", "--bucket-sizes", "0,1000000", "--max-epochs",
       "3000", "--finalists", "1", "--out", dir.file("rec.json")},
      {"strategies block,overlap;", "allreduce ring;", "bucket bytes", "0 (4), 1000000 (1)", "exposed s", "alone s",
       "hidden", "overlap tensor ring", "overlap 976.6 KiB ring", "block ring",
       "screening: time per iteration, 6 simulations"});  // seq, block, 2 x (overlap and its twin)
  const Json rec = read_json_file(dir.file("rec.json"));
  int overlaps = 0;
  for (const Json& c : rec.at("candidates")) {
    if (c.at("p").get<int>() != 4) continue;
    const Json& screen = c.at("screening");
    EXPECT_EQ(c.at("allreduce").get<std::string>(), "ring");
    if (c.at("strategy") == "block") {
      EXPECT_TRUE(screen.at("hidden").is_null());
      continue;
    }
    ++overlaps;
    const double exposed = screen.at("exposed_comm_s").get<double>(), alone = screen.at("alone_comm_s").get<double>();
    EXPECT_GT(alone, 0) << c.dump();
    EXPECT_DOUBLE_EQ(screen.at("hidden").get<double>(), 1 - exposed / alone);
    if (c.at("buckets").get<int>() == 1) {
      EXPECT_DOUBLE_EQ(exposed, alone) << r.out;  // one bucket: the twin is the run itself
    }
  }
  EXPECT_EQ(overlaps, 2);
}

TEST(recommend, a_target_never_reached_is_reported_with_the_best_error) {
  TestDir dir;
  expect_success(
      {"recommend", "--platform", toy4, "--problem", "encoder:16", "--target-error", "0.001", "--np", "1,2", "--blocks",
       "4", "--max-epochs", "20", "--out", dir.file("rec.json")},
      {"never: not within 20 iterations (best ", "no configuration reached class error <= 0.001 within 20 iterations"});
  const Json rec = read_json_file(dir.file("rec.json"));
  EXPECT_TRUE(rec.at("choice").is_null());
  const Json& conv = rec.at("convergence").at(0);
  EXPECT_FALSE(conv.at("reached").get<bool>());
  EXPECT_EQ(conv.at("status").get<std::string>(), "max_iterations");
  EXPECT_GT(conv.at("best_error").get<double>(), 0.001);
  EXPECT_GE(conv.at("best_iteration").get<double>(), 1);
  for (const Json& c : rec.at("candidates")) EXPECT_TRUE(c.at("confirmed").is_null());
}

TEST(recommend, bad_input_is_refused_with_the_input_named_before_anything_runs) {
  TestDir dir;
  const std::string out = dir.file("rec.json");
  using Options = std::vector<std::pair<std::string, std::string>>;
  // A good command with the case's options replacing or added to its own.
  auto command = [&](const Options& changes) {
    Options opts{{"--platform", toy4}, {"--problem", "encoder:16"}, {"--target-error", "0.1"}, {"--out", out}};
    for (const auto& [key, value] : changes) {
      const auto at = std::find_if(opts.begin(), opts.end(), [&](const auto& o) { return o.first == key; });
      if (at != opts.end())
        at->second = value;
      else
        opts.emplace_back(key, value);
    }
    std::vector<std::string> args{"recommend"};
    for (const auto& [key, value] : opts) args.insert(args.end(), {key, value});
    return args;
  };
  const std::vector<std::pair<Options, std::string>> cases{
      {{{"--platform", dir.file("nosuch.xml")}}, "nosuch.xml: no such file"},
      {{{"--problem", "nosuch"}}, "nosuch"},
      {{{"--np", "1,8"}}, "--np 8: the platform " + toy4 + " has only 4 cores on 4 hosts"},
      {{{"--np", ""}}, "--np: empty list"},
      {{{"--blocks", ""}}, "--blocks: empty list"},
      {{{"--etas", ""}}, "--etas: empty list"},
      {{{"--blocks", "4,32"}}, "--blocks: 32 is larger than the training set of encoder:16 (16 patterns)"},
      {{{"--target-error", "0"}}, "--target-error: 0 must be more than 0 (for every pattern right"},
      {{{"--target-error", "-0.5"}}, "--target-error: -0.5 must be more than 0"},
      {{{"--strategies", "block,cg"}}, "--strategies: 'cg' is not searched"},
      {{{"--strategies", "blok"}}, "--strategies: unknown strategy 'blok'"},
      {{{"--alphas", "0.5,1"}}, "--alphas: 1 must be less than 1"},
      {{{"--etas", "0.5,1e300"}}, "--etas: 1e+300 is more than 1000000"},
      {{{"--np", "1e9"}}, "--np: 1000000000 is more than 1000000"},
      {{{"--finalists", "0"}}, "--finalists: 0 must be at least 1"},
      {{{"--compute", "measured"}}, "--compute measured"},
      {{{"--compute", "wall"}}, "--compute wall: screening simulates"},
      {{{"--problem", "function"}, {"--error", "class"}}, "--error class: the targets of function are not classes"},
      {{{"--allreduces", "ring"}, {"--allreduce", "rdb"}}, "--allreduces ring and --allreduce rdb: give one"},
      {{{"--allreduces", "ring,bruck"}}, "--allreduces: 'bruck': expected ring or rdb"},
      {{{"--allreduces", "ring"}, {"--strategies", "average"}}, "--allreduces ring: none of --strategies takes"},
      {{{"--bucket-sizes", "0,1024"}}, "--bucket-sizes 0,1024: none of --strategies has buckets (overlap does)"},
      {{{"--bucket-sizes", "-1"}, {"--strategies", "overlap"}}, "--bucket-sizes: -1 is negative"},
  };
  for (const auto& [changes, message] : cases) {
    SCOPED_TRACE(message);
    const auto r = expect_refused(command(changes), {message});
    EXPECT_FALSE(contains(r.out, "screening")) << r.out;  // nothing ran
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // Required options.
  for (const char* missing : {"--platform", "--problem", "--target-error"}) {
    std::vector<std::string> args = command({});
    const auto at = std::find(args.begin(), args.end(), std::string(missing));
    args.erase(at, at + 2);
    expect_refused(args, {std::string(missing) + " is required"});
  }
}

}  // namespace
}  // namespace wulf
