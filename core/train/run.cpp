// Run<T>: the iterations every strategy shares (run.hpp).
#include "train/run.hpp"

#include "data/partition.hpp"
#include "train/buckets.hpp"
#include "util/errors.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace wulf {

ChargedFlops charged_kernel_flops(const NetSpec& spec, const ComputeConfig& c, bool half, Learning learning) {
  // The 16-bit rate over the speed the flops are charged at: the tensor cores' gain.
  const double gain = half && c.speed16 > 0 && c.host_speed > 0 ? c.speed16 / c.host_speed : 1.0;
  const auto tensor = [gain](LayerKind k) {
    return k == LayerKind::conv || k == LayerKind::linear || k == LayerKind::attention ? gain : 1.0;
  };
  ChargedFlops out;
  const KernelFlops f = spec.flops();
  out.kernels = f;
  out.kernels.update = (learning == Learning::adam ? kAdamUpdateFlops * f.weights : f.update) /
                       efficiency_of(c.efficiency, LayerKind::other);
  if (!spec.table) {
    const double e = efficiency_of(c.efficiency, LayerKind::linear) * tensor(LayerKind::linear);
    out.kernels.forward = f.forward / e;
    out.kernels.backward = f.backward / e;
    for (int l = 1; l <= spec.n_layers(); ++l) {
      out.forward.push_back(spec.layer_forward_flops(l) / e);
      out.backward.push_back(spec.layer_backward_flops(l) / e);
    }
    return out;
  }
  out.kernels.forward = out.kernels.backward = 0;
  const bool timed = !c.device.empty() && c.host_speed > 0;
  if (const double* step = timed ? spec.table->step_on(c.device) : nullptr) out.kernels.update = *step * c.host_speed;
  for (const TableLayer& layer : spec.table->layers) {
    const LayerTime* time = timed ? layer.time_on(c.device) : nullptr;
    const double e = efficiency_of(c.efficiency, layer.kind) * tensor(layer.kind);
    const double forward = time ? time->forward_s * c.host_speed : layer.forward_flops / e;
    const double backward = time ? time->backward_s * c.host_speed : layer.backward_flops / e;
    out.kernels.forward += forward;
    out.kernels.backward += backward;
    out.forward.push_back(forward);
    out.backward.push_back(backward);
  }
  return out;
}

template <class T>
Run<T>::Run(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes, const TrainConfig& config,
            Comm& comm, Compute& compute, const ProgressFn& progress, RunOptions options)
    : net_(net),
      train_(train),
      test_(test),
      sizes_(sizes),
      config_(config),
      comm_(comm),
      compute_(compute),
      numerics_(compute.numerics()),
      weights_(net.parameter_count()),
      charged_(charged_kernel_flops(net.spec(), compute.config(), config.value_bytes == 2, config.learning)),
      options_(options),
      progress_(progress) {
  validate(config, sizes.train, sizes.classifier, block_sharers(config, comm.size()));
  if (numerics_ && (train.n_inputs() != net.spec().sizes.front() || train.n_outputs() != net.spec().sizes.back()))
    throw InputError("network " + net.spec().describe() + " does not fit the data (" +
                     std::to_string(train.n_inputs()) + " inputs, " + std::to_string(train.n_outputs()) +
                     " outputs)");
  // Under --numerics off the spare buffer of Comm::allreduce_sum_anywhere is the third part of
  // the net's storage that all simulated ranks share, so no rank allocates one.
  if (config.strategy->moves_net_buffers)
    if (T* shared = compute.net_storage<T>(weights_)) comm.lend_spare_storage(shared + 2 * weights_, weights_ * sizeof(T));
}

template <class T>
void Run<T>::add_time(Phase phase, double seconds, std::size_t patterns) {
  switch (phase) {
    case Phase::forward: phases_.forward += seconds, phases_.forward_patterns += patterns; break;
    case Phase::backward: phases_.backward += seconds, phases_.backward_patterns += patterns; break;
    case Phase::update: phases_.update += seconds, phases_.updates += 1; break;
    case Phase::test: phases_.test += seconds, phases_.test_patterns += patterns; break;
    case Phase::other: break;
  }
}

template <class T>
ErrorSums Run<T>::empty_sums() const {
  ErrorSums s;
  s.outputs = static_cast<std::size_t>(net_.spec().sizes.back());
  s.classifier = sizes_.classifier;
  return s;
}

template <class T>
Evaluation Run<T>::sum_over_ranks(ErrorSums s) {
  if (comm_.size() > 1) {
    std::array<double, 4> a = s.as_array();
    collective([&] { comm_.allreduce_sum(std::span<double>(a)); });
    s.set(a);
  }
  return s.finish();
}

template <class T>
Evaluation Run<T>::evaluate_all(const Dataset& data, std::size_t local_patterns) {
  ErrorSums s = empty_sums();
  kernel(Phase::test, local_patterns, charged_.kernels.test() * static_cast<double>(local_patterns),
         [&] { s = evaluate_sums(net_, data, config_.eval_chunk); });
  s.classifier = sizes_.classifier;  // also on a rank that holds none of data
  return sum_over_ranks(s);
}

template <class T>
void Run<T>::forward_block(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                           std::size_t count) {
  kernel(Phase::forward, count, charged_.kernels.forward * static_cast<double>(count), [&] {
    gather_block(data, order, first, count, x_, t_, labels_);
    if (count > 0) net_.forward(x_);
  });
}

template <class T>
void Run<T>::add_errors(ErrorSums& sums, double block_loss) const {
  sums.add(net_.outputs(), t_, block_loss, labels_.empty() ? nullptr : labels_.data(), train_.decision_threshold);
}

template <class T>
void Run<T>::forward_backward(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                              std::size_t count, ErrorSums& sums) {
  forward_block(data, order, first, count);
  if (config_.recompute)  // the forward again inside the backward: its time, no arithmetic
    kernel_part(Phase::forward, count, 0, charged_.kernels.forward * static_cast<double>(count), 1.0, [] {});
  kernel(Phase::backward, count, charged_.kernels.backward * static_cast<double>(count), [&] {
    if (count == 0) return net_.zero_gradients();
    add_errors(sums, static_cast<double>(net_.backward(t_, false)));
  });
}

template <class T>
void Run<T>::forward_backward_layers(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                                     std::size_t count, ErrorSums& sums,
                                     const std::function<void(int layer)>& layer_done, double slice_flops,
                                     const std::function<void()>& between_slices) {
  forward_block(data, order, first, count);
  const NetSpec& spec = net_.spec();
  const int layers = spec.timed_layers();
  double block_loss = 0;
  for (int l = layers; l >= 1; --l) {
    recompute_layer(l, count);
    const double flops = charged_.backward[static_cast<std::size_t>(l - 1)];
    kernel_sliced(Phase::backward, count, l == layers ? count : 0, flops * static_cast<double>(count),
                  flops / charged_.kernels.backward, slice_flops, between_slices,
                  [&] { backward_arithmetic(l, count, block_loss, sums); });
    layer_done(l);
  }
}

template <class T>
void Run<T>::kernel_sliced(Phase phase, std::size_t count, std::size_t counted, double block_flops, double share,
                           double slice_flops, const std::function<void()>& between_slices,
                           const std::function<void()>& arithmetic) {
  const int slices = progress_slices(block_flops, slice_flops);
  for (int s = 0; s < slices; ++s) {
    if (s > 0 && between_slices) between_slices();
    kernel_part(phase, count, s == 0 ? counted : 0, block_flops / slices, share / slices, [&] {
      if (s == 0) arithmetic();
    });
  }
}

template <class T>
void Run<T>::backward_arithmetic(int l, std::size_t count, double& block_loss, ErrorSums& sums) {
  if (count == 0) {
    std::ranges::fill(net_.weight_gradients(l), T(0));
    std::ranges::fill(net_.bias_gradients(l), T(0));
    return;
  }
  if (l == net_.spec().timed_layers()) block_loss = static_cast<double>(net_.backward_output(t_));
  net_.backward_layer(l, false);
  if (l == 1) add_errors(sums, block_loss);
}

template <class T>
void Run<T>::recompute_layer(int l, std::size_t count) {
  if (!config_.recompute) return;
  const double flops = charged_.forward[static_cast<std::size_t>(l - 1)];
  const double total = charged_.kernels.forward;
  kernel_part(Phase::forward, count, 0, flops * static_cast<double>(count), total > 0 ? flops / total : 0.0, [] {});
}

template <class T>
void Run<T>::forward_backward_hooked(const Dataset& data, const std::vector<std::size_t>& order, std::size_t first,
                                     std::size_t count, ErrorSums& sums, const LayerHooks& hooks) {
  const auto call = [](const std::function<void(int)>& hook, int l) {
    if (hook) hook(l);
  };
  const int layers = net_.spec().timed_layers();
  const double forward_total = charged_.kernels.forward;
  for (int l = 1; l <= layers; ++l) {
    call(hooks.before_forward, l);
    const double flops = charged_.forward[static_cast<std::size_t>(l - 1)];
    kernel_sliced(Phase::forward, count, l == 1 ? count : 0, flops * static_cast<double>(count),
                  forward_total > 0 ? flops / forward_total : 0.0, hooks.slice_flops, hooks.between_slices, [&] {
                    if (l == 1) gather_block(data, order, first, count, x_, t_, labels_);
                    if (count == 0) return;
                    if (l == 1) net_.begin_forward(x_);
                    net_.forward_layer(l);
                  });
    call(hooks.after_forward, l);
  }
  double block_loss = 0;
  const double backward_total = charged_.kernels.backward;
  for (int l = layers; l >= 1; --l) {
    call(hooks.before_backward, l);
    recompute_layer(l, count);
    const double flops = charged_.backward[static_cast<std::size_t>(l - 1)];
    kernel_sliced(Phase::backward, count, l == layers ? count : 0, flops * static_cast<double>(count),
                  backward_total > 0 ? flops / backward_total : 0.0, hooks.slice_flops, hooks.between_slices,
                  [&] { backward_arithmetic(l, count, block_loss, sums); });
    call(hooks.after_backward, l);
  }
}

template <class T>
void Run<T>::request_stop(StopReason reason, std::string detail) {
  requested_ = Stop{reason, std::move(detail)};
}

template <class T>
std::size_t Run<T>::local_count(const Dataset& data, std::size_t total) const {
  if (numerics_) return data.size();
  if (options_.pure_master) return comm_.rank() == 0 ? 0 : share_of(total, comm_.size() - 1, comm_.rank() - 1).count;
  return share_of(total, comm_.size(), comm_.rank()).count;
}

template <class T>
void Run<T>::keep_good_weights(int it) {
  if (!numerics_) return;
  good_weights_.assign(net_.parameters().begin(), net_.parameters().end());
  good_iteration_ = it;
}

template <class T>
void Run<T>::restore_good_weights() {
  if (numerics_ && good_weights_.size() == weights_)
    std::copy(good_weights_.begin(), good_weights_.end(), net_.parameters().begin());
}

template <class T>
void Run<T>::run_test(IterationRecord& r) {
  if (sizes_.test > 0) r.test = evaluate_all(test_, local_count(test_, sizes_.test));
  // Without a test set the training set is the check set, evaluated exactly. Without the
  // arithmetic (--numerics off) there are no errors to check, but the pass is charged all
  // the same: a time-only run must take the time the real one takes.
  if (config_.eval_train || sizes_.test == 0) r.train = evaluate_all(train_, local_count(train_, sizes_.train));
  if (!numerics_) {  // charged, but no arithmetic, no errors
    r.test.reset(), r.train.reset();
    return;
  }
  if (r.train) r.train_error = r.train->error(config_.metric);
}

template <class T>
void Run<T>::report(TrainResult& result, const IterationRecord& r) {
  result.history.push_back(r);
  if (progress_ && comm_.rank() == 0) progress_(r);
}

template <class T>
IterationRecord Run<T>::untrained() {
  IterationRecord r0;
  run_test(r0);
  // Its training error too, exactly (later iterations' is the running error of the pass),
  // so that a curve of train_error starts at iteration 0 as test_error's does. Like the
  // rest of iteration 0 it is outside the clock, and it is kept out of the phase times:
  // seed 000's iteration has no such pass.
  if (numerics_ && !r0.train) {
    const PhaseTimes before = phases_;
    r0.train = evaluate_all(train_, local_count(train_, sizes_.train));
    r0.train_error = r0.train->error(config_.metric);
    phases_ = before;
  }
  r0.time_s = 0;
  return r0;
}

template <class T>
std::optional<Stop> Run<T>::iteration(int it, const std::function<ErrorSums(int iteration)>& iterate, double start,
                                      StopRule& rule, TrainResult& result) {
  notes_.clear();
  const ErrorSums local = iterate(it);
  compute_.charge_iteration();

  IterationRecord rec;
  rec.iteration = it;
  rec.notes = std::move(notes_);
  const Evaluation seen = sum_over_ranks(local);
  if (numerics_) rec.train_error = seen.error(config_.metric);
  // A fault the strategy found, or errors gone NaN: reported without a check pass.
  if (std::optional<Stop> stop = rule.before_check(it, seen, requested_)) {
    rec.time_s = comm_.now() - start;
    report(result, rec);
    return stop;
  }
  run_test(rec);
  rec.time_s = comm_.now() - start;
  report(result, rec);
  std::optional<Stop> stop = rule.after_check(rec, requested_);
  if (!stop || !stopped_on_fault(stop->reason)) keep_good_weights(it);
  return stop;
}

template <class T>
TrainResult Run<T>::run(const std::function<ErrorSums(int iteration)>& iterate) {
  TrainResult result;
  // Iteration 0 is the untrained net; the clock starts after its evaluation.
  report(result, untrained());
  // The untrained weights are the first good ones: a run that fails at once keeps them.
  keep_good_weights(0);
  StopRule rule(config_, numerics_, options_.check_target, sizes_.test > 0);
  const double start = comm_.now();
  for (int it = 1; it <= config_.max_iterations; ++it) {
    const std::optional<Stop> stop = iteration(it, iterate, start, rule, result);
    if (!stop) continue;
    result.reason = stop->reason;
    result.reason_detail = stop->detail;
    if (stopped_on_fault(stop->reason)) restore_good_weights();
    break;
  }
  if (config_.max_iterations == 0) result.reason_detail = "no iteration (--epochs 0): the net as it started, evaluated";
  finish(result, start, rule.best());
  return result;
}

template <class T>
void Run<T>::finish(TrainResult& result, double start, const std::optional<BestError>& best) {
  result.seconds = comm_.now() - start;
  result.best = best;
  // A long run keeps every k-th iteration (and iteration 0 and the last); the errors were
  // still checked after every iteration, and the best is from all of them.
  if (config_.history_every > 1 && result.history.size() > 2) {
    const IterationRecord last = result.history.back();
    std::erase_if(result.history, [&](const IterationRecord& h) { return h.iteration % config_.history_every != 0; });
    if (result.history.back().iteration != last.iteration) result.history.push_back(last);
  }
  result.weights_iteration = stopped_on_fault(result.reason) ? good_iteration_ : result.history.back().iteration;
  // After a fault the history holds the errors up to the last good weights; no final pass.
  // Without the arithmetic the final pass is charged (its phase times and collectives are
  // the real run's) and its errors, which are none, are not kept.
  if (!stopped_on_fault(result.reason)) {
    result.final_train = evaluate_all(train_, local_count(train_, sizes_.train));
    if (sizes_.test > 0) result.final_test = evaluate_all(test_, local_count(test_, sizes_.test));
    if (!numerics_) result.final_train = Evaluation{}, result.final_test.reset();
  }
  result.phases = phases_;
}

template class Run<float>;
template class Run<double>;

}  // namespace wulf
