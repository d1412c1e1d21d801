#include "train/adam.hpp"

#include "train/trainer.hpp"
#include "util/errors.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace wulf {

void validate(const AdamConfig& c) {
  check_in_range(c.beta1, kAdamBetaRange, "--adam-beta1");
  check_in_range(c.beta2, kAdamBetaRange, "--adam-beta2");
  check_in_range(c.epsilon, kAdamEpsilonRange, "--adam-epsilon");
}

template <class T>
AdamStep<T>::AdamStep(std::span<T> weights, double eta, const AdamConfig& config, bool sum)
    : weights_(weights), eta_(eta), config_(config), sum_(sum) {}

template <class T>
void AdamStep<T>::apply(std::size_t block_patterns, std::span<const T> gradient) {
  const std::size_t n = weights_.size();
  if (gradient.size() != n)
    throw std::length_error("Adam step: a gradient of " + std::to_string(gradient.size()) + " values for " +
                            std::to_string(n) + " parameters");
  if (m_.empty()) m_.assign(n, T(0)), v_.assign(n, T(0));
  ++t_;
  // PyTorch computes the bias corrections as Python floats (double), then the step in T.
  const double correction1 = 1 - std::pow(config_.beta1, static_cast<double>(t_));
  const double correction2 = 1 - std::pow(config_.beta2, static_cast<double>(t_));
  const T step_size = static_cast<T>(eta_ / correction1);
  const T correction2_sqrt = static_cast<T>(std::sqrt(correction2));
  const T b1 = static_cast<T>(config_.beta1), b2 = static_cast<T>(config_.beta2);
  const T one_b1 = static_cast<T>(1 - config_.beta1), one_b2 = static_cast<T>(1 - config_.beta2);
  const T eps = static_cast<T>(config_.epsilon);
  const T scale = sum_ ? T(1) : T(1) / static_cast<T>(block_patterns);
  T* __restrict w = weights_.data();
  T* __restrict m = m_.data();
  T* __restrict v = v_.data();
  const T* __restrict g = gradient.data();
  for (std::size_t i = 0; i < n; ++i) {
    const T gi = g[i] * scale;
    // In PyTorch's order of operations: mul_ then add_ (alpha * g), mul_ then addcmul_
    // ((value * g) * g), sqrt then div_ then add_, addcdiv_ ((-step_size * m) / denom).
    m[i] = m[i] * b1 + one_b1 * gi;
    v[i] = v[i] * b2 + one_b2 * gi * gi;
    const T denom = std::sqrt(v[i]) / correction2_sqrt + eps;
    w[i] += -step_size * m[i] / denom;
  }
}

template class AdamStep<float>;
template class AdamStep<double>;

}  // namespace wulf
