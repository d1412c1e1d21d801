// Compute charging under mpirun: nothing to charge, the wall clock runs by itself.
#include "comm/compute.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"

namespace wulf {
namespace {

class RealCompute final : public Compute {
 public:
  explicit RealCompute(ComputeConfig c) : Compute(std::move(c)) {}
  void begin() override {}
  void charge(Phase, std::size_t, double) override {}
  void charge_iteration() override {}
};

}  // namespace

std::unique_ptr<Compute> make_compute(const ComputeConfig& config) {
  if (config.mode != ComputeMode::wall)
    throw InputError("--compute " + std::string(to_string(config.mode)) +
                     ": on --engine real the wall clock is the time; --compute is for --engine sim");
  if (!config.numerics) throw InputError("--numerics off: only --engine sim can skip the arithmetic");
  return std::make_unique<RealCompute>(config);
}

}  // namespace wulf
