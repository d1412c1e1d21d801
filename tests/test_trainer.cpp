// Sequential training: the momentum step, learning by pattern / block / epoch, the
// stopping rule (on its own and in a run), divergence, determinism, and that small
// problems are learned.
#include "data/problems.hpp"
#include "nn/mlp.hpp"
#include "train/stop_rule.hpp"
#include "train/trainer.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <set>
#include <stdexcept>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

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

// What a sequential run ends with.
struct Trained {
  TrainResult result;
  std::vector<double> weights;  // the net's at the end
};

// A sequential run of a net of spec on train_set, checked on test_set, from weights drawn
// with init_seed (uniform in [-init_range, init_range]; 0: 1/sqrt(fan-in) per layer).
template <class T = double>
Trained train_net(const NetSpec& spec, const Dataset& train_set, const Dataset& test_set, const TrainConfig& config,
                  std::uint64_t init_seed, double init_range = 0) {
  Mlp<T> m(spec);
  Rng rng(init_seed);
  m.init_uniform(init_range, rng);
  Trained out;
  out.result = train(m, train_set, test_set, config);
  out.weights.assign(m.parameters().begin(), m.parameters().end());
  return out;
}

// A 1-1 linear net without bias, w = 0.5, and two identical patterns x = 2, t = 3:
// y = w x, E = 1/2 (w x - t)^2, dE/dw = (w x - t) x.
struct OneWeight {
  Mlp<double> net{NetSpec{{1, 1}, {Activation::linear}, Loss::mse, false}};
  Dataset data;
  const std::vector<std::size_t> order{0, 1};
  PhaseTimes phases;
  OneWeight() {
    net.parameters()[0] = 0.5;
    data.inputs = DataMatrix::Constant(1, 2, 2.0f);
    data.targets = DataMatrix::Constant(1, 2, 3.0f);
  }
};

TEST(trainer, momentum_step_matches_the_update_rule_by_hand) {
  OneWeight one;
  MomentumStep<double> step(one.net, 0.1, 0.5);
  // Block of 2: g = 2 * (0.5*2 - 3) * 2 = -8; dw = -0.1 * (-8) / 2 = 0.4; w = 0.9.
  train_pass(one.net, step, one.data, one.order, 2, one.phases);
  EXPECT_NEAR(one.net.parameters()[0], 0.9, 1e-12);
  // Next: g = 2 * (0.9*2 - 3) * 2 = -4.8; dw = 0.24 + 0.5 * 0.4 = 0.44; w = 1.34.
  train_pass(one.net, step, one.data, one.order, 2, one.phases);
  EXPECT_NEAR(one.net.parameters()[0], 1.34, 1e-12);
  EXPECT_EQ(one.phases.updates, 2u);
  EXPECT_EQ(one.phases.forward_patterns, 4u);
}

// RPROP (rprop.hpp) on hand-set gradients of three weights, FANN 2.2's defaults: every
// step by hand.
// Adam with a constant gradient: m / (1 - beta1^t) is g and v / (1 - beta2^t) is g^2, so every
// step moves each weight by eta g / (|g| + epsilon), against the sign of g.
TEST(trainer, adam_step_matches_the_update_rule_by_hand) {
  std::vector<double> w{1.0, -2.0, 0.5};
  const std::vector<double> g{0.5, -0.1, 0.0};  // summed over a block of 2: the mean is half
  AdamStep<double> step(w, 0.1, AdamConfig{}, false);
  for (int t = 1; t <= 3; ++t) {
    step.apply(2, g);
    EXPECT_NEAR(w[0], 1.0 - 0.1 * t * (0.25 / (0.25 + 1e-8)), 1e-12) << t;
    EXPECT_NEAR(w[1], -2.0 + 0.1 * t * (0.05 / (0.05 + 1e-8)), 1e-12) << t;
    EXPECT_EQ(w[2], 0.5) << t;  // no gradient, no step
  }
  // --block-step sum: the gradient as given; the first step still moves eta g / (|g| + eps).
  std::vector<double> u{0.0};
  AdamStep<double> summed(u, 0.1, AdamConfig{.beta1 = 0.5, .beta2 = 0.75, .epsilon = 0.5}, true);
  summed.apply(2, std::vector<double>{2.0});
  EXPECT_NEAR(u[0], -0.1 * 2.0 / (2.0 + 0.5), 1e-15);
  EXPECT_THROW(validate(AdamConfig{.beta1 = 1.0}), InputError);
  EXPECT_THROW(validate(AdamConfig{.epsilon = 0.0}), InputError);
}

// The same steps as PyTorch's torch.optim.Adam (python3-torch, float32, single-tensor path)
// from the same weights and gradients, within float round-off: 1e-6 relative (ATen's kernels
// fuse some multiply-adds that wulf's compiler may not, and the other way round).
TEST(trainer, adam_takes_pytorchs_steps) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    WULF_SKIP("no PyTorch (python3-torch) in /usr/bin/python3");
  TempDir dir("adam");
  const std::size_t n = 37;
  const int steps = 5;
  const AdamConfig config{.beta1 = 0.8, .beta2 = 0.99, .epsilon = 1e-6};
  std::vector<float> w(n);
  std::vector<std::vector<float>> g(steps, std::vector<float>(n));
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
    for (int k = 0; k < steps; ++k)
      g[static_cast<std::size_t>(k)][i] = static_cast<float>(std::cos(1.3 * static_cast<double>(i) + k) * static_cast<double>(i % 5));
  }
  {
    std::ofstream in(dir.file("in.txt"));
    in << std::hexfloat;
    for (const float v : w) in << static_cast<double>(v) << ' ';
    in << '\n';
    for (const auto& gk : g) {
      for (const float v : gk) in << static_cast<double>(v) << ' ';
      in << '\n';
    }
  }
  {
    std::ofstream script(dir.file("adam.py"));
    script << "import sys, torch\n"
              "rows = [[float.fromhex(x) for x in line.split()] for line in open(sys.argv[1])]\n"
              "p = torch.nn.Parameter(torch.tensor(rows[0], dtype=torch.float32))\n"
              "opt = torch.optim.Adam([p], lr=0.05, betas=(0.8, 0.99), eps=1e-6, foreach=False)\n"
              "for g in rows[1:]:\n"
              "    p.grad = torch.tensor(g, dtype=torch.float32)\n"
              "    opt.step()\n"
              "open(sys.argv[2], 'w').write(' '.join(float(v).hex() for v in p.detach().tolist()))\n";
  }
  const std::string cmd = "/usr/bin/python3 " + dir.file("adam.py") + " " + dir.file("in.txt") + " " +
                          dir.file("out.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  AdamStep<float> step(w, 0.05, config, true);
  for (const auto& gk : g) step.apply(1, gk);
  std::ifstream out(dir.file("out.txt"));
  for (std::size_t i = 0; i < n; ++i) {
    std::string word;
    ASSERT_TRUE(out >> word) << i;
    const double torch_w = std::strtod(word.c_str(), nullptr);
    EXPECT_NEAR(w[i], torch_w, 1e-6 * std::max(1.0, std::abs(torch_w))) << "weight " << i;
  }
}

TEST(trainer, rprop_steps_follow_the_gradients_signs_as_fann_takes_them) {
  Mlp<double> net{NetSpec{{1, 3}, {Activation::linear}, Loss::mse, false}};
  auto w = net.parameters();
  auto g = net.gradients();
  w[0] = 0, w[1] = 1499.9, w[2] = 0;
  RpropConfig c;
  RpropStep<double> step(net, c);
  auto apply = [&](double g0, double g1, double g2) {
    g[0] = g0, g[1] = g1, g[2] = g2;
    step.apply();
  };
  // First update: every step is delta_zero 0.1 grown by 1.2 (no previous gradient).
  apply(4.0, -1e-9, 0.0);
  EXPECT_NEAR(w[0], -0.12, 1e-15);       // g > 0: down
  EXPECT_DOUBLE_EQ(w[1], 1500.0);         // g < 0: up, clipped at 1500
  EXPECT_NEAR(w[2], 0.12, 1e-15);         // g = 0 goes up, as in FANN
  apply(0.5, -2.0, 0.0);                   // the same signs: 0.144, whatever the size of g
  EXPECT_NEAR(w[0], -0.264, 1e-15);
  apply(-3.0, -2.0, 0.0);                  // w0's sign changes: step halves to 0.072, and
  EXPECT_NEAR(w[0], -0.192, 1e-15);       // w0 still moves up (FANN's iRprop-)
  apply(-3.0, -2.0, 0.0);                  // after a change, the gradient counts as 0:
  EXPECT_NEAR(w[0], -0.192 + 0.0864, 1e-15);  // 0.072 * 1.2 = 0.0864, up with g < 0
  EXPECT_DOUBLE_EQ(w[1], 1500.0);
  // Steps stop at delta_max, and never start from below FANN's floor of 1e-4.
  Mlp<double> small{NetSpec{{1, 1}, {Activation::linear}, Loss::mse, false}};
  small.parameters()[0] = 0;
  RpropStep<double> floored(small, RpropConfig{.delta_max = 0.15, .delta_zero = 1e-9});
  small.gradients()[0] = -1;
  floored.apply();
  EXPECT_NEAR(small.parameters()[0], 1.2e-4, 1e-15);
  RpropStep<double> capped(small, RpropConfig{.delta_max = 0.15, .delta_zero = 0.14});
  capped.apply();
  EXPECT_NEAR(small.parameters()[0], 1.2e-4 + 0.15, 1e-15);
}

// f throws an InputError whose message holds every one of parts.
template <class F>
void expect_refused(F f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// What the rest of wulf reads of a strategy is all in its descriptor: check that each one is
// whole, so a new strategy's file cannot leave a part out.
TEST(trainer, every_registered_strategy_has_a_whole_descriptor) {
  std::set<std::string> names, keys;
  for (const Strategy s : registered_strategies()) {
    SCOPED_TRACE(std::string(s->name));
    EXPECT_TRUE(names.insert(std::string(s->name)).second) << "two strategies of one name";
    EXPECT_EQ(parse_strategy(s->name), s);
    EXPECT_FALSE(s->help.empty());
    EXPECT_FALSE(s->learning.empty());
    ASSERT_NE(s->layout, nullptr);
    EXPECT_EQ(s->train_float == nullptr, s->sessions != nullptr) << "one net's training, or a table of sessions";
    EXPECT_EQ(s->train_double == nullptr, s->sessions != nullptr);
    if (!s->options.empty()) {
      EXPECT_FALSE(s->options_title.empty());
    }
    TrainConfig c;
    c.strategy = s;
    for (const StrategyOption& o : s->options) {
      SCOPED_TRACE(std::string(o.name));
      EXPECT_TRUE(keys.insert(std::string(o.key)).second) << "two options of one key in the record";
      EXPECT_FALSE(o.help.empty());
      EXPECT_EQ(any_strategy_option(o.name), &o) << "an option name another strategy owns";
      if (o.kind != StrategyOption::Kind::text) {  // its default in its range, the range a finite one
        EXPECT_LE(o.range.lo, o.default_value);
        EXPECT_LE(o.default_value, o.range.hi);
        EXPECT_LT(o.range.lo, o.range.hi);
        EXPECT_TRUE(std::isfinite(o.range.hi));
      }
      if (o.kind == StrategyOption::Kind::whole) {
        EXPECT_EQ(o.default_value, std::floor(o.default_value));
      }
      if (o.kind == StrategyOption::Kind::text) c.settings.set_text(o.name, std::string(o.example));
    }
    // Its defaults (a text option's example) run on two ranks with the arithmetic.
    EXPECT_NO_THROW(check_strategy(c, 2, true));
    // wulf recommend gives b to --block or to an option of the strategy's own, and sweeps
    // only options the strategy owns.
    if (s->search && s->search->block_option != "block") {
      EXPECT_NE(s->option(s->search->block_option), nullptr);
    }
    if (s->search && !s->search->interval_option.empty()) {
      EXPECT_NE(s->option(s->search->interval_option), nullptr);
    }
  }
  EXPECT_EQ(to_string(Strategy()), "block");
  TrainConfig c;
  EXPECT_THROW(setting(c, "no-such-option"), std::logic_error);
}

TEST(trainer, a_strategy_option_out_of_its_range_is_refused_naming_it) {
  TrainConfig c;
  c.strategy = parse_strategy("ppt");
  c.settings.set("error-window", 0);
  expect_refused([&] { check_strategy(c, 2, true); }, {"--error-window", "at least 1"});
  c.settings.set("error-window", 1001);
  expect_refused([&] { check_strategy(c, 2, true); }, {"--error-window", "more than 1000"});
  c.strategy = parse_strategy("session");
  expect_refused([&] { check_strategy(c, 2, true); }, {"--strategy session needs --sweep"});
}

TEST(trainer, rprop_is_refused_where_it_has_no_meaning) {
  const TrainConfig rprop{.learning = Learning::rprop};
  for (Strategy s : {parse_strategy("average"), parse_strategy("ppt"), parse_strategy("cg")}) {
    TrainConfig c = rprop;
    c.strategy = s;
    expect_refused([&] { validate(c, 100, false); }, {"--learning rprop", std::string(to_string(s))});
  }
  for (Strategy s : {parse_strategy("block"), parse_strategy("scatter"), parse_strategy("root")}) {
    TrainConfig c = rprop;
    c.strategy = s;
    EXPECT_NO_THROW(validate(c, 100, false, 4));
  }
  TrainConfig bad = rprop;
  bad.rprop.increase = 0.9;
  expect_refused([&] { validate(bad, 100, false); }, {"--rprop-increase"});
  bad = rprop;
  bad.rprop.delta_max = -1;
  expect_refused([&] { validate(bad, 100, false); }, {"--rprop-delta-max"});
  bad = rprop;
  bad.rprop.decrease = 1;
  expect_refused([&] { validate(bad, 100, false); }, {"--rprop-decrease"});
}

// RPROP's steps, up to 50, drive sigmoid units deep into saturation, where the exact
// derivative a (1 - a) is all but 0 and a wrong output stops learning: from this start the
// 8-3-8 encoder keeps 2 of 8 patterns wrong after 300 passes. FANN's derivative, at a
// clipped to [0.01, 0.99], keeps them learning: every pattern right. One update per pass.
TEST(trainer, rprop_learns_the_encoder_with_fanns_sigmoid_derivative) {
  const Dataset d = make_encoder_set(8);
  const TrainConfig c{.learning = Learning::rprop, .max_iterations = 300, .metric = ErrorMetric::classification};
  NetSpec spec{{8, 3, 8}, {Activation::sigmoid, Activation::sigmoid}, Loss::mse, true};
  const Trained exact = train_net(spec, d, Dataset{}, c, 4);
  EXPECT_EQ(exact.result.final_train.class_errors, 2u);
  spec.clip_sigmoid_derivative = true;
  const Trained clipped = train_net(spec, d, Dataset{}, c, 4);
  EXPECT_EQ(clipped.result.final_train.class_errors, 0u);
  EXPECT_EQ(clipped.result.phases.updates, static_cast<std::size_t>(clipped.result.history.back().iteration));
}

// The weights of an 8-3-8 encoder after 3 iterations from one start, alpha 0.75.
std::vector<double> encoder8_weights(TrainConfig c) {
  const Dataset d = make_encoder_set(8);
  c.alpha = 0.75;
  c.max_iterations = 3;
  return train_net(NetSpec{{8, 3, 8}, {Activation::sigmoid, Activation::sigmoid}, Loss::mse, true}, d, Dataset{}, c, 4)
      .weights;
}

TEST(trainer, damped_momentum_is_classic_momentum_with_eta_scaled_by_one_minus_alpha) {
  auto run = [](double eta, MomentumRule rule) { return encoder8_weights({.momentum = rule, .block = 2, .eta = eta}); };
  const auto damped = run(2.0, MomentumRule::damped), classic = run(0.5, MomentumRule::classic);
  for (std::size_t i = 0; i < damped.size(); ++i) EXPECT_NEAR(damped[i], classic[i], 1e-12) << i;
  EXPECT_NE(run(2.0, MomentumRule::classic), damped);
}

TEST(trainer, a_summed_block_step_is_the_mean_step_with_eta_times_b) {
  // The same hand-made net as above: with sum, a block of 2 moves w by -eta g, twice the
  // mean step; blocks of b with sum at eta equal blocks of b with mean at b eta.
  OneWeight one;
  MomentumStep<double> summed(one.net, 0.1, 0.5, MomentumRule::classic, BlockStep::sum);
  // g = -8 over the block; dw = -0.1 * (-8) = 0.8; w = 1.3.
  train_pass(one.net, summed, one.data, one.order, 2, one.phases);
  EXPECT_NEAR(one.net.parameters()[0], 1.3, 1e-12);

  auto run = [](double eta, BlockStep rule, std::size_t b) {
    return encoder8_weights({.momentum = MomentumRule::damped, .block_step = rule, .block = b, .eta = eta});
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
    return train_net(s, d, Dataset{}, {.learning = l, .block = b, .eta = 0.5, .alpha = 0.2, .max_iterations = 5}, 5,
                     0.5)
        .weights;
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
    const TrainConfig c{.block = 4, .eta = 0.5, .alpha = 0.5, .max_iterations = 4, .seed = seed};
    std::vector<double> errors;
    for (const auto& h : train_net<float>(s, train_set, test_set, c, seed).result.history)
      errors.push_back(h.test->rmse);
    return errors;
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1), run(2));
}

// Inputs kept as bytes (MNIST's pixels) stand for byte / 255: a run on them is the run on
// those floats, bit for bit, in float and in double, through the blocks' gather and the
// evaluation's chunks. Bytes 0..255 all occur.
TEST(trainer, inputs_kept_as_bytes_train_exactly_as_the_floats_they_stand_for) {
  for (int k = 0; k < 256; ++k) EXPECT_EQ(byte_input(static_cast<std::uint8_t>(k)), static_cast<float>(k) / 255.0f);
  {  // the gather's conversion, 16 at a time and then one by one: 263 = 16 x 16 + 7
    Dataset d;
    d.input_bytes.resize(263, 1);
    for (Eigen::Index i = 0; i < 263; ++i) d.input_bytes(i, 0) = static_cast<std::uint8_t>((i * 97) % 256);
    std::vector<float> out(263);
    d.copy_inputs(0, out.data());
    for (Eigen::Index i = 0; i < 263; ++i)
      ASSERT_EQ(out[static_cast<std::size_t>(i)], static_cast<float>(d.input_bytes(i, 0)) / 255.0f) << "input " << i;
  }
  Rng rng(11);
  auto bytes_set = [&](std::size_t n) {
    Dataset d;
    d.input_bytes.resize(37, static_cast<Eigen::Index>(n));
    for (Eigen::Index j = 0; j < d.input_bytes.cols(); ++j)
      for (Eigen::Index i = 0; i < d.input_bytes.rows(); ++i)
        d.input_bytes(i, j) =
            static_cast<std::uint8_t>((i * 7 + j * 13 + static_cast<Eigen::Index>(rng.uniform(0, 40))) % 256);
    d.labels.resize(n);
    for (std::size_t j = 0; j < n; ++j) d.labels[j] = static_cast<int>(j % 3);
    d.targets = one_of_k(d.labels, 3);
    return d;
  };
  const Dataset train_bytes = bytes_set(120), test_bytes = bytes_set(30);
  auto as_floats = [](const Dataset& d) {
    Dataset f = d;
    f.inputs = d.float_inputs();
    f.input_bytes.resize(0, 0);
    return f;
  };
  const Dataset train_floats = as_floats(train_bytes), test_floats = as_floats(test_bytes);
  ASSERT_TRUE(train_bytes.byte_inputs());
  ASSERT_FALSE(train_floats.byte_inputs());
  EXPECT_EQ(train_bytes.size(), train_floats.size());
  EXPECT_EQ(train_bytes.n_inputs(), train_floats.n_inputs());
  const NetSpec s = spec_for(train_bytes, {6}, Activation::sigmoid, Activation::sigmoid);
  const TrainConfig c{.block = 16, .eta = 0.5, .alpha = 0.5, .max_iterations = 3, .seed = 5, .eval_chunk = 7};
  EXPECT_EQ(train_net<float>(s, train_bytes, test_bytes, c, 3).weights,
            train_net<float>(s, train_floats, test_floats, c, 3).weights);
  const Trained b = train_net<double>(s, train_bytes, test_bytes, c, 3),
                f = train_net<double>(s, train_floats, test_floats, c, 3);
  EXPECT_EQ(b.weights, f.weights);
  EXPECT_EQ(b.result.history.back().test->rmse, f.result.history.back().test->rmse);
  // keep() cuts the bytes as it cuts floats.
  Dataset cut = train_bytes, cut_floats = train_floats;
  cut.keep(10, 20), cut_floats.keep(10, 20);
  EXPECT_EQ(cut.size(), 20u);
  EXPECT_EQ(cut.float_inputs(), cut_floats.inputs);
}

TEST(trainer, stops_at_the_first_iteration_at_or_below_the_target) {
  const Dataset d = make_encoder_set(8);
  const TrainConfig c{
      .block = 2, .eta = 2.0, .alpha = 0.9, .max_iterations = 5000, .target_error = 0.1, .metric = ErrorMetric::rmse};
  const TrainResult r =
      train_net(spec_for(d, {3}, Activation::sigmoid, Activation::sigmoid), d, Dataset{}, c, 1).result;
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
  const TrainConfig c{.learning = Learning::pattern,
                      .eta = 0.1,
                      .max_iterations = 3,
                      .target_error = 1e-9,
                      .metric = ErrorMetric::rmse};
  const TrainResult r =
      train_net(spec_for(d, {2}, Activation::sigmoid, Activation::sigmoid), d, Dataset{}, c, 1).result;
  EXPECT_EQ(r.reason, StopReason::max_iterations);
  EXPECT_NE(r.reason_detail.find("without reaching the target error"), std::string::npos) << r.reason_detail;
  EXPECT_NE(r.reason_detail.find("best"), std::string::npos);
}

TEST(trainer, a_diverging_run_stops_and_says_so) {
  Rng rng(3);
  const Dataset d = make_function_set(64, 0.05, rng);
  const TrainConfig c{.block = 4, .eta = 1e4, .max_iterations = 50};
  const TrainResult r = train_net(spec_for(d, {16}, Activation::linear, Activation::linear), d, d, c, 1, 1.0).result;
  EXPECT_EQ(r.reason, StopReason::diverged);
  EXPECT_NE(r.reason_detail.find("diverged"), std::string::npos);
  EXPECT_LT(r.history.back().iteration, 50);
}

// Iteration it's record with the check error e (rmse on the test set) at time_s.
IterationRecord checked(int it, double e, double time_s = 0) {
  IterationRecord r;
  r.iteration = it;
  r.time_s = time_s;
  Evaluation test;
  test.rmse = e;
  r.test = test;
  return r;
}

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

TEST(stop_rule, stops_at_the_first_iteration_at_or_below_the_target) {
  const TrainConfig c{.max_iterations = 100, .target_error = 0.1};
  StopRule rule(c, true, true, true);
  EXPECT_FALSE(rule.after_check(checked(1, 0.3), std::nullopt));
  EXPECT_FALSE(rule.after_check(checked(2, 0.1000001), std::nullopt));
  const std::optional<Stop> stop = rule.after_check(checked(3, 0.1), std::nullopt);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->reason, StopReason::target_reached);
  EXPECT_EQ(stop->detail, "target error 0.1 reached in iteration 3 (0.1)");
  // Where the strategy applies the target itself (ppt), the rule does not.
  StopRule strategy_applies_it(c, true, false, true);
  EXPECT_FALSE(strategy_applies_it.after_check(checked(1, 0.05), std::nullopt));
}

TEST(stop_rule, a_nan_error_is_a_fault_and_never_the_best) {
  const TrainConfig c{.max_iterations = 100};
  StopRule rule(c, true, true, true);
  Evaluation seen;
  EXPECT_FALSE(rule.before_check(1, seen, std::nullopt));
  EXPECT_FALSE(rule.after_check(checked(1, 0.5), std::nullopt));
  seen.loss = nan;
  const std::optional<Stop> training = rule.before_check(2, seen, std::nullopt);
  ASSERT_TRUE(training);
  EXPECT_EQ(training->reason, StopReason::diverged);
  EXPECT_TRUE(stopped_on_fault(training->reason));
  EXPECT_NE(training->detail.find("diverged in iteration 2"), std::string::npos) << training->detail;
  const std::optional<Stop> check = rule.after_check(checked(2, nan), std::nullopt);
  ASSERT_TRUE(check);
  EXPECT_EQ(check->reason, StopReason::diverged);
  EXPECT_NE(check->detail.find("check-set error is not finite"), std::string::npos) << check->detail;
  ASSERT_TRUE(rule.best());
  EXPECT_EQ(rule.best()->iteration, 1);
  EXPECT_EQ(rule.best()->error, 0.5);
  // Without the arithmetic there are no errors to check.
  StopRule off(c, false, true, true);
  EXPECT_FALSE(off.before_check(2, seen, std::nullopt));
  EXPECT_FALSE(off.best());
}

TEST(stop_rule, a_fault_the_strategy_found_comes_before_the_errors) {
  const TrainConfig c{.max_iterations = 100, .target_error = 0.1};
  StopRule rule(c, true, true, true);
  Evaluation seen;
  seen.loss = nan;
  const std::optional<Stop> fault = Stop{StopReason::line_search_failed, "no minimum"};
  EXPECT_EQ(rule.before_check(1, seen, fault)->reason, StopReason::line_search_failed);
  // The strategy's own stop that is no fault ends the run after the check pass, before the target.
  const std::optional<Stop> own = Stop{StopReason::target_reached, "confirmed"};
  EXPECT_FALSE(rule.before_check(1, Evaluation{}, own));
  EXPECT_EQ(rule.after_check(checked(1, 0.05), own)->detail, "confirmed");
}

TEST(stop_rule, the_time_and_iteration_limits_quote_the_best_error) {
  const TrainConfig c{.max_iterations = 3, .target_error = 0.01, .max_seconds = 10};
  StopRule rule(c, true, true, true);
  EXPECT_FALSE(rule.after_check(checked(1, 0.5, 1), std::nullopt));
  EXPECT_FALSE(rule.after_check(checked(2, 0.2, 2), std::nullopt));
  const std::optional<Stop> all = rule.after_check(checked(3, 0.3, 3), std::nullopt);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->reason, StopReason::max_iterations);
  EXPECT_EQ(all->detail,
            "ran all 3 iterations without reaching the target error 0.01 (best 0.2 in iteration 2, at 2 s)");
  StopRule timed(c, true, true, true);
  const std::optional<Stop> late = timed.after_check(checked(1, 0.4, 12), std::nullopt);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->reason, StopReason::time_limit);
  EXPECT_EQ(
      late->detail,
      "time limit of 10 s reached in iteration 1 without reaching the target error 0.01 (best 0.4 in iteration 1, "
      "at 12 s)");
}

TEST(trainer, validate_refuses_bad_settings_with_the_option_named) {
  const Dataset d = make_parity_set(3);
  auto message = [&](const TrainConfig& c) {
    try {
      validate(c, d.size(), d.has_labels());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // A good configuration (block 4) with one setting changed, and what the message names.
  const std::vector<std::pair<TrainConfig, std::string>> cases{
      {{.block = 9}, "larger than the training set (8 patterns)"},
      {{.block = 0}, "--block"},
      {{.block = 4, .eta = -1}, "--eta"},
      {{.block = 4, .eta = std::nan("")}, "--eta"},
      {{.block = 4, .alpha = 1.0}, "--alpha"},
      {{.block = 4, .max_iterations = -1}, "--epochs"},
      {{.block = 4, .target_error = -0.5}, "--target-error"}};
  for (const auto& [c, part] : cases) EXPECT_NE(message(c).find(part), std::string::npos) << message(c);
  EXPECT_EQ(message({.block = 4}), "accepted");
}

TEST(trainer, learns_three_bit_parity_by_pattern) {
  const Dataset d = make_parity_set(3);
  const TrainConfig c{.learning = Learning::pattern,
                      .eta = 0.5,
                      .alpha = 0.3,
                      .max_iterations = 5000,
                      .target_error = 0.0,
                      .metric = ErrorMetric::classification};
  const TrainResult r =
      train_net<float>(spec_for(d, {8}, Activation::sigmoid, Activation::sigmoid), d, Dataset{}, c, 2).result;
  EXPECT_EQ(r.reason, StopReason::target_reached) << r.reason_detail;
  EXPECT_EQ(r.final_train.class_errors, 0u);
}

TEST(trainer, phase_times_count_every_pattern) {
  const Dataset d = make_encoder_set(16);
  const TrainConfig c{.block = 5, .max_iterations = 3};  // 16 = 5 + 5 + 5 + 1: four updates per iteration
  const TrainResult r =
      train_net(spec_for(d, {4}, Activation::sigmoid, Activation::sigmoid), d, Dataset{}, c, 1).result;
  EXPECT_EQ(r.phases.forward_patterns, 48u);
  EXPECT_EQ(r.phases.updates, 12u);
  EXPECT_GT(r.phases.forward, 0.0);
  EXPECT_GT(r.phases.backward, 0.0);
  EXPECT_GT(r.phases.test, 0.0);
}

}  // namespace
}  // namespace wulf
