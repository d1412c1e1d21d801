// Compute charging under smpirun. SMPI's own benchmarking of the code between MPI calls is
// off (the front end passes smpi/simulate-computation:no), so a kernel costs no simulated
// time until charge() executes it on the rank's simulated host.
#include "compute.hpp"
#include "dataset.hpp"

#include <simgrid/host.h>
#include <smpi/smpi.h>

#include <chrono>

namespace wulf {
namespace {

// Charges exactly `seconds` on this rank's host. (smpi_execute(seconds) would scale them by
// smpi/host-speed, the assumed speed of the machine running the simulation.)
void execute_seconds(double seconds) { smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self())); }

class SimCompute final : public Compute {
 public:
  explicit SimCompute(ComputeConfig c) : Compute(std::move(c)) {}

  void begin() override {
    if (config_.mode == ComputeMode::measured) started_ = std::chrono::steady_clock::now();
  }

  void charge(Phase phase, std::size_t patterns, double flops) override {
    switch (config_.mode) {
      case ComputeMode::wall: break;
      case ComputeMode::flops:
        // flops / the speed of this rank's host in the platform file.
        if (flops > 0) smpi_execute_flops(flops);
        break;
      case ComputeMode::calibrated: {
        const Profile& p = config_.profile;
        const double n = static_cast<double>(patterns);
        double seconds = 0;
        switch (phase) {
          case Phase::forward: seconds = p.Tf * n; break;
          case Phase::backward: seconds = p.Tb * n; break;
          case Phase::update: seconds = p.Tu + (config_.ranks == 1 ? p.Tm : 0); break;  // per update
          case Phase::test: seconds = p.Ts * n + p.Tf * n; break;  // a test pattern is a forward pass + its error
          case Phase::other: break;
        }
        if (seconds > 0) execute_seconds(seconds);
        break;
      }
      case ComputeMode::measured: {
        const double here = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        if (here > 0) execute_seconds(here * config_.measured_scale);
        break;
      }
    }
  }

  void* shared_storage(std::size_t bytes) override {
    if (config_.numerics) return nullptr;
    shared_ = SMPI_SHARED_MALLOC(bytes);
    return shared_;
  }

  ~SimCompute() override {
    if (shared_) SMPI_SHARED_FREE(shared_);
  }

  void charge_iteration() override {
    if (config_.mode == ComputeMode::calibrated && config_.profile.To > 0) execute_seconds(config_.profile.To);
  }

 private:
  std::chrono::steady_clock::time_point started_;
  void* shared_ = nullptr;
};

}  // namespace

std::unique_ptr<Compute> make_compute(const ComputeConfig& config) {
  if (config.mode == ComputeMode::wall)
    throw InputError("--compute: a simulation needs flops, calibrated or measured");
  if (config.mode == ComputeMode::measured && !config.numerics)
    throw InputError("--compute measured times the arithmetic, which --numerics off skips");
  return std::make_unique<SimCompute>(config);
}

}  // namespace wulf
