// Conjugate gradient (seed 002, --strategy cg): the line search and the Polak-Ribiere
// direction on analytic functions, the strategy in this process, and its runs under the
// sequential engine, mpirun and smpirun, with load balancing, faults and --weights-out.
#include "nn/cg.hpp"
#include "util/errors.hpp"
#include "cli/cli.hpp"
#include "util/json.hpp"
#include "nn/mlp.hpp"
#include "data/problems.hpp"
#include "train/trainer.hpp"
#include "nn/weights_file.hpp"

#include <Eigen/Cholesky>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace wulf {
namespace {

using namespace testing_support;

const std::string toy4_slow = test_platform("toy4-slow.xml");

CgConfig search_config(int refinements, int max_expansions = 30) {
  return CgConfig{.max_expansions = max_expansions, .refinements = refinements};
}

// What a successful line search is expected to have found.
struct Found {
  double step, within, lower, upper;
  int expansions, probes;
};
void expect_found(const LineSearchResult& r, const Found& e) {
  ASSERT_EQ(r.status, LineSearchStatus::ok) << r.detail;
  EXPECT_NEAR(r.step, e.step, e.within);
  EXPECT_EQ(r.lower, e.lower);
  EXPECT_EQ(r.upper, e.upper);
  EXPECT_EQ(r.expansions, e.expansions);
  EXPECT_EQ(r.probes, e.probes);
}

// ---- the line search on functions of one variable ------------------------------------

TEST(line_search, a_quadratic_is_exact_after_one_interpolation) {
  // f(s) = 2 (s - 3)^2: f'(s) = 4 (s - 3). From s0 = 1: f'(1) = -8, f'(2) = -4, f'(4) = 4, so
  // the bracket is [2, 4] and the secant of the linear f' hits 3 exactly.
  int calls = 0;
  const SlopeFn slope = [&](double s) { return ++calls, 4 * (s - 3); };
  expect_found(line_search(slope(0), 1.0, slope, search_config(1)),
               {.step = 3.0, .within = 1e-15, .lower = 2.0, .upper = 4.0, .expansions = 2, .probes = 3});
  EXPECT_EQ(calls, 4);  // f'(0) above, and the three probes
}

TEST(line_search, halves_when_the_first_step_is_already_past_the_minimum) {
  // From s0 = 100 the probes 100, 50, 25, 12.5, 6.25, 3.125 all rise; 1.5625 falls.
  const SlopeFn slope = [](double s) { return 4 * (s - 3); };
  expect_found(line_search(-12, 100.0, slope, search_config(1)),
               {.step = 3.0, .within = 1e-14, .lower = 1.5625, .upper = 3.125, .expansions = 6, .probes = 7});
}

TEST(line_search, doubles_a_tiny_first_step_until_the_slope_turns) {
  // 1e-6 * 2^22 = 4.19 is the first step past 3.
  const SlopeFn slope = [](double s) { return 4 * (s - 3); };
  const LineSearchResult r = line_search(-12, 1e-6, slope, search_config(1));
  ASSERT_EQ(r.status, LineSearchStatus::ok) << r.detail;
  EXPECT_EQ(r.expansions, 22);
  EXPECT_NEAR(r.step, 3.0, 1e-12);
  // Allowed only 10 doublings, it gives up and says how to go on.
  const LineSearchResult short_of = line_search(-12, 1e-6, slope, search_config(1, 10));
  EXPECT_EQ(short_of.status, LineSearchStatus::no_bracket);
  EXPECT_EQ(short_of.step, 0.0);
  EXPECT_TRUE(contains(short_of.detail, "10 doublings")) << short_of.detail;
  EXPECT_TRUE(contains(short_of.detail, "--cg-expansions")) << short_of.detail;
}

// |step - minimiser| after k interpolations.
template <class F>
double miss_after(F slope, double s0, double minimiser, int refinements) {
  const LineSearchResult r = line_search(slope(0), s0, slope, search_config(refinements));
  EXPECT_EQ(r.status, LineSearchStatus::ok) << r.detail;
  return std::abs(r.step - minimiser);
}

TEST(line_search, refinements_close_in_on_the_minimum_of_a_cosine_and_a_quartic) {
  // f(s) = 1 - cos(s - 1), minimum at 1; bracket [0.6, 1.2] from s0 = 0.3.
  const auto cosine = [](double s) { return std::sin(s - 1); };
  const double c1 = miss_after(cosine, 0.3, 1.0, 1), c2 = miss_after(cosine, 0.3, 1.0, 2),
               c4 = miss_after(cosine, 0.3, 1.0, 4);
  EXPECT_LT(c1, 5e-3);
  EXPECT_LT(c2, c1 / 10);
  EXPECT_LT(c4, 1e-7);
  // f(s) = (s - 2)^4 + (s - 2)^2, minimum at 2; f' is a cubic. Bracket [1.2, 2.4] from
  // s0 = 0.3. (From s0 = 0.5 a probe would land on 2 itself, read f' = 0 and take it for a
  // plateau: see an_exactly_zero_slope_is_a_plateau_not_the_minimum.)
  // f' is convex there, so the bracket's upper end never moves and the secant closes in
  // linearly (regula falsi): 0.13 after one interpolation, about half as much per further one.
  const auto quartic = [](double s) { return 4 * std::pow(s - 2, 3) + 2 * (s - 2); };
  double miss = miss_after(quartic, 0.3, 2.0, 1);
  EXPECT_LT(miss, 0.15);
  for (int k = 2; k <= 12; ++k) {
    const double next = miss_after(quartic, 0.3, 2.0, k);
    EXPECT_LT(next, 0.6 * miss) << k;
    miss = next;
  }
  EXPECT_LT(miss, 2e-4);
}

TEST(line_search, refuses_flat_rising_and_undefined_directions_without_probing) {
  int calls = 0;
  const SlopeFn slope = [&](double) { return ++calls, -1.0; };
  CgConfig c = search_config(2);
  EXPECT_EQ(line_search(0.0, 1.0, slope, c).status, LineSearchStatus::flat);
  EXPECT_EQ(line_search(0.5, 1.0, slope, c).status, LineSearchStatus::rising);
  EXPECT_TRUE(contains(line_search(0.5, 1.0, slope, c).detail, "rises")) << line_search(0.5, 1.0, slope, c).detail;
  EXPECT_EQ(line_search(std::nan(""), 1.0, slope, c).status, LineSearchStatus::not_finite);
  EXPECT_EQ(line_search(-1e-12, 1.0, slope, c).status, LineSearchStatus::no_bracket);  // probed: f' stays -1
  const int probed = calls;
  c.flat_tolerance = 1e-9;  // now |f'(0)| = 1e-12 is flat
  const LineSearchResult flat = line_search(-1e-12, 1.0, slope, c);
  EXPECT_EQ(flat.status, LineSearchStatus::flat);
  EXPECT_TRUE(contains(flat.detail, "flat tolerance")) << flat.detail;
  EXPECT_EQ(calls, probed);  // the refusals never called f'
}

TEST(line_search, says_where_the_slope_stopped_being_finite) {
  const SlopeFn slope = [](double s) { return s < 5 ? -1.0 : std::numeric_limits<double>::quiet_NaN(); };
  const LineSearchResult r = line_search(-1, 1.0, slope, search_config(2));
  EXPECT_EQ(r.status, LineSearchStatus::not_finite);
  EXPECT_TRUE(contains(r.detail, "s = 8")) << r.detail;
}

TEST(line_search, an_exactly_zero_slope_is_a_plateau_not_the_minimum) {
  // f' = s - 0.7 up to 2, then exactly 0 (every unit saturated). From s0 = 4 the probes at
  // 4 and 2 read 0; taking them for the minimum would stop on the plateau. Halving goes
  // on to [0.5, 1], where the secant finds 0.7.
  const SlopeFn slope = [](double s) { return s < 2 ? s - 0.7 : 0.0; };
  const LineSearchResult r = line_search(-0.7, 4.0, slope, search_config(1));
  ASSERT_EQ(r.status, LineSearchStatus::ok) << r.detail;
  EXPECT_NEAR(r.step, 0.7, 1e-15);
  // A bracket that ends on the plateau is cut in the middle rather than at its end.
  const SlopeFn edge = [](double s) { return s < 1 ? -1.0 : 0.0; };
  EXPECT_EQ(line_search(-1, 0.75, edge, search_config(1)).step, 1.125);  // [0.75, 1.5]
}

// ---- Polak-Ribiere ---------------------------------------------------------------------

TEST(polak_ribiere, follows_the_formula_by_hand) {
  PolakRibiere<double> pr;
  const std::vector<double> g0{1, 0};
  auto u = pr.next(g0);  // first: d = -g
  EXPECT_FALSE(u.restarted);
  EXPECT_EQ(u.beta, 0);
  EXPECT_EQ(u.slope, -1);
  EXPECT_EQ(std::vector<double>(pr.direction().begin(), pr.direction().end()), (std::vector<double>{-1, 0}));
  // g = (0.5, 1): beta = g.(g - g0) / g0.g0 = (0.5 * -0.5 + 1 * 1) / 1 = 0.75;
  // d = -g + 0.75 (-1, 0) = (-1.25, -1); f'(0) = g.d = -0.625 - 1 = -1.625.
  u = pr.next(std::vector<double>{0.5, 1});
  EXPECT_DOUBLE_EQ(u.beta, 0.75);
  EXPECT_DOUBLE_EQ(u.slope, -1.625);
  EXPECT_FALSE(u.restarted);
  EXPECT_DOUBLE_EQ(pr.direction()[0], -1.25);
  EXPECT_DOUBLE_EQ(pr.direction()[1], -1.0);
}

TEST(polak_ribiere, restarts_on_a_negative_beta_and_on_a_direction_that_is_not_downhill) {
  PolakRibiere<float> pr;
  pr.next(std::vector<float>{1, 0});
  // g = (0.5, 0): g.(g - g0) = -0.25 < 0, so beta = 0: steepest descent again.
  auto u = pr.next(std::vector<float>{0.5, 0});
  EXPECT_TRUE(u.restarted);
  EXPECT_EQ(u.beta, 0);
  EXPECT_EQ(pr.direction()[0], -0.5f);
  PolakRibiere<float> up;
  up.next(std::vector<float>{1, 0});  // d = (-1, 0)
  // g = (-1, 2): beta = (1 * -2 + 2 * 2) / 1... = g.(g - g0) = (-1)(-2) + 2 * 2 = 6, and
  // d = -g + 6 (-1, 0) = (-5, -2) has g.d = 5 - 4 = 1 >= 0: back to d = -g.
  u = up.next(std::vector<float>{-1, 2});
  EXPECT_TRUE(u.restarted);
  EXPECT_EQ(u.beta, 0);
  EXPECT_EQ(u.slope, -5);
  EXPECT_EQ(up.direction()[0], 1.0f);
  EXPECT_EQ(up.direction()[1], -2.0f);
}

// ---- CG on analytic functions ------------------------------------------------------------

// f(w) = 1/2 w^T A w - b^T w, grad f = A w - b; minimum at A^{-1} b.
class Quadratic : public Objective {
 public:
  Quadratic(Eigen::MatrixXd a, Eigen::VectorXd b) : a_(std::move(a)), b_(std::move(b)) {}
  double evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& g) override {
    ++evaluations;
    g = a_ * w - b_;
    return 0.5 * w.dot(a_ * w) - b_.dot(w);
  }
  int evaluations = 0;

 private:
  Eigen::MatrixXd a_;  // (n, n), symmetric positive definite
  Eigen::VectorXd b_;  // (n)
};

TEST(cg, reaches_the_minimum_of_an_n_dimensional_quadratic_in_n_steps) {
  const int n = 12;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd m(n, n);
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) {
    b(i) = u(gen);
    for (int j = 0; j < n; ++j) m(i, j) = u(gen);
  }
  const Eigen::MatrixXd a = m * m.transpose() + Eigen::MatrixXd::Identity(n, n);  // SPD, cond ~ 100
  const Eigen::VectorXd exact = a.ldlt().solve(b);
  Quadratic f(a, b);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(n);
  // Exact line searches (one interpolation is exact on a quadratic): CG's n-step finish.
  const CgRun r = minimize(f, w, search_config(1), n, 0.0);
  EXPECT_EQ(r.iterations, n);
  EXPECT_EQ(r.status, LineSearchStatus::ok) << r.detail;
  EXPECT_LT((w - exact).norm(), 1e-8 * exact.norm()) << (w - exact).transpose();
  // Steepest descent (every step restarted) is far from it after the same n steps.
  Eigen::VectorXd sd = Eigen::VectorXd::Zero(n);
  Quadratic g(a, b);
  for (int k = 0; k < n; ++k) {
    CgConfig c = search_config(1);
    minimize(g, sd, c, 1, 0.0);  // one step from scratch: a fresh direction each time
  }
  EXPECT_GT((sd - exact).norm(), 1e-3 * exact.norm());
}

// Rosenbrock's valley f(x, y) = (1 - x)^2 + 100 (y - x^2)^2, minimum at (1, 1).
class Rosenbrock : public Objective {
 public:
  double evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& g) override {
    const double x = w(0), y = w(1);
    g.resize(2);
    g(0) = -2 * (1 - x) - 400 * x * (y - x * x);
    g(1) = 200 * (y - x * x);
    return (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x);
  }
};

TEST(cg, finds_the_bottom_of_rosenbrocks_valley) {
  Rosenbrock f;
  Eigen::VectorXd w(2);
  w << -1.2, 1.0;
  CgConfig c = search_config(4);
  c.initial_step = 1e-3;
  const CgRun r = minimize(f, w, c, 500, 1e-8);
  EXPECT_TRUE(r.converged) << r.iterations << " " << r.detail;
  EXPECT_NEAR(w(0), 1.0, 1e-6);
  EXPECT_NEAR(w(1), 1.0, 1e-6);
}

// f(w) = -w.w has no minimum: every line search doubles in vain.
class Bowl : public Objective {
 public:
  double evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& g) override {
    g = -2 * w;
    return -w.dot(w);
  }
};

TEST(cg, stops_where_the_line_search_fails_and_keeps_the_last_point) {
  Bowl f;
  Eigen::VectorXd w(2);
  w << 0.5, -0.25;
  const Eigen::VectorXd start = w;
  const CgRun r = minimize(f, w, search_config(2, 8), 10, 0.0);
  EXPECT_EQ(r.status, LineSearchStatus::no_bracket);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(w, start);
}

// ---- the strategy in this process (one rank) ----------------------------------------------

TEST(cg_strategy, trains_a_tanh_net_and_notes_every_line_search) {
  Rng rng(3);
  const Dataset train = make_function_set(256, 0.05, rng), test = make_function_set(64, 0.05, rng);
  NetSpec spec{{2, 8, 1}, {Activation::tanh, Activation::linear}, Loss::mse, true};
  Mlp<double> net(spec);
  Rng init(5);
  net.init_uniform(0, init);
  TrainConfig c;
  c.strategy = parse_strategy("cg");
  c.learning = Learning::epoch;
  c.max_iterations = 25;
  SerialComm comm;
  const auto compute = make_wall_compute();
  const TrainResult r =
      train_strategy(net, train, test, GlobalSizes{train.size(), test.size(), false}, c, comm, *compute);
  ASSERT_EQ(r.reason, StopReason::max_iterations) << r.reason_detail;
  ASSERT_EQ(r.history.size(), 26u);
  EXPECT_LT(r.final_train.rmse, 0.5 * r.history.at(1).train_error);
  for (std::size_t i = 1; i < r.history.size(); ++i) {
    const auto& notes = r.history[i].notes;
    auto note = [&](const std::string& key) {
      for (const auto& [k, v] : notes)
        if (k == key) return v;
      ADD_FAILURE() << key << " missing in iteration " << i;
      return 0.0;
    };
    EXPECT_GT(note("step"), 0.0) << i;
    EXPECT_LT(note("slope"), 0.0) << i;
    EXPECT_GE(note("probes"), 1.0) << i;
    EXPECT_EQ(note("patterns"), 256.0) << i;
  }
  // One gradient pass per iteration; every probe another pass over the 256 patterns.
  double probes = 0;
  for (const auto& [k, v] : r.stats)
    if (k == "line_search_probes") probes = v;
  EXPECT_EQ(r.phases.backward_patterns, static_cast<std::size_t>((25 + probes) * 256));
}

// ---- wulf train --strategy cg -------------------------------------------------------------

// Seed 002's net: tanh hidden units, the mean squared error (here with a linear output).
const std::vector<std::string> cg_base{"--problem", "function", "--strategy", "cg", "--activation", "tanh",
                                       "--output-activation", "linear"};
// --epochs last: a test shortens the run by changing it.
const std::vector<std::string> small_cg = with(cg_base, {"--hidden", "16", "--epochs", "6"});

double stat(const Json& r, const std::string& key) { return r.at("final").at("strategy").at(key).get<double>(); }

TEST(cg_cli, help_names_every_cg_option_with_its_default) {
  expect_success({"train", "--help"},
                 {"cg (master-worker", "--cg-step arg in (0, 1e+30] (=1)", "--cg-expansions arg in [0, 1000] (=30)",
                  "--cg-refinements arg in [1, 1000] (=2)", "--cg-flat arg in [0, 1000000] (=0)",
                  "--load-balance arg in [0, 1] (=0)", "--chunk arg in [1, 2147483647] (=64)", "--weights-out"});
}

TEST(cg_cli, refuses_settings_that_cannot_work_before_any_rank_starts) {
  const auto refused = expect_train_refused;
  const std::vector<std::string> cg{"--problem", "encoder:8", "--strategy", "cg"};
  refused(with(cg, {"--load-balance", "0.5"}), {"--load-balance", "at least 2 ranks", "--np 1"});
  refused(with(cg, {"--load-balance", "0.5", "--engine", "sim", "--np", "1", "--platform", toy4}),
          {"--load-balance", "at least 2 ranks"});
  refused(with(cg, {"--load-balance", "1.5", "--engine", "real", "--np", "2"}), {"--load-balance: 1.5 is more than 1"});
  refused(with(cg, {"--chunk", "0"}), {"--chunk", "at least 1"});
  refused(with(cg, {"--cg-refinements", "0"}), {"--cg-refinements"});
  refused(with(cg, {"--cg-step", "-1"}), {"--cg-step: -1 must be more than 0"});
  refused(with(cg, {"--cg-flat", "nan"}), {"--cg-flat"});
  refused({"--problem", "encoder:8", "--load-balance", "0.5"}, {"--load-balance is for --strategy cg"});
  refused({"--problem", "encoder:8", "--cg-step", "2"}, {"--cg-step is for --strategy cg"});
  refused({"--problem", "encoder:8", "--strategy", "session", "--sweep", "eta=1,2", "--weights-out", "w.txt"},
          {"--weights-out", "session"});
  refused({"--problem", "encoder:8", "--weights-out", "/no/such/folder/w.txt"}, {"--weights-out", "/no/such/folder"});
}

TEST(cg_cli, weights_out_holds_the_final_weights_of_any_strategy) {
  TestDir dir;
  const std::string file = dir.file("w.txt");
  const Json r =
      train_record(dir, "block", {"--problem", "function", "--hidden", "8", "--epochs", "3", "--weights-out", file});
  const WeightsFile w = read_weights(file);
  EXPECT_EQ(w.net, "2-8-1 sigmoid/sigmoid mse bias");
  EXPECT_EQ(w.layers, (std::vector<int>{2, 8, 1}));
  EXPECT_EQ(w.precision, "float");
  EXPECT_EQ(w.status, "max_iterations");
  EXPECT_EQ(w.iteration, 3);
  ASSERT_EQ(w.values.size(), 33u);
  EXPECT_EQ(r.at("final").at("weights_file").get<std::string>(), file);
  // The weights reproduce the record's final test error.
  NetSpec spec{{2, 8, 1}, {Activation::sigmoid, Activation::sigmoid}, Loss::mse, true};
  Mlp<float> net(spec);
  for (std::size_t i = 0; i < w.values.size(); ++i) net.parameters()[i] = static_cast<float>(w.values[i]);
  ProblemOptions po;
  const Problem p = make_problem("function", po);
  EXPECT_DOUBLE_EQ(evaluate(net, p.test).rmse, r.at("final").at("test_rmse").get<double>());
  // A file that is not one, or is cut short, is refused with its name.
  const std::string bad = dir.write("bad.txt", "hello\n");
  EXPECT_TRUE(contains(input_error([&] { read_weights(bad); }), "not a wulf weights file"));
  const std::string cut =
      dir.write("cut.txt", "wulf-weights 1\nnet 2-1 linear mse bias\nlayers 2 1\nparameters 3\nvalues\n1\n2\n");
  EXPECT_TRUE(contains(input_error([&] { read_weights(cut); }), "2 values, the header says 3"));
}

// --weights-in starts from a file --weights-out wrote, and --epochs 0 only evaluates: saved,
// loaded and evaluated, the errors are the trained run's final ones, bit for bit; on the
// simulator every rank starts from the file too; a file of another net is refused.
TEST(cg_cli, weights_saved_and_loaded_give_the_same_errors_bit_for_bit) {
  TestDir dir;
  const std::string file = dir.file("w.txt");
  const std::vector<std::string> net{"--problem", "function", "--hidden", "8", "--train-size", "200", "--test-size", "50"};
  const Json trained = train_record(dir, "trained", with(net, {"--epochs", "3", "--block", "8", "--weights-out", file}));
  const Json loaded = train_record(dir, "loaded", with(net, {"--epochs", "0", "--weights-in", file}));
  const Json sim = train_record(dir, "sim", with(net, {"--epochs", "0", "--weights-in", file, "--block", "8", "--engine",
                                                       "sim", "--np", "2", "--platform", toy4}));
  for (const char* set : {"train", "test"}) {
    EXPECT_EQ(loaded.at("final").at(set), trained.at("final").at(set)) << set;
    EXPECT_NEAR(sim.at("final").at(set).at("rmse").get<double>(),
                trained.at("final").at(set).at("rmse").get<double>(), 1e-6) << set;  // sums over 2 ranks
  }
  EXPECT_EQ(loaded.at("final").at("iterations"), 0);
  EXPECT_EQ(loaded.at("history").size(), 1u);
  EXPECT_EQ(loaded.at("config").at("weights_in").get<std::string>(), file);
  expect_train_refused({"--problem", "function", "--hidden", "9", "--weights-in", file}, {file, "2-8-1", "2-9-1"});
  expect_train_refused(with(net, {"--weights-in", dir.file("none.txt")}), {"none.txt"});
}

TEST(cg_cli, a_flat_direction_stops_training_with_the_record_and_the_last_good_weights) {
  TestDir dir;
  // The slope f'(0) of each iteration's direction, from a run without a flat tolerance.
  const Json free_run = train_record(dir, "free", small_cg);
  const auto& h = free_run.at("history");
  // The first iteration k >= 2 whose |f'(0)| is below every earlier one: a tolerance
  // between the two stops the run in iteration k and no earlier.
  int k = 0;
  double earlier = std::abs(h.at(1).at("slope").get<double>()), tolerance = 0;
  for (std::size_t i = 2; i < h.size() && k == 0; ++i) {
    const double s = std::abs(h[i].at("slope").get<double>());
    if (s < earlier) k = static_cast<int>(i), tolerance = std::sqrt(s * earlier);
    earlier = std::min(earlier, s);
  }
  ASSERT_GE(k, 2) << "no iteration's slope fell below the earlier ones";
  std::ostringstream tol;
  tol.precision(17);
  tol << tolerance;
  const std::string weights = dir.file("flat.txt");
  const Json flat =
      train_record(dir, "flat", with(small_cg, {"--cg-flat", tol.str(), "--weights-out", weights}), exit_diverged);
  expect_stopped(flat, "line_search_failed", {"iteration " + std::to_string(k), "flat"});
  EXPECT_EQ(flat.at("history").size(), static_cast<std::size_t>(k + 1));
  EXPECT_EQ(flat.at("final").at("weights_iteration").get<double>(), k - 1);
  // The last good weights are those after iteration k - 1: a run of k - 1 iterations ends there.
  const std::string good = dir.file("good.txt");
  std::vector<std::string> shorter = small_cg;
  shorter.back() = std::to_string(k - 1);  // --epochs
  train_record(dir, "good", with(shorter, {"--weights-out", good}));
  const WeightsFile a = read_weights(weights), b = read_weights(good);
  EXPECT_EQ(a.status, "line_search_failed");
  EXPECT_EQ(a.iteration, k - 1);
  EXPECT_EQ(a.values, b.values);
}

TEST(cg_cli, a_gradient_that_is_not_finite_stops_training_with_the_weights_saved) {
  // A linear net in float: the first probe, 1e30 along d, overflows the error and its slope.
  TestDir dir;
  const std::string weights = dir.file("w.txt");
  const Json r = train_record(
      dir, "nan",
      {"--problem", "function", "--strategy", "cg", "--hidden", "4", "--activation", "linear", "--output-activation",
       "linear", "--init-range", "0.5", "--epochs", "5", "--cg-step", "1e30", "--weights-out", weights},
      exit_diverged);
  expect_stopped(r, "gradient_not_finite", {"not finite", "iteration 1"});
  // Nothing good came after the start: the file holds the initial weights, bit for bit.
  NetSpec spec{{2, 4, 1}, {Activation::linear, Activation::linear}, Loss::mse, true};
  Mlp<float> net(spec);
  Rng init_rng(1);
  Rng weights_rng = init_rng.split(3);
  net.init_uniform(0.5, weights_rng);
  const WeightsFile w = read_weights(weights);
  EXPECT_EQ(w.iteration, 0);
  ASSERT_EQ(w.values.size(), net.parameter_count());
  for (std::size_t i = 0; i < w.values.size(); ++i) EXPECT_EQ(static_cast<float>(w.values[i]), net.parameters()[i]) << i;
  // The same fault in the very first gradient: inputs so large that the error overflows.
  const std::string data = dir.write("huge.data", "4 2 1\n1e30 1\n1\n1 1e30\n-1\n0.5 0.5\n1\n0.2 0.1\n-1\n");
  const Json huge = train_record(dir, "huge",
                                 {"--problem", "fann:" + data, "--strategy", "cg", "--hidden", "3", "--activation",
                                  "linear", "--output-activation", "linear", "--epochs", "5"},
                                 exit_diverged);
  expect_stopped(huge, "gradient_not_finite", {"error or the gradient is not finite"});
}

// ---- the engines ------------------------------------------------------------------------

// Double precision: sums over ranks in another order differ in the last bits, and these
// few iterations leave them near 1e-13; 1e-9 relative leaves room without hiding a fault.
const std::vector<std::string> engine_cg = with(small_cg, {"--precision", "double"});

TEST(cg_engines, one_rank_under_mpirun_is_the_sequential_run_bit_for_bit) {
  TestDir dir;
  const Json seq = train_record(dir, "seq", engine_cg);
  const Json one = train_record(dir, "real1", with(engine_cg, {"--engine", "real", "--np", "1"}));
  expect_same_history(seq, one, "test_error", 0);
  expect_same_history(seq, one, "train_error", 0);
  expect_same_history(seq, one, "step", 0, 1);  // a note of CG's: not in iteration 0
}

TEST(cg_engines, two_and_four_ranks_follow_the_sequential_trajectory) {
  TestDir dir;
  const Json seq = train_record(dir, "seq", engine_cg);
  const Json real2 = train_record(dir, "real2", with(engine_cg, {"--engine", "real", "--np", "2"}));
  const Json sim2 = train_record(dir, "sim2", with(engine_cg, {"--engine", "sim", "--np", "2", "--platform", toy4}));
  const Json sim4 = train_record(dir, "sim4", with(engine_cg, {"--engine", "sim", "--np", "4", "--platform", toy4}));
  for (const Json* r : {&real2, &sim2, &sim4}) {
    SCOPED_TRACE(r->at("config").at("engine").get<std::string>() + " " +
                 std::to_string(int(r->at("config").at("np").get<double>())));
    expect_same_history(seq, *r, "test_error", 1e-9);
    expect_same_history(seq, *r, "train_error", 1e-9);
    expect_same_history(seq, *r, "step", 1e-9, 1);
    EXPECT_EQ(r->at("config").at("cg").at("refinements").get<double>(), 2);
  }
  // Two ranks add the same two numbers on either engine: the same bits.
  expect_same_history(real2, sim2, "test_error", 0);
  // The master-worker pattern: per iteration one broadcast of d and a few of [command, s],
  // reduces of the gradient and of scalars; every rank in every collective.
  const auto& ranks = sim4.at("phases").at("ranks");
  ASSERT_EQ(ranks.size(), 4u);
  for (const auto& q : ranks) EXPECT_EQ(q.at("comm_calls").get<double>(), ranks[0].at("comm_calls").get<double>());
}

TEST(cg_engines, load_balancing_over_every_pattern_follows_the_sequential_trajectory) {
  // --load-balance 1: rank 0 only polls and the two workers take all patterns in chunks of
  // 16, so every pass sums the same patterns as the sequential run.
  TestDir dir;
  const Json seq = train_record(dir, "seq", engine_cg);
  const Json lb = train_record(
      dir, "lb", with(engine_cg, {"--engine", "real", "--np", "3", "--load-balance", "1", "--chunk", "16"}));
  expect_same_history(seq, lb, "test_error", 1e-9);
  const auto& ranks = lb.at("phases").at("ranks");
  EXPECT_EQ(ranks.at(0).at("backward_patterns").get<double>(), 0);  // the master computes nothing
  EXPECT_GT(ranks.at(1).at("polls").get<double>(), 0);
  EXPECT_EQ(stat(lb, "passes_stopped_early"), 0);
  EXPECT_EQ(stat(lb, "mean_patterns_per_gradient_pass"), 1024);
}

TEST(cg_engines, load_balancing_stops_each_pass_within_a_chunk_and_cuts_the_idle_time) {
  // toy4-slow: toy-3 has a quarter of the others' speed. Without load balancing the two fast
  // workers wait for it in every pass; stopping at 70% of the patterns, they wait at most a
  // chunk of the slow host's work.
  TestDir dir;
  // The problem's 2-128-128-1 net (w = 17 025): a chunk of 32 patterns costs 3.3 ms on a
  // fast host and 13 ms on the slow one, against polls of about 0.3 ms.
  const std::vector<std::string> sim =
      with(cg_base, {"--engine", "sim", "--np", "4", "--platform", toy4_slow, "--epochs", "3", "--chunk", "32"});
  const Json all = train_record(dir, "all", with(sim, {"--load-balance", "1"}));
  const Json part = train_record(dir, "part", with(sim, {"--load-balance", "0.7"}));
  EXPECT_EQ(part.at("final").at("status").get<std::string>(), "max_iterations");
  EXPECT_LT(part.at("history").back().at("train_error").get<double>(),
            part.at("history").at(1).at("train_error").get<double>());
  const double passes = stat(part, "gradient_passes") + stat(part, "line_search_probes");
  EXPECT_EQ(stat(part, "passes_stopped_early"), passes);
  EXPECT_EQ(stat(part, "target_patterns_per_pass"), 717);  // ceil(0.7 * 1024)
  // A pass ends with the poll after the target is reached: at most one chunk per worker more.
  EXPECT_GE(stat(part, "mean_patterns_per_gradient_pass"), 717);
  EXPECT_LT(stat(part, "mean_patterns_per_gradient_pass"), 717 + 3 * 32);
  const auto& r_all = all.at("phases").at("ranks");
  const auto& r_part = part.at("phases").at("ranks");
  // The slow worker gets through fewer patterns than a fast one.
  EXPECT_LT(r_part.at(3).at("backward_patterns").get<double>(),
            0.5 * r_part.at(1).at("backward_patterns").get<double>());
  for (int q : {1, 2}) {
    SCOPED_TRACE("rank " + std::to_string(q));
    const double idle_all = r_all.at(q).at("idle_s").get<double>() / passes;
    const double idle_part = r_part.at(q).at("idle_s").get<double>() / passes;
    EXPECT_LT(idle_part, 0.5 * idle_all);
    // Per pass, a fast worker waits in the collectives for at most one chunk of the slow
    // host (32 patterns at 6 w flops on 0.25 Gflop/s) and its last poll (under 1 ms) more
    // than the slow worker, which arrives last and only transfers.
    const double w = all.at("final").at("parameters").get<double>();
    const double chunk_on_slow = 32 * 6 * w / 0.25e9;
    const double waited = (r_part.at(q).at("comm_s").get<double>() - r_part.at(3).at("comm_s").get<double>()) / passes;
    EXPECT_LT(waited, chunk_on_slow + 1e-3);
    EXPECT_GT((r_all.at(q).at("comm_s").get<double>() + r_all.at(q).at("poll_s").get<double>() -
               r_all.at(3).at("comm_s").get<double>() - r_all.at(3).at("poll_s").get<double>()) /
                  passes,
              3 * chunk_on_slow);
  }
}

// Without the arithmetic, load balancing charges the polls and chunks of the workers'
// shares, as the run with it makes them: rank 0 holds no data (RunOptions::pure_master,
// set when the run is made). It once counted shares of p ranks, not of the p - 1 workers,
// and charged 150 chunks where the run made 200 (encoder:64, 4 ranks, chunks of 8).
TEST(cg_engines, a_time_only_run_with_load_balancing_charges_the_workers_chunks) {
  TestDir dir;
  const std::vector<std::string> sim{"--problem", "encoder:64", "--strategy", "cg", "--load-balance", "0.7",
                                     "--chunk", "8", "--epochs", "3", "--engine", "sim", "--np", "4",
                                     "--platform", toy4};
  const Json real = train_record(dir, "real", sim);
  const double probes = stat(real, "line_search_probes") / stat(real, "gradient_passes");
  const Json off =
      train_record(dir, "off", with(sim, {"--numerics", "off", "--cg-probes", fmt::format("{:.17g}", probes)}));
  EXPECT_EQ(stat(off, "chunks"), stat(real, "chunks"));
  EXPECT_EQ(stat(off, "line_search_probes"), stat(real, "line_search_probes"));
  EXPECT_NEAR(off.at("final").at("time_s").get<double>(), real.at("final").at("time_s").get<double>(), 1e-9);
}

// A weights file is user input: a parameter count of 4e15 is refused by the header's own
// layers before a value is read, not met with a request for 32 PB (once "out of memory", exit
// 1); a value line of binary bytes is shown as plain text.
TEST(cg_cli, a_weights_file_with_a_huge_count_or_binary_values_is_refused_naming_it) {
  TestDir dir;
  const std::string head = "wulf-weights 1\nnet 2-1 linear mse bias\nlayers 2 1\nprecision float\n";
  const std::string huge = dir.write("huge.weights", head + "parameters 4000000000000000\nvalues\n1\n2\n3\n");
  EXPECT_EQ(input_error([&] { read_weights(huge); }),
            "weights file " + huge + ":5: parameters 4000000000000000, but a net of layers 2-1 with biases has 3");
  const std::string binary = dir.write("binary.weights", head + "parameters 3\nvalues\n1\n\x7f\xff\xfe\x01\n3\n");
  const std::string message = input_error([&] { read_weights(binary); });
  EXPECT_TRUE(contains(message, binary + ":8: '\\x7f\\xff\\xfe\\x01' is not a number")) << message;
}

// Weights are finite numbers of the net's shape. A value that is nan or inf, or beyond a
// float's range in a float run (1e300), is refused with its line, before the run: such a
// file once trained into "training diverged ... (try a smaller --eta)", and with --epochs 0
// reported "rmse nan" with exit 0. So is a header that does not hold together: layers that
// are not the net's, a count that is not theirs, a key given twice, an iteration that is no
// number.
TEST(cg_cli, weights_that_are_not_finite_or_a_header_that_disagrees_are_refused_with_the_line) {
  TestDir dir;
  const std::vector<std::string> net{"--problem", "function", "--hidden", "1"};  // 2-1-1: 5 values
  const auto file = [](const std::string& precision, const std::string& third) {
    return "wulf-weights 1\nnet 2-1-1 sigmoid/sigmoid mse bias\nlayers 2 1 1\nprecision " + precision +
           "\nparameters 5\nvalues\n0.1\n0.2\n" + third + "\n0.4\n0.5\n";  // the third value on line 9
  };
  const std::string good = dir.write("good.weights", file("float", "0.3"));
  train_record(dir, "good", with(net, {"--epochs", "0", "--weights-in", good}));
  for (const std::string value : {"nan", "-nan", "inf", "-inf", "1e999"})
    for (const std::string epochs : {"0", "1"}) {
      SCOPED_TRACE(value + " --epochs " + epochs);
      const std::string bad = dir.write(value + ".weights", file("float", value));
      expect_train_refused(with(net, {"--epochs", epochs, "--weights-in", bad}),
                           {"--weights-in " + bad + ":9: '" + value + "' is not a finite number"});
    }
  const std::string huge_float = dir.write("huge-float.weights", file("float", "1e300"));
  expect_train_refused(with(net, {"--weights-in", huge_float}),
                       {huge_float + ":9: '1e300' is beyond a float's range (the file's precision is float)"});
  // 1e300 is a double: a double run may start from it, a float run may not.
  const std::string huge_double = dir.write("huge-double.weights", file("double", "1e300"));
  expect_train_refused(with(net, {"--epochs", "0", "--weights-in", huge_double}),
                       {huge_double + ":9: '1e300' is beyond a float's range (this run is --precision float)"});
  train_record(dir, "double", with(net, {"--epochs", "0", "--precision", "double", "--weights-in", huge_double}));
  // Headers that disagree with themselves.
  const std::string text = file("float", "0.3");
  const auto with_line = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  const std::vector<std::pair<std::string, std::string>> headers{
      {with_line("layers 2 1 1", "layers 2 2 1"), ":3: layers 2 2 1, but the net on line 2 is 2-1-1"},
      {with_line("layers 2 1 1", "layers 2 x 1"), ":3: layer size 'x' is not a whole number of at least 1"},
      {with_line("parameters 5", "parameters 6"), ":5: parameters 6, but a net of layers 2-1-1 with biases has 5"},
      {with_line("precision float", "precision float\nprecision double"), ":5: 'precision' again (first on line 4)"},
      {with_line("values", "iteration 1.5\nvalues"), ":6: '1.5' is not an iteration number"},
      {with_line("layers 2 1 1\n", ""), ": no 'layers' line before 'values'"}};
  for (const auto& [contents, why] : headers) {
    SCOPED_TRACE(why);
    const std::string bad = dir.write("header.weights", contents);
    expect_train_refused(with(net, {"--epochs", "0", "--weights-in", bad}), {"--weights-in " + bad + why});
  }
}

}  // namespace
}  // namespace wulf
