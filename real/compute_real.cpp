// Compute charging under mpirun (--engine real and testbed).
//
// wall (real's default) charges nothing: the wall clock runs by itself. flops and calibrated
// pad: a kernel's arithmetic runs between begin() and charge(), and charge() then sleeps
// until the kernel has lasted its charge (charged_seconds, the simulator's rule) times the
// time dilation D in wall seconds. With --numerics off only the sleep remains. A kernel whose
// arithmetic alone took longer than that is not slept further and counts as an overrun in
// the ledger: D is too small for this machine.
#include "comm/compute.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace wulf {
namespace {

using Clock = std::chrono::steady_clock;

class RealCompute final : public Compute {
 public:
  explicit RealCompute(ComputeConfig c) : Compute(std::move(c)) {}

  void begin() override {
    if (pads()) started_ = Clock::now();
  }

  void charge(Phase phase, std::size_t patterns, double flops, double share) override {
    if (!pads()) return;
    const double charged = charged_seconds(config_, phase, patterns, flops, config_.host_speed, share);
    pad(ledger_.lines[static_cast<std::size_t>(phase)], started_, charged);
  }

  // calibrated's To, per iteration: a sleep of To x D from now.
  void charge_iteration() override {
    if (config_.mode == ComputeMode::calibrated && config_.profile.To > 0)
      pad(ledger_.lines[ComputeLedger::iteration], Clock::now(), config_.profile.To / config_.speed_scale);
  }

  // The platform's wulf:collective_overhead (seed 000's Ti), as the simulator charges it.
  // The platform's fixed cost of a collective call (testbed only: elsewhere it is 0), in
  // every mode, as the simulator spends it: the platform benchmark charges no compute but
  // its collectives cost this.
  void charge_collective() override {
    if (config_.collective_overhead_s > 0)
      pad(ledger_.lines[ComputeLedger::collective], Clock::now(), config_.collective_overhead_s);
  }

  void idle(double seconds) override {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds * config_.dilation));
  }

  bool pads() const override { return config_.mode == ComputeMode::flops || config_.mode == ComputeMode::calibrated; }
  ComputeLedger ledger() const override { return ledger_; }

 private:
  // Sleeps until start + charged x D, and books the kernel: the real seconds it took before
  // the sleep, the platform seconds charged, an overrun where there was nothing left to sleep.
  // A kernel charged nothing (Phase::other) has no budget to overrun.
  void pad(BudgetLine& line, Clock::time_point start, double charged) {
    const double budget = charged * config_.dilation;  // wall seconds
    const Clock::time_point before_sleep = Clock::now();
    const double real = std::chrono::duration<double>(before_sleep - start).count();
    line.kernels += 1;
    line.real_s += real;
    line.charged_s += charged;
    if (budget <= 0) return;
    line.worst_ratio = std::max(line.worst_ratio, real / budget);
    if (real > budget) {
      line.overruns += 1;
      return;
    }
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(budget)));
  }

  Clock::time_point started_;
  ComputeLedger ledger_;
};

}  // namespace

std::unique_ptr<Compute> make_compute(const ComputeConfig& config) {
  // The front end checked these (job/train_job.cpp); a rank program started by hand is told.
  if (config.mode == ComputeMode::measured)
    throw InputError("--compute measured: under mpirun the wall clock is the time; measured is for --engine sim");
  if (!config.numerics && config.mode == ComputeMode::wall)
    throw InputError("--numerics off: under mpirun only --compute calibrated or flops (testbed) charges time");
  if (config.mode == ComputeMode::flops && !(config.host_speed > 0))
    throw InputError("--compute flops under mpirun needs the host's speed from the platform (--engine testbed)");
  if (!(config.dilation >= 1) || !std::isfinite(config.dilation))
    throw InputError("--dilation: " + std::to_string(config.dilation) + " must be a finite number of at least 1");
  return std::make_unique<RealCompute>(config);
}

}  // namespace wulf
