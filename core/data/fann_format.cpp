#include "data/fann_format.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <system_error>

namespace wulf {
namespace {

[[noreturn]] void fann_fail(const std::string& path, const std::string& what) {
  throw InputError("FANN data file '" + path + "': " + what);
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Walks the whitespace-separated tokens of a text, counting lines as it goes.
class Tokens {
 public:
  explicit Tokens(std::string_view text) : text_(text) {}

  // The next token, or an empty view at the end; line() is then the token's line (1-based).
  std::string_view next() {
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  int line() const { return line_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

std::string read_text(const std::string& path) { return read_text_file(path, "FANN data file", data_file_limit); }

// A header count: digits only, so "-1", "2.5" and "1e3" are rejected rather than truncated.
bool parse_count(std::string_view token, std::uint64_t& value) {
  if (token.empty() || !std::isdigit(static_cast<unsigned char>(token.front()))) return false;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  return ec == std::errc() && end == token.data() + token.size();
}

// Parses a whole token as a number, accepting a leading '+' (which from_chars does not). Parsed
// as double then rounded once to float, so that e.g. "0.1" gives the float nearest 0.1.
bool parse_number(std::string_view token, double& value) {
  if (token.size() > 1 && token.front() == '+' && token[1] != '-' && token[1] != '+')
    token.remove_prefix(1);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec == std::errc::invalid_argument || end != token.data() + token.size()) return false;
  // from_chars leaves value alone when out of range; strtod gives +-HUGE_VAL (rejected later as
  // not finite) for overflow and 0 or a denormal for underflow, which is what the text means.
  if (ec == std::errc::result_out_of_range)
    value = std::strtod(std::string(token).c_str(), nullptr);
  return true;
}

// Reads the header: the file's first three numbers, "num_patterns num_inputs num_outputs".
// As FANN's own reader does (fscanf), it may start after blank lines, be split over lines,
// and share its last line with the first pattern's numbers.
void read_fann_header(const std::string& path, Tokens& tokens, std::uint64_t counts[3]) {
  const char* usage = "the header must be three non-negative integers \"num_patterns num_inputs num_outputs\"";
  const char* names[3] = {"patterns", "inputs", "outputs"};
  int lines[3] = {};
  for (int i = 0; i < 3; ++i) {
    const std::string_view t = tokens.next();
    lines[i] = tokens.line();
    if (t.empty()) fann_fail(path, std::string(usage) + ", but the file holds only " + std::to_string(i) + " numbers");
    if (!parse_count(t, counts[i]))
      fann_fail(path, "line " + std::to_string(lines[i]) + ": " + usage + ", but holds '" + printable(t) + "'");
  }
  if (counts[0] == 0 || counts[1] == 0 || counts[2] == 0)
    fann_fail(path, "the header says " + std::to_string(counts[0]) + " patterns of " +
                   std::to_string(counts[1]) + " inputs and " + std::to_string(counts[2]) +
                   " outputs; none may be zero");
  // Each count indexes an Eigen matrix (int); refused here, before anything is allocated.
  constexpr auto max_index = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  for (int i = 0; i < 3; ++i)
    if (counts[i] > max_index)
      fann_fail(path, "line " + std::to_string(lines[i]) + ": the header's count of " + names[i] + ", " +
                     std::to_string(counts[i]) + ", is more than wulf reads (" + std::to_string(max_index) + ")");
}

}  // namespace

Dataset read_fann(const std::string& path, std::vector<int>* target_lines) {
  const std::string text = read_text(path);
  Tokens tokens(text);
  std::uint64_t counts[3];
  read_fann_header(path, tokens, counts);
  const std::uint64_t n = counts[0], n_in = counts[1], n_out = counts[2];
  // Each count is below 2^31, so the product fits in 64 bits.
  const std::uint64_t promised = n * (n_in + n_out);
  // Counting first decides the size fault before anything is allocated (a header promising
  // billions of numbers must not allocate gigabytes only to find ten).
  Tokens counter = tokens;
  std::uint64_t held = 0;
  while (!counter.next().empty()) ++held;
  if (held != promised)
    fann_fail(path, "the header says " + std::to_string(n) + " patterns x (" + std::to_string(n_in) +
                   " inputs + " + std::to_string(n_out) +
                   " outputs) = " + std::to_string(promised) + " numbers, but the file holds " +
                   (held < promised ? "only " : "") + std::to_string(held) +
                   (held < promised ? "" : " (more than promised)"));

  Dataset d;
  d.inputs.resize(static_cast<Eigen::Index>(n_in), static_cast<Eigen::Index>(n));
  d.targets.resize(static_cast<Eigen::Index>(n_out), static_cast<Eigen::Index>(n));
  auto bad_token = [&](std::string_view t, int line, const char* what) {
    fann_fail(path, "line " + std::to_string(line) + ": '" + printable(t) + "' " + what);
  };
  for (Eigen::Index p = 0; p < static_cast<Eigen::Index>(n); ++p) {
    for (std::uint64_t k = 0; k < n_in + n_out; ++k) {
      const std::string_view t = tokens.next();
      double v = 0;
      if (!parse_number(t, v)) bad_token(t, tokens.line(), "is not a number");
      const auto f = static_cast<float>(v);
      if (!std::isfinite(f)) bad_token(t, tokens.line(), "is not a finite single-precision number");
      if (k == n_in && target_lines) target_lines->push_back(tokens.line());
      if (k < n_in)
        d.inputs(static_cast<Eigen::Index>(k), p) = f;
      else
        d.targets(static_cast<Eigen::Index>(k - n_in), p) = f;
    }
  }
  return d;
}

void write_fann(const std::string& path, const Dataset& d) {
  if (d.inputs.cols() != d.targets.cols())
    throw std::invalid_argument("write_fann: inputs and targets differ in their pattern count");
  if (d.empty() || d.n_inputs() == 0 || d.n_outputs() == 0)
    fann_fail(path, "cannot write a set with no patterns, inputs or outputs (it could not be read)");
  if (!d.inputs.allFinite() || !d.targets.allFinite())
    fann_fail(path, "cannot write a set holding a non-finite value (it could not be read)");

  // One line of inputs and one of targets per pattern; 9 significant digits read back to
  // the same float.
  fmt::memory_buffer text;
  fmt::format_to(std::back_inserter(text), "{} {} {}\n", d.size(), d.n_inputs(), d.n_outputs());
  for (Eigen::Index p = 0; p < d.inputs.cols(); ++p)
    for (const DataMatrix* m : {&d.inputs, &d.targets})
      for (Eigen::Index i = 0; i < m->rows(); ++i)
        fmt::format_to(std::back_inserter(text), "{:.9g}{}", static_cast<double>((*m)(i, p)),
                       i + 1 < m->rows() ? ' ' : '\n');
  try {
    write_file_atomically(path, fmt::to_string(text));
  } catch (const InputError& e) {
    fann_fail(path, e.what());
  }
}

}  // namespace wulf
