#include "nn/layer_table.hpp"

#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/names.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>

namespace wulf {

namespace {

constexpr Named<LayerKind> kind_names[] = {{LayerKind::conv, "conv"},           {LayerKind::linear, "linear"},
                                           {LayerKind::norm, "norm"},           {LayerKind::embedding, "embedding"},
                                           {LayerKind::attention, "attention"}, {LayerKind::pool, "pool"},
                                           {LayerKind::other, "other"}};

constexpr std::uintmax_t table_file_limit = 64 << 20;

// "conv, linear, norm, embedding, attention, pool, other": the kinds, as messages list them.
std::string kind_list() {
  std::string list;
  for (const auto& n : kind_names) list += (list.empty() ? "" : ", ") + std::string(n.name);
  return list;
}

std::vector<std::string> words_of(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// One line's reader: every fault names the file and the line.
struct LineReader {
  const std::string& path;
  std::size_t line = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("layer file " + path + ", line " + std::to_string(line) + ": " + what);
  }
  double number(const std::string& word, const std::string& what, double most) const {
    const std::optional<double> v = parse_number(word);
    if (!v) fail(what + " \"" + printable(word) + "\" is not a number");
    if (*v < 0) fail(what + " " + number_text(*v) + " is negative");
    if (*v > most) fail(what + " " + number_text(*v) + " is more than " + number_text(most));
    return *v;
  }
  std::size_t whole(const std::string& word, const std::string& what, double least, double most) const {
    const double v = number(word, what, most);
    if (v != std::floor(v)) fail(what + " " + number_text(v) + " is not a whole number");
    if (v < least) fail(what + " " + number_text(v) + " must be at least " + number_text(least));
    return static_cast<std::size_t>(v);
  }
  LayerTensor tensor(const std::string& word) const {
    LayerTensor t{.shape = word, .values = 1};
    const std::vector<std::string> sizes = split_list(word, 'x');
    double values = 1;
    for (const std::string& s : sizes) {
      if (s.empty()) fail("tensor \"" + printable(word) + "\": an empty size (sizes are joined by x: 64x3x7x7)");
      values *= static_cast<double>(whole(s, "tensor " + printable(word) + "'s size", 1, most_table_parameters));
      if (values > most_table_parameters)
        fail("tensor " + printable(word) + " has more than " + number_text(most_table_parameters) + " values");
    }
    t.values = static_cast<std::size_t>(values);
    return t;
  }
};

constexpr double most_flops = 1e18, most_seconds = 1e6;

}  // namespace

std::string_view to_string(LayerKind k) { return name_of(k, kind_names); }

std::optional<LayerKind> parse_layer_kind(std::string_view name) {
  for (const auto& n : kind_names)
    if (n.name == name) return n.value;
  return std::nullopt;
}

KindEfficiency parse_kind_efficiency(std::string_view text, const std::string& what) {
  std::array<std::optional<double>, layer_kinds> given{};
  for (const std::string& item : split_list(text)) {
    const std::size_t eq = item.find('=');
    const std::string kind_name = trim(item.substr(0, eq));
    const std::optional<LayerKind> kind = parse_layer_kind(kind_name);
    if (eq == std::string::npos || !kind)
      throw InputError(what + " \"" + printable(std::string(text)) + "\": \"" + printable(item) +
                       "\" is not KIND=FRACTION with a KIND of " + kind_list());
    const std::optional<double> v = parse_number(item.substr(eq + 1));
    if (!v || !(*v > 0) || *v > 1)
      throw InputError(what + ": " + kind_name + "'s efficiency \"" + printable(item.substr(eq + 1)) +
                       "\" is not a fraction of the peak in (0, 1]");
    auto& slot = given[static_cast<std::size_t>(*kind)];
    if (slot) throw InputError(what + ": " + kind_name + " is given twice");
    slot = *v;
  }
  const double other = given[static_cast<std::size_t>(LayerKind::other)].value_or(1.0);
  KindEfficiency e{};
  for (std::size_t k = 0; k < layer_kinds; ++k) e[k] = given[k].value_or(other);
  return e;
}

std::size_t TableLayer::values() const {
  return std::accumulate(tensors.begin(), tensors.end(), std::size_t{0},
                         [](std::size_t s, const LayerTensor& t) { return s + t.values; });
}

const double* LayerTable::step_on(std::string_view device) const {
  for (const auto& [on, seconds] : steps)
    if (on == device) return &seconds;
  return nullptr;
}

const LayerTime* TableLayer::time_on(std::string_view device) const {
  for (const LayerTime& t : times)
    if (t.device == device) return &t;
  return nullptr;
}

std::size_t LayerTable::parameter_count() const {
  return std::accumulate(layers.begin(), layers.end(), std::size_t{0},
                         [](std::size_t s, const TableLayer& l) { return s + l.values(); });
}

std::size_t LayerTable::tensor_count() const {
  return std::accumulate(layers.begin(), layers.end(), std::size_t{0},
                         [](std::size_t s, const TableLayer& l) { return s + l.tensors.size(); });
}

double LayerTable::forward_flops() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const TableLayer& l) { return s + l.forward_flops; });
}

double LayerTable::backward_flops() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double s, const TableLayer& l) { return s + l.backward_flops; });
}

namespace {

// A `layer NAME KIND FLOPS [backward=FLOPS] [TENSOR ...]` line's layer (its name not among
// names, which it joins).
TableLayer layer_line(LineReader& r, const std::vector<std::string>& w, std::set<std::string>& names) {
  if (w.size() < 4) r.fail("layer takes NAME KIND FLOPS [backward=FLOPS] [TENSOR ...]");
  TableLayer l;
  l.name = w[1];
  if (!names.insert(l.name).second) r.fail("layer " + printable(l.name) + " is given twice");
  const std::optional<LayerKind> kind = parse_layer_kind(w[2]);
  if (!kind) r.fail("layer " + printable(l.name) + ": kind \"" + printable(w[2]) + "\" is not one of " + kind_list());
  l.kind = *kind;
  l.forward_flops = r.number(w[3], "layer " + printable(l.name) + "'s forward flops", most_flops);
  l.backward_flops = 2 * l.forward_flops;
  std::size_t i = 4;
  if (i < w.size() && w[i].starts_with("backward=")) {
    l.backward_flops = r.number(w[i].substr(9), "layer " + printable(l.name) + "'s backward flops", most_flops);
    ++i;
  }
  if (i < w.size() && w[i].starts_with("activations=")) {
    l.activations = r.number(w[i].substr(12), "layer " + printable(l.name) + "'s activations", most_table_parameters);
    ++i;
  }
  for (; i < w.size(); ++i) {
    if (w[i].find('=') != std::string::npos)
      r.fail("layer " + printable(l.name) + ": \"" + printable(w[i]) +
             "\" (backward= and then activations= come right after the flops; the rest are tensors)");
    l.tensors.push_back(r.tensor(w[i]));
  }
  return l;
}

// A `time DEVICE LAYER FORWARD_S BACKWARD_S` line, onto its layer (one above it).
void time_line(LineReader& r, const std::vector<std::string>& w, LayerTable& table) {
  auto it = std::ranges::find(table.layers, w[2], &TableLayer::name);
  if (it == table.layers.end())
    r.fail("time: no layer " + printable(w[2]) + " above this line (a time follows its layer)");
  if (it->time_on(w[1])) r.fail("time: layer " + printable(w[2]) + " on " + printable(w[1]) + " is given twice");
  it->times.push_back({.device = w[1],
                       .forward_s = r.number(w[3], "time's forward seconds", most_seconds),
                       .backward_s = r.number(w[4], "time's backward seconds", most_seconds)});
  // Flops in no time would make every rate of the run infinite (3.4e+11 GFlop/s was printed).
  if ((it->times.back().forward_s == 0 && it->forward_flops > 0) ||
      (it->times.back().backward_s == 0 && it->backward_flops > 0))
    r.fail("time: layer " + printable(w[2]) + " has flops, and a layer with flops takes more than 0 s");
}

}  // namespace

LayerTable parse_layer_table(std::string_view text, const std::string& path) {
  LayerTable table;
  table.path = path;
  LineReader r{path};
  bool header = false;
  std::set<std::string> keys, names, unit_names;
  double parameters = 0;  // of the layers so far
  std::istringstream in{std::string(text)};
  for (std::string raw; std::getline(in, raw);) {
    ++r.line;
    const std::vector<std::string> w = words_of(raw.substr(0, raw.find('#')));
    if (w.empty()) continue;
    const std::string& key = w[0];
    if (!header) {
      if (key != "wulf-layers" || w.size() != 2)
        r.fail("expected the format line \"wulf-layers 1\" first, not \"" + printable(trim(raw)) + "\"");
      if (w[1] != "1") r.fail("format version " + printable(w[1]) + ": this wulf reads version 1");
      header = true;
      continue;
    }
    auto args = [&](std::size_t n, const std::string& form) {
      if (w.size() != n + 1) r.fail(key + " takes " + form + " (" + std::to_string(w.size() - 1) + " words given)");
    };
    auto once = [&] {
      if (!keys.insert(key).second) r.fail(key + " is given twice");
    };
    if (key == "name") {
      once();
      if (w.size() < 2) r.fail("name takes the net's name");
      for (std::size_t i = 1; i < w.size(); ++i) table.name += (i > 1 ? " " : "") + w[i];
    } else if (key == "samples") {
      once(), args(2, "the training and test samples of an epoch");
      table.train_samples = r.whole(w[1], "training samples", 1, 1e12);
      table.test_samples = r.whole(w[2], "test samples", 0, 1e12);
      table.samples_given = true;
    } else if (key == "inputs" || key == "outputs") {
      once(), args(1, "one whole number");
      (key == "inputs" ? table.inputs : table.outputs) = static_cast<int>(r.whole(w[1], key, 1, 2147483647.0));
    } else if (key == "layer") {
      parameters += static_cast<double>(table.layers.emplace_back(layer_line(r, w, names)).values());
      if (table.layers.size() > most_table_layers)
        r.fail("more than " + std::to_string(most_table_layers) + " layers");
      if (parameters > most_table_parameters)
        r.fail("the net has more than " + number_text(most_table_parameters) + " parameters");
    } else if (key == "unit") {
      args(1, "the unit's name");
      if (!unit_names.insert(w[1]).second) r.fail("unit " + printable(w[1]) + " is given twice");
      table.units.push_back({.name = w[1], .first = table.layers.size()});
    } else if (key == "time") {
      args(4, "DEVICE LAYER FORWARD_S BACKWARD_S");
      time_line(r, w, table);
    } else if (key == "step") {
      args(2, "DEVICE SECONDS");
      if (table.step_on(w[1])) r.fail("step on " + printable(w[1]) + " is given twice");
      table.steps.emplace_back(w[1], r.number(w[2], "step's seconds", most_seconds));
    } else if (key == "wulf-layers") {
      r.fail("a second format line: \"wulf-layers\" comes once, first");
    } else {
      r.fail("\"" + printable(key) + "\" is not one of name, samples, inputs, outputs, layer, unit, time, step");
    }
  }
  if (!header) throw InputError("layer file " + path + ": empty (expected \"wulf-layers 1\" first)");
  if (table.layers.empty()) throw InputError("layer file " + path + ": no layer");
  if (parameters == 0) throw InputError("layer file " + path + ": no layer has a parameter tensor");
  if (table.name.empty()) table.name = path;
  for (const TableUnit& u : table.units)
    if (u.first == table.layers.size() ||
        (&u != &table.units.back() && (&u + 1)->first == u.first))
      throw InputError("layer file " + path + ": unit " + u.name + " holds no layer");
  return table;
}

LayerTable read_layer_table(const std::string& path) {
  const std::string text = read_text_file(path, "layer file", table_file_limit);
  LayerTable table = parse_layer_table(text, path);
  table.digest = text_digest(text);
  return table;
}

}  // namespace wulf
