// Compute charging under smpirun. SMPI's own benchmarking of the code between MPI calls is
// off (the front end passes smpi/simulate-computation:no), so a kernel costs no simulated
// time until charge() executes it on the rank's simulated host.
#include "comm/compute.hpp"
#include "fifo_wire.hpp"
#include "shared_memory.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"
#include "data/dataset.hpp"

#include <cstdlib>
#include <simgrid/host.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <smpi/smpi.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace wulf {
namespace {

// Charges exactly `seconds` on this rank's host. (smpi_execute(seconds) would scale them by
// smpi/host-speed, the assumed speed of the machine running the simulation.)
void execute_seconds(double seconds) { execute_flops(seconds * sg_host_get_speed(sg_host_self())); }

// --numerics off: memory no rank reads, in SMPI's shared memory (SMPI then copies no message
// from or into it): the net's parameters and gradients (Compute::shared_storage), and where
// wulf's reduces receive (Compute::shared_scratch). The ranks share the program's globals
// (smpi/privatization:no), so one mapping serves them all: a mapping per rank would hold
// the same pages, but the resident set would count them once per rank. A request larger
// than the largest block adds a block; the smaller ones stay until the last rank leaves,
// since a rank may still use one. The ranks run one at a time, so the count needs no lock.
class SharedBlocks {
 public:
  void* at_least(std::size_t bytes) {
    if (blocks_.empty() || blocks_.back().second < bytes) blocks_.emplace_back(SMPI_SHARED_MALLOC(bytes), bytes);
    return blocks_.back().first;
  }
  void join() { ++users_; }
  void leave() {
    if (--users_ > 0) return;
    for (const auto& block : blocks_) SMPI_SHARED_FREE(block.first);
    blocks_.clear();
  }
  bool holds(const void* data, std::size_t bytes) const {
    const auto* d = static_cast<const char*>(data);
    return std::ranges::any_of(blocks_, [&](const auto& block) {
      const auto* b = static_cast<const char*>(block.first);
      return d >= b && d + bytes <= b + block.second;
    });
  }

 private:
  std::vector<std::pair<void*, std::size_t>> blocks_;  // ascending sizes
  int users_ = 0;
};
// The same for every rank: test ranks.no_rank_state_in_globals.
SharedBlocks shared_nets, shared_scratches;

}  // namespace

bool in_shared_memory(const void* data, std::size_t bytes) {
  return shared_nets.holds(data, bytes) || shared_scratches.holds(data, bytes);
}

namespace {

class SimCompute final : public Compute {
 public:
  // The rank's host's speed, efficiency per kind of layer and device, as the platform gives
  // them (the front end checked every host's wulf:efficiency before any rank started).
  explicit SimCompute(ComputeConfig c) : Compute(std::move(c)) {
    const simgrid::s4u::Host* host = simgrid::s4u::this_actor::get_host();
    config_.host_speed = host->get_speed();
    if (const char* device = host->get_property("wulf:device")) config_.device = device;
    // Checked by the front end (platform_client) before any rank started.
    if (const char* s16 = host->get_property("wulf:speed16")) config_.speed16 = std::strtod(s16, nullptr);
    if (const char* e = host->get_property("wulf:efficiency"))
      config_.efficiency = parse_kind_efficiency(e, "platform host " + host->get_name() + ": wulf:efficiency");
    if (const char* ddp = host->get_property("wulf:ddp"))
      config_.ddp = parse_framework_costs(ddp, "platform host " + host->get_name() + ": wulf:ddp");
    // Every rank is an actor on its host by the time a rank builds its Compute.
    config_.comm_steal = comm_steal_of(host->get_core_count(), static_cast<double>(host->get_actor_count()));
  }

  void begin() override {
    if (config_.mode == ComputeMode::measured) started_ = std::chrono::steady_clock::now();
  }

  void charge(Phase phase, std::size_t patterns, double flops, double share) override {
    switch (config_.mode) {
      case ComputeMode::wall: break;
      case ComputeMode::flops:
        // flops / the speed of this rank's host in the platform file (times --speed-scale):
        // SimGrid divides by the speed itself (charged_seconds' rule, to the bit).
        if (flops > 0) execute_flops(charged_flops(config_, flops));
        break;
      case ComputeMode::calibrated:
        if (const double seconds = charged_seconds(config_, phase, patterns, flops, 0, share); seconds > 0)
          execute_seconds(seconds);
        break;
      case ComputeMode::measured: {
        const double here = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        if (here > 0) execute_seconds(here * config_.measured_scale / config_.speed_scale);
        break;
      }
    }
  }

  // The what-if scales of the links, applied once by rank 0 at time 0; the barrier after
  // it keeps every rank's first message behind it.
  void prepare(Comm& comm) override {
    if (comm.rank() == 0 && (config_.bw_scale != 1.0 || config_.lat_scale != 1.0))
      for (simgrid::s4u::Link* link : simgrid::s4u::Engine::get_instance()->get_all_links()) {
        link->set_bandwidth(link->get_bandwidth() * config_.bw_scale);
        link->set_latency(link->get_latency() * config_.lat_scale);
      }
    comm.barrier();
  }

  void* shared_storage(std::size_t bytes) override { return shared(shared_nets, net_user_, bytes); }
  void* shared_scratch(std::size_t bytes) override { return shared(shared_scratches, scratch_user_, bytes); }

  ~SimCompute() override {
    if (net_user_) shared_nets.leave();
    if (scratch_user_) shared_scratches.leave();
  }

  // Seed 000's Ti: a fixed time per collective call that the network model does not give
  // (MPI and TCP set-up, in the paper's words), declared by the platform as the property
  // wulf:collective_overhead of the rank's zone or of a zone around it.
  void charge_collective() override {
    // From the host's zone up to the root; the root's get_parent() is not to be followed
    // (SimGrid 3.32 leaves it unset).
    const simgrid::s4u::NetZone* root = simgrid::s4u::Engine::get_instance()->get_netzone_root();
    for (const simgrid::s4u::NetZone* zone = simgrid::s4u::this_actor::get_host()->get_englobing_zone(); zone;
         zone = zone == root ? nullptr : zone->get_parent())
      if (const char* value = zone->get_property("wulf:collective_overhead")) {
        const double seconds = parse_duration(value, "platform property wulf:collective_overhead");
        if (seconds > 0) execute_seconds(seconds);
        return;
      }
  }

  void idle(double seconds) override {
    if (seconds > 0) execute_seconds(seconds);
  }
  bool simulated() const override { return true; }
  void charge_iteration() override {
    if (config_.mode == ComputeMode::calibrated && config_.profile.To > 0) execute_seconds(config_.profile.To);
  }

 private:
  // Memory of `blocks` for a run without the arithmetic (nullptr with it); user: whether
  // this rank has joined them.
  void* shared(SharedBlocks& blocks, bool& user, std::size_t bytes) {
    if (config_.numerics) return nullptr;
    if (!user) blocks.join(), user = true;
    return blocks.at_least(bytes);
  }

  std::chrono::steady_clock::time_point started_;
  bool net_user_ = false, scratch_user_ = false;
};

}  // namespace

std::unique_ptr<Compute> make_compute(const ComputeConfig& config) {
  // wall charges nothing: the platform benchmark measures communication alone.
  if (config.mode == ComputeMode::measured && !config.numerics)
    throw InputError("--compute measured times the arithmetic, which --numerics off skips");
  return std::make_unique<SimCompute>(config);
}

}  // namespace wulf
