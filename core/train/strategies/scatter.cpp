// Scatter/gather gradient descent (seed 003, --strategy scatter): rank 0 holds the data and
// scatters it (MPI_Scatterv) once; then for every block (the whole set with --learning
// epoch, seed 003's batch gradient descent) each rank computes the gradient of its share,
// MPI_Gather brings the ranks' gradients to rank 0, which adds them in rank order, makes
// the update and broadcasts the weights (MPI_Bcast). final.strategy: scatter_s (the
// scatter of the data) and iterations_s (the engine seconds of the iterations themselves,
// without wulf's evaluation and error allreduce between them).
#include "data/partition.hpp"
#include "train/run.hpp"

#include <numeric>
#include <string>

namespace wulf {
namespace {

constexpr const char* scatter_remedy =
    "--strategy block (whose ranks read their own shares) or fewer patterns (--train-size, --test-size)";

std::string scatter_what(std::size_t n, int per_pattern) {
  return "--strategy scatter: the scatter of " + std::to_string(n) + " patterns x " + std::to_string(per_pattern) +
         " values";
}

// Rank 0's whole set, shared out: every rank receives its share_of(n, p, r) patterns.
Dataset scatter_set(const Dataset& whole, std::size_t n, int inputs, int outputs, bool classifier, Comm& comm) {
  const int p = comm.size(), q = comm.rank();
  const Share mine = share_of(n, p, q);
  Dataset d;
  d.inputs.resize(inputs, static_cast<Eigen::Index>(mine.count));
  d.targets.resize(outputs, static_cast<Eigen::Index>(mine.count));
  // Every rank's count, and their sum (the last displacement), must fit MPI's int.
  auto counts = [&](int per_pattern) {
    const auto per = static_cast<std::size_t>(per_pattern);
    mpi_count(n * per, scatter_what(n, per_pattern), scatter_remedy);
    std::vector<int> c(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      c[static_cast<std::size_t>(r)] = mpi_count(share_of(n, p, r).count * per, scatter_what(n, per_pattern), scatter_remedy);
    return c;
  };
  const bool root = q == 0;
  // Without the arithmetic (--numerics off) rank 0 holds no data: it sends a buffer of the
  // same size, so the simulated transfer is the same.
  std::vector<float> stand_in;
  auto source = [&](const DataMatrix& m, int per_pattern) -> std::span<const float> {
    if (!root) return {};
    if (m.size() > 0) return {m.data(), static_cast<std::size_t>(m.size())};
    stand_in.assign(n * static_cast<std::size_t>(per_pattern), 0.0f);
    return stand_in;
  };
  const std::vector<int> in_counts = counts(inputs), out_counts = counts(outputs), one = counts(1);
  // Inputs kept as bytes go out as the floats they stand for: every rank receives floats.
  const DataMatrix made = root && whole.byte_inputs() ? whole.float_inputs() : DataMatrix();
  comm.scatterv(source(whole.byte_inputs() ? made : whole.inputs, inputs), in_counts,
                std::span<float>(d.inputs.data(), static_cast<std::size_t>(d.inputs.size())), 0);
  comm.scatterv(source(whole.targets, outputs), out_counts,
                std::span<float>(d.targets.data(), static_cast<std::size_t>(d.targets.size())), 0);
  if (classifier) {
    std::vector<float> labels_in;
    if (root) labels_in.assign(whole.labels.begin(), whole.labels.end());
    if (root && labels_in.empty()) labels_in.assign(n, 0.0f);
    std::vector<float> labels_out(mine.count);
    comm.scatterv(labels_in, one, labels_out, 0);
    d.labels.assign(labels_out.begin(), labels_out.end());
  }
  float threshold[1] = {whole.decision_threshold};
  comm.bcast(std::span<float>(threshold), 0);
  d.decision_threshold = threshold[0];
  return d;
}

}  // namespace

template <class T>
TrainResult train_scatter(Mlp<T>& net, const Dataset& whole_train, const Dataset& whole_test, const GlobalSizes& sizes,
                          const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  const int p = comm.size(), q = comm.rank();
  const int inputs = net.spec().sizes.front(), outputs = net.spec().sizes.back();
  const double t0 = comm.now();
  const Dataset train = scatter_set(whole_train, sizes.train, inputs, outputs, sizes.classifier, comm);
  const Dataset test = scatter_set(whole_test, sizes.test, inputs, outputs, sizes.classifier, comm);
  const double scatter_seconds = comm.now() - t0;

  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  run.add_comm(scatter_seconds, sizes.classifier ? 8 : 6);
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), p, q);
  Rng order_rng = pattern_order_rng(config, q);
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);
  const std::size_t w = run.weights();
  std::vector<T> gathered(q == 0 ? w * static_cast<std::size_t>(p) : 0);
  double iterations_s = 0;

  TrainResult result = run.run([&](int) {
    const double t_iteration = comm.now();
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      run.forward_backward(train, order, plan.first(k), plan.count(k), running);
      if (p > 1) {
        run.collective([&] { comm.gather(std::span<const T>(net.gradients()), std::span<T>(gathered), 0); });
        if (q == 0)  // rank 0 adds the ranks' gradients in rank order (its own is block 0)
          run.kernel(Phase::update, 1, static_cast<double>(w) * (p - 1), [&] {
            auto g = net.gradients();
            for (int r = 1; r < p; ++r)
              for (std::size_t j = 0; j < w; ++j) g[j] += gathered[static_cast<std::size_t>(r) * w + j];
          });
      }
      if (q == 0) run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k)); });
      if (p > 1) run.collective([&] { comm.bcast(net.parameters(), 0); });
    }
    iterations_s += comm.now() - t_iteration;
    return running;
  });
  result.stats = {{"scatter_s", scatter_seconds}, {"iterations_s", iterations_s}};
  return result;
}

WULF_INSTANTIATE_STRATEGY(train_scatter);

extern const StrategyDescriptor scatter_strategy{
    .name = "scatter",
    .help = "scatter/gather, seed 003",
    .learning = every_learning,
    .splits_blocks = true,
    .layout = fixed_layout<DataLayout::root_only>,
    .memory = [](const MemoryShape& s, const TrainConfig&, StrategyMemory& m) {
      m.updates_each = 0;  // rank 0 makes the update
      if (s.p > 1)
        add_part(m.collectives, "scatter's gather of the gradients at rank 0, w x p values", s.w * s.p * s.T, 0,
                 MemoryPart::Kind::held, "fewer ranks (--np) or --strategy block");
    },
    // Every share's count and their sum, the last displacement (scatter_set's).
    .message_counts = [](const MemoryShape& s, const TrainConfig&) {
      for (const double patterns : {s.n, s.m})
        for (const double per : {s.in, s.out}) {
          const auto n = static_cast<std::size_t>(patterns);
          mpi_count(n * static_cast<std::size_t>(per), scatter_what(n, static_cast<int>(per)), scatter_remedy);
        }
    },
    .broadcasts = true,
    .train_float = train_scatter<float>,
    .train_double = train_scatter<double>,
};

}  // namespace wulf
