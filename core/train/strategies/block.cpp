// Training-set parallelism (seed 000 section V, --strategy block; trainer.hpp has the
// update rule): of every block of b patterns rank q takes its share, the block's gradients
// are summed over the ranks with one allreduce of the one gradient buffer (into a spare one
// where the engine's MPI does that better, Comm::allreduce_sum_anywhere), and every rank
// applies the same momentum step from the sum, so the weights stay identical. With p = 1
// this is the sequential run, operation for operation.
#include "comm/nb_allreduce.hpp"
#include "train/run.hpp"

#include <string>

namespace wulf {

template <class T>
TrainResult train_block(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                        const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), comm.size(), comm.rank());
  Rng order_rng = pattern_order_rng(config, comm.rank());
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      run.forward_backward(train, order, plan.first(k), plan.count(k), running);
      std::span<const T> gradient = net.gradients();
      // The block's gradient summed over the ranks: one call over one span (under --precision
      // bf16, time only, the span its 2-byte values fill).
      if (plan.ranks > 1)
        run.collective([&] {
          gradient = comm.allreduce_sum_anywhere(net.gradients().first(wire_values<T>(config.value_bytes, run.weights())));
        });
      run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k), gradient); });
    }
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_block);

extern const StrategyDescriptor block_strategy{
    .name = "block",
    .help = "training-set parallelism, seed 000",
    .learning = every_learning,
    .splits_blocks = true,
    .layout = fixed_layout<DataLayout::shares>,
    .memory = [](const MemoryShape& s, const TrainConfig&, StrategyMemory& m) {
      m.reduces_weights = true;
      if (!is_own_blocking_allreduce(s.allreduce)) {
        m.sums_anywhere = true;
        return;
      }
      // wulf's own allreduce sums in place: no library temporaries, a receive buffer of at
      // most w values, which simulated ranks share when nobody reads the sums.
      m.reduce_scratch = s.sim && !s.numerics ? 0 : 1;
    },
    .search = &block_search,
    .allreduces_weights = true,
    .trains_layer_nets = true,
    .train_float = train_block<float>,
    .train_double = train_block<double>,
};

}  // namespace wulf
