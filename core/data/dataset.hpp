// A set of training or test patterns, one pattern per column.
//
// Patterns are stored in single precision whatever precision the network trains in:
// MNIST pixels are k/255 and the generated problems need no more, and float halves the
// memory of the large sets (digits at 112x112 is 60 000 x 12 544 values). Blocks are cast
// to the network's precision when they are gathered (Trainer), so a double run still
// computes in double.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <string>
#include <vector>

namespace wulf {

// Column-major so that one pattern, and a run of consecutive patterns, is contiguous.
using DataMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

struct Dataset {
  DataMatrix inputs;        // (n_inputs, n_patterns)
  DataMatrix targets;       // (n_outputs, n_patterns)
  std::vector<int> labels;  // class of each pattern, or empty when the set is no classifier
  // A single-output classifier says class 1 when its output exceeds this (the midpoint of
  // its two target values); nets with several outputs answer the class of the largest.
  float decision_threshold = 0.5f;

  std::size_t size() const { return static_cast<std::size_t>(inputs.cols()); }
  int n_inputs() const { return static_cast<int>(inputs.rows()); }
  int n_outputs() const { return static_cast<int>(targets.rows()); }
  bool empty() const { return inputs.cols() == 0; }
  bool has_labels() const { return !labels.empty(); }

  // Keeps the first n patterns (n <= size()).
  void truncate(std::size_t n) { keep(0, n); }
  // Keeps the patterns [begin, begin + count) (clipped to size()).
  void keep(std::size_t begin, std::size_t count);
};

// Builds one-of-k targets (1 for the class, 0 elsewhere) from labels in [0, k).
DataMatrix one_of_k(const std::vector<int>& labels, int k);

}  // namespace wulf
