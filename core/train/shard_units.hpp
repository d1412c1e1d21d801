// The units of sharded data parallelism (--strategy fsdp) and of activation checkpointing
// (--recompute): groups of consecutive layers, each gathered, reduced or recomputed together.
#pragma once

#include "nn/mlp.hpp"

#include <vector>

namespace wulf {

// The first layer (1-based) of each unit: every `layers` layers, or with 0 the layer file's
// units (its `unit` lines; the layers before the first are one more) and each layer of a net
// without them.
std::vector<int> shard_unit_starts(const NetSpec& spec, int layers);
// The parameters of the largest of those units.
double largest_unit_values(const NetSpec& spec, int layers);

}  // namespace wulf
