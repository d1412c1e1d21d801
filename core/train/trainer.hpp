// Momentum backpropagation learning by pattern, by block of b patterns, or by epoch (seed
// 000 section II), sequential or with training-set parallelism over p ranks, with errors
// after every iteration and a stopping rule.
//
// One iteration is one pass over the training set (seed 000's unit of time): the patterns
// are taken in blocks of b; after each block the weights change by
//   classic:  dw(t) = -eta * g / b + alpha * dw(t-1),            w += dw(t)
//   damped:   dw(t) = -(1 - alpha) * eta * g / b + alpha * dw(t-1)
// where g is the gradient summed over the block's patterns (so eta means the same at any
// block size), then the test set is evaluated. With --block-step sum the "/ b" goes: eta
// is then every pattern's step, and a block of b moves b times as far (sum at eta is mean
// at b eta). The two momentum rules are one family: damped (eta, alpha) is classic
// ((1 - alpha) eta, alpha); with damped, eta is the step size the momentum settles to. The
// seed problems default to mean and damped; why, with what the other choices do to the
// seeds' runs: experiments/foundation/update-rules.md.
//
// Training-set parallelism (seed 000 section V, strategy `block`): rank q holds a
// contiguous share of the training and test sets (partition.hpp) and, of every block of b
// patterns, takes its share b_q of b; the block's gradients are summed over the ranks with
// one allreduce over the one gradient buffer, and every rank applies the same update, so
// the weights stay identical. With p = 1 this is the sequential run, operation for
// operation.
#pragma once

#include "util/errors.hpp"
#include "util/text.hpp"
#include "nn/cg.hpp"
#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "nn/mlp.hpp"
#include "data/problems.hpp"
#include "train/adam.hpp"
#include "train/rprop.hpp"
#include "train/strategy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wulf {

// What train_error / test_error and --target-error mean.
enum class ErrorMetric { rmse, mse, loss, classification };
std::string_view to_string(ErrorMetric m);
ErrorMetric parse_error_metric(std::string_view name);  // throws InputError

// What the training options may be: wulf train's ranges, to which a record's config is held
// too (job/job_json.hpp, --rerun).
inline constexpr Range kStepRange{.lo = 0, .hi = 1e6, .lo_open = true};  // --eta, an RPROP step
inline constexpr Range kAlphaRange{.lo = 0, .hi = 1, .hi_open = true};
inline constexpr Range kErrorRange{.lo = 0, .hi = 1e9};  // an error of any --error metric
inline constexpr Range kInitRange{.lo = 0, .hi = 1e6};
inline constexpr Range kRpropIncreaseRange{.lo = 1, .hi = 1e6, .lo_open = true};
inline constexpr Range kRpropDecreaseRange{.lo = 0, .hi = 1, .lo_open = true, .hi_open = true};
inline constexpr Range kRpropDeltaMinRange{.lo = 0, .hi = 1e6};
inline constexpr Range kAdamBetaRange{.lo = 0, .hi = 1, .hi_open = true};
inline constexpr Range kAdamEpsilonRange{.lo = 0, .hi = 1, .lo_open = true};
inline constexpr Range kEpochsRange{.lo = 0, .hi = 1e8};  // --epochs: a job's most iterations (0: none)
inline constexpr long long kMostHistoryEvery = 1'000'000'000;  // --history-every, larger ones cut to it

struct TrainConfig {
  Learning learning = Learning::block;
  MomentumRule momentum = MomentumRule::classic;
  BlockStep block_step = BlockStep::mean;
  std::size_t block = 16;        // patterns per update with Learning::block
  RpropConfig rprop{};           // the RPROP step's parameters with Learning::rprop
  AdamConfig adam{};             // the Adam step's parameters with Learning::adam
  double eta = 0.1;
  double alpha = 0.0;
  int max_iterations = 100;
  std::optional<double> target_error{};  // stop once the check error is <= this
  double max_seconds = 0.0;      // stop after this much training time; 0: no limit
  ErrorMetric metric = ErrorMetric::rmse;
  bool shuffle = true;           // a new pattern order every iteration (from seed)
  bool eval_train = false;       // exact pass over the training set after each iteration
  // Activation checkpointing: each layer's forward charged again before its backward.
  bool recompute = false;
  // --precision bf16 or fp16 (time only): 2, the bytes a parameter or a gradient is sent as,
  // and the conv, linear and attention layers charged at the host's 16-bit rate; 0: the
  // arithmetic's type, as computed.
  std::size_t value_bytes = 0;
  std::uint64_t seed = 1;
  double init_range = 0.0;       // uniform [-r, r]; 0: 1/sqrt(fan-in) per layer
  std::size_t eval_chunk = 1024; // patterns per product when evaluating
  int history_every = 1;         // keep iterations 0, k, 2k, ... and the last in the history

  // The parallel strategy and the values of its own options (setting(), strategy.hpp).
  Strategy strategy{};
  StrategySettings settings{};
  // The node each rank runs on (rank r's at r), where an allreduce is hierarchical
  // (comm/nb_allreduce.hpp): the front end sets it from the platform's hosts or this
  // machine; empty where none is.
  std::vector<int> rank_nodes{};
  // The rings of the rings allreduce, each its ranks in order: the front end sets them from
  // the platform's hosts' wulf:rings or this machine (one ring in rank order); empty where
  // no allreduce is rings.
  std::vector<std::vector<int>> rank_rings{};
};

// Errors of a net over a whole set.
struct Evaluation {
  std::size_t patterns = 0;
  double mse = 0;    // mean of (y - t)^2 over patterns and outputs
  double rmse = 0;
  double loss = 0;   // the training loss per pattern
  std::size_t class_errors = 0;
  bool classifier = false;
  double accuracy() const { return patterns ? 1.0 - double(class_errors) / double(patterns) : 0; }
  double error(ErrorMetric m) const;
};

// The sums an Evaluation is made of, block by block; ranks add theirs up with one
// allreduce of as_array() before finish().
struct ErrorSums {
  double squared = 0;
  double loss = 0;
  double patterns = 0;
  double class_errors = 0;
  std::size_t outputs = 0;
  bool classifier = false;

  // y, t: (n_out, B); labels of the block's patterns (null: no classifier).
  template <class M>
  void add(const M& y, const M& t, double block_loss, const int* labels, float threshold);
  std::array<double, 4> as_array() const { return {squared, loss, patterns, class_errors}; }
  void set(const std::array<double, 4>& a) { squared = a[0], loss = a[1], patterns = a[2], class_errors = a[3]; }
  Evaluation finish() const;
};

struct IterationRecord {
  int iteration = 0;
  double time_s = 0;       // engine seconds since training started (wall, or simulated)
  double train_error = std::numeric_limits<double>::quiet_NaN();  // NaN: not measured
  std::optional<Evaluation> train;  // exact pass (eval_train), else only train_error (running)
  std::optional<Evaluation> test;
  // A strategy's own numbers for this iteration (cg: the step, f'(0), probes), in order.
  std::vector<std::pair<std::string, double>> notes;
};

// comm: seconds inside collectives, waiting there for slower ranks included; poll: seconds
// in point-to-point polling (cg --load-balance: a worker's request and the master's reply,
// or an idle worker's wait for the stop; all of the master's serving).
struct PhaseTimes {
  double forward = 0, backward = 0, update = 0, test = 0, comm = 0, poll = 0;  // seconds
  std::size_t forward_patterns = 0, backward_patterns = 0, updates = 0, test_patterns = 0, comm_calls = 0,
              polls = 0;
};

// How a run ended. The last three are faults: the run stops, the record says why, and the
// net holds the last good weights (the weights after the last iteration whose errors were
// finite); wulf train exits with exit_diverged.
enum class StopReason {
  max_iterations,
  target_reached,
  time_limit,
  diverged,             // the errors became NaN or infinite
  line_search_failed,   // cg: no minimum bracketed along the direction (flat, rising, no sign change)
  gradient_not_finite,  // cg: the gradient or a probe's slope was NaN or infinite
};
std::string_view to_string(StopReason r);
bool stopped_on_fault(StopReason r);

// The lowest check error (the test set's, the training set's where there is none) of a
// run's iterations from 1 on: where and when (engine seconds) it was reached.
struct BestError {
  int iteration = 0;
  double error = 0;
  double time_s = 0;
  bool on_test = true;
};

struct TrainResult {
  std::vector<IterationRecord> history;  // iteration 0 is the untrained net
  Evaluation final_train;                // exact, over the whole training set
  std::optional<Evaluation> final_test;
  PhaseTimes phases;                     // this rank's
  StopReason reason = StopReason::max_iterations;
  std::string reason_detail;             // for people: why it stopped
  double seconds = 0;                    // training time (wall, or simulated)
  int weights_iteration = 0;             // the iteration whose weights the net holds at the end
  std::optional<BestError> best;         // none without the arithmetic or a checked iteration
  // A strategy's totals for the record (cg: gradient passes, probes, restarts), in order.
  std::vector<std::pair<std::string, double>> stats;
};

// The momentum step of either rule (above), over the net's one parameter buffer, from its
// gradient buffer or from the gradient given (their sum over the ranks, which may lie in
// Run::spare).
template <class T>
class MomentumStep {
 public:
  MomentumStep(Mlp<T>& net, double eta, double alpha, MomentumRule rule = MomentumRule::classic,
               BlockStep block_step = BlockStep::mean);
  // The same step of the weights in `weights` alone (a rank's shard of them, fsdp), each
  // value by the same operations as the net's.
  MomentumStep(std::span<T> weights, double eta, double alpha, MomentumRule rule, BlockStep block_step);
  void apply(std::size_t block_patterns) { apply(block_patterns, net_->gradients()); }
  void apply(std::size_t block_patterns, std::span<const T> gradient);

 private:
  Mlp<T>* net_ = nullptr;  // whose gradients apply(b) takes; null for a shard
  std::span<T> weights_;
  T eta_, alpha_;
  bool sum_;
  typename Mlp<T>::Vector step_;  // dw(t-1)
};

// The update that ends a block: the momentum step, with --learning rprop the RPROP step
// (rprop.hpp), whose blocks are the whole training set, or with --learning adam the Adam step
// (adam.hpp).
template <class T>
class WeightUpdate {
 public:
  WeightUpdate(Mlp<T>& net, const TrainConfig& config);
  // From the net's gradient buffer, or from the gradient given (as MomentumStep).
  void apply(std::size_t block_patterns);
  void apply(std::size_t block_patterns, std::span<const T> gradient);

 private:
  Mlp<T>& net_;
  MomentumStep<T> momentum_;
  std::optional<RpropStep<T>> rprop_;
  std::optional<AdamStep<T>> adam_;
};

// One sequential pass over data in the given pattern order, an update after every b
// patterns (the last block may be shorter). Adds to phases; returns the errors seen during
// the pass (each pattern measured before the update its block makes).
template <class T>
Evaluation train_pass(Mlp<T>& net, MomentumStep<T>& step, const Dataset& data,
                      const std::vector<std::size_t>& order, std::size_t b, PhaseTimes& phases);

// Patterns per update: 1 (by pattern), n (by epoch and RPROP) or the block size.
std::size_t block_size(const TrainConfig& config, std::size_t n);

// Checks the configuration against the (global) training-set size; throws InputError
// naming the fault. ranks: b must be at least the number of ranks. The strategy's own
// settings are check_strategy's (strategy.hpp).
void validate(const TrainConfig& config, std::size_t train_patterns, bool classifier, int ranks = 1);

// The sizes of the whole problem, which every rank knows even when it holds only its share
// (or, with --numerics off, none of the data).
struct GlobalSizes {
  std::size_t train = 0;
  std::size_t test = 0;
  bool classifier = false;
};

// Training-set parallelism on comm's ranks (p = 1: sequential). train/test are this rank's
// shares (partition.hpp); net may hold shared, unused storage when compute.numerics() is
// off. Rank 0's progress is called; every rank returns the same history and errors.
template <class T>
TrainResult train_block(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                        const TrainConfig& config, Comm& comm, Compute& compute,
                        const ProgressFn& progress = {});

// The layout of config's strategy with its settings (cg with load balancing: workers).
DataLayout data_layout(const TrainConfig& config);
// The ranks a block of config's strategy is shared over: np where it splits blocks, else 1.
int block_sharers(const TrainConfig& config, int np);

// config.strategy on comm's ranks; train and test hold what data_layout says. A strategy
// that runs sessions is apart (session.hpp): it returns a table, not one run.
template <class T>
TrainResult train_strategy(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                           const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress = {});

// The sequential run: train_block on one rank, the wall clock, no charging.
template <class T>
TrainResult train(Mlp<T>& net, const Dataset& train, const Dataset& test, const TrainConfig& config,
                  const ProgressFn& progress = {});

// The error sums of net over data, chunk patterns per product: evaluate's, before finish().
template <class T>
ErrorSums evaluate_sums(Mlp<T>& net, const Dataset& data, std::size_t chunk);
template <class T>
Evaluation evaluate(Mlp<T>& net, const Dataset& data, std::size_t chunk = 1024);

}  // namespace wulf
