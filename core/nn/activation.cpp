#include "nn/activation.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"

#include <string>

namespace wulf {

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::sigmoid: return "sigmoid";
    case Activation::tanh: return "tanh";
    case Activation::linear: return "linear";
    case Activation::softmax: return "softmax";
  }
  return "?";
}

std::string_view to_string(Loss l) { return l == Loss::mse ? "mse" : "ce"; }

Activation parse_activation(std::string_view name, std::string_view option) {
  for (Activation a : {Activation::sigmoid, Activation::tanh, Activation::linear, Activation::softmax})
    if (name == to_string(a)) return a;
  throw InputError("--" + std::string(option) + ": unknown activation '" + std::string(name) +
                   "' (expected sigmoid, tanh, linear or softmax)");
}

Loss parse_loss(std::string_view name, std::string_view option) {
  if (name == "mse") return Loss::mse;
  if (name == "ce" || name == "cross-entropy") return Loss::cross_entropy;
  throw InputError("--" + std::string(option) + ": unknown loss '" + std::string(name) +
                   "' (expected mse or ce)");
}

}  // namespace wulf
