// Adam (Kingma and Ba 2015, "Adam: A Method for Stochastic Optimization", ICLR, Algorithm 1),
// the update large transformers train with, as PyTorch 1.13's torch.optim.Adam computes it
// (torch/optim/adam.py, _single_tensor_adam, without amsgrad and weight decay): at step t of
// each weight w with gradient g,
//
//   m = beta1 m + (1 - beta1) g            (m.mul_(beta1).add_(g, alpha=1 - beta1))
//   v = beta2 v + (1 - beta2) g g          (v.mul_(beta2).addcmul_(g, g, value=1 - beta2))
//   w -= (eta / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + epsilon)
//
// with m = v = 0 before the first step, g the block's gradient (its mean over the block's
// patterns, or with --block-step sum their sum) and --eta the learning rate. Updates after
// every block of --block patterns, as --learning block.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace wulf {

// PyTorch's defaults (torch.optim.Adam: betas (0.9, 0.999), eps 1e-8).
struct AdamConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

// Throws InputError naming the option (--adam-beta1 ...) that is out of range.
void validate(const AdamConfig& c);

template <class T>
class AdamStep {
 public:
  // The step of the weights in `weights` (the net's, or a rank's shard of them, fsdp); its two
  // moments are as many values, made on the first step.
  AdamStep(std::span<T> weights, double eta, const AdamConfig& config, bool sum);
  // One step from the block's gradient summed over its patterns (divided by them unless sum).
  void apply(std::size_t block_patterns, std::span<const T> gradient);

 private:
  std::span<T> weights_;
  double eta_;
  AdamConfig config_;
  bool sum_;
  long long t_ = 0;
  std::vector<T> m_, v_;
};

}  // namespace wulf
