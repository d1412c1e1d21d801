#include "train/trainer.hpp"
#include "util/errors.hpp"
#include "util/names.hpp"

#include <fmt/format.h>

#include "data/partition.hpp"
#include "train/run.hpp"

#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <type_traits>

namespace wulf {

namespace {

constexpr Named<ErrorMetric> metric_names[] = {{ErrorMetric::rmse, "rmse"},
                                               {ErrorMetric::mse, "mse"},
                                               {ErrorMetric::loss, "loss"},
                                               {ErrorMetric::classification, "class"}};
constexpr Named<StopReason> stop_reason_names[] = {{StopReason::max_iterations, "max_iterations"},
                                                   {StopReason::target_reached, "target_reached"},
                                                   {StopReason::time_limit, "time_limit"},
                                                   {StopReason::diverged, "diverged"},
                                                   {StopReason::line_search_failed, "line_search_failed"},
                                                   {StopReason::gradient_not_finite, "gradient_not_finite"}};

}  // namespace

std::string_view to_string(ErrorMetric m) { return name_of(m, metric_names); }

ErrorMetric parse_error_metric(std::string_view name) { return parse_named(name, metric_names, "error", "metric"); }

std::string_view to_string(StopReason r) { return name_of(r, stop_reason_names); }

bool stopped_on_fault(StopReason r) {
  return r == StopReason::diverged || r == StopReason::line_search_failed || r == StopReason::gradient_not_finite;
}

double Evaluation::error(ErrorMetric m) const {
  switch (m) {
    case ErrorMetric::rmse: return rmse;
    case ErrorMetric::mse: return mse;
    case ErrorMetric::loss: return loss;
    case ErrorMetric::classification: return patterns ? double(class_errors) / double(patterns) : 0;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

template <class M>
void ErrorSums::add(const M& y, const M& t, double block_loss, const int* labels, float threshold) {
  squared += static_cast<double>((y - t).squaredNorm());
  loss += block_loss;
  patterns += static_cast<double>(y.cols());
  outputs = static_cast<std::size_t>(y.rows());
  if (!labels) return;
  classifier = true;
  for (Eigen::Index j = 0; j < y.cols(); ++j) class_errors += predicted_class(y, j, threshold) != labels[j];
}

Evaluation ErrorSums::finish() const {
  Evaluation e;
  e.patterns = static_cast<std::size_t>(patterns);
  e.mse = patterns > 0 ? squared / (patterns * static_cast<double>(outputs)) : 0;
  e.rmse = std::sqrt(e.mse);
  e.loss = patterns > 0 ? loss / patterns : 0;
  e.class_errors = static_cast<std::size_t>(class_errors);
  e.classifier = classifier;
  return e;
}

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

template <class T>
ErrorSums evaluate_sums(Mlp<T>& net, const Dataset& data, std::size_t chunk) {
  using Matrix = typename Mlp<T>::Matrix;
  ErrorSums sums;
  sums.outputs = static_cast<std::size_t>(net.spec().sizes.back());
  Matrix x, t;
  const Activation out = net.spec().activations.back();
  for (std::size_t start = 0; start < data.size(); start += chunk) {
    const auto first = static_cast<Eigen::Index>(start);
    const auto count = static_cast<Eigen::Index>(std::min(chunk, data.size() - start));
    x.resize(data.n_inputs(), count);
    for (Eigen::Index j = 0; j < count; ++j) data.copy_inputs(start + static_cast<std::size_t>(j), x.col(j).data());
    t = data.targets.middleCols(first, count).template cast<T>();
    const Matrix& y = net.forward(x);
    const double block_loss = static_cast<double>(Mlp<T>::loss_sum(net.spec().loss, out, y, t));
    sums.add(y, t, block_loss, data.has_labels() ? data.labels.data() + start : nullptr, data.decision_threshold);
  }
  return sums;
}

template <class T>
Evaluation evaluate(Mlp<T>& net, const Dataset& data, std::size_t chunk) {
  return evaluate_sums(net, data, chunk).finish();
}

void validate(const TrainConfig& c, std::size_t n, bool classifier, int ranks) {
  if (n == 0) throw InputError("training set: it holds no patterns");
  if (c.learning == Learning::block) {
    if (c.block == 0) throw InputError("--block: must be at least 1");
    if (c.block > n)
      throw InputError("--block: " + std::to_string(c.block) + " is larger than the training set (" +
                       std::to_string(n) + " patterns)");
  }
  const std::size_t b = block_size(c, n);
  if (b < static_cast<std::size_t>(ranks))
    throw InputError("--block: " + std::to_string(b) + " patterns per update cannot be shared by " +
                     std::to_string(ranks) + " ranks (b must be at least --np)");
  if (!(c.eta > 0) || !std::isfinite(c.eta)) throw InputError("--eta: must be a positive number");
  if (!(c.alpha >= 0 && c.alpha < 1)) throw InputError("--alpha: must be in [0, 1)");
  if (c.max_iterations < 0) throw InputError("--epochs: must not be negative");
  if (c.target_error && (!(*c.target_error >= 0) || !std::isfinite(*c.target_error)))
    throw InputError("--target-error: must be a non-negative number");
  if (!(c.max_seconds >= 0)) throw InputError("--max-seconds: must be non-negative");
  if (!(c.init_range >= 0) || !std::isfinite(c.init_range))
    throw InputError("--init-range: must be a non-negative number");
  if (c.metric == ErrorMetric::classification && !classifier)
    throw InputError("--error class: this problem's targets are not classes");
  if (!c.strategy->runs(c.learning))
    throw InputError(fmt::format("--learning {}: --strategy {} does not learn so; it runs with {}{}",
                                 to_string(c.learning), to_string(c.strategy), strategies_that_run(c.learning),
                                 c.learning == Learning::rprop ? " (one update from the gradient of the whole training "
                                                                 "set, the same on every rank)"
                                                               : ""));
  if (c.learning == Learning::rprop) validate(c.rprop);
  if (c.learning == Learning::adam) validate(c.adam);
}

template <class T>
MomentumStep<T>::MomentumStep(Mlp<T>& net, double eta, double alpha, MomentumRule rule, BlockStep block_step)
    : MomentumStep(net.parameters(), eta, alpha, rule, block_step) {
  net_ = &net;
}

template <class T>
MomentumStep<T>::MomentumStep(std::span<T> weights, double eta, double alpha, MomentumRule rule, BlockStep block_step)
    : weights_(weights),
      eta_(static_cast<T>(rule == MomentumRule::damped ? (1 - alpha) * eta : eta)),
      alpha_(static_cast<T>(alpha)),
      sum_(block_step == BlockStep::sum) {}

template <class T>
void MomentumStep<T>::apply(std::size_t block_patterns, std::span<const T> gradient) {
  using Vector = typename Mlp<T>::Vector;
  // dw(0) = 0, made on the first step: a run without arithmetic (--numerics off, many
  // simulated ranks of a large net) never holds it.
  if (step_.size() == 0) step_ = Vector::Zero(static_cast<Eigen::Index>(weights_.size()));
  // The gradient is summed over the block: as it is with --block-step sum (eta is every
  // pattern's step), divided by b with mean (eta is the block's step).
  const T scale = sum_ ? eta_ : eta_ / static_cast<T>(block_patterns);
  // dw = alpha dw - scale g and w += dw in one pass over the three buffers (as two Eigen
  // assignments it was two passes, reading dw twice).
  T* __restrict w = weights_.data();
  const T* __restrict g = gradient.data();
  T* __restrict dw = step_.data();
  const auto n = static_cast<std::size_t>(step_.size());
  if (gradient.size() != n)
    throw std::length_error("momentum step: a gradient of " + std::to_string(gradient.size()) + " values for " +
                            std::to_string(n) + " parameters");
  for (std::size_t i = 0; i < n; ++i) {
    const T d = alpha_ * dw[i] - scale * g[i];
    dw[i] = d;
    w[i] += d;
  }
}

template <class T>
WeightUpdate<T>::WeightUpdate(Mlp<T>& net, const TrainConfig& config)
    : net_(net), momentum_(net, config.eta, config.alpha, config.momentum, config.block_step) {
  if (config.learning == Learning::rprop) rprop_.emplace(net, config.rprop);
  if (config.learning == Learning::adam)
    adam_.emplace(net.parameters(), config.eta, config.adam, config.block_step == BlockStep::sum);
}

template <class T>
void WeightUpdate<T>::apply(std::size_t block_patterns) {
  if (rprop_) return rprop_->apply();
  if (adam_) return adam_->apply(block_patterns, net_.gradients());
  momentum_.apply(block_patterns);
}

template <class T>
void WeightUpdate<T>::apply(std::size_t block_patterns, std::span<const T> gradient) {
  if (rprop_) return rprop_->apply(gradient);
  if (adam_) return adam_->apply(block_patterns, gradient);
  momentum_.apply(block_patterns, gradient);
}

template <class T>
Evaluation train_pass(Mlp<T>& net, MomentumStep<T>& step, const Dataset& data, const std::vector<std::size_t>& order,
                      std::size_t b, PhaseTimes& ph) {
  using Matrix = typename Mlp<T>::Matrix;
  Matrix x, t;
  std::vector<int> labels;
  ErrorSums running;
  const std::size_t n = order.size();
  for (std::size_t s = 0; s < n; s += b) {
    const std::size_t count = std::min(b, n - s);
    const auto t0 = Clock::now();
    gather_block(data, order, s, count, x, t, labels);
    const Matrix& y = net.forward(x);
    const auto t1 = Clock::now();
    const double block_loss = static_cast<double>(net.backward(t, false));
    running.add(y, t, block_loss, data.has_labels() ? labels.data() : nullptr, data.decision_threshold);
    const auto t2 = Clock::now();
    step.apply(count);
    const auto t3 = Clock::now();
    ph.forward += std::chrono::duration<double>(t1 - t0).count();
    ph.backward += std::chrono::duration<double>(t2 - t1).count();
    ph.update += std::chrono::duration<double>(t3 - t2).count();
    ph.forward_patterns += count;
    ph.backward_patterns += count;
    ph.updates += 1;
  }
  return running.finish();
}


BlockPlan::BlockPlan(std::size_t n_, std::size_t b_, int ranks_, int rank)
    : n(n_),
      b(b_),
      blocks((n_ + b_ - 1) / b_),
      n_local(share_of(n_, ranks_, rank).count),
      b_local(share_of(b_, ranks_, rank).count),
      ranks(ranks_) {}

std::size_t BlockPlan::first(std::size_t k) const { return std::min(n_local, k * b_local); }
std::size_t BlockPlan::count(std::size_t k) const { return std::min(b_local, n_local - first(k)); }
std::size_t BlockPlan::total(std::size_t k) const {
  std::size_t sum = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::size_t nr = share_of(n, ranks, r).count, br = share_of(b, ranks, r).count;
    sum += std::min(br, nr - std::min(nr, k * br));
  }
  return sum;
}

std::size_t block_size(const TrainConfig& config, std::size_t n) {
  switch (config.learning) {
    case Learning::pattern: return 1;
    case Learning::block:
    case Learning::adam: return config.block;
    case Learning::epoch:
    case Learning::rprop: return n;
  }
  return config.block;
}

std::vector<std::size_t> identity_order(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  return order;
}

DataLayout data_layout(const TrainConfig& config) { return config.strategy->layout(config); }

int block_sharers(const TrainConfig& config, int np) { return config.strategy->splits_blocks ? np : 1; }

template <class T>
TrainResult train_strategy(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                           const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  const StrategyDescriptor& d = *config.strategy;
  StrategyTrainFn<T> fn = nullptr;
  if constexpr (std::is_same_v<T, float>) fn = d.train_float;
  else fn = d.train_double;
  if (!fn) throw InputError("--strategy " + std::string(d.name) + " runs a table of sessions, not one run");
  return fn(net, train, test, sizes, config, comm, compute, progress);
}

template <class T>
TrainResult train(Mlp<T>& net, const Dataset& train, const Dataset& test, const TrainConfig& config,
                  const ProgressFn& progress) {
  SerialComm comm;
  const std::unique_ptr<Compute> compute = make_wall_compute();
  const GlobalSizes sizes{train.size(), test.size(), train.has_labels()};
  return train_block(net, train, test, sizes, config, comm, *compute, progress);
}

template class MomentumStep<float>;
template class MomentumStep<double>;
template class WeightUpdate<float>;
template class WeightUpdate<double>;
template Evaluation train_pass<float>(Mlp<float>&, MomentumStep<float>&, const Dataset&,
                                      const std::vector<std::size_t>&, std::size_t, PhaseTimes&);
template Evaluation train_pass<double>(Mlp<double>&, MomentumStep<double>&, const Dataset&,
                                       const std::vector<std::size_t>&, std::size_t, PhaseTimes&);
template TrainResult train_strategy<float>(Mlp<float>&, const Dataset&, const Dataset&, const GlobalSizes&,
                                           const TrainConfig&, Comm&, Compute&, const ProgressFn&);
template TrainResult train_strategy<double>(Mlp<double>&, const Dataset&, const Dataset&, const GlobalSizes&,
                                            const TrainConfig&, Comm&, Compute&, const ProgressFn&);
template TrainResult train<float>(Mlp<float>&, const Dataset&, const Dataset&, const TrainConfig&,
                                  const ProgressFn&);
template TrainResult train<double>(Mlp<double>&, const Dataset&, const Dataset&, const TrainConfig&,
                                   const ProgressFn&);
template ErrorSums evaluate_sums<float>(Mlp<float>&, const Dataset&, std::size_t);
template ErrorSums evaluate_sums<double>(Mlp<double>&, const Dataset&, std::size_t);
template Evaluation evaluate<float>(Mlp<float>&, const Dataset&, std::size_t);
template Evaluation evaluate<double>(Mlp<double>&, const Dataset&, std::size_t);

}  // namespace wulf
