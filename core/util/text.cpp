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

std::string listed(const std::vector<std::string>& names, std::string_view last) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? std::string() : i + 1 == names.size() ? std::string(last) : std::string(", ")) + names[i];
  return text;
}

std::string listed(std::span<const std::string_view> names, std::string_view last) {
  return listed(std::vector<std::string>(names.begin(), names.end()), last);
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

namespace {

// The length of the UTF-8 sequence that starts text[i] where it is a well-formed one (RFC
// 3629: no overlong form, no surrogate, at most U+10FFFF) of a printable character (not a C1
// control, U+0080 to U+009F); 0 where it is not. `cut`: the text ends inside a sequence
// that is well-formed so far (a stream's next write may complete it).
std::size_t utf8_printable(std::string_view t, std::size_t i, bool& cut) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(t[k]); };
  const unsigned char c = at(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's bounds
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) n = 3;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if (i + k >= t.size()) {
      cut = true;
      return 0;
    }
    const unsigned char b = at(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) return 0;
  }
  if (c == 0xc2 && at(i + 1) <= 0x9f) return 0;  // C1 controls (CSI 0x9b among them)
  return n;
}

}  // namespace

std::size_t append_safe(std::string& out, std::string_view text, bool final) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        append_hex(out, c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    bool cut = false;
    const std::size_t n = utf8_printable(text, i, cut);
    if (cut && !final) break;  // the rest may come with the next write
    if (n == 0) {
      append_hex(out, c);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return i;
}

std::string safe_to_print(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_safe(out, text, true);
  return out;
}

SafeOutputBuf::SafeOutputBuf(std::ostream& to) : to_(to) {}

SafeOutputBuf::~SafeOutputBuf() { drain(true); }

SafeOutputBuf::int_type SafeOutputBuf::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  pending_ += traits_type::to_char_type(ch);
  drain(false);
  return ch;
}

std::streamsize SafeOutputBuf::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<std::size_t>(n));
  drain(false);
  return n;
}

int SafeOutputBuf::sync() {
  drain(false);
  to_.flush();
  return 0;
}

void SafeOutputBuf::drain(bool final) {
  if (pending_.empty()) return;
  std::string out;
  pending_.erase(0, append_safe(out, pending_, final));
  to_.write(out.data(), static_cast<std::streamsize>(out.size()));
}

SafeOstream::SafeOstream(std::ostream& to) : std::ostream(nullptr), buf_(to) { rdbuf(&buf_); }

SafeOstream::~SafeOstream() { flush(); }

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
