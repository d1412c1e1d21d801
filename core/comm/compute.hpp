// How compute time is charged: the second seam between the strategies and the engines.
//
// A strategy brackets every kernel (forward, backward, update, test) with begin() and
// charge(), and charges To per iteration (charge_iteration) and a platform's fixed cost per
// collective (charge_collective). What a kernel costs (--compute) is one of:
//   wall        nothing charged: the wall clock already ran (seq, and real by default);
//   flops       the kernel's flop count over the host's speed in the platform file;
//   calibrated  per-pattern phase times from a profile (seed 000's Tables II/III);
//   measured    the kernel's wall time here, times --measured-scale (sim only).
// charged_seconds() gives flops' and calibrated's platform seconds, one rule for both engines.
// Under smpirun (wulf-rank-sim) SMPI's own benchmarking is off
// (smpi/simulate-computation:no), so a kernel takes no simulated time until charge() adds it.
// Under mpirun (wulf-rank-real: --engine real and testbed) flops and calibrated pad: charge()
// sleeps until the kernel has taken its charge times the time dilation D in wall seconds
// (testbed; D = 1 on real), and keeps a ledger of real against charged seconds.
// With --numerics off the arithmetic is skipped and only time is charged.
#pragma once

#include "util/errors.hpp"
#include "comm/comm.hpp"
#include "nn/framework_costs.hpp"
#include "nn/layer_table.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <span>
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
// naming the file, the line where there is one, and the fault (a value out of range, a key
// given twice, an unknown key, ...).
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
  // Testbed (issue 16): wall seconds per platform second. Charged times are padded to this
  // many wall seconds each, and Comm::now() reads wall time over it. 1 on every other engine;
  // 0 in the testbed's front end until it chooses one (the ranks always get --dilation).
  double dilation = 1.0;
  // Testbed, --compute flops: this rank's host's speed in flop/s in the platform file
  // (0: unknown). Under smpirun SimGrid knows it; under mpirun the front end passes it.
  double host_speed = 0;
  // Testbed: the platform's wulf:collective_overhead for this rank's host, in seconds.
  double collective_overhead_s = 0;
  // --compute flops: this rank's host's fraction of its peak per kind of layer (its
  // wulf:efficiency), and its device (wulf:device), whose measured per-layer times a net
  // given by its layers may hold (train/run charges them). The sim rank reads both from its
  // host; the testbed front end passes them.
  KindEfficiency efficiency = full_efficiency;
  std::string device;
  // The host's dense 16-bit (BF16, FP16) tensor rate in flop/s (its wulf:speed16), at which
  // --precision bf16 and fp16 charge the conv, linear and attention layers; 0: not given (its
  // speed, as FP32).
  double speed16 = 0;
  // What DDP costs on this rank's host beside the compute (its wulf:ddp), which --strategy
  // overlap --framework ddp charges; and how much of the CPU time its communication threads
  // take comes off the compute thread: 1 where the host has no core to spare for them (as
  // many ranks as cores or more), 0 where it has one a rank to spare, in between linearly
  // (2 - cores / ranks, within [0, 1]). The sim rank reads both from its host; the testbed
  // front end passes them.
  FrameworkCosts ddp;
  double comm_steal = 0;
};

// ComputeConfig::comm_steal of a rank on a host of `cores` cores that runs `ranks` ranks.
inline double comm_steal_of(double cores, double ranks) {
  return ranks > 0 ? std::clamp(2 - cores / ranks, 0.0, 1.0) : 0.0;
}

// The what-if scales (bw_scale, lat_scale, speed_scale) wulf takes: from a millionth to a
// million. Each platform number they multiply is bounded too, by the platform reader
// (sim/platform_checks.cpp), which names the host or link. What is wrong with scale ("1e+308
// is not from 1e-06 to 1e+06"), or "" when nothing is.
constexpr double least_what_if_scale = 1e-6, most_what_if_scale = 1e6;
std::string what_if_scale_fault(double scale);

// The platform seconds a kernel is charged under flops or calibrated (0 under wall and
// measured, which have no rule ahead of the arithmetic): the one rule of both engines.
// flops: flops / speed_scale / host_speed; calibrated: the profile's per-pattern times
// (test: Tf + Ts per pattern; update: Tu, + Tm with one rank) over speed_scale, times share
// (Compute::charge's part of a kernel).
double charged_seconds(const ComputeConfig& config, Phase phase, std::size_t patterns, double flops,
                       double host_speed, double share = 1.0);
// flops' numerator: the kernel's flops over --speed-scale (the simulator executes these).
double charged_flops(const ComputeConfig& config, double flops);

// What a padding engine (real, testbed) spent on one kind of charge: the real seconds of the
// arithmetic (begin() to charge()) beside the platform seconds charged for it.
struct BudgetLine {
  long long kernels = 0;
  double real_s = 0;     // wall seconds of the arithmetic, before any sleep
  double charged_s = 0;  // platform seconds charged (times the dilation: the budget in wall seconds)
  long long overruns = 0;  // kernels whose arithmetic took longer than their budget (no sleep)
  double worst_ratio = 0;  // the largest real seconds over budget wall seconds of a kernel
};
// One rank's ledger: a line per phase (forward, backward, update, test, other), then the
// per-iteration overhead (To) and the collectives' fixed cost.
struct ComputeLedger {
  static constexpr std::size_t size = 7;
  static constexpr std::size_t iteration = 5, collective = 6;  // the lines after the phases
  static std::string_view name(std::size_t line);
  std::array<BudgetLine, size> lines{};
  // As 5 numbers a line, and back: what Comm::gather carries to rank 0.
  static constexpr std::size_t values = 5 * size;
  std::array<double, values> flat() const;
  static ComputeLedger from_flat(std::span<const double> v);
};

class Compute {
 public:
  virtual ~Compute() = default;
  // Marks the start of a kernel (measured mode reads the wall clock here).
  virtual void begin() = 0;
  // Charges the kernel that began at begin(): patterns it handled and its flop count.
  void charge(Phase phase, std::size_t patterns, double flops) { charge(phase, patterns, flops, 1.0); }
  // Charges a part of such a kernel (one layer of a backward pass, one slice of it): its own
  // flops, and under calibrated the share of the phase's per-pattern time it stands for.
  virtual void charge(Phase phase, std::size_t patterns, double flops, double share) = 0;
  // Charges a fixed per-iteration overhead (calibrated mode's To).
  virtual void charge_iteration() = 0;
  // Charges the fixed cost of entering a collective call that a platform may declare
  // (sim: the zone property wulf:collective_overhead, seed 000's Ti); nothing elsewhere.
  virtual void charge_collective() {}
  // Lets `seconds` of platform time pass with nothing done, as a thread that sleeps (overlap's
  // --bucket-cycle: Horovod's loop between its rounds). Under smpirun the host's time is
  // charged (the rank has nothing else to run meanwhile); under mpirun it sleeps seconds x D.
  virtual void idle(double /*seconds*/) {}
  // Before the first measured step, on every rank (a collective): the simulation applies
  // the what-if scales to the platform's links.
  virtual void prepare(Comm& /*comm*/) {}
  // Memory for the net's parameters and gradients that all simulated ranks share (SMPI
  // shared malloc, for --numerics off, where the values do not matter); nullptr: let the
  // net own its storage.
  virtual void* shared_storage(std::size_t /*bytes*/) { return nullptr; }
  // Memory of at least `bytes` that all simulated ranks share, for receiving data whose
  // sums nobody reads (--numerics off: PointToPointReduce::set_unread_storage); nullptr:
  // none, receive into memory of one's own. Valid until this Compute is destroyed.
  virtual void* shared_scratch(std::size_t /*bytes*/) { return nullptr; }
  // The net's shared_storage, w values of T three times over: its parameters and gradients
  // (Mlp's storage), then where a strategy sums the gradients over the ranks
  // (Run::spare). The same block on every call; nullptr where ranks hold their own.
  template <class T>
  T* net_storage(std::size_t w) {
    return static_cast<T*>(shared_storage(net_storage_values(w) * sizeof(T)));
  }
  static std::size_t net_storage_values(std::size_t w) { return 3 * w; }
  const ComputeConfig& config() const { return config_; }
  bool numerics() const { return config_.numerics; }
  // Whether the engine's clock is simulated (smpirun), so that wall-clock measurements of
  // this machine (the gradient benchmark) mean nothing in it.
  virtual bool simulated() const { return false; }
  // Whether charge() pads the kernels with sleep to their charge (real and testbed under
  // flops or calibrated), and what it spent: the record's compute budget.
  virtual bool pads() const { return false; }
  virtual ComputeLedger ledger() const { return {}; }

 protected:
  explicit Compute(ComputeConfig c) : config_(std::move(c)) {}
  ComputeConfig config_;
};

// Defined once per engine: real/compute_real.cpp and sim/compute_sim.cpp. Throws
// InputError for a mode the engine cannot do.
std::unique_ptr<Compute> make_compute(const ComputeConfig& config);
// The sequential engine's: charges nothing, its clock is the wall clock.
std::unique_ptr<Compute> make_wall_compute();

}  // namespace wulf
