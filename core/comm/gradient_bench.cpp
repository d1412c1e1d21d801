#include "comm/gradient_bench.hpp"
#include "util/errors.hpp"

#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "data/partition.hpp"
#include "util/json.hpp"

#include <fmt/format.h>

#include <wulf/build_info.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

namespace wulf {

NetSpec gradient_bench_net(const std::string& name) {
  if (name == "jocr") return {{400, 480, 3203}, {Activation::tanh, Activation::tanh}, Loss::mse, false};
  if (name == "digits")
    return {{784, 64, 64, 10}, {Activation::sigmoid, Activation::sigmoid, Activation::sigmoid}, Loss::mse, true};
  throw InputError("bench: --net must be jocr (400-480-3203) or digits (784-64-64-10), not '" + name + "'");
}

double gradient_flops(const NetSpec& spec, std::size_t patterns) {
  return spec.flops().six_w() * static_cast<double>(patterns);
}

double gradient_gemm_flops(const NetSpec& spec, std::size_t patterns) {
  const KernelFlops products = kernel_flops(spec.sizes, false);  // without biases: the products alone
  return (products.forward + products.backward) * static_cast<double>(patterns);
}

std::string simd_in_use() {
#ifdef EIGEN_VECTORIZE_FMA
  const char* fma = "fused multiply-add";
#else
  const char* fma = "no fused multiply-add";
#endif
  return std::string(Eigen::SimdInstructionSetsInUse()) + "; " +
         std::to_string(Eigen::internal::packet_traits<float>::size) + " floats a packet, " + fma;
}

Timed time_call(const std::function<void()>& call) {
  timespec cpu0{}, cpu1{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  const auto t0 = std::chrono::steady_clock::now();
  call();
  const auto t1 = std::chrono::steady_clock::now();
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  const double cpu = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec);
  return {std::chrono::duration<double>(t1 - t0).count(), cpu};
}

Timed time_sgemm(int n, int repeat) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
  const Matrix a = Matrix::Random(n, n), b = Matrix::Random(n, n);
  Matrix c(n, n);
  c.noalias() = a * b;  // warm-up: c's pages and the caches
  Timed best{std::numeric_limits<double>::infinity(), 0};
  for (int r = 0; r < repeat; ++r) {
    const Timed t = time_call([&] { c.noalias() = a * b; });
    if (t.wall_s < best.wall_s) best = t;
  }
  // c is read, so the products cannot be dropped.
  volatile float sink = c(n - 1, n - 1);
  (void)sink;
  return best;
}

GradientWorkload::GradientWorkload(const NetSpec& spec, std::size_t patterns, std::uint64_t data_seed) : net_(spec) {
  Rng init(1);  // the same weights on every rank, as after a broadcast
  net_.init_uniform(0.0, init);
  Rng rng(data_seed);
  const auto cols = static_cast<Eigen::Index>(patterns);
  x_.resize(spec.sizes.front(), cols);
  for (Eigen::Index i = 0; i < x_.size(); ++i) x_(i) = static_cast<float>(rng.uniform());
  std::vector<int> labels(patterns);
  for (int& label : labels) label = static_cast<int>(rng.below(static_cast<std::uint64_t>(spec.sizes.back())));
  t_ = one_of_k(labels, spec.sizes.back());
}

float GradientWorkload::gradient() {
  net_.forward(x_);
  return net_.backward(t_, false);
}

namespace {

// Every rank's `values` at rank 0, rank r's at [r * N, (r + 1) * N) (elsewhere: empty).
template <std::size_t N>
std::vector<double> gather_at_root(const std::array<double, N>& values, Comm& comm) {
  std::vector<double> all(N * static_cast<std::size_t>(comm.size()));
  comm.gather(std::span<const double>(values), std::span<double>(all), 0);
  if (comm.rank() != 0) all.clear();
  return all;
}

// SGEMM rate (flop/s) while all ranks run theirs: the mean over ranks, and the least share
// of its wall time a rank spent on a CPU, at rank 0.
struct SgemmRate {
  double flops_per_s = 0;
  double on_cpu = 0;
};
SgemmRate sgemm_rate_per_core(int n, int repeat, Comm& comm) {
  comm.barrier();
  const Timed t = time_sgemm(n, repeat);
  const double nd = n;
  const std::vector<double> all = gather_at_root<2>({2 * nd * nd * nd / t.wall_s, t.cpu_s / t.wall_s}, comm);
  SgemmRate r{0, 1};
  for (std::size_t q = 0; q < all.size() / 2; ++q) {
    r.flops_per_s += all[2 * q] / comm.size();
    r.on_cpu = std::min(r.on_cpu, all[2 * q + 1]);
  }
  return r;
}

// The best round at rank 0. A round's time is its slowest rank's; on_cpu is the least share
// of the gradient's wall time that a rank of the best round spent on a CPU (below 1: it
// waited for a core that something else held, so the machine was not quiet).
struct GradientTimes {
  double gradient_s = std::numeric_limits<double>::infinity();  // the gradient of every share
  double total_s = std::numeric_limits<double>::infinity();     // ... and the reduce to rank 0
  double on_cpu = 0;
};

// Best of `repeat` rounds: barrier, gradient of this rank's share, reduce_sum to rank 0.
GradientTimes time_gradient_rounds(GradientWorkload& work, int repeat, Comm& comm) {
  work.gradient();  // warm-up: every matrix allocated and its pages touched
  GradientTimes best;
  for (int r = 0; r < repeat; ++r) {
    comm.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    const Timed gradient = time_call([&] { work.gradient(); });
    comm.reduce_sum(work.net().gradients(), 0);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<double> all = gather_at_root<3>({gradient.wall_s, total, gradient.cpu_s}, comm);
    GradientTimes round{0, 0, 1};
    for (std::size_t q = 0; q < all.size() / 3; ++q) {
      round.gradient_s = std::max(round.gradient_s, all[3 * q]);
      round.total_s = std::max(round.total_s, all[3 * q + 1]);
      round.on_cpu = std::min(round.on_cpu, all[3 * q + 2] / all[3 * q]);
    }
    if (round.gradient_s < best.gradient_s) best.gradient_s = round.gradient_s, best.on_cpu = round.on_cpu;
    best.total_s = std::min(best.total_s, round.total_s);
  }
  return best;
}

// x rounded as printf's %.<digits>g (significant) or %.<places>f (decimals) writes it: the
// row keeps only the digits that rates and times, which vary from run to run, can vouch for.
double significant(double x, int digits) { return std::strtod(fmt::format("{:.{}g}", x, digits).c_str(), nullptr); }
double decimals(double x, int places) { return std::strtod(fmt::format("{:.{}f}", x, places).c_str(), nullptr); }

}  // namespace

void run_gradient_bench(const GradientBenchConfig& c, Comm& comm, bool simulated, std::ostream& out) {
  if (simulated)
    throw InputError("bench --what gradient times this machine's cores with the wall clock: run wulf-rank-real "
                     "under mpirun, not the simulator");
  const NetSpec spec = gradient_bench_net(c.net);
  const int p = comm.size(), q = comm.rank();
  for (std::size_t batch : c.batches)
    if (batch < static_cast<std::size_t>(p))
      throw InputError("bench: a batch of " + std::to_string(batch) + " patterns leaves a rank with none");
  if (c.sgemm_n < 1) throw InputError("bench: --sgemm must be at least 1");

  const SgemmRate sgemm = sgemm_rate_per_core(c.sgemm_n, c.repeat, comm);
  for (std::size_t batch : c.batches) {
    GradientWorkload work(spec, share_of(batch, p, q).count, 1000 + static_cast<std::uint64_t>(q));
    const GradientTimes t = time_gradient_rounds(work, c.repeat, comm);
    if (q != 0) continue;
    const double flops = gradient_flops(spec, batch), rate = flops / t.gradient_s;
    const double gemm_rate = gradient_gemm_flops(spec, batch) / t.gradient_s;
    const Json row = {{"what", "gradient"},
                      {"net", c.net},
                      {"np", p},
                      {"patterns", batch},
                      {"patterns_per_rank", share_of(batch, p, 0).count},
                      {"flops", flops},
                      {"gemm_flops", gradient_gemm_flops(spec, batch)},
                      {"gradient_s", significant(t.gradient_s, 9)},
                      {"with_reduce_s", significant(t.total_s, 9)},
                      {"gflops", significant(rate * 1e-9, 6)},
                      {"gflops_with_reduce", significant(flops / t.total_s * 1e-9, 6)},
                      {"gflops_per_core", significant(rate / p * 1e-9, 6)},
                      {"gemm_gflops_per_core", significant(gemm_rate / p * 1e-9, 6)},
                      {"sgemm_n", c.sgemm_n},
                      {"sgemm_gflops_per_core", significant(sgemm.flops_per_s * 1e-9, 6)},
                      {"ratio_to_sgemm", decimals(rate / p / sgemm.flops_per_s, 4)},
                      {"gemm_ratio_to_sgemm", decimals(gemm_rate / p / sgemm.flops_per_s, 4)},
                      {"gradient_on_cpu", decimals(t.on_cpu, 3)},
                      {"sgemm_on_cpu", decimals(sgemm.on_cpu, 3)},
                      {"simd", simd_in_use()},
                      {"flags", build::cxx_flags}};
    out << json_line(row) << std::endl;
  }
}

}  // namespace wulf
