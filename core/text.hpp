// Reading numbers and words out of option values and small text files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wulf {

// s without leading and trailing blanks (spaces, tabs, carriage returns).
std::string trim(std::string_view s);
// The finite number that all of text (blanks around it allowed) spells, or nothing.
std::optional<double> parse_number(std::string_view text);

}  // namespace wulf
