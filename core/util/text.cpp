#include "util/text.hpp"
#include "util/errors.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace wulf {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

std::optional<double> parse_number(std::string_view text) {
  const std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

std::string range_text(const Range& range) {
  const bool open_hi = range.hi_open || std::isinf(range.hi);
  return fmt::format("{}{}, {}{}", range.lo_open ? "(" : "[", number_text(range.lo), number_text(range.hi),
                     open_hi ? ")" : "]");
}

void check_in_range(double v, const Range& range, std::string_view option) {
  const auto refuse = [&](const std::string& what) {
    throw InputError(fmt::format("--{}: {} {}", option, number_text(v), what));
  };
  if (!std::isfinite(v)) throw InputError(fmt::format("--{}: {} is not a finite number", option, v));
  if (range.whole && v != std::floor(v)) refuse("is not a whole number");
  if (range.lo_open && !(v > range.lo)) refuse("must be more than " + number_text(range.lo));
  if (v < range.lo) refuse(range.lo == 0 ? "is negative" : "must be at least " + number_text(range.lo));
  if (range.hi_open && !(v < range.hi)) refuse("must be less than " + number_text(range.hi));
  if (v > range.hi) refuse("is more than " + number_text(range.hi));
}

double number_in_range(std::string_view text, const Range& range, std::string_view option) {
  const std::optional<double> v = parse_number(text);
  if (!v) throw InputError(fmt::format("--{}: '{}' is not a number", option, printable(text)));
  check_in_range(*v, range, option);
  return *v;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    items.push_back(trim(text.substr(start, end - start)));
    start = end + 1;
  }
  return items;
}

std::vector<double> number_list(std::string_view text, const std::string& option, Range range) {
  std::vector<double> values;
  for (const std::string& item : split_list(text)) values.push_back(number_in_range(item, range, option));
  if (values.empty()) throw InputError("--" + option + ": empty list");
  return values;
}

std::vector<double> number_list(std::string_view text, const std::string& option) {
  constexpr double most = std::numeric_limits<double>::max();
  return number_list(text, option, Range{.lo = -most, .hi = most});
}

std::vector<long long> whole_list(std::string_view text, const std::string& option, Range range) {
  range.whole = true;
  const std::vector<double> values = number_list(text, option, range);
  return std::vector<long long>(values.begin(), values.end());
}

std::vector<long long> whole_list(std::string_view text, const std::string& option, long long least) {
  return whole_list(text, option, Range{.lo = static_cast<double>(least), .hi = 1e15});
}

std::vector<std::size_t> size_list(std::string_view text, const std::string& option, Range range) {
  const std::vector<long long> values = whole_list(text, option, range);
  return std::vector<std::size_t>(values.begin(), values.end());
}

bool is_one_of(std::string_view value, std::initializer_list<std::string_view> choices) {
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

namespace {

// Byte c as \xNN, after out.
void append_hex(std::string& out, unsigned char c) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "\\x%02x", c);
  out += hex;
}

}  // namespace

std::string safe_to_print(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
      append_hex(out, c);
    else
      out += ch;
  }
  return out;
}

std::string printable(std::string_view text, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < std::min(text.size(), most); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      append_hex(out, c);
  }
  return text.size() > most ? out + "... (" + std::to_string(text.size()) + " bytes)" : out;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < std::size(units)) bytes /= 1024, ++u;
  char text[64];
  if (u == 0)
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  else
    std::snprintf(text, sizeof text, "%.1f %s", bytes, units[u]);
  return text;
}

}  // namespace wulf

namespace wulf {

double parse_duration(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError(what + ": '" + printable(text) + "' is not a duration");
  }
  const std::string unit = text.substr(used);
  if (unit == "" || unit == "s") return v;
  if (unit == "ms") return v * 1e-3;
  if (unit == "us") return v * 1e-6;
  if (unit == "ns") return v * 1e-9;
  throw InputError(what + ": unknown unit '" + printable(unit) + "' (s, ms, us or ns)");
}

}  // namespace wulf
