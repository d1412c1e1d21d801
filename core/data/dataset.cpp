#include "data/dataset.hpp"
#include "util/errors.hpp"

#include <algorithm>

namespace wulf {

void Dataset::keep(std::size_t begin, std::size_t count) {
  begin = std::min(begin, size());
  count = std::min(count, size() - begin);
  if (begin == 0 && count == size()) return;
  const auto first = static_cast<Eigen::Index>(begin), cols = static_cast<Eigen::Index>(count);
  if (byte_inputs())
    input_bytes = ByteMatrix(input_bytes.middleCols(first, cols));
  else
    inputs = DataMatrix(inputs.middleCols(first, cols));
  targets = DataMatrix(targets.middleCols(first, cols));
  if (!labels.empty()) labels = std::vector<int>(labels.begin() + first, labels.begin() + first + cols);
}

DataMatrix byte_inputs_as_floats(const ByteMatrix& bytes) {
  return bytes.unaryExpr([](std::uint8_t k) { return byte_input(k); });
}

DataMatrix Dataset::float_inputs() const { return byte_inputs() ? byte_inputs_as_floats(input_bytes) : inputs; }

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
