#include "trainer.hpp"

#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

namespace wulf {

std::string_view to_string(ErrorMetric m) {
  switch (m) {
    case ErrorMetric::rmse: return "rmse";
    case ErrorMetric::mse: return "mse";
    case ErrorMetric::loss: return "loss";
    case ErrorMetric::classification: return "class";
  }
  return "?";
}

ErrorMetric parse_error_metric(std::string_view name) {
  for (ErrorMetric m : {ErrorMetric::rmse, ErrorMetric::mse, ErrorMetric::loss, ErrorMetric::classification})
    if (name == to_string(m)) return m;
  throw InputError("--error: unknown metric '" + std::string(name) +
                   "' (expected rmse, mse, loss or class)");
}

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::max_iterations: return "max_iterations";
    case StopReason::target_reached: return "target_reached";
    case StopReason::time_limit: return "time_limit";
    case StopReason::diverged: return "diverged";
  }
  return "?";
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

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Sums of a set's errors, block by block; finish() turns them into an Evaluation.
struct Tally {
  double squared = 0;
  double loss = 0;
  std::size_t patterns = 0;
  std::size_t outputs = 0;
  std::size_t class_errors = 0;
  bool classifier = false;

  // y, t: (n_out, B); labels of the block's patterns (empty: no classifier).
  template <class M>
  void add(const M& y, const M& t, double block_loss, const int* labels, float threshold) {
    squared += static_cast<double>((y - t).squaredNorm());
    loss += block_loss;
    patterns += static_cast<std::size_t>(y.cols());
    outputs = static_cast<std::size_t>(y.rows());
    if (!labels) return;
    classifier = true;
    for (Eigen::Index j = 0; j < y.cols(); ++j) {
      int answer;
      if (y.rows() == 1) {
        answer = y(0, j) > threshold ? 1 : 0;
      } else {
        Eigen::Index best;
        y.col(j).maxCoeff(&best);
        answer = static_cast<int>(best);
      }
      class_errors += answer != labels[j];
    }
  }

  Evaluation finish() const {
    Evaluation e;
    e.patterns = patterns;
    e.mse = patterns ? squared / double(patterns * outputs) : 0;
    e.rmse = std::sqrt(e.mse);
    e.loss = patterns ? loss / double(patterns) : 0;
    e.class_errors = class_errors;
    e.classifier = classifier;
    return e;
  }
};

}  // namespace

template <class T>
Evaluation evaluate(Mlp<T>& net, const Dataset& data, std::size_t chunk) {
  using Matrix = typename Mlp<T>::Matrix;
  Tally tally;
  Matrix x, t;
  const Activation out = net.spec().activations.back();
  for (std::size_t start = 0; start < data.size(); start += chunk) {
    const auto first = static_cast<Eigen::Index>(start);
    const auto count = static_cast<Eigen::Index>(std::min(chunk, data.size() - start));
    x = data.inputs.middleCols(first, count).template cast<T>();
    t = data.targets.middleCols(first, count).template cast<T>();
    const Matrix& y = net.forward(x);
    const double block_loss = static_cast<double>(Mlp<T>::loss_sum(net.spec().loss, out, y, t));
    tally.add(y, t, block_loss, data.has_labels() ? data.labels.data() + start : nullptr,
              data.decision_threshold);
  }
  return tally.finish();
}

void validate(const TrainConfig& c, const Dataset& train) {
  if (train.empty()) throw InputError("training set: it holds no patterns");
  if (c.learning == Learning::block) {
    if (c.block == 0) throw InputError("--block: must be at least 1");
    if (c.block > train.size())
      throw InputError("--block: " + std::to_string(c.block) + " is larger than the training set (" +
                       std::to_string(train.size()) + " patterns)");
  }
  if (!(c.eta > 0) || !std::isfinite(c.eta)) throw InputError("--eta: must be a positive number");
  if (!(c.alpha >= 0 && c.alpha < 1)) throw InputError("--alpha: must be in [0, 1)");
  if (c.max_iterations <= 0) throw InputError("--epochs: must be at least 1");
  if (c.target_error && (!(*c.target_error >= 0) || !std::isfinite(*c.target_error)))
    throw InputError("--target-error: must be a non-negative number");
  if (!(c.max_seconds >= 0)) throw InputError("--max-seconds: must be non-negative");
  if (!(c.init_range >= 0) || !std::isfinite(c.init_range))
    throw InputError("--init-range: must be a non-negative number");
  if (c.metric == ErrorMetric::classification && !train.has_labels())
    throw InputError("--error class: this problem's targets are not classes");
}

template <class T>
MomentumStep<T>::MomentumStep(Mlp<T>& net, double eta, double alpha, MomentumRule rule)
    : net_(net),
      eta_(static_cast<T>(rule == MomentumRule::damped ? (1 - alpha) * eta : eta)),
      alpha_(static_cast<T>(alpha)),
      step_(Mlp<T>::Vector::Zero(static_cast<Eigen::Index>(net.parameter_count()))) {}

template <class T>
void MomentumStep<T>::apply(std::size_t block_patterns) {
  using Vector = typename Mlp<T>::Vector;
  Eigen::Map<Vector> w(net_.parameters().data(), step_.size());
  Eigen::Map<const Vector> g(net_.gradients().data(), step_.size());
  // The gradient is summed over the block; dividing by b keeps eta's meaning at any b.
  const T scale = eta_ / static_cast<T>(block_patterns);
  step_ = alpha_ * step_ - scale * g;
  w += step_;
}

template <class T>
Evaluation train_pass(Mlp<T>& net, MomentumStep<T>& step, const Dataset& data,
                      const std::vector<std::size_t>& order, std::size_t b, PhaseTimes& ph) {
  using Matrix = typename Mlp<T>::Matrix;
  Matrix x, t;
  std::vector<int> labels;
  Tally running;
  const std::size_t n = order.size();
  for (std::size_t s = 0; s < n; s += b) {
    const std::size_t count = std::min(b, n - s);
    const auto t0 = Clock::now();
    // Gather the block's patterns (in the current order) into contiguous columns.
    x.resize(data.n_inputs(), static_cast<Eigen::Index>(count));
    t.resize(data.n_outputs(), static_cast<Eigen::Index>(count));
    labels.resize(data.has_labels() ? count : 0);
    for (std::size_t j = 0; j < count; ++j) {
      const auto p = static_cast<Eigen::Index>(order[s + j]);
      x.col(static_cast<Eigen::Index>(j)) = data.inputs.col(p).template cast<T>();
      t.col(static_cast<Eigen::Index>(j)) = data.targets.col(p).template cast<T>();
      if (data.has_labels()) labels[j] = data.labels[order[s + j]];
    }
    const Matrix& y = net.forward(x);
    const auto t1 = Clock::now();
    net.zero_gradients();
    const double block_loss = static_cast<double>(net.backward(t));
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

template <class T>
TrainResult train(Mlp<T>& net, const Dataset& train, const Dataset& test, const TrainConfig& config,
                  const ProgressFn& progress) {
  validate(config, train);
  if (train.n_inputs() != net.spec().sizes.front() || train.n_outputs() != net.spec().sizes.back())
    throw InputError("network " + net.spec().describe() + " does not fit the data (" +
                     std::to_string(train.n_inputs()) + " inputs, " +
                     std::to_string(train.n_outputs()) + " outputs)");

  const std::size_t n = train.size();
  const std::size_t b = config.learning == Learning::pattern ? 1
                        : config.learning == Learning::epoch ? n
                                                             : config.block;
  TrainResult result;
  PhaseTimes& ph = result.phases;
  Rng order_rng(config.seed ^ 0x5eed0fde11e5ULL);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  MomentumStep<T> step(net, config.eta, config.alpha, config.momentum);

  const bool has_test = !test.empty();
  const bool exact_train = config.eval_train || !has_test;

  auto check_error = [&](const IterationRecord& r) {
    if (has_test) return r.test->error(config.metric);
    return r.train->error(config.metric);
  };
  auto run_test = [&](IterationRecord& r) {
    const auto t0 = Clock::now();
    if (has_test) r.test = evaluate(net, test, config.eval_chunk);
    if (exact_train) r.train = evaluate(net, train, config.eval_chunk);
    ph.test += seconds_since(t0);
    ph.test_patterns += (has_test ? test.size() : 0) + (exact_train ? n : 0);
    if (r.train) r.train_error = r.train->error(config.metric);
  };

  const auto start = Clock::now();
  IterationRecord r0;
  run_test(r0);
  result.history.push_back(r0);
  if (progress) progress(r0);

  for (int it = 1; it <= config.max_iterations; ++it) {
    if (config.shuffle) order_rng.shuffle(order);
    const Evaluation running = train_pass(net, step, train, order, b, ph);

    IterationRecord rec;
    rec.iteration = it;
    rec.train_error = running.error(config.metric);
    if (!std::isfinite(running.loss) || !std::isfinite(running.mse)) {
      rec.time_s = seconds_since(start);
      result.history.push_back(rec);
      if (progress) progress(rec);
      result.reason = StopReason::diverged;
      std::ostringstream why;
      why << "training diverged in iteration " << it << ": the training error became "
          << running.loss << " (try a smaller --eta)";
      result.reason_detail = why.str();
      break;
    }
    run_test(rec);
    rec.time_s = seconds_since(start);
    result.history.push_back(rec);
    if (progress) progress(rec);

    const double e = check_error(rec);
    if (!std::isfinite(e)) {
      result.reason = StopReason::diverged;
      result.reason_detail = "training diverged in iteration " + std::to_string(it) +
                             ": the check-set error is not finite (try a smaller --eta)";
      break;
    }
    if (config.target_error && e <= *config.target_error) {
      result.reason = StopReason::target_reached;
      std::ostringstream why;
      why << "target error " << *config.target_error << " reached in iteration " << it << " (" << e << ")";
      result.reason_detail = why.str();
      break;
    }
    if (config.max_seconds > 0 && rec.time_s >= config.max_seconds) {
      result.reason = StopReason::time_limit;
      result.reason_detail = "time limit of " + std::to_string(config.max_seconds) + " s reached";
      break;
    }
    if (it == config.max_iterations) {
      result.reason = StopReason::max_iterations;
      std::ostringstream why;
      why << "ran all " << it << " iterations";
      if (config.target_error) {
        double best = e;
        int best_it = it;
        for (const auto& h : result.history)
          if (h.iteration > 0 && (h.test || h.train) && check_error(h) < best)
            best = check_error(h), best_it = h.iteration;
        why << " without reaching the target error " << *config.target_error << " (best " << best
            << " in iteration " << best_it << ")";
      }
      result.reason_detail = why.str();
    }
  }
  result.seconds = seconds_since(start);
  if (result.reason != StopReason::diverged) {
    const auto t0 = Clock::now();
    result.final_train = evaluate(net, train, config.eval_chunk);
    if (has_test) result.final_test = evaluate(net, test, config.eval_chunk);
    ph.test += seconds_since(t0);
  }
  return result;
}

template TrainResult train<float>(Mlp<float>&, const Dataset&, const Dataset&, const TrainConfig&,
                                  const ProgressFn&);
template TrainResult train<double>(Mlp<double>&, const Dataset&, const Dataset&, const TrainConfig&,
                                   const ProgressFn&);
template class MomentumStep<float>;
template class MomentumStep<double>;
template Evaluation train_pass<float>(Mlp<float>&, MomentumStep<float>&, const Dataset&,
                                      const std::vector<std::size_t>&, std::size_t, PhaseTimes&);
template Evaluation train_pass<double>(Mlp<double>&, MomentumStep<double>&, const Dataset&,
                                       const std::vector<std::size_t>&, std::size_t, PhaseTimes&);
template Evaluation evaluate<float>(Mlp<float>&, const Dataset&, std::size_t);
template Evaluation evaluate<double>(Mlp<double>&, const Dataset&, std::size_t);

}  // namespace wulf
