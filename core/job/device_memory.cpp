#include "job/device_memory.hpp"

#include "comm/shard_schedules.hpp"
#include "nn/layer_table.hpp"
#include "train/shard_units.hpp"
#include "train/strategy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

namespace wulf {

namespace {

// Each unit's parameters and activations per sample (values), in forward order.
struct UnitSizes {
  std::vector<double> parameters, activations, first_activations;
};

UnitSizes unit_sizes(const NetSpec& spec, int unit_layers) {
  UnitSizes u;
  const auto activations = [&](int l) { return spec.table->layers[static_cast<std::size_t>(l - 1)].activations; };
  for (const ShardUnitLayers& unit : shard_units(spec, unit_layers)) {
    double acts = 0;
    for (int l = unit.first; l <= unit.last; ++l) acts += activations(l);
    u.parameters.push_back(static_cast<double>(unit.parameters));
    u.activations.push_back(acts);
    u.first_activations.push_back(activations(unit.first));
  }
  return u;
}

// The sum of the k largest.
double largest(std::vector<double> v, std::size_t k) {
  std::ranges::sort(v, std::greater<>());
  return std::accumulate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(k, v.size())), 0.0);
}

}  // namespace

std::string gib(double bytes) { return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

Json DeviceMemory::to_json() const {
  Json parts_json = Json::array();
  for (const DevicePart& p : parts) parts_json.push_back({{"what", p.what}, {"bytes", p.bytes}});
  return {{"per_rank_bytes", total},
          {"parts", parts_json},
          {"activations_given", activations_given},
          {"model", "the modelled device's memory per rank at the end of a block's forward pass, every part held "
                    "at once (ZeRO's model states, FSDP's gathered units, the layer file's activations); not "
                    "counted: the framework's own (CUDA context, allocator caches), a library allreduce's "
                    "temporaries"}};
}

DeviceMemory device_memory(const NetSpec& spec, const TrainConfig& config, int ranks, double value_bytes) {
  DeviceMemory m;
  if (!spec.table) return m;
  // Parameters, gradients and activations in the run's precision (2 bytes under --precision
  // bf16 and fp16); the optimizer's state and, in 16 bits, the master weights in float, as
  // PyTorch's mixed precision and ZeRO keep them (Rajbhandari et al., section 3.1: 2 + 2 + 12
  // bytes a parameter with Adam).
  const bool half = config.value_bytes == 2;
  const double vb = half ? 2.0 : value_bytes;
  const double state_bytes = half ? 4.0 : value_bytes;
  const double psi = static_cast<double>(spec.parameter_count());
  const int p = std::max(1, ranks);
  const DeviceHolding holding = config.strategy->device_holding ? config.strategy->device_holding(config) : DeviceHolding{};
  const std::string& sharding = holding.sharding;
  const bool sharded = sharding != "none";
  const UnitSizes units = unit_sizes(spec, holding.unit_layers);
  // The ranks each unit is sharded over: all of them, or a node's (hybrid).
  int group = p;
  if (sharding == "hybrid") {
    int most = 0;
    std::map<int, int> per_node;
    for (int node : config.rank_nodes) most = std::max(most, ++per_node[node]);
    group = config.rank_nodes.empty() ? 1 : most;
  }
  if (!sharded) group = 1;
  const double g = group;
  double shard_values = 0;  // this rank's shards, each unit padded to a multiple of the group
  for (const double u : units.parameters) shard_values += std::ceil(u / g);
  const std::string shard_it = "--strategy fsdp --sharding full, or more ranks (--np)";
  auto add = [&](std::string what, double bytes, std::string shrink) {
    if (bytes > 0) m.parts.push_back({std::move(what), bytes, std::move(shrink)});
  };

  // Parameters: the whole net, or the rank's shards and the units gathered at once.
  if (!sharded) {
    add("parameters, all w values", psi * vb, shard_it);
  } else {
    add(fmt::format("parameters, this rank's shards (1/{} of each unit)", group), shard_values * vb,
        "more ranks (--np)");
    const std::size_t limit = holding.gather_limit;
    if (sharding == "grad-op")
      add("parameters gathered from a unit's forward to its backward (--sharding grad-op: every unit at the end of "
          "the forward pass)",
          psi * vb, "--sharding full");
    else
      add(fmt::format("parameters gathered: the {} largest units (one computing, --gather-limit {} prefetched)",
                      limit == 0 ? units.parameters.size() : limit + 1, limit),
          largest(units.parameters, limit == 0 ? units.parameters.size() : limit + 1) * vb,
          "a smaller --gather-limit or smaller units (--shard-unit)");
  }
  // Gradients: the whole net's, with DDP's bucket copy; or the shards and the units in reduction.
  if (!sharded) {
    add("gradients, all w values", psi * vb, shard_it);
    if (holding.bucket_copy)
      add("the buckets' flat copy of the gradients (DDP's buckets; none with " + holding.no_bucket_copy + ")", psi * vb,
          holding.no_bucket_copy);
  } else {
    add("gradients, this rank's shards", shard_values * vb, "more ranks (--np)");
    add("gradients of the two largest units, made and in their reduce-scatter", largest(units.parameters, 2) * vb,
        "smaller units (--shard-unit)");
  }
  // The optimizer's state: momentum's one value a parameter, RPROP's and Adam's two.
  const double states = config.learning == Learning::rprop || config.learning == Learning::adam ? 2 : 1;
  const std::string rule = config.learning == Learning::adam    ? "Adam's two moments"
                           : config.learning == Learning::rprop ? "RPROP's steps and last gradients"
                                                                : "momentum";
  add(fmt::format("the optimizer's state, {}{}{}", rule, half ? " in float" : "", sharded ? ", on the shards" : ""),
      states * (sharded ? shard_values : psi) * state_bytes, sharded ? "more ranks (--np)" : shard_it);
  if (half)
    add(fmt::format("the master weights in float (--precision 16-bit){}", sharded ? ", on the shards" : ""),
        (sharded ? shard_values : psi) * state_bytes, sharded ? "more ranks (--np)" : shard_it);
  // Activations: each layer's, for the rank's patterns of a block; with --recompute only each
  // unit's input, and one unit's whole while it is computed again.
  const double columns = std::ceil(static_cast<double>(config.block) / p);
  m.activations_given = std::ranges::any_of(spec.table->layers, [](const TableLayer& l) { return l.activations > 0; });
  const double per_sample = config.recompute
                                ? std::accumulate(units.first_activations.begin(), units.first_activations.end(), 0.0) +
                                      largest(units.activations, 1)
                                : std::accumulate(units.activations.begin(), units.activations.end(), 0.0);
  add(fmt::format("activations{} of {} patterns (b / p)",
                  config.recompute ? ", each unit's input and one unit's whole (--recompute on)" : "", columns),
      per_sample * columns * vb, config.recompute ? "a smaller --block, or more ranks (--np)"
                                                  : "--recompute on, a smaller --block, or more ranks (--np)");
  for (const DevicePart& part : m.parts) m.total += part.bytes;
  return m;
}

DeviceMemory device_memory(const TrainJob& job) {
  return device_memory(job.spec, job.config, job.np, job.double_precision ? 8.0 : 4.0);
}

std::string device_memory_fault(const DeviceMemory& need, double memory, const std::string& where) {
  if (!(memory > 0) || need.total <= memory) return "";
  std::vector<DevicePart> parts = need.parts;
  std::ranges::sort(parts, std::greater<>(), &DevicePart::bytes);
  std::string text = fmt::format("does not fit {}: a rank needs {} of its {} (the modelled device's memory, "
                                 "config.device_memory in a record):",
                                 where, gib(need.total), gib(memory));
  for (const DevicePart& p : parts) text += fmt::format("\n  {:>10}  {}", gib(p.bytes), p.what);
  // The remedies of the three largest parts, each once.
  std::vector<std::string> remedies;
  for (std::size_t i = 0; i < parts.size() && i < 3; ++i)
    if (std::ranges::find(remedies, parts[i].shrink) == remedies.end()) remedies.push_back(parts[i].shrink);
  text += fmt::format("\nwhat makes it fit: {}", fmt::join(remedies, "; "));
  return text;
}

}  // namespace wulf
