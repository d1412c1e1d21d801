#include "nn/weights_file.hpp"
#include "util/files.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

namespace wulf {

template <class T>
std::string weights_text(const Mlp<T>& net, const std::string& status, int iteration) {
  const NetSpec& spec = net.spec();
  std::string out;
  out += "wulf-weights 1\n";
  out += "net " + spec.describe() + "\n";
  out += "layers";
  for (int n : spec.sizes) out += " " + std::to_string(n);
  out += "\n";
  out += std::string("precision ") + (std::is_same_v<T, float> ? "float" : "double") + "\n";
  out += "parameters " + std::to_string(net.parameter_count()) + "\n";
  out += "status " + status + "\n";
  out += "iteration " + std::to_string(iteration) + "\n";
  out += std::string("layout W1 b1 W2 b2 ... W column-major (n_l, n_{l-1})") + (spec.bias ? "" : ", no biases") + "\n";
  out += "values\n";
  char buffer[64];
  for (T v : net.parameters()) {
    // Shortest text that reads back to the same T.
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    out.append(buffer, end);
    out += '\n';
  }
  return out;
}

namespace {

// A whole number of digits alone ("12"; not "-1", "1.5" or "1e3"), or nothing.
std::optional<long long> parse_whole(std::string_view text) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text.front() == '-' || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// The net's sizes as NetSpec::describe() writes them first: "2-8-1" -> {2, 8, 1}; empty when
// the text is not that.
std::vector<int> net_sizes(const std::string& net) {
  std::vector<int> sizes;
  const std::string first = net.substr(0, net.find(' '));
  for (const std::string& part : split_list(first, '-')) {
    const std::optional<long long> n = parse_whole(part);
    if (!n || *n < 1 || *n > std::numeric_limits<int>::max()) return {};
    sizes.push_back(static_cast<int>(*n));
  }
  return sizes;
}

// The parameters of a net of these layer sizes, with or without biases (NetSpec's count).
long double parameter_count(const std::vector<int>& layers, bool bias) {
  long double w = 0;
  for (std::size_t l = 1; l < layers.size(); ++l)
    w += static_cast<long double>(layers[l]) * layers[l - 1] + (bias ? layers[l] : 0);
  return w;
}

std::string joined(const std::vector<int>& sizes, const char* between) {
  std::string s;
  for (int n : sizes) s += (s.empty() ? "" : between) + std::to_string(n);
  return s;
}

// The fault of a line of the file: "--weights-in w.txt:3: ...".
using LineFault = std::function<InputError(int line, const std::string& text)>;

// One header line's value, KEY REST, into w (and the parameter count).
void header_value(const std::string& key, const std::string& rest, int number, const LineFault& fault,
                  WeightsFile& w, long long& count) {
  if (key == "net") {
    w.net = rest;
    if (net_sizes(rest).size() < 2) throw fault(number, "'" + printable(rest) + "' is not a net (e.g. 2-8-1 ...)");
  } else if (key == "layers") {
    std::istringstream sizes(rest);
    for (std::string n; sizes >> n;) {
      const std::optional<long long> v = parse_whole(n);
      if (!v || *v < 1 || *v > std::numeric_limits<int>::max())
        throw fault(number, "layer size '" + printable(n) + "' is not a whole number of at least 1");
      w.layers.push_back(static_cast<int>(*v));
    }
    if (w.layers.size() < 2) throw fault(number, "layers: needs the inputs and the outputs at least");
  } else if (key == "precision") {
    if (rest != "float" && rest != "double") throw fault(number, "precision '" + rest + "' is neither float nor double");
    w.precision = rest;
  } else if (key == "parameters") {
    const std::optional<long long> n = parse_whole(rest);
    if (!n || *n < 0) throw fault(number, "'" + printable(rest) + "' is not a parameter count");
    count = *n;
  } else if (key == "status") {
    w.status = rest;
  } else if (key == "iteration") {
    const std::optional<long long> n = parse_whole(rest);
    if (!n || *n < 0 || *n > std::numeric_limits<int>::max())
      throw fault(number, "'" + printable(rest) + "' is not an iteration number");
    w.iteration = static_cast<int>(*n);
  }  // other keys (layout) are for people
}

// The header agrees with itself: the layers are the net's, the count is theirs.
void check_header(const WeightsFile& w, long long count, std::map<std::string, int>& seen, const LineFault& fault) {
  if (net_sizes(w.net) != w.layers)
    throw fault(seen["layers"], "layers " + joined(w.layers, " ") + ", but the net on line " +
                                    std::to_string(seen["net"]) + " is " + w.net.substr(0, w.net.find(' ')));
  const bool bias = w.net.size() < 8 || w.net.substr(w.net.size() - 8) != " no-bias";
  if (parameter_count(w.layers, bias) != static_cast<long double>(count))
    throw fault(seen["parameters"], "parameters " + std::to_string(count) + ", but a net of layers " +
                                        joined(w.layers, "-") + (bias ? " with" : " without") + " biases has " +
                                        fmt::format("{:.0Lf}", parameter_count(w.layers, bias)));
}

// The values after the header, one a line, each finite (and within a float's range where the
// file or the run is float). No reserve(count): the values read are checked against it after.
void read_values(std::istream& in, int& number, bool single, const LineFault& fault, WeightsFile& w) {
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    double v = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec == std::errc::result_out_of_range ||
        (ec == std::errc() && end == line.data() + line.size() && !std::isfinite(v)))
      throw fault(number, "'" + printable(line) + "' is not a finite number");
    if (ec != std::errc() || end != line.data() + line.size()) throw fault(number, "'" + printable(line) + "' is not a number");
    if (single && std::abs(v) > std::numeric_limits<float>::max())
      throw fault(number, "'" + printable(line) + "' is beyond a float's range (" +
                              (w.precision == "float" ? std::string("the file's precision is float")
                                                      : "this run is --precision float") +
                              ")");
    w.values.push_back(v);
  }
}

}  // namespace

WeightsFile read_weights(const std::string& path, const std::string& what, bool as_float) {
  check_input_file(path, what, data_file_limit);
  std::ifstream in(path);
  if (!in) throw InputError(what + " " + path + ": cannot open it");
  const LineFault fault = [&](int line, const std::string& text) {
    return InputError(what + " " + path + ":" + std::to_string(line) + ": " + text);
  };
  WeightsFile w;
  std::string line;
  int number = 0;
  long long count = -1;
  bool magic = false;
  std::map<std::string, int> seen;  // each header key and its line
  while (std::getline(in, line)) {
    ++number;
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (number == 1) {
      int version = 0;
      if (key != "wulf-weights" || !(s >> version) || version != 1)
        throw fault(number, "not a wulf weights file (expected 'wulf-weights 1')");
      magic = true;
      continue;
    }
    if (key == "values") break;
    if (key.empty()) continue;
    if (const auto [at, first] = seen.emplace(key, number); !first)
      throw fault(number, "'" + printable(key) + "' again (first on line " + std::to_string(at->second) +
                              "): each header key is given once");
    std::string rest;
    std::getline(s >> std::ws, rest);
    header_value(key, rest, number, fault, w, count);
  }
  if (!magic) throw InputError(what + " " + path + ": it is empty");
  for (const char* key : {"net", "layers", "parameters"})
    if (!seen.count(key)) throw InputError(what + " " + path + ": no '" + key + "' line before 'values'");
  check_header(w, count, seen, fault);
  read_values(in, number, as_float || w.precision == "float", fault, w);
  if (static_cast<long long>(w.values.size()) != count)
    throw InputError(what + " " + path + ": " + std::to_string(w.values.size()) + " values, the header says " +
                     std::to_string(count));
  return w;
}

template std::string weights_text<float>(const Mlp<float>&, const std::string&, int);
template std::string weights_text<double>(const Mlp<double>&, const std::string&, int);

}  // namespace wulf
