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
#include "train/partition.hpp"
#include "train/run.hpp"

#include <deque>
#include <numeric>
#include <sstream>

namespace wulf {

template <class T>
TrainResult train_ppt(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                      const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  // The whole training set is every rank's to draw from; the errors of the training set are
  // measured, like the test set's, on each rank's share.
  const int p = comm.size(), q = comm.rank();
  const std::size_t n = sizes.train;
  Dataset train_share = train;
  const Share share = share_of(n, p, q);
  train_share.keep(share.begin, share.count);
  Run<T> run(net, train_share, test, sizes, config, comm, compute, progress);
  run.check_target = false;  // PPT's own rule: the piggybacked estimate, confirmed
  const std::size_t e = config.local_epoch ? std::min(config.local_epoch, n) : std::max<std::size_t>(1, n / p);
  const std::size_t rounds = config.rounds_per_iteration
                                 ? config.rounds_per_iteration
                                 : (n + static_cast<std::size_t>(p) * e - 1) / (static_cast<std::size_t>(p) * e);
  const std::size_t window = std::max<std::size_t>(1, static_cast<std::size_t>(config.error_window) * n / p);
  const std::size_t w = run.weights;

  Rng draw(config.seed ^ 0x9970c0ffeeULL);
  Rng rng = draw.split(static_cast<std::uint64_t>(q));
  std::vector<std::size_t> pool(n), order(e);
  std::iota(pool.begin(), pool.end(), std::size_t{0});
  const T scale = static_cast<T>(config.momentum == MomentumRule::damped ? (1 - config.alpha) * config.eta : config.eta) /
                  static_cast<T>(config.block_step == BlockStep::sum ? 1 : e);
  const T alpha = static_cast<T>(config.alpha);
  std::vector<T> mine(w + 1, T(0)), all((w + 1) * static_cast<std::size_t>(p));
  std::deque<double> recent;  // this rank's per-pattern errors, newest last
  double recent_sum = 0;
  // A pattern's error in the unit of --error: squared error per output, or 0/1 wrong.
  const bool by_class = config.metric == ErrorMetric::classification;
  const std::size_t outputs = static_cast<std::size_t>(net.spec().sizes.back());
  std::size_t round_count = 0;
  double rounds_s = 0, allgather_s = 0, check_s = 0;
  std::size_t rounds_done = 0, checks = 0;

  TrainResult result = run.run([&](int it) {
    ErrorSums running = run.empty_sums();
    for (std::size_t r = 0; r < rounds; ++r, ++round_count) {
      const double round_start = comm.now();
      // A random local epoch: the first e of a partial shuffle of the whole set.
      for (std::size_t j = 0; j < e; ++j) std::swap(pool[j], pool[j + rng.below(n - j)]);
      std::copy(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(e), order.begin());
      run.forward_backward(train, order, 0, e, running);
      double estimate = 0;
      run.kernel(Phase::update, 1, kernel_flops(Phase::update, w, 1), [&] {
        const auto g = net.gradients();
        for (std::size_t j = 0; j < w; ++j) mine[j] = alpha * mine[j] - scale * g[j];
        // Per-pattern errors of this local epoch into the window.
        const auto& y = net.outputs();
        for (Eigen::Index c = 0; c < y.cols(); ++c) {
          double err;
          if (by_class) {
            const int label = run.labels.empty() ? 0 : run.labels[static_cast<std::size_t>(c)];
            int answer;
            if (y.rows() == 1) {
              answer = y(0, c) > train.decision_threshold ? 1 : 0;
            } else {
              Eigen::Index best;
              y.col(c).maxCoeff(&best);
              answer = static_cast<int>(best);
            }
            err = answer != label;
          } else {
            err = static_cast<double>((y.col(c) - run.t.col(c)).squaredNorm()) / static_cast<double>(outputs);
          }
          recent.push_back(err);
          recent_sum += err;
          if (recent.size() > window) recent_sum -= recent.front(), recent.pop_front();
        }
        estimate = recent.empty() ? 0 : recent_sum / static_cast<double>(recent.size());
      });
      mine[w] = static_cast<T>(estimate);
      const double gather_start = comm.now();
      run.collective([&] { comm.allgather(std::span<const T>(mine), std::span<T>(all)); });
      allgather_s += comm.now() - gather_start;
      double global = 0;
      run.kernel(Phase::update, 1, static_cast<double>(w) * p, [&] {
        auto params = net.parameters();
        for (int s = 0; s < p; ++s) {
          const T* d = all.data() + static_cast<std::size_t>(s) * (w + 1);
          for (std::size_t j = 0; j < w; ++j) params[j] += d[j];
          global += static_cast<double>(d[w]);
        }
        global /= p;
      });
      rounds_s += comm.now() - round_start;
      ++rounds_done;
      if (!run.numerics || !config.target_error) continue;
      const double estimate_in_metric = config.metric == ErrorMetric::rmse ? std::sqrt(global) : global;
      if (estimate_in_metric > *config.target_error) continue;
      // The estimate says done: every rank checks its share of the check set.
      const double check_start = comm.now();
      const Evaluation check = sizes.test > 0 ? run.evaluate_all(test, run.local_count(test, sizes.test))
                                              : run.evaluate_all(train_share, run.local_count(train_share, n));
      check_s += comm.now() - check_start;
      ++checks;
      if (check.error(config.metric) <= *config.target_error) {
        std::ostringstream why;
        why << "target error " << *config.target_error << " reached in iteration " << it << ", round "
            << round_count + 1 << ": estimate " << estimate_in_metric << ", confirmed on the "
            << (sizes.test > 0 ? "test" : "training") << " set (" << check.error(config.metric) << ")";
        run.request_stop(StopReason::target_reached, why.str());
        break;
      }
    }
    return running;
  });
  result.stats = {{"local_epoch", static_cast<double>(e)},
                  {"rounds_per_iteration", static_cast<double>(rounds)},
                  {"rounds", static_cast<double>(rounds_done)},
                  {"rounds_s", rounds_s},
                  {"allgather_s", allgather_s},
                  {"checks", static_cast<double>(checks)},
                  {"check_s", check_s}};
  return result;
}

template TrainResult train_ppt<float>(Mlp<float>&, const Dataset&, const Dataset&, const GlobalSizes&,
                                      const TrainConfig&, Comm&, Compute&, const ProgressFn&);
template TrainResult train_ppt<double>(Mlp<double>&, const Dataset&, const Dataset&, const GlobalSizes&,
                                       const TrainConfig&, Comm&, Compute&, const ProgressFn&);

}  // namespace wulf
