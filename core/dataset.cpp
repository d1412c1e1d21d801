#include "dataset.hpp"

namespace wulf {

void Dataset::truncate(std::size_t n) {
  if (n >= size()) return;
  const auto cols = static_cast<Eigen::Index>(n);
  inputs.conservativeResize(Eigen::NoChange, cols);
  targets.conservativeResize(Eigen::NoChange, cols);
  if (!labels.empty()) labels.resize(n);
}

DataMatrix one_of_k(const std::vector<int>& labels, int k) {
  DataMatrix t = DataMatrix::Zero(k, static_cast<Eigen::Index>(labels.size()));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= k)
      throw InputError("label " + std::to_string(labels[i]) + " of pattern " + std::to_string(i) +
                       " is outside 0.." + std::to_string(k - 1));
    t(labels[i], static_cast<Eigen::Index>(i)) = 1.0f;
  }
  return t;
}

}  // namespace wulf
