// A dummy strategy, added by tests/dummy_kinds.py to a copy of the sources at exactly the touch
// points ARCHITECTURE.md "How to add ..." names, to show that they are all a strategy needs:
// full-batch gradient descent, each rank's share of the whole training set summed with one
// allreduce per iteration, then one momentum step.
#include "train/run.hpp"

namespace wulf {

template <class T>
TrainResult train_dummy(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                        const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const BlockPlan plan(sizes.train, sizes.train, comm.size(), comm.rank());
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);
  return run.run([&](int) {
    ErrorSums running = run.empty_sums();
    run.forward_backward(train, order, plan.first(0), plan.count(0), running);
    std::span<const T> gradient = net.gradients();
    if (plan.ranks > 1) run.collective([&] { gradient = comm.allreduce_sum_anywhere(net.gradients()); });
    run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(0), gradient); });
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_dummy);

extern const StrategyDescriptor dummy_strategy{
    .name = "dummy",
    .help = "full-batch gradient descent (tests/dummy_kinds)",
    .learning = momentum_learning,
    .layout = fixed_layout<DataLayout::shares>,
    .memory = [](const MemoryShape&, const TrainConfig&, StrategyMemory& m) {
      m.reduces_weights = true;
      m.sums_anywhere = true;
    },
    .allreduces_weights = true,
    .train_float = train_dummy<float>,
    .train_double = train_dummy<double>,
};

}  // namespace wulf
