// How compute time is charged: the second seam between the strategies and the engines.
//
// A strategy brackets every kernel (forward, backward, update, test) with begin() and
// charge(). Under mpirun (wulf-rank-real) both do nothing: the wall clock already ran.
// Under smpirun (wulf-rank-sim) SMPI's own benchmarking is off
// (smpi/simulate-computation:no), so a kernel takes no simulated time until charge() adds
// it, in one of three ways (--compute):
//   flops       the kernel's flop count over the host's speed in the platform file;
//   calibrated  per-pattern phase times from a profile (seed 000's Tables II/III);
//   measured    the kernel's wall time here, times --measured-scale.
// With --numerics off the arithmetic is skipped and only time is charged.
#pragma once

#include "util/errors.hpp"
#include "comm/comm.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace wulf {

enum class Phase { forward, backward, update, test, other };
std::string_view to_string(Phase p);

enum class ComputeMode { wall, flops, calibrated, measured };
std::string_view to_string(ComputeMode m);
ComputeMode parse_compute_mode(std::string_view name);  // throws InputError

// Seconds per pattern (Tf, Tb, Ts) and per update (Tu + Tm), and To per iteration, as seed
// 000 measured them (its tables give milliseconds; a profile file holds milliseconds too).
struct Profile {
  std::string name;
  double Tf = 0, Tb = 0, Tu = 0, Tm = 0, Ts = 0, To = 0;  // seconds
  double Ti = 0, Tw = 0;  // seconds; optional: seed 000's allreduce constants (Table V)
  double Ta = 0;          // seconds; optional: the weight-averaging step (seed 000 eq. 9)
  // Optional: the problem's sizes (Table IV), 0 when the profile does not say.
  double n = 0, m = 0, w = 0;
  // Optional: what the constants were measured on (`problem = digits`, `precision = float`),
  // empty when the profile does not say. A run on another problem or precision is refused.
  std::string problem, precision;
  bool has_ti_tw = false, has_ta = false;
};
// Reads a profile (platforms/profiles/README.md): lines "key = value" with keys Tf_ms,
// Tb_ms, Tu_ms, Tm_ms, Ts_ms, To_ms and optionally Ti_us, Tw_us; '#' comments. name is a
// path, or <cluster>-<problem> for platforms/profiles/<name>.profile. Throws InputError
// naming the file and the fault.
Profile read_profile(const std::string& name);

struct ComputeConfig {
  ComputeMode mode = ComputeMode::wall;
  bool numerics = true;
  int ranks = 1;  // with one rank, calibrated updates also cost seed 000's Tm (eq. 3)
  // What-if: every link's bandwidth and latency, and every host's speed, times these.
  double bw_scale = 1.0;
  double lat_scale = 1.0;
  double speed_scale = 1.0;
  double measured_scale = 1.0;
  Profile profile;  // for calibrated
};

class Compute {
 public:
  virtual ~Compute() = default;
  // Marks the start of a kernel (measured mode reads the wall clock here).
  virtual void begin() = 0;
  // Charges the kernel that began at begin(): patterns it handled and its flop count.
  virtual void charge(Phase phase, std::size_t patterns, double flops) = 0;
  // Charges a fixed per-iteration overhead (calibrated mode's To).
  virtual void charge_iteration() = 0;
  // Charges the fixed cost of entering a collective call that a platform may declare
  // (sim: the zone property wulf:collective_overhead, seed 000's Ti); nothing elsewhere.
  virtual void charge_collective() {}
  // Before the first measured step, on every rank (a collective): the simulation applies
  // the what-if scales to the platform's links.
  virtual void prepare(Comm& /*comm*/) {}
  // Memory for the net's parameters and gradients that all simulated ranks share (SMPI
  // shared malloc, for --numerics off, where the values do not matter); nullptr: let the
  // net own its storage.
  virtual void* shared_storage(std::size_t /*bytes*/) { return nullptr; }
  const ComputeConfig& config() const { return config_; }
  bool numerics() const { return config_.numerics; }
  // Whether the engine's clock is simulated (smpirun), so that wall-clock measurements of
  // this machine (the gradient benchmark) mean nothing in it.
  virtual bool simulated() const { return false; }

 protected:
  explicit Compute(ComputeConfig c) : config_(std::move(c)) {}
  ComputeConfig config_;
};

// Defined once per engine: real/compute_real.cpp and sim/compute_sim.cpp. Throws
// InputError for a mode the engine cannot do.
std::unique_ptr<Compute> make_compute(const ComputeConfig& config);
// The sequential engine's: charges nothing, its clock is the wall clock.
std::unique_ptr<Compute> make_wall_compute();

// Flop counts of the kernels for a net of w weights (multiply-add = 2 flops):
// forward 2w per pattern, backward 4w per pattern (delta products and weight gradient),
// update 4w per update (momentum step), test 2w per pattern.
double kernel_flops(Phase phase, std::size_t weights, std::size_t patterns);

}  // namespace wulf
