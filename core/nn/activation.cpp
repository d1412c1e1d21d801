#include "nn/activation.hpp"
#include "util/errors.hpp"
#include "util/names.hpp"


#include <string>

namespace wulf {

namespace {

constexpr Named<Activation> activation_names[] = {{Activation::sigmoid, "sigmoid"},
                                                  {Activation::tanh, "tanh"},
                                                  {Activation::linear, "linear"},
                                                  {Activation::softmax, "softmax"}};

}  // namespace

std::string_view to_string(Activation a) { return name_of(a, activation_names); }

std::string_view to_string(Loss l) { return l == Loss::mse ? "mse" : "ce"; }

Activation parse_activation(std::string_view name, std::string_view option) {
  return parse_named(name, activation_names, option, "activation");
}

Loss parse_loss(std::string_view name, std::string_view option) {
  if (name == "mse") return Loss::mse;
  if (name == "ce" || name == "cross-entropy") return Loss::cross_entropy;
  throw InputError("--" + std::string(option) + ": unknown loss '" + std::string(name) +
                   "' (expected mse or ce)");
}

}  // namespace wulf
