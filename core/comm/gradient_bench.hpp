// The batch gradient measured against the machine's own SGEMM. Seed 002
// trains its JOCR net with an SGEMM-bound gradient, so wulf's float gradient should run
// near the rate of the matrix product it is made of. The pieces here are shared by
// build/wulf_bench_gemm (one core, Google Benchmark) and by the rank programs'
// `bench --what gradient` (p ranks under mpirun, with the reduce to rank 0).
#pragma once

#include "util/errors.hpp"
#include "comm/comm.hpp"
#include "nn/mlp.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace wulf {

// The nets the gradient benchmarks time, by name:
//   jocr    seed 002's 400-480-3203, tanh hidden and output, mse, no bias (1 729 440 weights);
//   digits  seed 000's 784-64-64-10, sigmoid throughout, mse, bias (`--problem digits`).
// Throws InputError for another name.
NetSpec gradient_bench_net(const std::string& name);

// Flops of one gradient over `patterns` patterns at 6 w per pattern (KernelFlops::six_w),
// w counting weights and biases: seed 002's count (section 6.2: a gradient is 3 times the
// forward's 2 w), and wulf's charge before issue 17.
double gradient_flops(const NetSpec& spec, std::size_t patterns);
// Flops of the matrix products a gradient actually performs, 2 per multiply-add: per layer
// the forward product and the weight gradient, and the delta product W_l^T delta_l for
// every layer but the first (dE/dx is never needed): KernelFlops of the net without its
// biases. Biases and activations are left out.
// Below gradient_flops by 2 n_1 n_0 + 6 (biases) per pattern: 3.7% for jocr, 30% for digits.
double gradient_gemm_flops(const NetSpec& spec, std::size_t patterns);

// What Eigen computes with in this build, e.g. "AVX512, FMA, AVX2, ...; 16 floats a
// packet, fused multiply-add" (Eigen's own list omits AVX2 and FMA from AVX2 builds).
std::string simd_in_use();

// Wall-clock and CPU seconds of one call on this thread. cpu_s well below wall_s means
// the thread waited for a core: something else was running on this machine.
struct Timed {
  double wall_s = 0;
  double cpu_s = 0;
};
Timed time_call(const std::function<void()>& call);

// The best (least wall time) of `repeat` calls C = A B for n x n float matrices (Eigen,
// this thread), after one warm-up call. Flops: 2 n^3.
Timed time_sgemm(int n, int repeat);

// A float net with fixed weights and one block of random patterns (inputs uniform in
// [0, 1], one-of-k targets): gradient() is one batch gradient of the block, forward +
// backward written over the gradient buffer, no update, exactly as training computes it.
// The data do not change the work: every product has fixed shapes and Eigen's activations
// take the same instructions for any value.
class GradientWorkload {
 public:
  GradientWorkload(const NetSpec& spec, std::size_t patterns, std::uint64_t data_seed);
  // Returns the block's loss, so that nothing can be optimised away.
  float gradient();
  Mlp<float>& net() { return net_; }
  std::size_t patterns() const { return static_cast<std::size_t>(x_.cols()); }

 private:
  Mlp<float> net_;
  Mlp<float>::Matrix x_, t_;
};

// `bench --what gradient`: for each total batch in `batches`, every rank computes the
// gradient of its share (share_of), then the gradients are summed to rank 0 with
// reduce_sum, as training-set parallelism does. Before that every rank times an n x n
// SGEMM at once (`sgemm_n`, best of `repeat`), the per-core reference with all p cores
// busy. Rank 0 prints one JSON object per batch:
//   gradient_s, with_reduce_s   the gradient of every share, and it plus the reduce: each
//                               round's time is the slowest rank's, the best of `repeat`
//                               rounds is kept (the two bests may come from two rounds);
//   gflops, gflops_with_reduce  flops (6 w per pattern, all ranks) over those times;
//   gflops_per_core             gflops / np; gemm_gflops_per_core counts gemm_flops instead;
//   sgemm_gflops_per_core       the SGEMM rate, mean over the ranks;
//   ratio_to_sgemm              gflops_per_core over it (gemm_ratio_to_sgemm: gemm_flops);
//   gradient_on_cpu             the least share of its gradient's wall time a rank of the
//                               best round spent on a CPU (sgemm_on_cpu: the same for the
//                               SGEMM): below about 0.98 the machine was not quiet.
// Times are this machine's clocks: only meaningful under mpirun, so `simulated` refuses
// to run.
struct GradientBenchConfig {
  std::string net = "jocr";
  std::vector<std::size_t> batches;
  int repeat = 3;
  int sgemm_n = 1024;
};
void run_gradient_bench(const GradientBenchConfig& config, Comm& comm, bool simulated, std::ostream& out);

}  // namespace wulf
