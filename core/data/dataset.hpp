// A set of training or test patterns, one pattern per column.
//
// Patterns are stored in single precision whatever precision the network trains in:
// MNIST pixels are k/255 and the generated problems need no more, and float halves the
// memory of the large sets (digits at 112x112 is 60 000 x 12 544 values). MNIST's images
// read at their own size keep their bytes: the input k / 255 is stored as the byte k, a
// quarter of the memory and of what gathering a block reads. Blocks are converted to the
// network's precision when they are gathered (Trainer), so a double run still computes in
// double.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace wulf {

// Column-major so that one pattern, and a run of consecutive patterns, is contiguous.
using DataMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using ByteMatrix = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

// The input a stored byte k stands for: k / 255, divided (not times 1 / 255) to be the float
// nearest k / 255, as the IDX reader has always made it.
inline float byte_input(std::uint8_t k) { return static_cast<float>(k) / 255.0f; }
// byte_input of each byte.
DataMatrix byte_inputs_as_floats(const ByteMatrix& bytes);
// out[i] = byte_input(in[i]) for i < n, 16 at a time where the machine has AVX-512: the gather
// of a block converts every pattern it copies, and the vector division bounded it.
void byte_inputs_to(const std::uint8_t* __restrict in, float* __restrict out, std::size_t n);

struct Dataset {
  DataMatrix inputs;        // (n_inputs, n_patterns), or empty where input_bytes holds them
  ByteMatrix input_bytes;   // (n_inputs, n_patterns) bytes k for inputs k / 255 (byte_input), or empty
  DataMatrix targets;       // (n_outputs, n_patterns)
  std::vector<int> labels;  // class of each pattern, or empty when the set is no classifier
  // A single-output classifier says class 1 when its output exceeds this (the midpoint of
  // its two target values); nets with several outputs answer the class of the largest.
  float decision_threshold = 0.5f;

  bool byte_inputs() const { return input_bytes.rows() > 0; }
  std::size_t size() const { return static_cast<std::size_t>(byte_inputs() ? input_bytes.cols() : inputs.cols()); }
  int n_inputs() const { return static_cast<int>(byte_inputs() ? input_bytes.rows() : inputs.rows()); }
  int n_outputs() const { return static_cast<int>(targets.rows()); }
  bool empty() const { return size() == 0; }
  bool has_labels() const { return !labels.empty(); }

  // Pattern p's inputs, converted to T, into out[0, n_inputs()).
  template <class T>
  void copy_inputs(std::size_t p, T* __restrict out) const {
    const auto n = static_cast<std::size_t>(n_inputs());
    const auto col = static_cast<Eigen::Index>(p);
    if (byte_inputs()) {
      const std::uint8_t* __restrict in = input_bytes.col(col).data();
      if constexpr (std::is_same_v<T, float>)
        byte_inputs_to(in, out, n);
      else
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(byte_input(in[i]));
    } else {
      const float* __restrict in = inputs.col(col).data();
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i]);
    }
  }
  // The inputs as floats (made from the bytes where the set keeps bytes).
  DataMatrix float_inputs() const;

  // Keeps the first n patterns (n <= size()).
  void truncate(std::size_t n) { keep(0, n); }
  // Keeps the patterns [begin, begin + count) (clipped to size()).
  void keep(std::size_t begin, std::size_t count);
};

// Builds one-of-k targets (1 for the class, 0 elsewhere) from labels in [0, k).
DataMatrix one_of_k(const std::vector<int>& labels, int k);

}  // namespace wulf
