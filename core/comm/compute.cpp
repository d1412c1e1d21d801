#include "comm/compute.hpp"
#include "util/files.hpp"
#include "util/errors.hpp"
#include "util/names.hpp"

#include "data/dataset.hpp"
#include "util/paths.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <sstream>

namespace wulf {

namespace {

constexpr Named<Phase> phase_names[] = {{Phase::forward, "forward"}, {Phase::backward, "backward"},
                                        {Phase::update, "update"},   {Phase::test, "test"},
                                        {Phase::other, "other"}};
// The modes --compute takes (which engine takes which: job/train_job.cpp).
constexpr Named<ComputeMode> compute_mode_names[] = {{ComputeMode::flops, "flops"},
                                                     {ComputeMode::calibrated, "calibrated"},
                                                     {ComputeMode::measured, "measured"},
                                                     {ComputeMode::wall, "wall"}};

}  // namespace

std::string_view to_string(Phase p) { return name_of(p, phase_names); }

std::string_view to_string(ComputeMode m) { return name_of(m, compute_mode_names); }

ComputeMode parse_compute_mode(std::string_view name) {
  return parse_named(name, compute_mode_names, "compute", "mode");
}

Profile read_profile(const std::string& name) {
  std::string path = name;
  const std::string named = platforms_dir() + "/profiles/" + name + ".profile";
  if (!std::filesystem::exists(path) && name.find('/') == std::string::npos) path = named;
  if (!std::filesystem::exists(path)) throw InputError("--profile " + name + ": no such file, nor " + named);
  check_input_file(path, "--profile", text_file_limit);
  std::ifstream in(path);
  if (!in) throw InputError("--profile " + path + ": cannot open it");
  std::map<std::string, double> values;
  std::map<std::string, std::pair<int, std::string>> given;  // each value's line and text
  std::map<std::string, std::string> words;  // problem, precision
  std::map<std::string, int> lines;          // every key's line
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw InputError("--profile " + path + ":" + std::to_string(number) + ": expected 'key = value'");
    const std::string key = trim(line.substr(0, eq)), text = trim(line.substr(eq + 1));
    if (const auto [at, first] = lines.emplace(key, number); !first)
      throw InputError("--profile " + path + ":" + std::to_string(number) + ": '" + printable(key) +
                       "' again (first on line " + std::to_string(at->second) + "): each key is given once");
    if (key == "problem" || key == "precision") {
      if (text.empty()) throw InputError("--profile " + path + ":" + std::to_string(number) + ": " + key + " is empty");
      if (key == "precision" && text != "float" && text != "double")
        throw InputError("--profile " + path + ":" + std::to_string(number) + ": precision '" + printable(text) +
                         "' is neither float nor double");
      words[key] = text;
      continue;
    }
    const std::optional<double> v = parse_number(text);
    // Ts alone may be negative: a test pattern then costs less than a training forward pass
    // (wulf tests the whole set in one batch); Tf + Ts is checked below.
    if (!v || (*v < 0 && key != "Ts_ms"))
      throw InputError("--profile " + path + ":" + std::to_string(number) + ": '" + printable(text) +
                       "' is not a non-negative number");
    values[key] = *v;
    given[key] = {number, text};
  }
  // A profile of zeros, or of an hour per pattern, is a file gone wrong, not a machine: the
  // model would divide by zero and a simulation would wait forever. Tf, Tb and Tu, the times
  // every pattern and update take, must be positive; no time may pass an hour, no size 1e12.
  auto at = [&](const std::string& key) {
    return "--profile " + path + ":" + std::to_string(given[key].first) + ": " + key;
  };
  for (const auto& [key, v] : values) {
    const bool size = key == "n" || key == "m" || key == "w";
    const double unit = key.size() > 3 && key.substr(key.size() - 3) == "_us" ? 1e-6 : 1e-3;
    if (!std::isfinite(v) || (size ? v > 1e12 : v * unit > 3600))
      throw InputError(at(key) + " = " + printable(given[key].second) +
                       " is out of range: " + (size ? "a size is at most 1e12" : "a time is at most an hour (3600 s)"));
    if ((key == "Tf_ms" || key == "Tb_ms" || key == "Tu_ms") && !(v > 0))
      throw InputError(at(key) + " is 0: every pattern's forward and backward pass and every update take time");
  }
  Profile p;
  p.name = path;
  p.problem = words["problem"];
  p.precision = words["precision"];
  const std::pair<const char*, double*> keys[] = {{"Tf_ms", &p.Tf}, {"Tb_ms", &p.Tb}, {"Tu_ms", &p.Tu},
                                                   {"Tm_ms", &p.Tm}, {"Ts_ms", &p.Ts}, {"To_ms", &p.To}};
  for (const auto& [key, field] : keys) {
    const auto it = values.find(key);
    if (it == values.end()) throw InputError("--profile " + path + ": no value for " + key);
    *field = it->second * 1e-3;
    values.erase(it);
  }
  p.has_ti_tw = values.count("Ti_us") && values.count("Tw_us");
  p.has_ta = values.count("Ta_ms") > 0;
  const std::pair<const char*, std::pair<double*, double>> optional[] = {
      {"Ti_us", {&p.Ti, 1e-6}}, {"Tw_us", {&p.Tw, 1e-6}}, {"Ta_ms", {&p.Ta, 1e-3}},
      {"n", {&p.n, 1.0}},       {"m", {&p.m, 1.0}},       {"w", {&p.w, 1.0}}};
  for (const auto& [key, target] : optional)
    if (const auto it = values.find(key); it != values.end()) {
      *target.first = it->second * target.second;
      values.erase(it);
    }
  if (!values.empty()) throw InputError("--profile " + path + ": unknown key '" + printable(values.begin()->first) + "'");
  if (!(p.Tf + p.Ts > 0))
    throw InputError(at("Ts_ms") + ": Tf_ms + Ts_ms is not positive (a test pattern would take no time)");
  return p;
}

namespace {

class WallCompute final : public Compute {
 public:
  WallCompute() : Compute({}) {}
  void begin() override {}
  void charge(Phase, std::size_t, double, double) override {}
  void charge_iteration() override {}
};

}  // namespace

std::unique_ptr<Compute> make_wall_compute() { return std::make_unique<WallCompute>(); }

std::string what_if_scale_fault(double scale) {
  if (std::isfinite(scale) && scale >= least_what_if_scale && scale <= most_what_if_scale) return "";
  return fmt::format("{:g} is not a number from {:g} to {:g}", scale, least_what_if_scale, most_what_if_scale);
}

double charged_flops(const ComputeConfig& config, double flops) { return flops / config.speed_scale; }

double charged_seconds(const ComputeConfig& config, Phase phase, std::size_t patterns, double flops,
                       double host_speed, double share) {
  if (config.mode == ComputeMode::flops) return flops > 0 ? charged_flops(config, flops) / host_speed : 0;
  if (config.mode != ComputeMode::calibrated) return 0;
  const Profile& p = config.profile;
  const double n = static_cast<double>(patterns);
  double seconds = 0;
  switch (phase) {
    case Phase::forward: seconds = p.Tf * n; break;
    case Phase::backward: seconds = p.Tb * n; break;
    case Phase::update: seconds = p.Tu + (config.ranks == 1 ? p.Tm : 0); break;  // per update
    case Phase::test: seconds = p.Ts * n + p.Tf * n; break;  // a test pattern is a forward pass + its error
    case Phase::other: break;
  }
  return seconds > 0 ? seconds * share / config.speed_scale : 0;
}

std::string_view ComputeLedger::name(std::size_t line) {
  if (line < iteration) return to_string(static_cast<Phase>(line));
  return line == iteration ? "iteration_overhead" : "collective_overhead";
}

std::array<double, ComputeLedger::values> ComputeLedger::flat() const {
  std::array<double, values> v{};
  for (std::size_t i = 0; i < size; ++i) {
    const BudgetLine& l = lines[i];
    const double row[] = {static_cast<double>(l.kernels), l.real_s, l.charged_s, static_cast<double>(l.overruns),
                          l.worst_ratio};
    std::copy(std::begin(row), std::end(row), v.begin() + static_cast<std::ptrdiff_t>(5 * i));
  }
  return v;
}

ComputeLedger ComputeLedger::from_flat(std::span<const double> v) {
  if (v.size() != values) throw std::length_error("ComputeLedger::from_flat: " + std::to_string(v.size()) + " values");
  ComputeLedger ledger;
  for (std::size_t i = 0; i < size; ++i) {
    const double* row = v.data() + 5 * i;
    ledger.lines[i] = {static_cast<long long>(row[0]), row[1], row[2], static_cast<long long>(row[3]), row[4]};
  }
  return ledger;
}

}  // namespace wulf
