#include "nn/weights_file.hpp"
#include "util/files.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"


#include <charconv>
#include <fstream>
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

WeightsFile read_weights(const std::string& path) {
  check_input_file(path, "weights file", data_file_limit);
  std::ifstream in(path);
  if (!in) throw InputError("weights file " + path + ": cannot open it");
  auto fault = [&](int line, const std::string& what) {
    return InputError("weights file " + path + ":" + std::to_string(line) + ": " + what);
  };
  WeightsFile w;
  std::string line;
  int number = 0;
  long long count = -1;
  bool magic = false;
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
    std::string rest;
    std::getline(s >> std::ws, rest);
    if (key == "net") {
      w.net = rest;
    } else if (key == "layers") {
      std::istringstream sizes(rest);
      for (int n; sizes >> n;) w.layers.push_back(n);
    } else if (key == "precision") {
      if (rest != "float" && rest != "double") throw fault(number, "precision '" + rest + "' is neither float nor double");
      w.precision = rest;
    } else if (key == "parameters") {
      std::istringstream n(rest);
      if (!(n >> count) || count < 0) throw fault(number, "'" + rest + "' is not a parameter count");
    } else if (key == "status") {
      w.status = rest;
    } else if (key == "iteration") {
      std::istringstream n(rest);
      n >> w.iteration;
    }  // other keys (layout) are for people
  }
  if (!magic) throw InputError("weights file " + path + ": it is empty");
  if (count < 0) throw InputError("weights file " + path + ": no 'parameters' line before 'values'");
  // No reserve(count): the count comes from the file, and one of 4e15 would ask for 32 PB
  // before a value is read; the values read are checked against it below.
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    double v = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec != std::errc() || end != line.data() + line.size()) throw fault(number, "'" + printable(line) + "' is not a number");
    w.values.push_back(v);
  }
  if (static_cast<long long>(w.values.size()) != count)
    throw InputError("weights file " + path + ": " + std::to_string(w.values.size()) + " values, the header says " +
                     std::to_string(count));
  return w;
}

template std::string weights_text<float>(const Mlp<float>&, const std::string&, int);
template std::string weights_text<double>(const Mlp<double>&, const std::string&, int);

}  // namespace wulf
