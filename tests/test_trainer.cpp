// Sequential training: the momentum step, learning by pattern / block / epoch, the
// stopping rule, divergence, determinism, and that small problems are learned.
#include "nn/mlp.hpp"
#include "util/errors.hpp"
#include "data/problems.hpp"
#include "train/trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace wulf {
namespace {

NetSpec spec_for(const Dataset& d, std::vector<int> hidden, Activation h, Activation out, Loss loss = Loss::mse) {
  NetSpec s;
  s.sizes.push_back(d.n_inputs());
  for (int x : hidden) s.sizes.push_back(x);
  s.sizes.push_back(d.n_outputs());
  s.activations.assign(hidden.size(), h);
  s.activations.push_back(out);
  s.loss = loss;
  return s;
}

TEST(trainer, momentum_step_matches_the_update_rule_by_hand) {
  // A 1-1 linear net without bias: y = w x, E = 1/2 (w x - t)^2, dE/dw = (w x - t) x.
  NetSpec s{{1, 1}, {Activation::linear}, Loss::mse, false};
  Mlp<double> m(s);
  m.parameters()[0] = 0.5;
  Dataset d;
  d.inputs = DataMatrix::Constant(1, 2, 2.0f);  // two identical patterns x = 2, t = 3
  d.targets = DataMatrix::Constant(1, 2, 3.0f);
  MomentumStep<double> step(m, 0.1, 0.5);
  PhaseTimes ph;
  const std::vector<std::size_t> order{0, 1};
  // Block of 2: g = 2 * (0.5*2 - 3) * 2 = -8; dw = -0.1 * (-8) / 2 = 0.4; w = 0.9.
  train_pass(m, step, d, order, 2, ph);
  EXPECT_NEAR(m.parameters()[0], 0.9, 1e-12);
  // Next: g = 2 * (0.9*2 - 3) * 2 = -4.8; dw = 0.24 + 0.5 * 0.4 = 0.44; w = 1.34.
  train_pass(m, step, d, order, 2, ph);
  EXPECT_NEAR(m.parameters()[0], 1.34, 1e-12);
  EXPECT_EQ(ph.updates, 2u);
  EXPECT_EQ(ph.forward_patterns, 4u);
}

// The weights of an 8-3-8 encoder after 3 iterations from one start, alpha 0.75.
std::vector<double> encoder8_weights(TrainConfig c) {
  const Dataset d = make_encoder_set(8);
  Mlp<double> m(NetSpec{{8, 3, 8}, {Activation::sigmoid, Activation::sigmoid}, Loss::mse, true});
  Rng rng(4);
  m.init_uniform(0, rng);
  c.alpha = 0.75;
  c.max_iterations = 3;
  train(m, d, Dataset{}, c);
  return std::vector<double>(m.parameters().begin(), m.parameters().end());
}

TEST(trainer, damped_momentum_is_classic_momentum_with_eta_scaled_by_one_minus_alpha) {
  auto run = [](double eta, MomentumRule rule) {
    TrainConfig c;
    c.block = 2;
    c.eta = eta;
    c.momentum = rule;
    return encoder8_weights(c);
  };
  const auto damped = run(2.0, MomentumRule::damped), classic = run(0.5, MomentumRule::classic);
  for (std::size_t i = 0; i < damped.size(); ++i) EXPECT_NEAR(damped[i], classic[i], 1e-12) << i;
  EXPECT_NE(run(2.0, MomentumRule::classic), damped);
}

TEST(trainer, a_summed_block_step_is_the_mean_step_with_eta_times_b) {
  // The same hand-made net as above: with sum, a block of 2 moves w by -eta g, twice the
  // mean step; blocks of b with sum at eta equal blocks of b with mean at b eta.
  NetSpec s1{{1, 1}, {Activation::linear}, Loss::mse, false};
  Mlp<double> m(s1);
  m.parameters()[0] = 0.5;
  Dataset one;
  one.inputs = DataMatrix::Constant(1, 2, 2.0f);
  one.targets = DataMatrix::Constant(1, 2, 3.0f);
  MomentumStep<double> summed(m, 0.1, 0.5, MomentumRule::classic, BlockStep::sum);
  PhaseTimes ph;
  // g = -8 over the block; dw = -0.1 * (-8) = 0.8; w = 1.3.
  train_pass(m, summed, one, {0, 1}, 2, ph);
  EXPECT_NEAR(m.parameters()[0], 1.3, 1e-12);

  auto run = [](double eta, BlockStep rule, std::size_t b) {
    TrainConfig c;
    c.block = b;
    c.eta = eta;
    c.momentum = MomentumRule::damped;
    c.block_step = rule;
    return encoder8_weights(c);
  };
  const auto sum = run(0.5, BlockStep::sum, 4), mean = run(2.0, BlockStep::mean, 4);
  for (std::size_t i = 0; i < sum.size(); ++i) EXPECT_NEAR(sum[i], mean[i], 1e-12) << i;
  EXPECT_NE(run(0.5, BlockStep::mean, 4), sum);
  // By pattern the two are one rule.
  EXPECT_EQ(run(0.5, BlockStep::sum, 1), run(0.5, BlockStep::mean, 1));
}

TEST(trainer, pattern_and_epoch_learning_are_blocks_of_one_and_of_n) {
  const Dataset d = make_parity_set(4);
  const NetSpec s = spec_for(d, {6}, Activation::tanh, Activation::sigmoid);
  auto run = [&](Learning l, std::size_t b) {
    Mlp<double> m(s);
    Rng rng(5);
    m.init_uniform(0.5, rng);
    TrainConfig c;
    c.learning = l;
    c.block = b;
    c.eta = 0.5;
    c.alpha = 0.2;
    c.max_iterations = 5;
    train(m, d, Dataset{}, c);
    return std::vector<double>(m.parameters().begin(), m.parameters().end());
  };
  EXPECT_EQ(run(Learning::pattern, 7), run(Learning::block, 1));
  EXPECT_EQ(run(Learning::epoch, 3), run(Learning::block, d.size()));
  EXPECT_NE(run(Learning::block, 4), run(Learning::block, 1));
}

TEST(trainer, same_seed_gives_the_same_run_bit_for_bit) {
  Rng rng(7);
  const Dataset train_set = make_function_set(200, 0.05, rng);
  const Dataset test_set = make_function_set(50, 0.05, rng);
  const NetSpec s = spec_for(train_set, {8, 8}, Activation::sigmoid, Activation::linear);
  auto run = [&](std::uint64_t seed) {
    Mlp<float> m(s);
    Rng init(seed);
    m.init_uniform(0, init);
    TrainConfig c;
    c.block = 4;
    c.eta = 0.5;
    c.alpha = 0.5;
    c.max_iterations = 4;
    c.seed = seed;
    TrainResult r = train(m, train_set, test_set, c);
    std::vector<double> errors;
    for (const auto& h : r.history) errors.push_back(h.test->rmse);
    return errors;
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1), run(2));
}

TEST(trainer, stops_at_the_first_iteration_at_or_below_the_target) {
  const Dataset d = make_encoder_set(8);
  Mlp<double> m(spec_for(d, {3}, Activation::sigmoid, Activation::sigmoid));
  Rng rng(1);
  m.init_uniform(0, rng);
  TrainConfig c;
  c.block = 2;
  c.eta = 2.0;
  c.alpha = 0.9;
  c.max_iterations = 5000;
  c.metric = ErrorMetric::rmse;
  c.target_error = 0.1;
  const TrainResult r = train(m, d, Dataset{}, c);
  ASSERT_EQ(r.reason, StopReason::target_reached) << r.reason_detail;
  const auto& last = r.history.back();
  EXPECT_LE(last.train->rmse, 0.1);
  for (std::size_t i = 0; i + 1 < r.history.size(); ++i) EXPECT_GT(r.history[i].train->rmse, 0.1) << i;
  // History is complete and its times never go back.
  for (std::size_t i = 0; i < r.history.size(); ++i) {
    EXPECT_EQ(r.history[i].iteration, static_cast<int>(i));
    if (i) {
      EXPECT_GE(r.history[i].time_s, r.history[i - 1].time_s);
    }
  }
}

TEST(trainer, reports_the_best_error_when_the_target_is_never_reached) {
  const Dataset d = make_parity_set(3);
  Mlp<double> m(spec_for(d, {2}, Activation::sigmoid, Activation::sigmoid));
  Rng rng(1);
  m.init_uniform(0, rng);
  TrainConfig c;
  c.learning = Learning::pattern;
  c.eta = 0.1;
  c.max_iterations = 3;
  c.metric = ErrorMetric::rmse;
  c.target_error = 1e-9;
  const TrainResult r = train(m, d, Dataset{}, c);
  EXPECT_EQ(r.reason, StopReason::max_iterations);
  EXPECT_NE(r.reason_detail.find("without reaching the target error"), std::string::npos) << r.reason_detail;
  EXPECT_NE(r.reason_detail.find("best"), std::string::npos);
}

TEST(trainer, a_diverging_run_stops_and_says_so) {
  Rng rng(3);
  const Dataset d = make_function_set(64, 0.05, rng);
  Mlp<double> m(spec_for(d, {16}, Activation::linear, Activation::linear));
  Rng init(1);
  m.init_uniform(1.0, init);
  TrainConfig c;
  c.block = 4;
  c.eta = 1e4;
  c.max_iterations = 50;
  const TrainResult r = train(m, d, d, c);
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_NE(r.reason_detail.find("diverged"), std::string::npos);
  EXPECT_LT(r.history.back().iteration, 50);
}

TEST(trainer, validate_refuses_bad_settings_with_the_option_named) {
  const Dataset d = make_parity_set(3);
  auto message = [&](TrainConfig c) {
    try {
      validate(c, d.size(), d.has_labels());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  TrainConfig base;
  base.block = 4;
  TrainConfig c = base;
  c.block = 9;
  EXPECT_NE(message(c).find("larger than the training set (8 patterns)"), std::string::npos) << message(c);
  c.block = 0;
  EXPECT_NE(message(c).find("--block"), std::string::npos);
  c = base;
  c.eta = -1;
  EXPECT_NE(message(c).find("--eta"), std::string::npos);
  c = base;
  c.eta = std::nan("");
  EXPECT_NE(message(c).find("--eta"), std::string::npos);
  c = base;
  c.alpha = 1.0;
  EXPECT_NE(message(c).find("--alpha"), std::string::npos);
  c = base;
  c.max_iterations = 0;
  EXPECT_NE(message(c).find("--epochs"), std::string::npos);
  c = base;
  c.target_error = -0.5;
  EXPECT_NE(message(c).find("--target-error"), std::string::npos);
  c = base;
  EXPECT_EQ(message(c), "accepted");
}

TEST(trainer, learns_three_bit_parity_by_pattern) {
  const Dataset d = make_parity_set(3);
  Mlp<float> m(spec_for(d, {8}, Activation::sigmoid, Activation::sigmoid));
  Rng rng(2);
  m.init_uniform(0, rng);
  TrainConfig c;
  c.learning = Learning::pattern;
  c.eta = 0.5;
  c.alpha = 0.3;
  c.max_iterations = 5000;
  c.metric = ErrorMetric::classification;
  c.target_error = 0.0;
  const TrainResult r = train(m, d, Dataset{}, c);
  EXPECT_EQ(r.reason, StopReason::target_reached) << r.reason_detail;
  EXPECT_EQ(r.final_train.class_errors, 0u);
}

TEST(trainer, phase_times_count_every_pattern) {
  const Dataset d = make_encoder_set(16);
  Mlp<double> m(spec_for(d, {4}, Activation::sigmoid, Activation::sigmoid));
  Rng rng(1);
  m.init_uniform(0, rng);
  TrainConfig c;
  c.block = 5;  // 16 = 5 + 5 + 5 + 1: four updates per iteration
  c.max_iterations = 3;
  const TrainResult r = train(m, d, Dataset{}, c);
  EXPECT_EQ(r.phases.forward_patterns, 48u);
  EXPECT_EQ(r.phases.updates, 12u);
  EXPECT_GT(r.phases.forward, 0.0);
  EXPECT_GT(r.phases.backward, 0.0);
  EXPECT_GT(r.phases.test, 0.0);
}

}  // namespace
}  // namespace wulf
