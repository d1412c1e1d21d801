// The weights of a trained net in a file (wulf train --weights-out FILE).
//
// A text file: a header of "key value" lines, then one value per line, each written with
// the fewest digits that read back to the same float or double (std::to_chars):
//
//   wulf-weights 1
//   net 2-8-1 tanh/tanh mse bias          NetSpec::describe()
//   layers 2 8 1                          n_0 (inputs) ... n_L (outputs)
//   precision float                       float|double: the type the values were trained in
//   parameters 33                         how many values follow
//   status max_iterations                 how the run ended (stop reasons of trainer.hpp)
//   iteration 20                          the iteration whose weights these are
//   layout W1 b1 W2 b2 ... W column-major (n_l, n_{l-1})
//   values
//   0.123
//   ...
//
// The values are the net's one parameter buffer in its own order (mlp.hpp): layer by layer
// the weights W_l, column-major (n_l, n_{l-1}), then its biases b_l (n_l) when the net has
// them. After a fault (stopped_on_fault) they are the last good weights.
#pragma once

#include "util/errors.hpp"
#include "nn/mlp.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace wulf {

struct WeightsFile {
  std::string net;          // NetSpec::describe() of the net
  std::vector<int> layers;  // n_0 ... n_L
  std::string precision;    // float or double
  std::string status;       // to_string(StopReason)
  int iteration = 0;
  std::vector<double> values;  // exactly as written (a float value reads back exactly)
};

// The file's text for the net's current parameters.
template <class T>
std::string weights_text(const Mlp<T>& net, const std::string& status, int iteration);

// Reads a weights file, what naming it in messages ("--weights-in"). Throws InputError naming
// the path, and the line where there is one, for a file that does not hold itself together:
// a header key given twice; no net, layers or parameters line; layers that are not the net's
// sizes, or a parameter count that is not theirs; a value that is not a finite number, or
// (where the file's precision is float, or as_float: the values go into a float net) beyond
// a float's range; as many values as the header says.
WeightsFile read_weights(const std::string& path, const std::string& what = "weights file", bool as_float = false);

}  // namespace wulf
