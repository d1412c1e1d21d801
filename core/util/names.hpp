// The names of an enum's values, written once in one table that both to_string and the
// reading of an option's text use.
//
//   constexpr Named<Learning> learning_names[] = {{Learning::pattern, "pattern"}, ...};
//   std::string_view to_string(Learning l) { return name_of(l, learning_names); }
//   Learning parse_learning(std::string_view text) { return parse_named(text, learning_names, "learning", "mode"); }
#pragma once

#include "util/errors.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace wulf {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

// The name of value in names; "?" for a value the table does not hold.
template <class E, std::size_t N>
constexpr std::string_view name_of(E value, const Named<E> (&names)[N]) {
  for (const Named<E>& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// The value text names. Other text is refused, naming the option and every name:
// "--learning: unknown mode 'x' (expected pattern, block or epoch)".
template <class E, std::size_t N>
E parse_named(std::string_view text, const Named<E> (&names)[N], std::string_view option, std::string_view what) {
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i].name == text) return names[i].value;
    expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].name);
  }
  throw InputError("--" + std::string(option) + ": unknown " + std::string(what) + " '" + std::string(text) +
                   "' (expected " + expected + ")");
}

}  // namespace wulf
