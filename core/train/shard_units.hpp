// The units of sharded data parallelism (--strategy fsdp) and of activation checkpointing
// (--recompute): groups of consecutive layers, each gathered, reduced or recomputed together.
#pragma once

#include "nn/mlp.hpp"

#include <cstddef>
#include <vector>

namespace wulf {

// One unit: its layers first to last (1-based), and their parameters.
struct ShardUnitLayers {
  int first = 1, last = 1;
  std::size_t parameters = 0;
};

// The units in forward order: every `layers` layers, or with 0 the layer file's units (its
// `unit` lines; the layers before the first are one more) and each layer of a net without them.
std::vector<ShardUnitLayers> shard_units(const NetSpec& spec, int layers);
// The parameters of the largest of those units.
std::size_t largest_unit_values(const NetSpec& spec, int layers);

}  // namespace wulf
