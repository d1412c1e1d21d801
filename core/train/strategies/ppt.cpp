// Pattern Parallel Training (seed 001, --strategy ppt). Every rank holds the whole training
// set. In each round every rank draws a random local epoch of e patterns from the whole set,
// computes the weight update of those patterns with its own momentum,
//   d_q(t) = -eta g_q / e + alpha d_q(t-1)
// with g_q the gradient summed over the local epoch (--block-step sum drops the "/ e", one
// reading of seed 001's "running total": experiments/seed001-ppt/summed.sh),
// and the ranks exchange their updates with MPI_Allgather; every rank then applies all p
// updates, added in rank order, so the weights stay the same everywhere. Each rank keeps the
// error of the last k n / p patterns it trained on and piggybacks its mean on the allgather;
// when the average of those estimates reaches --target-error, every rank evaluates its share
// of the test set (the training set when there is none) and training stops if the check
// confirms it. One iteration is ceil(n / (p e)) rounds: the ranks together see about n
// patterns; --rounds-per-iteration R makes it R. wulf's bookkeeping after each iteration
// (an allreduce of the running errors, and the check pass with its own) leaves the ranks
// out of step, which the next allgather absorbs: with many rounds per iteration that cost
// falls on few rounds (experiments/seed001-ppt).
//
// The record's final.strategy holds PPT's own account, apart from wulf's bookkeeping
// between iterations (the exact check pass and the allreduce of the running errors, which
// seed 001's algorithm does not have): rounds, rounds_s (engine seconds from the start of
// each round to the end of its allgather and update), allgather_s (of which in the
// allgather, waiting included), checks and check_s (the test-set checks of the stopping
// rule), so that rounds_s + check_s is the time PPT alone takes.
#include "data/partition.hpp"
#include "train/run.hpp"

#include <cmath>
#include <deque>
#include <numeric>
#include <sstream>

namespace wulf {
namespace {

// e, the patterns each rank draws per round: --local-epoch, else n / p.
std::size_t local_epoch(const TrainConfig& config, std::size_t n, int p) {
  const std::size_t e = setting_count(config, "local-epoch");
  return e ? std::min(e, n) : std::max<std::size_t>(1, n / static_cast<std::size_t>(p));
}

// This rank's running estimate of its error: the mean over the last `size` patterns it
// trained on, each pattern's error in the unit of --error.
class ErrorWindow {
 public:
  explicit ErrorWindow(std::size_t size) : size_(size) {}
  void add(double error) {
    recent_.push_back(error);
    sum_ += error;
    if (recent_.size() > size_) sum_ -= recent_.front(), recent_.pop_front();
  }
  double mean() const { return recent_.empty() ? 0 : sum_ / static_cast<double>(recent_.size()); }

 private:
  std::size_t size_;
  std::deque<double> recent_;  // newest last
  double sum_ = 0;
};

// The patterns [share.begin, share.begin + share.count) of whole (clipped to it), copied
// without a copy of the whole set first: every rank holds the whole training set already.
Dataset copy_share(const Dataset& whole, Share share) {
  const std::size_t begin = std::min(share.begin, whole.size()), count = std::min(share.count, whole.size() - begin);
  const auto first = static_cast<Eigen::Index>(begin), cols = static_cast<Eigen::Index>(count);
  Dataset d;
  if (whole.byte_inputs())
    d.input_bytes = whole.input_bytes.middleCols(first, cols);
  else
    d.inputs = whole.inputs.middleCols(first, cols);
  d.targets = whole.targets.middleCols(first, cols);
  if (whole.has_labels())
    d.labels.assign(whole.labels.begin() + first, whole.labels.begin() + first + cols);
  d.decision_threshold = whole.decision_threshold;
  return d;
}

// PPT's rounds on one rank: whole is the whole training set, which every rank draws its
// local epochs from; run's sets are this rank's shares, which the check passes evaluate.
template <class T>
class Ppt {
 public:
  Ppt(Run<T>& run, const Dataset& whole)
      : run_(run),
        whole_(whole),
        config_(run.config()),
        p_(run.comm().size()),
        n_(run.sizes().train),
        e_(local_epoch(config_, n_, p_)),
        rounds_(setting_count(config_, "rounds-per-iteration")
                    ? setting_count(config_, "rounds-per-iteration")
                    : (n_ + static_cast<std::size_t>(p_) * e_ - 1) / (static_cast<std::size_t>(p_) * e_)),
        w_(run.weights()),
        window_(std::max<std::size_t>(1, setting_count(config_, "error-window") * n_ / p_)),
        rng_(Rng(config_.seed ^ 0x9970c0ffeeULL).split(static_cast<std::uint64_t>(run.comm().rank()))),
        pool_(n_),
        order_(e_),
        scale_(
            static_cast<T>(config_.momentum == MomentumRule::damped ? (1 - config_.alpha) * config_.eta : config_.eta) /
            static_cast<T>(config_.block_step == BlockStep::sum ? 1 : e_)),
        alpha_(static_cast<T>(config_.alpha)),
        mine_(w_ + 1, T(0)),
        all_((w_ + 1) * static_cast<std::size_t>(p_)),
        outputs_(static_cast<std::size_t>(run.net().spec().sizes.back())) {
    std::iota(pool_.begin(), pool_.end(), std::size_t{0});
  }

  // One iteration: rounds_ rounds, or fewer where the target is reached.
  ErrorSums iteration(int it) {
    ErrorSums running = run_.empty_sums();
    for (std::size_t r = 0; r < rounds_; ++r) {
      const double round_start = run_.comm().now();
      draw_local_epoch();
      run_.forward_backward(whole_, order_, 0, e_, running);
      local_update();
      const double global = exchange();
      rounds_s_ += run_.comm().now() - round_start;
      ++rounds_done_;
      if (target_confirmed(it, global)) break;
    }
    return running;
  }

  // PPT's own account for the record's final.strategy (the file's header).
  std::vector<std::pair<std::string, double>> stats() const {
    return {{"local_epoch", static_cast<double>(e_)},
            {"rounds_per_iteration", static_cast<double>(rounds_)},
            {"rounds", static_cast<double>(rounds_done_)},
            {"rounds_s", rounds_s_},
            {"allgather_s", allgather_s_},
            {"checks", static_cast<double>(checks_)},
            {"check_s", check_s_}};
  }

 private:
  // A random local epoch: the first e of a partial shuffle of the whole set.
  void draw_local_epoch() {
    for (std::size_t j = 0; j < e_; ++j) std::swap(pool_[j], pool_[j + rng_.below(n_ - j)]);
    std::copy(pool_.begin(), pool_.begin() + static_cast<std::ptrdiff_t>(e_), order_.begin());
  }

  // This rank's update d_q(t) of its local epoch's gradient into mine_[0 .. w), the
  // patterns' errors into the window and its mean into mine_[w].
  void local_update() {
    double estimate = 0;
    run_.kernel(Phase::update, 1, run_.flops().update, [&] {
      const auto g = run_.net().gradients();
      for (std::size_t j = 0; j < w_; ++j) mine_[j] = alpha_ * mine_[j] - scale_ * g[j];
      for (Eigen::Index c = 0; c < run_.net().outputs().cols(); ++c) window_.add(pattern_error(c));
      estimate = window_.mean();
    });
    mine_[w_] = static_cast<T>(estimate);
  }

  // Pattern c of the local epoch's error in the unit of --error: squared error per output,
  // or 0/1 wrong.
  double pattern_error(Eigen::Index c) const {
    const auto& y = run_.net().outputs();
    if (config_.metric == ErrorMetric::classification) {
      const std::vector<int>& labels = run_.last_block().labels;
      const int label = labels.empty() ? 0 : labels[static_cast<std::size_t>(c)];
      return predicted_class(y, c, whole_.decision_threshold) != label;
    }
    return static_cast<double>((y.col(c) - run_.last_block().t.col(c)).squaredNorm()) / static_cast<double>(outputs_);
  }

  // The allgather of every rank's update and estimate; every rank adds all p updates in
  // rank order. Returns the mean of the ranks' estimates.
  double exchange() {
    const double gather_start = run_.comm().now();
    run_.collective([&] { run_.comm().allgather(std::span<const T>(mine_), std::span<T>(all_)); });
    allgather_s_ += run_.comm().now() - gather_start;
    double global = 0;
    run_.kernel(Phase::update, 1, static_cast<double>(w_) * p_, [&] {
      auto params = run_.net().parameters();
      for (int s = 0; s < p_; ++s) {
        const T* d = all_.data() + static_cast<std::size_t>(s) * (w_ + 1);
        for (std::size_t j = 0; j < w_; ++j) params[j] += d[j];
        global += static_cast<double>(d[w_]);
      }
      global /= p_;
    });
    return global;
  }

  // Whether the estimate global reaches --target-error and a pass over the check set
  // confirms it (then the run stops after iteration it).
  bool target_confirmed(int it, double global) {
    if (!run_.numerics() || !config_.target_error) return false;
    const double estimate = config_.metric == ErrorMetric::rmse ? std::sqrt(global) : global;
    if (estimate > *config_.target_error) return false;
    // The estimate says done: every rank checks its share of the check set.
    const GlobalSizes& sizes = run_.sizes();
    const double check_start = run_.comm().now();
    const Evaluation check = sizes.test > 0 ? run_.evaluate_all(run_.test(), run_.local_count(run_.test(), sizes.test))
                                            : run_.evaluate_all(run_.train(), run_.local_count(run_.train(), n_));
    check_s_ += run_.comm().now() - check_start;
    ++checks_;
    if (!(check.error(config_.metric) <= *config_.target_error)) return false;  // NaN confirms nothing
    std::ostringstream why;
    why << "target error " << *config_.target_error << " reached in iteration " << it << ", round " << rounds_done_
        << ": estimate " << estimate << ", confirmed on the " << (sizes.test > 0 ? "test" : "training") << " set ("
        << check.error(config_.metric) << ")";
    run_.request_stop(StopReason::target_reached, why.str());
    return true;
  }

  Run<T>& run_;
  const Dataset& whole_;
  const TrainConfig& config_;
  const int p_;
  const std::size_t n_, e_, rounds_, w_;  // training set, local epoch, rounds per iteration, weights
  ErrorWindow window_;
  Rng rng_;
  std::vector<std::size_t> pool_, order_;  // the whole set's pattern numbers; this round's local epoch
  const T scale_, alpha_;
  std::vector<T> mine_, all_;  // this rank's update and estimate; every rank's
  const std::size_t outputs_;
  std::size_t rounds_done_ = 0, checks_ = 0;
  double rounds_s_ = 0, allgather_s_ = 0, check_s_ = 0;
};

}  // namespace

template <class T>
TrainResult train_ppt(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                      const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  // The whole training set is every rank's to draw from; the errors of the training set are
  // measured, like the test set's, on each rank's share.
  const Dataset train_share = copy_share(train, share_of(sizes.train, comm.size(), comm.rank()));
  // PPT's own stopping rule: the piggybacked estimate, confirmed.
  Run<T> run(net, train_share, test, sizes, config, comm, compute, progress, RunOptions{.check_target = false});
  Ppt<T> ppt(run, train);
  TrainResult result = run.run([&](int it) { return ppt.iteration(it); });
  result.stats = ppt.stats();
  return result;
}

WULF_INSTANTIATE_STRATEGY(train_ppt);

namespace {

constexpr StrategyOption ppt_options[] = {
    {.name = "local-epoch",
     .key = "local_epoch",
     .help = "patterns each rank draws per round (0: n / np)",
     .range = {.lo = 0, .hi = 2147483647}},
    {.name = "error-window",
     .key = "error_window",
     .help = "k, the error estimate covers each rank's last k n / np patterns",
     .default_value = 4,
     .range = {.lo = 1, .hi = 1000}},
    {.name = "rounds-per-iteration",
     .key = "rounds_per_iteration",
     .help = "rounds in one iteration, i.e. between wulf's error records and their allreduce (0: n / (np e) "
             "rounded up, about n patterns over all ranks)",
     .range = {.lo = 0, .hi = 2147483647}},
};

constexpr SearchTraits ppt_search{.block_option = "local-epoch"};

}  // namespace

extern const StrategyDescriptor ppt_strategy{
    .name = "ppt",
    .help = "pattern parallel training, seed 001",
    .options_title = "pattern parallel training (--strategy ppt, seed 001)",
    .options = ppt_options,
    .learning = momentum_learning,
    .layout = fixed_layout<DataLayout::whole_train>,
    .memory = [](const MemoryShape& s, const TrainConfig& c, StrategyMemory& m) {
      m.updates_first = m.updates_each = 0;  // its update is in its allgather buffers
      m.columns = static_cast<double>(local_epoch(c, static_cast<std::size_t>(s.n), s.p));
      m.columns_shrink = "a smaller --local-epoch";
      m.order_patterns = s.n + m.columns;  // it draws from the whole set
      const double all = (s.w + 1) * (s.p + 1) * s.T;  // this rank's update and every rank's
      add_part(m.collectives, "PPT's allgather buffers, (w + 1) x (p + 1) values per rank", all, all,
               MemoryPart::Kind::held, "fewer ranks (--np) or --strategy block");
    },
    .message_counts = [](const MemoryShape& s, const TrainConfig&) {
      mpi_count(static_cast<std::size_t>(s.w) + 1, "--strategy ppt: each rank's w + 1 values in the allgather",
                s.smaller_net);
    },
    .search = &ppt_search,
    .allgathers_update = true,
    .train_float = train_ppt<float>,
    .train_double = train_ppt<double>,
};

}  // namespace wulf
