// RPROP, resilient backpropagation (Riedmiller and Braun 1993), in the iRprop- form that
// FANN 2.2 trains with by default (fann_update_weights_irpropm), with FANN's defaults.
// Every weight w_i has its own step d_i, which follows only the sign of its gradient g_i
// over the whole training set (batch learning; one update per pass):
//
//   d = max(d_i, 1e-4)                        FANN's floor: a step of 0 would stop w_i
//   if g_i g'_i >= 0:  d_i = min(d * increase, delta_max)
//   else:              d_i = max(d * decrease, delta_min), and g_i counts as 0
//   w_i -= d_i if g_i > 0, else w_i += d_i;   then w_i is clipped to [-1500, 1500]
//   g'_i = g_i (0 after a change of sign)
//
// with d_i = delta_zero and g'_i = 0 before the first update. Two details are FANN's own
// and kept so that wulf and FANN train alike from the same weights
// (experiments/rprop-fann): the floor of 1e-4 under the previous step, and the step that
// a weight still takes, upwards, when its gradient changed sign or is 0 (published iRprop-
// leaves such a weight where it is). The magnitude of g does not matter, so the mean and
// the sum over the patterns, and --eta, give the same steps.
#pragma once

#include "nn/mlp.hpp"
#include "util/errors.hpp"

#include <cstddef>

namespace wulf {

// FANN 2.2's defaults (fann_create_standard).
struct RpropConfig {
  double increase = 1.2;
  double decrease = 0.5;
  double delta_min = 0.0;
  double delta_max = 50.0;
  double delta_zero = 0.1;
};

// Throws InputError naming the option (--rprop-increase ...) that is out of range.
void validate(const RpropConfig& c);

template <class T>
class RpropStep {
 public:
  RpropStep(Mlp<T>& net, const RpropConfig& config);
  // Applies one update from the gradient of the whole set: the net's gradient buffer, or the
  // one given (its sum over the ranks, which may lie in Run::spare).
  void apply() { apply(net_.gradients()); }
  void apply(std::span<const T> gradient);

 private:
  Mlp<T>& net_;
  RpropConfig config_;
  typename Mlp<T>::Vector step_, previous_;  // d_i and g'_i, made on the first update
};

}  // namespace wulf
