// Patterns per second of training the digits net 784-64-64-10 (sigmoid, mse, bias) on
// MNIST: wulf at blocks of 1, 16 and 256 in float and double, beside FANN 2.2 training the
// same net on the same patterns, incrementally (FANN's default, an update per pattern) and
// in batch, and beside the SGEMM that wulf's products run on (Eigen's product, which this
// build hands to OpenBLAS unless configured with -DWULF_OPENBLAS=OFF). One core: Eigen and
// OpenBLAS (its serial build) run single-threaded here and FANN has no threads.
//
//   build/wulf_bench_mlp [--patterns N] [google benchmark options]
//
// A training step is forward + backward + the weight update, for both libraries; wulf takes
// the patterns in a shuffled order (one fixed permutation), gathering each block as
// `wulf train` does. The GFlop column counts the flops the kernels perform (KernelFlops:
// forward and backward products and bias work; the update not counted). At the end a
// summary prints every rate and wulf's ratio to FANN's incremental rate (issue 2's target:
// at least 10x at block 256 in float) and to the best SGEMM rate (issue 17's: 85%).
#include "data/idx.hpp"
#include "nn/mlp.hpp"
#include "train/trainer.hpp"

#include <wulf/build_info.hpp>

#include <benchmark/benchmark.h>
#include <floatfann.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <unistd.h>

namespace {

std::size_t g_patterns = 4096;

// The first g_patterns MNIST training images with one-of-ten targets, loaded once.
const wulf::Dataset& digits() {
  static const wulf::Dataset data = [] {
    const char* env = std::getenv("WULF_MNIST_DIR");
    const std::string dir = env && *env ? env : wulf::build::mnist_dir;
    wulf::Dataset d;
    d.input_bytes =
        wulf::read_idx_images(dir + "/train-images-idx3-ubyte", g_patterns).bytes;  // as `wulf train` keeps them
    d.labels = wulf::read_idx_labels(dir + "/train-labels-idx1-ubyte", g_patterns);
    d.targets = wulf::one_of_k(d.labels, 10);
    return d;
  }();
  return data;
}

wulf::NetSpec digits_net() {
  using wulf::Activation;
  return {{784, 64, 64, 10}, {Activation::sigmoid, Activation::sigmoid, Activation::sigmoid}, wulf::Loss::mse, true};
}

template <class T>
void BM_wulf(benchmark::State& state) {
  const wulf::Dataset& data = digits();
  const auto block = static_cast<std::size_t>(state.range(0));
  wulf::Mlp<T> net(digits_net());
  wulf::Rng rng(1);
  net.init_uniform(0.0, rng);
  wulf::MomentumStep<T> step(net, 0.1, 0.9);  // a small rate keeps the sigmoids unsaturated
  std::vector<std::size_t> order(data.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  wulf::Rng order_rng(2);
  order_rng.shuffle(order);
  wulf::PhaseTimes phases;
  for (auto _ : state) {
    const wulf::Evaluation e = wulf::train_pass(net, step, data, order, block, phases);
    benchmark::DoNotOptimize(e.mse);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.size()));
  // The forward and backward flops performed, shown as a rate: the column reads GFlop/s.
  const wulf::KernelFlops flops = net.spec().flops();
  state.counters["GFlop"] = benchmark::Counter((flops.forward + flops.backward) * static_cast<double>(data.size()) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// C = A B on square float matrices of order n: the SGEMM wulf's products run on.
void BM_sgemm(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFlop"] = benchmark::Counter(2.0 * static_cast<double>(n) * static_cast<double>(n) *
                                                   static_cast<double>(n) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

struct FannDeleter {
  void operator()(fann* a) const { fann_destroy(a); }
  void operator()(fann_train_data* d) const { fann_destroy_train(d); }
};

void BM_fann(benchmark::State& state, fann_train_enum algorithm) {
  const wulf::Dataset& data = digits();
  const auto n = static_cast<unsigned>(data.size());
  std::unique_ptr<fann_train_data, FannDeleter> train(fann_create_train(n, 784, 10));
  for (unsigned i = 0; i < n; ++i) {
    data.copy_inputs(i, train->input[i]);
    std::memcpy(train->output[i], data.targets.col(i).data(), 10 * sizeof(fann_type));
  }
  std::unique_ptr<fann, FannDeleter> ann(fann_create_standard(4, 784, 64, 64, 10));
  fann_set_activation_function_hidden(ann.get(), FANN_SIGMOID);
  fann_set_activation_function_output(ann.get(), FANN_SIGMOID);
  fann_set_training_algorithm(ann.get(), algorithm);
  fann_set_learning_rate(ann.get(), 0.1f);
  fann_set_learning_momentum(ann.get(), 0.9f);
  fann_randomize_weights(ann.get(), -0.1f, 0.1f);
  for (auto _ : state) benchmark::DoNotOptimize(fann_train_epoch(ann.get(), train.get()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

// Console output as usual, plus a summary: each rate and its ratio to FANN incremental.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal, so that saved output stays plain text.
  SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      auto it = r.counters.find("items_per_second");
      if (it != r.counters.end()) rates_[r.benchmark_name()] = it->second.value;
      auto g = r.counters.find("GFlop");
      if (g != r.counters.end()) gflops_[r.benchmark_name()] = g->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto& out = GetOutputStream();
    const auto peer = rates_.find("fann/incremental");
    fmt::print(out, "\nsummary: 784-64-64-10 on {} MNIST patterns, one core\n", g_patterns);
    double sgemm = 0;
    for (const auto& [name, rate] : gflops_)
      if (name.rfind("sgemm/", 0) == 0) sgemm = std::max(sgemm, rate);
    fmt::print(out, "{:<28}{:>16}{:>14}{:>10}{:>10}\n", "what", "patterns/s", "x FANN incr.", "GFlop/s", "x SGEMM");
    for (const auto& [name, rate] : rates_) {
      fmt::print(out, "{:<28}{:>16.0f}", name, rate);
      if (peer != rates_.end()) fmt::print(out, "{:>13.2f}x", rate / peer->second);
      if (const auto g = gflops_.find(name); g != gflops_.end() && sgemm > 0)
        fmt::print(out, "{:>10.1f}{:>9.2f}x", g->second, g->second / sgemm);  // the counter is in GFlop
      out << "\n";
    }
    if (sgemm > 0) fmt::print(out, "SGEMM (the best of sgemm/*): {:.1f} GFlop/s\n", sgemm);
    const auto target = rates_.find("wulf/float/256");
    if (peer != rates_.end() && target != rates_.end()) {
      const double ratio = target->second / peer->second;
      fmt::print(out, "target: wulf float at block 256 >= 10x FANN incremental: {:.1f}x -> {}\n", ratio,
                 ratio >= 10 ? "met" : "NOT met");
    }
  }

 private:
  std::map<std::string, double> rates_, gflops_;
};

}  // namespace

int main(int argc, char** argv) {
  // --patterns N is ours; the rest goes to Google Benchmark.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--patterns") == 0 && i + 1 < argc) {
      const long n = std::strtol(argv[++i], nullptr, 10);
      if (n < 256 || n > 60000) {
        std::cerr << "wulf_bench_mlp: --patterns must be in 256..60000\n";
        return 2;
      }
      g_patterns = static_cast<std::size_t>(n);
    } else {
      args.push_back(argv[i]);
    }
  }
  int n_args = static_cast<int>(args.size());
  benchmark::Initialize(&n_args, args.data());
  if (benchmark::ReportUnrecognizedArguments(n_args, args.data())) return 2;
  try {
    digits();
  } catch (const std::exception& e) {
    std::cerr << "wulf_bench_mlp: " << e.what() << "\n";
    return 2;
  }
  benchmark::RegisterBenchmark("wulf/float", BM_wulf<float>)->Arg(1)->Arg(16)->Arg(256);
  benchmark::RegisterBenchmark("wulf/double", BM_wulf<double>)->Arg(1)->Arg(16)->Arg(256);
  benchmark::RegisterBenchmark("fann/incremental", BM_fann, FANN_TRAIN_INCREMENTAL);
  benchmark::RegisterBenchmark("fann/batch", BM_fann, FANN_TRAIN_BATCH);
  benchmark::RegisterBenchmark("sgemm", BM_sgemm)->Arg(512)->Arg(1024)->Arg(2048);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
