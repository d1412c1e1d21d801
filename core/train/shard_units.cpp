#include "train/shard_units.hpp"

#include "nn/layer_table.hpp"

#include <algorithm>

namespace wulf {

std::vector<int> shard_unit_starts(const NetSpec& spec, int layers) {
  std::vector<int> starts;
  if (layers == 0 && spec.table && !spec.table->units.empty()) {
    if (spec.table->units.front().first > 0) starts.push_back(1);
    for (const TableUnit& u : spec.table->units) starts.push_back(static_cast<int>(u.first) + 1);
    return starts;
  }
  for (int l = 1; l <= spec.timed_layers(); l += std::max(1, layers)) starts.push_back(l);
  return starts;
}

double largest_unit_values(const NetSpec& spec, int layers) {
  const std::vector<int> starts = shard_unit_starts(spec, layers);
  double largest = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int last = i + 1 < starts.size() ? starts[i + 1] - 1 : spec.timed_layers();
    double values = 0;
    for (int l = starts[i]; l <= last; ++l) values += static_cast<double>(spec.layer_parameter_count(l));
    largest = std::max(largest, values);
  }
  return largest;
}

}  // namespace wulf
