// Weight averaging (seed 000 section VII, --strategy average): every rank trains its share
// of the training set on its own, updating after every b of its patterns with its own
// momentum, and every a patterns the ranks replace their weights by the average over all
// ranks (one allreduce of the parameter buffer, Comm::allreduce_sum_anywhere, then scaled).
// The ranks differ between averagings and agree after each; an iteration ends with an
// averaging so that the test sees one net.
#include "data/partition.hpp"
#include "train/run.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace wulf {

template <class T>
TrainResult train_average(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                          const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const int p = comm.size(), q = comm.rank();
  const std::size_t n = sizes.train, n_local = share_of(n, p, q).count;
  std::size_t n_most = 0;  // the largest share: every rank runs as many blocks as it needs
  for (int r = 0; r < p; ++r) n_most = std::max(n_most, share_of(n, p, r).count);
  const std::size_t b = block_size(config, n_most);
  const std::size_t blocks = (n_most + b - 1) / b;
  // Averaging every a patterns of a rank = every a / b of its blocks (at least every block).
  const std::size_t a = setting_count(config, "average-interval") ? setting_count(config, "average-interval") : b;
  const std::size_t every = std::max<std::size_t>(1, a / b);

  Rng order_rng = pattern_order_rng(config, q);
  std::vector<std::size_t> order = identity_order(n_local);
  MomentumStep<T> step(net, config.eta, config.alpha, config.momentum, config.block_step);
  const T inv_p = T(1) / static_cast<T>(p);

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    for (std::size_t k = 0; k < blocks; ++k) {
      const std::size_t first = std::min(n_local, k * b);
      const std::size_t count = std::min(b, n_local - first);
      run.forward_backward(train, order, first, count, running);
      if (count > 0) run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(count); });
      if (p > 1 && ((k + 1) % every == 0 || k + 1 == blocks)) {
        std::span<T> sums;
        run.collective([&] { sums = comm.allreduce_sum_anywhere(net.parameters()); });
        // Seed 000's Ta: scaling the summed weights to their average (in the net, or from the
        // spare buffer into it).
        run.kernel(Phase::update, 1, static_cast<double>(run.weights()), [&] {
          std::transform(sums.begin(), sums.end(), net.parameters().begin(), [inv_p](T v) { return v * inv_p; });
        });
      }
    }
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_average);

namespace {

constexpr StrategyOption average_options[] = {
    {.name = "average-interval",
     .key = "average_interval",
     .help = "patterns per rank between weight averagings (0: every block)",
     .range = {.lo = 0, .hi = 2147483647}}};

constexpr SearchTraits average_search{
    .interval_option = "average-interval",
    .interval_label = "a",
    .refuse = [](std::size_t b, int, std::size_t share) -> std::string {
      if (b <= share) return "";
      return "each rank's block b = " + std::to_string(b) + " is above its share of " + std::to_string(share) +
             " patterns";
    }};

}  // namespace

extern const StrategyDescriptor average_strategy{
    .name = "average",
    .help = "weight averaging, seed 000",
    .options_title = "weight averaging (--strategy average, seed 000)",
    .options = average_options,
    .learning = momentum_learning,
    .layout = fixed_layout<DataLayout::shares>,
    .memory = [](const MemoryShape& s, const TrainConfig& c, StrategyMemory& m) {
      m.sums_anywhere = true;
      m.reduces_weights = true;
      // Every rank runs as many blocks of b as the largest share needs.
      const double most = std::max(s.share(s.n, false), s.share(s.n, true));
      m.columns = static_cast<double>(block_size(c, static_cast<std::size_t>(most)));
    },
    .search = &average_search,
    .allreduces_weights = true,
    .train_float = train_average<float>,
    .train_double = train_average<double>,
};

}  // namespace wulf
