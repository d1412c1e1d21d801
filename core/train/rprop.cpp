#include "train/rprop.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace wulf {

void validate(const RpropConfig& c) {
  auto finite_positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!(c.increase > 1) || !std::isfinite(c.increase))
    throw InputError("--rprop-increase: must be a number above 1 (FANN's default: 1.2)");
  if (!(c.decrease > 0 && c.decrease < 1)) throw InputError("--rprop-decrease: must be in (0, 1) (FANN's default: 0.5)");
  if (!(c.delta_min >= 0) || !std::isfinite(c.delta_min))
    throw InputError("--rprop-delta-min: must be a non-negative number (FANN's default: 0)");
  if (!finite_positive(c.delta_max) || c.delta_max < c.delta_min)
    throw InputError("--rprop-delta-max: must be a positive number, at least --rprop-delta-min (FANN's default: 50)");
  if (!finite_positive(c.delta_zero))
    throw InputError("--rprop-delta-zero: must be a positive number (FANN's default: 0.1)");
}

template <class T>
RpropStep<T>::RpropStep(Mlp<T>& net, const RpropConfig& config) : net_(net), config_(config) {}

template <class T>
void RpropStep<T>::apply(std::span<const T> gradient) {
  using Vector = typename Mlp<T>::Vector;
  const auto n = static_cast<Eigen::Index>(net_.parameter_count());
  // Made on the first update, as the momentum step's dw: a run without arithmetic never
  // holds them.
  if (step_.size() == 0) step_ = Vector::Constant(n, static_cast<T>(config_.delta_zero)), previous_ = Vector::Zero(n);
  Eigen::Map<Vector> w(net_.parameters().data(), n);
  if (gradient.size() != net_.parameter_count())
    throw std::length_error("RPROP step: a gradient of " + std::to_string(gradient.size()) + " values for " +
                            std::to_string(n) + " parameters");
  Eigen::Map<const Vector> g(gradient.data(), n);
  const T increase = static_cast<T>(config_.increase), decrease = static_cast<T>(config_.decrease);
  const T delta_min = static_cast<T>(config_.delta_min), delta_max = static_cast<T>(config_.delta_max);
  const T floor = static_cast<T>(1e-4), limit = static_cast<T>(1500);
  for (Eigen::Index i = 0; i < n; ++i) {
    const T d = std::max(step_[i], floor);
    T gi = g[i];
    T next;
    if (previous_[i] * gi >= 0) {
      next = std::min(d * increase, delta_max);
    } else {
      next = std::max(d * decrease, delta_min);
      gi = 0;
    }
    w[i] = gi > 0 ? std::max(w[i] - next, -limit) : std::min(w[i] + next, limit);
    step_[i] = next;
    previous_[i] = gi;
  }
}

template class RpropStep<float>;
template class RpropStep<double>;

}  // namespace wulf
