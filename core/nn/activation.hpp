// Activations and losses of the feed-forward nets, and their names on the command line.
#pragma once

#include "util/errors.hpp"

#include <string>
#include <string_view>

namespace wulf {

enum class Activation { sigmoid, tanh, linear, softmax };
enum class Loss { mse, cross_entropy };

std::string_view to_string(Activation a);
std::string_view to_string(Loss l);
// Both throw InputError naming the option and the accepted values.
Activation parse_activation(std::string_view name, std::string_view option);
Loss parse_loss(std::string_view name, std::string_view option);

}  // namespace wulf
