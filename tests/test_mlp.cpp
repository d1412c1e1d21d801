// The network: parameter counts of the seed nets, the flat buffer layout, the block
// (matrix-matrix) formulation, and backward against central differences.
#include "data/dataset.hpp"
#include "util/errors.hpp"
#include "nn/mlp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

namespace wulf {
namespace {

NetSpec net(std::vector<int> sizes, Activation hidden, Activation out, Loss loss, bool bias) {
  NetSpec s;
  s.sizes = std::move(sizes);
  s.activations.assign(s.sizes.size() - 2, hidden);
  s.activations.push_back(out);
  s.loss = loss;
  s.bias = bias;
  return s;
}

TEST(mlp, seed000_nets_count_the_papers_weights_without_bias) {
  // Seed 000 Table IV: function 16 768, encoder 4 096, digits 54 912.
  using A = Activation;
  EXPECT_EQ(Mlp<float>(net({2, 128, 128, 1}, A::sigmoid, A::linear, Loss::mse, false)).parameter_count(), 16768u);
  EXPECT_EQ(Mlp<float>(net({256, 8, 256}, A::sigmoid, A::sigmoid, Loss::mse, false)).parameter_count(), 4096u);
  EXPECT_EQ(Mlp<double>(net({784, 64, 64, 10}, A::sigmoid, A::sigmoid, Loss::mse, false)).parameter_count(), 54912u);
  // With bias every unit above the inputs adds one weight.
  EXPECT_EQ(net({784, 64, 64, 10}, A::sigmoid, A::sigmoid, Loss::mse, true).parameter_count(), 54912u + 64 + 64 + 10);
  // Seed 002's JOCR net 400-480-3203: the 1 729 440 floats its reduce moves (6.6 MB).
  EXPECT_EQ(net({400, 480, 3203}, A::tanh, A::tanh, Loss::mse, false).parameter_count(), 1729440u);
}

TEST(mlp, kernel_flops_count_what_forward_and_backward_perform) {
  // Worked by hand. JOCR 400-480-3203, no bias: w = 192 000 + 1 537 440. Forward 2w;
  // backward 2w of weight gradients + 2 x 1 537 440 of the second layer's delta product:
  // the first layer's (2 x 192 000) is never computed, 3.7% of 6w.
  const KernelFlops jocr = kernel_flops({400, 480, 3203}, false);
  EXPECT_EQ(jocr.weights, 1729440.0);
  EXPECT_EQ(jocr.forward, 2 * 1729440.0);
  EXPECT_EQ(jocr.backward, 2 * 1729440.0 + 2 * 1537440.0);
  EXPECT_NEAR(1 - (jocr.forward + jocr.backward) / jocr.six_w(), 0.037, 0.0005);
  EXPECT_EQ(jocr.update, 4 * 1729440.0);
  EXPECT_EQ(jocr.test(), jocr.forward);
  // Digits 784-64-64-10 with bias: products 2 x (50 176 + 4 096 + 640), biases 138 added
  // forward and summed backward; delta products of layers 2 and 3: 2 x (4 096 + 640).
  const KernelFlops digits = kernel_flops({784, 64, 64, 10}, true);
  EXPECT_EQ(digits.weights, 55050.0);
  EXPECT_EQ(digits.forward, 109824.0 + 138);
  EXPECT_EQ(digits.backward, 109824.0 + 138 + 9472);
  EXPECT_NEAR(digits.six_w() / (digits.forward + digits.backward), 1.44, 0.005);  // 6w counts 44% too many
  // NetSpec::flops is the same count.
  EXPECT_EQ(net({784, 64, 64, 10}, Activation::sigmoid, Activation::sigmoid, Loss::mse, true).flops().backward,
            digits.backward);
}

TEST(mlp, layer_views_tile_the_one_parameter_buffer) {
  Mlp<double> m(net({3, 4, 2}, Activation::tanh, Activation::linear, Loss::mse, true));
  auto p = m.parameters();
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<double>(i);
  // Layer 1: W (4x3) column-major at 0..11, b at 12..15; layer 2: W (2x4) at 16..23, b 24..25.
  EXPECT_EQ(m.weights(1)(0, 0), 0);
  EXPECT_EQ(m.weights(1)(1, 0), 1);
  EXPECT_EQ(m.weights(1)(0, 1), 4);
  EXPECT_EQ(m.biases(1)(0), 12);
  EXPECT_EQ(m.weights(2)(0, 0), 16);
  EXPECT_EQ(m.biases(2)(1), 25);
  EXPECT_EQ(p.size(), 26u);
  EXPECT_EQ(m.gradients().size(), 26u);
  m.dweights(2)(1, 3) = 7;
  EXPECT_EQ(m.gradients()[16 + 1 + 3 * 2], 7);
}

TEST(mlp, invalid_specs_are_refused_with_a_reason) {
  EXPECT_THROW(Mlp<float>(net({3, 0, 2}, Activation::tanh, Activation::linear, Loss::mse, true)), InputError);
  EXPECT_THROW(Mlp<float>(net({3, 4, 2}, Activation::softmax, Activation::linear, Loss::mse, true)), InputError);
  try {
    Mlp<float>(net({3, 4, 2}, Activation::tanh, Activation::tanh, Loss::cross_entropy, true));
    FAIL() << "cross-entropy on a tanh output was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("softmax or sigmoid"), std::string::npos) << e.what();
  }
}

// Random inputs and targets that suit the loss: one-of-k for softmax cross-entropy, values
// in (0, 1) for sigmoid cross-entropy, anything for mse.
template <class T>
void make_block(const NetSpec& s, Rng& rng, typename Mlp<T>::Matrix& x, typename Mlp<T>::Matrix& t, int patterns) {
  x.resize(s.sizes.front(), patterns);
  t.resize(s.sizes.back(), patterns);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = static_cast<T>(rng.uniform(-1, 1));
  for (Eigen::Index j = 0; j < t.cols(); ++j) {
    for (Eigen::Index i = 0; i < t.rows(); ++i)
      t(i, j) = static_cast<T>(s.loss == Loss::cross_entropy ? rng.uniform(0.05, 0.95) : rng.uniform(-1, 1));
    if (s.loss == Loss::cross_entropy && s.activations.back() == Activation::softmax) {
      t.col(j).setZero();
      t(static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(t.rows()))), j) = 1;
    }
  }
}

// (hidden activation, output activation, loss, bias)
using GradCase = std::tuple<Activation, Activation, Loss, bool>;

class mlp_gradient : public ::testing::TestWithParam<GradCase> {};

// Compares backward() with (E(w + h e_i) - E(w - h e_i)) / 2h for every parameter.
// Tolerances: double h = 1e-6, |error| <= 1e-6 * max|g|; float h = 1e-2 (float rounding
// in E is about 1e-7 E, so the difference quotient carries ~1e-5 of noise), |error| <=
// 2e-3 * max|g|. The guard: every layer's gradient block must have a norm above 1e-4, so
// an all-zero gradient cannot pass.
template <class T>
void check_gradient(const GradCase& c) {
  const auto [hidden, out, loss, bias] = c;
  const NetSpec spec = net({4, 5, 6, 3}, hidden, out, loss, bias);
  Mlp<T> m(spec);
  Rng rng(42);
  m.init_uniform(0.8, rng);
  typename Mlp<T>::Matrix x, t;
  make_block<T>(spec, rng, x, t, 7);

  m.zero_gradients();
  m.forward(x);
  m.backward(t);
  const std::vector<T> analytic(m.gradients().begin(), m.gradients().end());

  const T h = std::is_same_v<T, double> ? T(1e-6) : T(1e-2);
  const double rel_tol = std::is_same_v<T, double> ? 1e-6 : 2e-3;
  auto p = m.parameters();
  double scale = 0;
  for (T g : analytic) scale = std::max(scale, std::abs(static_cast<double>(g)));
  for (std::size_t i = 0; i < p.size(); ++i) {
    const T saved = p[i];
    p[i] = saved + h;
    const T e_plus = Mlp<T>::loss_sum(loss, out, m.forward(x), t);
    p[i] = saved - h;
    const T e_minus = Mlp<T>::loss_sum(loss, out, m.forward(x), t);
    p[i] = saved;
    const double numeric = (static_cast<double>(e_plus) - static_cast<double>(e_minus)) / (2.0 * static_cast<double>(h));
    ASSERT_NEAR(static_cast<double>(analytic[i]), numeric, rel_tol * scale) << "parameter " << i;
  }
  // Not trivially zero: each layer's weights and biases carry gradient.
  m.zero_gradients();
  m.forward(x);
  m.backward(t);
  for (int l = 1; l <= spec.n_layers(); ++l) {
    EXPECT_GT(static_cast<double>(m.dweights(l).norm()), 1e-4) << "layer " << l;
    if (bias) {
      EXPECT_GT(static_cast<double>(m.dbiases(l).norm()), 1e-4) << "layer " << l;
    }
  }
}

TEST_P(mlp_gradient, double_matches_central_difference) { check_gradient<double>(GetParam()); }
TEST_P(mlp_gradient, float_matches_central_difference) { check_gradient<float>(GetParam()); }

std::vector<GradCase> all_cases() {
  std::vector<GradCase> cases;
  for (Activation hidden : {Activation::sigmoid, Activation::tanh, Activation::linear})
    for (Activation out : {Activation::sigmoid, Activation::tanh, Activation::linear, Activation::softmax})
      for (Loss loss : {Loss::mse, Loss::cross_entropy})
        for (bool bias : {true, false}) {
          if (loss == Loss::cross_entropy && out != Activation::sigmoid && out != Activation::softmax) continue;
          cases.emplace_back(hidden, out, loss, bias);
        }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<GradCase>& info) {
  const auto [hidden, out, loss, bias] = info.param;
  return std::string(to_string(hidden)) + "_" + std::string(to_string(out)) + "_" + std::string(to_string(loss)) +
         (bias ? "_bias" : "_nobias");
}

INSTANTIATE_TEST_SUITE_P(all, mlp_gradient, ::testing::ValuesIn(all_cases()), case_name);

TEST(mlp, block_forward_and_backward_equal_pattern_by_pattern) {
  const NetSpec spec = net({5, 7, 3}, Activation::tanh, Activation::softmax, Loss::cross_entropy, true);
  Mlp<double> m(spec);
  Rng rng(3);
  m.init_uniform(0.5, rng);
  Mlp<double>::Matrix x, t;
  make_block<double>(spec, rng, x, t, 9);

  m.zero_gradients();
  const Mlp<double>::Matrix y_block = m.forward(x);
  const double e_block = m.backward(t);
  const std::vector<double> g_block(m.gradients().begin(), m.gradients().end());

  m.zero_gradients();
  double e_sum = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const Mlp<double>::Matrix xj = x.col(j), tj = t.col(j);
    const Mlp<double>::Matrix& yj = m.forward(xj);
    EXPECT_LT((yj - y_block.col(j)).norm(), 1e-12);
    e_sum += m.backward(tj);  // gradients accumulate (+=) over the patterns
  }
  EXPECT_NEAR(e_block, e_sum, 1e-12);
  for (std::size_t i = 0; i < g_block.size(); ++i) EXPECT_NEAR(g_block[i], m.gradients()[i], 1e-12) << i;
}

// backward() keeps each layer's delta from block to block and works on it in place; a
// block of another width must still give exactly what a fresh net gives for that block.
// Three layers, so a hidden delta of one height is followed by one of another.
TEST(mlp, blocks_of_changing_width_give_the_gradients_of_a_fresh_net) {
  for (Activation hidden : {Activation::sigmoid, Activation::tanh, Activation::linear}) {
    const NetSpec spec = net({6, 9, 4, 5}, hidden, Activation::softmax, Loss::mse, true);
    Mlp<float> reused(spec);
    Rng rng(11);
    reused.init_uniform(0.7, rng);
    for (int patterns : {8, 3, 1, 8, 5}) {
      Mlp<float>::Matrix x, t;
      make_block<float>(spec, rng, x, t, patterns);
      Mlp<float> fresh(spec);
      std::copy(reused.parameters().begin(), reused.parameters().end(), fresh.parameters().begin());
      reused.forward(x);
      fresh.forward(x);
      EXPECT_EQ(reused.backward(t, false), fresh.backward(t, false)) << patterns << " patterns";
      for (std::size_t i = 0; i < reused.parameter_count(); ++i)
        ASSERT_EQ(reused.gradients()[i], fresh.gradients()[i]) << patterns << " patterns, parameter " << i;
    }
  }
}

TEST(mlp, softmax_outputs_are_distributions_even_for_large_inputs) {
  Mlp<float> m(net({2, 3}, Activation::sigmoid, Activation::softmax, Loss::cross_entropy, true));
  for (auto& w : m.parameters()) w = 400.0f;  // exp(800+) would overflow without the shift
  Mlp<float>::Matrix x(2, 2);
  x << 1, -1, 2, 0.5f;
  const auto& y = m.forward(x);
  for (Eigen::Index j = 0; j < y.cols(); ++j) {
    EXPECT_TRUE(y.col(j).allFinite());
    EXPECT_NEAR(y.col(j).sum(), 1.0f, 1e-6f);
  }
}

TEST(mlp, initialisation_is_deterministic_and_within_range) {
  const NetSpec spec = net({10, 20, 5}, Activation::sigmoid, Activation::sigmoid, Loss::mse, true);
  Mlp<double> a(spec), b(spec);
  Rng ra(9), rb(9);
  a.init_uniform(0.3, ra);
  b.init_uniform(0.3, rb);
  for (std::size_t i = 0; i < a.parameter_count(); ++i) {
    EXPECT_EQ(a.parameters()[i], b.parameters()[i]);
    EXPECT_LE(std::abs(a.parameters()[i]), 0.3);
  }
  // Range 0: 1/sqrt(fan-in) per layer.
  Rng rc(9);
  a.init_uniform(0.0, rc);
  EXPECT_LE(a.weights(1).cwiseAbs().maxCoeff(), 1.0 / std::sqrt(10.0));
  EXPECT_LE(a.weights(2).cwiseAbs().maxCoeff(), 1.0 / std::sqrt(20.0));
  EXPECT_GT(a.weights(1).cwiseAbs().maxCoeff(), 0.5 / std::sqrt(10.0));
}

}  // namespace
}  // namespace wulf
