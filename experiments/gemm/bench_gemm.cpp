// The float batch gradient of seed 002's JOCR net (400-480-3203) and of the digits net
// (784-64-64-10) on one core, beside this machine's SGEMM (Eigen, n x n), in one run
// (issue 6, item 5). One core: Eigen runs single-threaded in wulf.
//
//   build/wulf_bench_gemm [google benchmark options]
//
// Benchmarks:
//   fma_peak            the arithmetic ceiling of this build: independent multiply-adds on
//                       Eigen's widest float packet, the operation GEMM's inner loop is made of;
//   sgemm/N             C = A B, N x N floats: 2 N^3 flops;
//   gradient/NET/B      forward + backward of a block of B patterns, the gradient written
//                       over the gradient buffer, no update: wulf's training kernel;
//   products/NET/B      the same matrix products with the same shapes and nothing else
//                       (no activations, no loss, no bias): the GEMM part of the gradient.
// Two flop counts: 6w per pattern (KernelFlops::six_w, seed 002's count, the headline) and the
// products' own flops (gradient_gemm_flops; less, since no dE/dx is computed).
// At the end a summary: each rate, its ratio to the best SGEMM rate, the share of the
// gradient's time spent in its products, and the target (the JOCR gradient at least 70%
// of SGEMM). With --benchmark_repetitions=N each line keeps the best of the N.
#include "comm/gradient_bench.hpp"

#include <wulf/build_info.hpp>

#include <benchmark/benchmark.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;

const int sgemm_sizes[] = {512, 1024, 2048};
// Seed 002 gave each processor 32 000 patterns; the smaller blocks show how the rate
// depends on the block.
const std::map<std::string, std::vector<int>> batches = {{"jocr", {256, 1024, 4096, 32000}},
                                                         {"digits", {256, 1024, 4096}}};

// 12 independent chains of packet multiply-adds: enough to cover the FMA latency of
// current x86 cores (4 cycles, 2 per cycle), so the rate is the issue rate, not the
// latency. Eigen's pmadd is a fused multiply-add where the build has FMA, and a multiply
// then an add where it has not (the portable x86-64 build: SSE2).
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int packet_floats = Eigen::internal::packet_traits<float>::size;
constexpr int chains = 12;

__attribute__((noinline)) float multiply_add_chains(long steps) {
  using namespace Eigen::internal;
  Packet acc[chains];
  for (int i = 0; i < chains; ++i) acc[i] = pset1<Packet>(static_cast<float>(i));
  const Packet b = pset1<Packet>(0.999999f), c = pset1<Packet>(1e-7f);  // stays finite
  for (long k = 0; k < steps; ++k)
    for (int i = 0; i < chains; ++i) acc[i] = pmadd(acc[i], b, c);
  float sum = 0;
  for (int i = 0; i < chains; ++i) sum += predux(acc[i]);
  return sum;
}

void BM_fma_peak(benchmark::State& state) {
  const long steps = 10'000'000;
  for (auto _ : state) {
    long n = steps;
    benchmark::DoNotOptimize(n);  // an opaque argument: the call is made every iteration
    benchmark::DoNotOptimize(multiply_add_chains(n));
  }
  state.counters["GFlop/s"] = benchmark::Counter(2.0 * chains * packet_floats * static_cast<double>(steps) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_sgemm(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  const Matrix a = Matrix::Random(n, n), b = Matrix::Random(n, n);
  Matrix c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  const double nd = static_cast<double>(n);
  state.counters["GFlop/s"] = benchmark::Counter(2 * nd * nd * nd * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_gradient(benchmark::State& state, const std::string& net) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  wulf::GradientWorkload work(wulf::gradient_bench_net(net), batch, 7);
  work.gradient();  // warm-up: every matrix allocated and touched
  for (auto _ : state) benchmark::DoNotOptimize(work.gradient());
  const wulf::NetSpec& spec = work.net().spec();
  state.counters["GFlop/s"] = benchmark::Counter(wulf::gradient_flops(spec, batch) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GEMM GFlop/s"] = benchmark::Counter(wulf::gradient_gemm_flops(spec, batch) * 1e-9,
                                                      benchmark::Counter::kIsIterationInvariantRate);
}

// The gradient's matrix products alone, on matrices of the same shapes as in Mlp<float>:
// forward Z_l = W_l A_{l-1}, weight gradient D_l A_{l-1}^T, delta W_l^T D_l (l > 1).
class Products {
 public:
  Products(const wulf::NetSpec& spec, Eigen::Index batch) : layers_(spec.n_layers()) {
    a_.push_back(Matrix::Random(spec.sizes[0], batch));
    for (int l = 1; l <= layers_; ++l) {
      w_.push_back(Matrix::Random(spec.sizes[l], spec.sizes[l - 1]) * 0.05f);
      dw_.push_back(Matrix(spec.sizes[l], spec.sizes[l - 1]));
      a_.push_back(Matrix(spec.sizes[l], batch));
      d_.push_back(Matrix::Random(spec.sizes[l], batch));
    }
  }
  void run() {
    for (int l = 1; l <= layers_; ++l) a_[l].noalias() = w_[l - 1] * a_[l - 1];
    for (int l = layers_; l >= 1; --l) {
      dw_[l - 1].noalias() = d_[l - 1] * a_[l - 1].transpose();
      if (l > 1) d_[l - 2].noalias() = w_[l - 1].transpose() * d_[l - 1];
    }
  }
  const float* out() const { return dw_.front().data(); }

 private:
  int layers_;
  std::vector<Matrix> w_, dw_, a_, d_;  // a_: A_0..A_L; the others: layers 1..L
};

void BM_products(benchmark::State& state, const std::string& net) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  const wulf::NetSpec spec = wulf::gradient_bench_net(net);
  Products products(spec, static_cast<Eigen::Index>(batch));
  products.run();
  for (auto _ : state) {
    products.run();
    benchmark::DoNotOptimize(products.out());
    benchmark::ClobberMemory();
  }
  state.counters["GEMM GFlop/s"] = benchmark::Counter(wulf::gradient_gemm_flops(spec, batch) * 1e-9,
                                                      benchmark::Counter::kIsIterationInvariantRate);
}

// Console output as usual, then the summary. Keeps each benchmark's best repetition (least
// real time per iteration): its rates, its time and its share of that time on a CPU.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal, so that saved output stays plain text.
  SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  struct Best {
    double seconds = 0;  // real time per iteration
    double on_cpu = 0;   // CPU time over real time: below ~0.98, something else held the core
    std::map<std::string, double> rate;
  };
  // The best repetition of `name` ("sgemm/1024"), or an empty one if it did not run.
  Best best(const std::string& name) const {
    const auto it = best_.find(name);
    return it == best_.end() ? Best{} : it->second;
  }
  static double rate(const Best& b, const char* key) {
    const auto it = b.rate.find(key);
    return it == b.rate.end() ? 0 : it->second;
  }
  std::map<std::string, Best> best_;
};

void SummaryReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& r : runs) {
    if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
    Best& b = best_[r.run_name.function_name + "/" + r.run_name.args];
    const double seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
    if (b.seconds > 0 && b.seconds <= seconds) continue;
    b.seconds = seconds;
    b.on_cpu = r.GetAdjustedCPUTime() / r.GetAdjustedRealTime();
    for (const char* key : {"GFlop/s", "GEMM GFlop/s"})
      if (auto it = r.counters.find(key); it != r.counters.end()) b.rate[key] = it->second.value;
  }
}

void SummaryReporter::Finalize() {
  ConsoleReporter::Finalize();
  std::ostream& out = GetOutputStream();
  fmt::print(out, "\nsummary: float, one core, Eigen {} ({}), {} {}; each line the best repetition\n",
             wulf::build::eigen_version, wulf::simd_in_use(), wulf::build::compiler, wulf::build::cxx_flags);
  fmt::print(out, "{:<22}{:>10}{:>9}\n", "what", "GFlop/s", "on CPU");
  auto row = [&](const std::string& label, const Best& b) {
    fmt::print(out, "{:<22}{:>10.1f}{:>8.0f}%\n", label, rate(b, "GFlop/s"), 100 * b.on_cpu);
  };
  const Best peak = best("fma_peak/");
  if (peak.seconds > 0)
    row("peak multiply-add", peak);
  double sgemm = 0;
  for (int n : sgemm_sizes) {
    const Best b = best("sgemm/" + std::to_string(n));
    if (b.seconds <= 0) continue;
    row("SGEMM n = " + std::to_string(n), b);
    sgemm = std::max(sgemm, rate(b, "GFlop/s"));
  }
  if (sgemm > 0) {
    fmt::print(out, "reference SGEMM: the best of these, {:.1f} GFlop/s", sgemm);
    if (peak.seconds > 0) fmt::print(out, " ({:.0f}% of the peak)", 100 * sgemm / rate(peak, "GFlop/s"));
    out << "\n";
  }
  out << "\ngradient = forward + backward of a block, no update. 6w: flops counted as seed 002 does,\n"
         "6 per weight per pattern; products: the flops of its matrix products. In products: the\n"
         "time of those products alone over the gradient's time.\n";
  fmt::print(out, "{:<8}{:>7}{:>12}{:>9}{:>18}{:>9}{:>13}{:>9}\n", "net", "batch", "GFlop/s 6w", "x SGEMM",
             "GFlop/s products", "x SGEMM", "in products", "on CPU");
  double worst6 = 0, worst_products = 0;  // JOCR
  for (const auto& [net, list] : batches)
    for (int b : list) {
      const std::string tail = net + "/" + std::to_string(b);
      const Best g = best("gradient/" + tail), p = best("products/" + tail);
      if (g.seconds <= 0) continue;
      // Ratios to SGEMM only when it ran (a --benchmark_filter may leave it out).
      const double r6 = sgemm > 0 ? rate(g, "GFlop/s") / sgemm : 0, rp = sgemm > 0 ? rate(g, "GEMM GFlop/s") / sgemm : 0;
      auto ratio = [](double r) { return r > 0 ? fmt::format("{:>9.2f}", r) : fmt::format("{:>9}", "-"); };
      const std::string in_products =
          p.seconds > 0 ? fmt::format("{:>12.0f}%", 100 * p.seconds / g.seconds) : fmt::format("{:>13}", "-");
      fmt::print(out, "{:<8}{:>7}{:>12.1f}{}{:>18.1f}{}{}{:>8.0f}%\n", net, b, rate(g, "GFlop/s"), ratio(r6),
                 rate(g, "GEMM GFlop/s"), ratio(rp), in_products, 100 * g.on_cpu);
      if (net == "jocr") {
        worst6 = worst6 == 0 ? r6 : std::min(worst6, r6);
        worst_products = worst_products == 0 ? rp : std::min(worst_products, rp);
      }
    }
  if (worst6 > 0)
    fmt::print(out,
               "target: the JOCR gradient >= 70% of SGEMM at every batch: worst {:.0f}% counting 6w "
               "({:.0f}% counting its products) -> {}\n",
               100 * worst6, 100 * worst_products, worst6 >= 0.7 ? "met" : "NOT met");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RegisterBenchmark("fma_peak", BM_fma_peak)->UseRealTime();
  for (int n : sgemm_sizes) benchmark::RegisterBenchmark("sgemm", BM_sgemm)->Arg(n)->UseRealTime();
  for (const auto& [net, list] : batches) {
    auto* g = benchmark::RegisterBenchmark(("gradient/" + net).c_str(), BM_gradient, net)->UseRealTime();
    auto* p = benchmark::RegisterBenchmark(("products/" + net).c_str(), BM_products, net)->UseRealTime();
    for (int b : list) g->Arg(b), p->Arg(b);
  }
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
