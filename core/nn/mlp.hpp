// A fully connected feed-forward net of any depth, trained a block of patterns at a time.
//
// Every parameter lives in ONE contiguous buffer and every gradient in another, laid out
// layer by layer as [W_1 | b_1 | W_2 | b_2 | ...] with W_l column-major (n_l, n_{l-1}), so
// a data-parallel engine sums gradients or averages weights with one collective over one
// span. Forward and backward of a block are matrix-matrix products (seed 002's
// formulation): patterns are columns, so layer l computes Z_l = W_l A_{l-1} + b_l 1^T.
#pragma once

#include "util/errors.hpp"
#include "nn/activation.hpp"
#include "nn/layer_table.hpp"
#include "util/random.hpp"

#include <Eigen/Core>

#include <algorithm>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace wulf {

// The flops a net's kernels perform (a multiply-add is 2 flops), counted from its layers as
// Mlp computes them; the record's rate and the flop-driven compute charge both use them.
// Elementwise work (activations and their derivatives, the error) is not counted.
struct KernelFlops {
  double weights = 0;   // w: weights and biases of all layers
  double forward = 0;   // per pattern: each layer's product W_l a (2 n_l n_{l-1}) and bias addition (n_l)
  double backward = 0;  // per pattern: each layer's weight gradient (2 n_l n_{l-1}) and bias sum (n_l),
                        // and every layer's but the first delta product W_l^T delta (2 n_l n_{l-1}):
                        // dE/dx of the inputs is never computed
  double update = 0;    // per update: the momentum step dw = alpha dw - eta g, w += dw, 4 per parameter
  double test() const { return forward; }  // per pattern: a test pattern is a forward pass
  // The convention of seed 002's rate and of wulf before issue 17: a forward and backward
  // pass is 6 flops per weight per pattern (forward 2w, backward 4w, input-layer deltas
  // included). For reporting beside the count above only.
  double six_w() const { return 6 * weights; }
};
// The flops of sizes n_0..n_L, with or without biases.
KernelFlops kernel_flops(const std::vector<int>& sizes, bool bias);
// The per-pattern backward flops of layer l alone (KernelFlops::backward's terms of that
// layer): its weight gradient, its bias sum, and for l > 1 the delta product W_l^T delta.
double backward_layer_flops(const std::vector<int>& sizes, bool bias, int l);

struct NetSpec {
  std::vector<int> sizes;               // n_0 (inputs), n_1, ..., n_L (outputs)
  std::vector<Activation> activations;  // of layers 1..L
  Loss loss = Loss::mse;
  bool bias = true;
  // The sigmoid's derivative a (1 - a) at a clipped to [0.01, 0.99], as FANN 2.2 computes
  // it (--sigmoid-derivative fann); false: exact. Training only: the forward pass and the
  // weights are the same either way.
  bool clip_sigmoid_derivative = false;
  // A net given by its layers (--problem layers:FILE, nn/layer_table.hpp) in place of the MLP
  // above: it only runs time-only (--numerics off). Then sizes is {inputs, outputs}, and the
  // parameters, flops and layers below are the table's.
  std::shared_ptr<const LayerTable> table = nullptr;

  int n_layers() const { return static_cast<int>(sizes.size()) - 1; }  // the MLP's
  // Weights and biases of all layers: sum of n_l * n_{l-1} (+ n_l with bias); a table's tensors.
  std::size_t parameter_count() const;
  KernelFlops flops() const;
  // The layers time is charged by, 1..L in forward order: the MLP's, or the table's.
  int timed_layers() const { return table ? static_cast<int>(table->layers.size()) : n_layers(); }
  // Layer l's backward flops per pattern (backward_layer_flops for an MLP).
  double layer_backward_flops(int l) const;
  // Layer l's forward flops per pattern (its product and bias addition; a table's own).
  double layer_forward_flops(int l) const;
  // Layer l's parameters (weights and biases; a table's tensors), consecutive in the flat
  // buffer from the sum of the layers' before it.
  std::size_t layer_parameter_count(int l) const;
  // "784-64-64-10 sigmoid/sigmoid/sigmoid mse bias" for people; a table: "ResNet-50 (layers
  // platforms/nets/resnet50.layers, 25557032 parameters)".
  std::string describe() const;
  // Throws InputError for empty or non-positive layers, a softmax hidden layer, or
  // cross-entropy on an output that is not softmax or sigmoid.
  void validate() const;
};

template <class T>
class Mlp {
 public:
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  using MatrixMap = Eigen::Map<Matrix>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;
  using VectorMap = Eigen::Map<Vector>;

  explicit Mlp(NetSpec spec);
  // Parameters and gradients in storage the caller owns, 2 * spec.parameter_count()
  // values: parameters first. Used to put them in memory that simulated ranks share.
  Mlp(NetSpec spec, T* storage);
  // A net given by its layers whose buffers nothing reads or moves (a strategy whose messages
  // go through buffers of its own, time only): no storage at all; parameters() and
  // gradients() are spans of their sizes without memory behind them.
  struct NoStorage {};
  Mlp(NetSpec spec, NoStorage);
  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  const NetSpec& spec() const { return spec_; }
  std::size_t parameter_count() const { return count_; }

  std::span<T> parameters() { return {params_, count_}; }
  std::span<const T> parameters() const { return {params_, count_}; }
  std::span<T> gradients() { return {grads_, count_}; }
  std::span<const T> gradients() const { return {grads_, count_}; }

  // Views of layer l = 1..L: weights (n_l, n_{l-1}), biases (n_l) (empty without bias).
  MatrixMap weights(int l) { return {params_ + w_offset(l), rows(l), cols(l)}; }
  ConstMatrixMap weights(int l) const { return {params_ + w_offset(l), rows(l), cols(l)}; }
  VectorMap biases(int l) { return {params_ + b_offset(l), spec_.bias ? rows(l) : 0}; }
  MatrixMap dweights(int l) { return {grads_ + w_offset(l), rows(l), cols(l)}; }
  VectorMap dbiases(int l) { return {grads_ + b_offset(l), spec_.bias ? rows(l) : 0}; }

  // Uniform weights in [-range, range]; range <= 0 takes 1/sqrt(n_{l-1}) per layer.
  void init_uniform(double range, Rng& rng);
  void zero_gradients() { std::fill(grads_, grads_ + count_, T(0)); }

  // x is (n_0, B). Returns the outputs (n_L, B); they and x must stay alive until the
  // backward() of the same block.
  const Matrix& forward(const Matrix& x);
  // forward() a layer at a time, as sharded data parallelism runs it (each layer's
  // parameters gathered before it): begin_forward(x), then forward_layer(l) for l = 1 to L.
  // The same operations in the same order as forward().
  void begin_forward(const Matrix& x);
  void forward_layer(int l);
  // The outputs of the last forward().
  const Matrix& outputs() const { return acts_.back(); }
  // Adds dE/dw of the last forward block to the gradients (+=), or with accumulate false
  // writes it over them (no zeroing pass needed), and returns E summed over the block:
  // E = 1/2 sum (y - t)^2 for mse, -sum t log y (softmax) or
  // -sum [t log y + (1 - t) log(1 - y)] (sigmoid) for cross-entropy.
  T backward(const Matrix& targets, bool accumulate = true);
  // backward() a layer at a time, as the overlap strategy runs it: backward_output makes the
  // output layer's delta and returns E; then backward_layer(l) for l = L down to 1 makes
  // layer l's gradients (weights, then biases) and, for l > 1, layer l-1's delta. The same
  // operations in the same order as backward().
  T backward_output(const Matrix& targets);
  void backward_layer(int l, bool accumulate);
  // Gradient values of layer l's weights and of its biases (empty without bias): the
  // tensors a bucketed allreduce takes in reverse layer order.
  std::span<T> weight_gradients(int l) { return {grads_ + w_offset(l), static_cast<std::size_t>(rows(l) * cols(l))}; }
  std::span<T> bias_gradients(int l) {
    return {grads_ + b_offset(l), spec_.bias ? static_cast<std::size_t>(rows(l)) : 0};
  }
  // Layers l to m's parameters and gradients, one consecutive piece of each flat buffer.
  std::span<T> layers_parameters(int l, int m) { return {params_ + w_offset(l), layers_count(l, m)}; }
  std::span<T> layers_gradients(int l, int m) { return {grads_ + w_offset(l), layers_count(l, m)}; }
  // E of outputs y against targets t, summed over the block, as backward() counts it.
  static T loss_sum(Loss loss, Activation output, const Matrix& y, const Matrix& t);

 private:
  // Throws InputError for a net given by its layers, which has no arithmetic.
  void require_arithmetic() const;
  Eigen::Index rows(int l) const { return spec_.sizes[l]; }
  Eigen::Index cols(int l) const { return spec_.sizes[l - 1]; }
  Eigen::Index w_offset(int l) const { return offsets_[l - 1]; }
  Eigen::Index b_offset(int l) const { return offsets_[l - 1] + rows(l) * cols(l); }
  std::size_t layers_count(int l, int m) const {
    const Eigen::Index end = m < spec_.n_layers() ? offsets_[m] : static_cast<Eigen::Index>(count_);
    return static_cast<std::size_t>(end - offsets_[l - 1]);
  }

  NetSpec spec_;
  std::vector<Eigen::Index> offsets_;  // start of layer l's block in the buffers, l = 1..L
  std::size_t count_ = 0;
  Vector owned_;                       // the storage, unless the caller gave its own
  T* params_ = nullptr;                // count_ parameters
  T* grads_ = nullptr;                 // count_ gradients
  const Matrix* input_ = nullptr;  // A_0 of the last forward block
  std::vector<Matrix> acts_;       // A_l = f_l(Z_l), l = 1..L, each (n_l, B)
  std::vector<Matrix> deltas_;     // dE/dZ_l, l = 1..L, each (n_l, B)
};

extern template class Mlp<float>;
extern template class Mlp<double>;

}  // namespace wulf
