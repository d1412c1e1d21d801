// Root update with threads inside each rank (seed 004, --strategy root): of every block of b
// patterns each rank takes its share, its threads split that share and each computes the
// gradient of its part on a copy of the net; the rank adds its threads' gradients (in
// thread order), MPI_Reduce sums the ranks' gradients at rank 0, rank 0 makes the update
// and MPI_Bcast sends it the new weights. With one rank and one thread this is the
// sequential run.
//
// final.strategy.iterations_s: the engine seconds of the iterations themselves (compute,
// update, reduce, bcast), without wulf's evaluation and error allreduce between them.
//
// Simulated time: the threads' kernels are charged as one kernel of 1 / threads of the
// flops (or of the measured wall time, which already ran in parallel), i.e. a host with at
// least --threads cores that scales perfectly; the platform's host speed is per core.
// Under smpirun the threads take turns, in thread order, unless --compute measured times
// their wall clock: there two threads at once in Debian's serial OpenBLAS gave other values
// from run to run (the engines test: 6 runs of 6 differed from mpirun's, none of 4 with the
// threads in turn; the same with the reference BLAS or on one core, and under mpirun; why
// only in the SMPI program is not found). The values and the simulated time are the same.
#include "data/partition.hpp"
#include "train/run.hpp"

#include <memory>
#include <numeric>
#include <thread>

namespace wulf {

template <class T>
TrainResult train_root(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                       const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  using Matrix = typename Mlp<T>::Matrix;
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const int p = comm.size(), q = comm.rank();
  const int threads = std::max(1, static_cast<int>(setting(config, "threads")));
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), p, q);
  Rng order_rng = pattern_order_rng(config, q);
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);

  // Each thread beyond the first works on a net of its own (same spec, its own buffers).
  std::vector<std::unique_ptr<Mlp<T>>> copies;
  if (run.numerics())
    for (int i = 1; i < threads; ++i) copies.push_back(std::make_unique<Mlp<T>>(net.spec()));
  std::vector<Matrix> xs(static_cast<std::size_t>(threads)), ts(static_cast<std::size_t>(threads));
  std::vector<ErrorSums> part_sums(static_cast<std::size_t>(threads));
  const bool in_turn = compute.simulated() && compute.config().mode != ComputeMode::measured;
  double iterations_s = 0;

  TrainResult result = run.run([&](int) {
    const double t0 = comm.now();
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      const std::size_t first = plan.first(k), count = plan.count(k);
      if (threads == 1) {
        run.forward_backward(train, order, first, count, running);
      } else {
        // Forward and backward of all threads, charged as one kernel of 1 / threads of the work.
        const double per_thread = 1.0 / threads;
        run.kernel(Phase::backward, count,
                   per_thread * (run.flops().forward + run.flops().backward) * static_cast<double>(count),
                   [&] {
                     std::vector<std::thread> pool;
                     auto work = [&](int i) {
                       Mlp<T>& m = i == 0 ? net : *copies[static_cast<std::size_t>(i - 1)];
                       if (i > 0) std::copy(net.parameters().begin(), net.parameters().end(), m.parameters().begin());
                       const Share s = share_of(count, threads, i);
                       std::vector<int> labels;
                       Matrix& x = xs[static_cast<std::size_t>(i)];
                       Matrix& t = ts[static_cast<std::size_t>(i)];
                       gather_block(train, order, first + s.begin, s.count, x, t, labels);
                       m.zero_gradients();
                       ErrorSums& sums = part_sums[static_cast<std::size_t>(i)];
                       sums = run.empty_sums();
                       if (s.count == 0) return;
                       m.forward(x);
                       const double loss = static_cast<double>(m.backward(t));
                       sums.add(m.outputs(), t, loss, labels.empty() ? nullptr : labels.data(),
                                train.decision_threshold);
                     };
                     for (int i = 1; i < threads; ++i) {
                       if (in_turn) work(i);
                       else pool.emplace_back(work, i);
                     }
                     work(0);
                     for (auto& th : pool) th.join();
                     // The rank's gradient: its threads' gradients added in thread order.
                     auto g = net.gradients();
                     for (const auto& c : copies) {
                       const auto h = c->gradients();
                       for (std::size_t j = 0; j < g.size(); ++j) g[j] += h[j];
                     }
                     for (const ErrorSums& s : part_sums) {
                       running.squared += s.squared, running.loss += s.loss;
                       running.patterns += s.patterns, running.class_errors += s.class_errors;
                     }
                   });
      }
      if (p > 1) run.collective([&] { comm.reduce_sum(net.gradients(), 0); });
      if (q == 0) run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k)); });
      if (p > 1) run.collective([&] { comm.bcast(net.parameters(), 0); });
    }
    iterations_s += comm.now() - t0;
    return running;
  });
  result.stats = {{"threads", static_cast<double>(threads)}, {"iterations_s", iterations_s}};
  return result;
}

WULF_INSTANTIATE_STRATEGY(train_root);

namespace {

constexpr StrategyOption root_options[] = {
    {.name = "threads", .key = "threads", .help = "threads inside each rank", .default_value = 1, .range = {.lo = 1, .hi = 1024}}};

}  // namespace

extern const StrategyDescriptor root_strategy{
    .name = "root",
    .help = "threads and a root update, seed 004",
    .options_title = "root update (--strategy root, seed 004)",
    .options = root_options,
    .learning = every_learning,
    .splits_blocks = true,
    .layout = fixed_layout<DataLayout::shares>,
    .memory = [](const MemoryShape& s, const TrainConfig& c, StrategyMemory& m) {
      m.updates_each = 0;  // rank 0 makes the update
      const double threads = setting(c, "threads");
      if (threads > 1)
        add_part(m.beside_net, "root's nets of the threads beyond the first", (threads - 1) * 2 * s.wT(),
                 (threads - 1) * 2 * s.wT(), MemoryPart::Kind::held, "fewer --threads");
      m.reduces_weights = true;
      // --numerics off under sim, learning by epoch: wulf's reduces receive into the ranks'
      // shared memory (Compute::shared_scratch), and only four-stage's last stage, at most
      // one rank in fan_in + 1, calls the library's reduce.
      if (s.sim && !s.numerics) {
        if (s.reduce == "wulf-binomial") m.reduce_scratch = 0;
        if (s.reduce == "four-stage") m.reduce_scratch = 2.0 / (s.fan_in + 1);
      }
    },
    .reduces = true,
    .broadcasts = true,
    .train_float = train_root<float>,
    .train_double = train_root<double>,
};

}  // namespace wulf
