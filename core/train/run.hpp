// What every strategy shares: the run of iterations with its history, the errors summed
// over the ranks, the stopping rule (stop_rule.hpp), and the timing of kernels and
// collectives in the engine's time. A strategy (core/train/strategies/, one file each)
// supplies one iteration of its own.
#pragma once

#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "train/stop_rule.hpp"
#include "train/trainer.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wulf {

// Copies the patterns order[first .. first + count) of data into contiguous columns.
template <class Matrix>
inline void gather_block(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                         std::size_t count, Matrix& x, Matrix& t, std::vector<int>& labels) {
  using T = typename Matrix::Scalar;
  x.resize(data.n_inputs(), static_cast<Eigen::Index>(count));
  t.resize(data.n_outputs(), static_cast<Eigen::Index>(count));
  labels.resize(data.has_labels() ? count : 0);
  for (std::size_t j = 0; j < count; ++j) {
    const auto p = static_cast<Eigen::Index>(order[first + j]);
    data.copy_inputs(order[first + j], x.col(static_cast<Eigen::Index>(j)).data());
    t.col(static_cast<Eigen::Index>(j)) = data.targets.col(p).template cast<T>();
    if (data.has_labels()) labels[j] = data.labels[order[first + j]];
  }
}

// The class the net answers for column j of its outputs y: 1 if above threshold, else 0,
// with one output; the largest output's index with more.
template <class Matrix>
inline int predicted_class(const Matrix& y, Eigen::Index j, float threshold) {
  if (y.rows() == 1) return y(0, j) > threshold ? 1 : 0;
  Eigen::Index best;
  y.col(j).maxCoeff(&best);
  return static_cast<int>(best);
}

// How training-set parallelism deals out the blocks: rank r holds share_of(n, p, r) of the
// training set and takes share_of(b, p, r) of every block; all ranks run ceil(n / b) blocks,
// and a rank whose share ran out adds nothing to the last ones.
struct BlockPlan {
  BlockPlan(std::size_t n, std::size_t b, int ranks, int rank);
  std::size_t first(std::size_t k) const;  // this rank's first pattern of block k
  std::size_t count(std::size_t k) const;  // and how many it takes
  std::size_t total(std::size_t k) const;  // patterns of block k over all ranks
  std::size_t n, b, blocks, n_local, b_local;
  int ranks;
};

// 0, 1, ..., n - 1: the first pattern order, before any shuffle.
std::vector<std::size_t> identity_order(std::size_t n);
// The stream of rank's pattern orders: rank 0's is the sequential run's.
inline Rng pattern_order_rng(const TrainConfig& config, int rank) {
  return Rng((config.seed ^ 0x5eed0fde11e5ULL) + static_cast<std::uint64_t>(rank));
}

// The flops a rank's kernels are charged as on its host (ComputeConfig's efficiency, device and
// host_speed): an MLP's layers are linear ones and its update of kind other; a layer of a
// table with a measured time on the host's device is charged that time at the host's speed.
// With every efficiency 1, no device and a momentum or RPROP update these are spec.flops(), to
// the bit.
struct ChargedFlops {
  KernelFlops kernels;
  std::vector<double> forward;   // per pattern, layer l at l - 1
  std::vector<double> backward;  // per pattern, layer l at l - 1
};
// half: --precision bf16 or fp16, the conv, linear and attention layers' flops at the host's
// 16-bit rate (ComputeConfig::speed16, where it gives one). learning: the rule whose update is
// charged: the momentum step's flops (KernelFlops::update), which RPROP's step is charged too,
// or Adam's, kAdamUpdateFlops a parameter.
ChargedFlops charged_kernel_flops(const NetSpec& spec, const ComputeConfig& compute, bool half = false,
                                  Learning learning = Learning::block);

// The flops of Adam's step a parameter as AdamStep::apply makes it: the gradient's scale (1),
// the first moment (3), the second (4), the denominator's square root, division and epsilon
// (3), and the step (3).
constexpr double kAdamUpdateFlops = 14;

// The values of T that carry n parameters or gradients on the wire: n, or under --precision
// bf16 or fp16 (time only, TrainConfig::value_bytes) as many as hold their 2 bytes each.
template <class T>
std::size_t wire_values(std::size_t value_bytes, std::size_t n) {
  if (value_bytes == 0 || value_bytes == sizeof(T)) return n;
  return (n * value_bytes + sizeof(T) - 1) / sizeof(T);
}

// What a strategy decides of the run when it makes it.
struct RunOptions {
  // Off: --target-error is the strategy's to apply (ppt), not checked after each iteration.
  bool check_target = true;
  // On: rank 0 holds no data and ranks 1..p-1 share it (DataLayout::workers), which is what
  // local_count charges without the arithmetic.
  bool pure_master = false;
};

template <class T>
class Run {
 public:
  using Matrix = typename Mlp<T>::Matrix;

  // A block of patterns gathered into the run's scratch: inputs, targets, labels (empty
  // without labels), valid until the next gather.
  struct Block {
    const Matrix& x;
    const Matrix& t;
    const std::vector<int>& labels;
  };

  // Throws InputError when config does not fit the data (validate) or the net does not fit
  // train's inputs and outputs.
  Run(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes, const TrainConfig& config,
      Comm& comm, Compute& compute, const ProgressFn& progress, RunOptions options = {});

  // Runs iterations until the stopping rule or request_stop() ends them. iterate(it) trains
  // iteration it and returns the error sums of the patterns this rank trained on (summed
  // over the ranks here, for the running training error).
  TrainResult run(const std::function<ErrorSums(int iteration)>& iterate);
  // Ends the run after the current iteration (a strategy's own stopping rule). A fault
  // (stopped_on_fault) ends it at once: the iteration is reported without a test pass and
  // the net gets back the last good weights. Every rank must ask alike (the ends of an
  // iteration are collectives).
  void request_stop(StopReason reason, std::string detail);
  // A strategy's own number for the current iteration's history entry (rank 0's are kept).
  void note(std::string key, double value) { notes_.emplace_back(std::move(key), value); }

  // Runs kernel (only when the arithmetic is on), charges its time and adds it to phase.
  template <class F>
  void kernel(Phase phase, std::size_t patterns, double flops, F&& f) {
    kernel_part(phase, patterns, patterns, flops, 1.0, std::forward<F>(f));
  }
  // One part of a kernel (a layer of a backward pass): charged as Compute::charge's part, its
  // flops and its share of the phase's per-pattern time; its time added to phase, with
  // `counted` of its patterns (the patterns are counted once, by one of the parts).
  template <class F>
  void kernel_part(Phase phase, std::size_t patterns, std::size_t counted, double flops, double share, F&& f) {
    const double t0 = comm_.now();
    compute_.begin();
    if (numerics_) f();
    compute_.charge(phase, patterns, flops, share);
    add_time(phase, comm_.now() - t0, counted);
  }
  // Runs a collective and adds its time to the communication phase.
  template <class F>
  void collective(F&& f) {
    const double t0 = comm_.now();
    compute_.charge_collective();
    f();
    add_comm(comm_.now() - t0, 1);
  }
  // Communication of the strategy's own outside collective() (scatter's first scatter of
  // the data): seconds and calls added to the communication phase.
  void add_comm(double seconds, std::size_t calls) { phases_.comm += seconds, phases_.comm_calls += calls; }
  // Runs point-to-point polling and adds its time to the poll phase.
  template <class F>
  void poll(F&& f) {
    const double t0 = comm_.now();
    f();
    phases_.poll += comm_.now() - t0;
    phases_.polls += 1;
  }
  // Evaluates the net on data (this rank's share) and sums the errors over the ranks.
  Evaluation evaluate_all(const Dataset& data, std::size_t local_patterns);
  // Sums error sums over the ranks (a collective).
  Evaluation sum_over_ranks(ErrorSums s);
  // Forward and backward of the patterns order[first .. first + count) of data into a
  // zeroed gradient, their errors into sums; charged as forward and backward of count
  // patterns (the gather of the block counts as forward).
  void forward_backward(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                        std::size_t count, ErrorSums& sums);
  // The same a layer at a time (Mlp::backward_layer), each layer charged on its own
  // (backward_layer_flops, its share of the backward time), and layer_done(l) called once
  // layer l's gradients are made, from the output layer down: the same gradients to the bit.
  // A layer of more than slice_flops (the block's; 0: no limit) is charged in equal slices
  // of at most that, between_slices() called between them: the layer's arithmetic runs in
  // the first, whole (the same bits), the time of each slice is its share.
  void forward_backward_layers(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                               std::size_t count, ErrorSums& sums, const std::function<void(int layer)>& layer_done,
                               double slice_flops = 0, const std::function<void()>& between_slices = {});
  // What a strategy does around each layer of forward_backward_hooked (empty: nothing).
  struct LayerHooks {
    std::function<void(int layer)> before_forward, after_forward, before_backward, after_backward;
    // A layer's forward or backward of more than slice_flops (the block's; 0: no limit) is
    // charged in equal slices of at most that, between_slices() called between them, as in
    // forward_backward_layers.
    double slice_flops = 0;
    std::function<void()> between_slices{};
  };
  // forward_backward_layers with the forward pass a layer at a time too (Mlp::forward_layer),
  // each layer's forward charged on its own (its share of the forward time; the block's gather
  // in the first layer's), and the hooks called around each layer of both passes, the forward's
  // from layer 1 up, the backward's from the output down: the same errors and gradients to the
  // bit.
  void forward_backward_hooked(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                               std::size_t count, ErrorSums& sums, const LayerHooks& hooks);
  // Gathers the patterns order[first .. first + count) of data into the scratch (not
  // charged: call it inside a kernel).
  Block gather(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first, std::size_t count) {
    gather_block(data, order, first, count, x_, t_, labels_);
    return last_block();
  }
  // The block the last gather or forward_backward left in the scratch.
  Block last_block() const { return {x_, t_, labels_}; }
  // The patterns of data this rank evaluates: all of data, or with --numerics off the
  // share of total it would hold.
  std::size_t local_count(const Dataset& data, std::size_t total) const;
  ErrorSums empty_sums() const;

  // What the run was made with.
  Mlp<T>& net() const { return net_; }
  const Dataset& train() const { return train_; }
  const Dataset& test() const { return test_; }
  const GlobalSizes& sizes() const { return sizes_; }
  const TrainConfig& config() const { return config_; }
  Comm& comm() const { return comm_; }
  bool numerics() const { return numerics_; }
  std::size_t weights() const { return weights_; }
  // What the kernels are charged as (--compute flops): the flops they perform (KernelFlops), each
  // layer's over its host's efficiency for its kind, or a net's measured seconds on the host's
  // device times the host's speed (charged_kernel_flops).
  const KernelFlops& flops() const { return charged_.kernels; }

 private:
  void add_time(Phase phase, double seconds, std::size_t patterns);
  // --recompute: layer l's forward again before its backward, charged as forward compute of
  // the block's patterns (counted once already), no arithmetic (the activations are still here).
  void recompute_layer(int l, std::size_t count);
  // Layer l's part of the backward pass of the block in the scratch (count patterns): from
  // the output layer (its loss into block_loss) down; the block's errors into sums at layer 1.
  void backward_arithmetic(int l, std::size_t count, double& block_loss, ErrorSums& sums);
  // A layer's part of a pass over the block (count patterns, counted of them the phase's):
  // block_flops charged in equal slices of at most slice_flops (0: one), share / slices of the
  // phase's time each, between_slices() (if any) called between them; the arithmetic runs in
  // the first slice, whole.
  void kernel_sliced(Phase phase, std::size_t count, std::size_t counted, double block_flops, double share,
                     double slice_flops, const std::function<void()>& between_slices,
                     const std::function<void()>& arithmetic);
  // The forward kernel of forward_backward and forward_backward_layers: the patterns
  // gathered into the scratch and passed forward.
  void forward_block(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                     std::size_t count);
  // The block's errors (the outputs of the last forward against its targets) into sums.
  void add_errors(ErrorSums& sums, double block_loss) const;
  void run_test(IterationRecord& r);
  // Iteration 0: the untrained net's errors, outside the clock and the phase times.
  IterationRecord untrained();
  // Iteration it, from start (engine seconds), into result's history; how the run ends
  // after it, if it does.
  std::optional<Stop> iteration(int it, const std::function<ErrorSums(int iteration)>& iterate, double start,
                                StopRule& rule, TrainResult& result);
  // Adds r to the history and shows it (rank 0).
  void report(TrainResult& result, const IterationRecord& r);
  // The run's totals after its last iteration: time, best error, history, final passes.
  void finish(TrainResult& result, double start, const std::optional<BestError>& best);
  // Keeps the net's weights as the good ones of iteration it (with the arithmetic on).
  void keep_good_weights(int it);
  // Puts the last good weights back into the net (a run that stopped on a fault).
  void restore_good_weights();

  Mlp<T>& net_;
  const Dataset& train_;
  const Dataset& test_;
  const GlobalSizes sizes_;
  const TrainConfig& config_;
  Comm& comm_;
  Compute& compute_;
  const bool numerics_;
  const std::size_t weights_;
  const ChargedFlops charged_;  // what the kernels are charged as, the backward pass layer by layer
  const RunOptions options_;
  PhaseTimes phases_;
  Matrix x_, t_;  // the block's scratch
  std::vector<int> labels_;
  const ProgressFn& progress_;
  std::vector<T> good_weights_;  // after the last iteration whose errors were finite
  int good_iteration_ = 0;
  std::vector<std::pair<std::string, double>> notes_;
  std::optional<Stop> requested_;  // by the strategy (request_stop)
};

extern template class Run<float>;
extern template class Run<double>;

// A strategy's iteration (core/train/strategies/, one file each) has train_strategy's
// arguments; WULF_INSTANTIATE_STRATEGY(name), after its definition, makes its float and
// double versions, which its descriptor (strategy.hpp) points to.
#define WULF_STRATEGY_SIGNATURE(name, T)                                                                      \
  TrainResult name<T>(Mlp<T>&, const Dataset&, const Dataset&, const GlobalSizes&, const TrainConfig&, Comm&, \
                      Compute&, const ProgressFn&)
#define WULF_INSTANTIATE_STRATEGY(name)          \
  template WULF_STRATEGY_SIGNATURE(name, float); \
  template WULF_STRATEGY_SIGNATURE(name, double)

}  // namespace wulf
