#include "train/shard_units.hpp"

#include "nn/layer_table.hpp"

#include <algorithm>

namespace wulf {

std::vector<ShardUnitLayers> shard_units(const NetSpec& spec, int layers) {
  std::vector<int> starts;
  if (layers == 0 && spec.table && !spec.table->units.empty()) {
    if (spec.table->units.front().first > 0) starts.push_back(1);
    for (const TableUnit& u : spec.table->units) starts.push_back(static_cast<int>(u.first) + 1);
  } else {
    for (int l = 1; l <= spec.timed_layers(); l += std::max(1, layers)) starts.push_back(l);
  }
  std::vector<ShardUnitLayers> units;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    ShardUnitLayers u{.first = starts[i], .last = i + 1 < starts.size() ? starts[i + 1] - 1 : spec.timed_layers()};
    for (int l = u.first; l <= u.last; ++l) u.parameters += spec.layer_parameter_count(l);
    units.push_back(u);
  }
  return units;
}

std::size_t largest_unit_values(const NetSpec& spec, int layers) {
  std::size_t largest = 0;
  for (const ShardUnitLayers& u : shard_units(spec, layers)) largest = std::max(largest, u.parameters);
  return largest;
}

}  // namespace wulf
