#include "nn/framework_costs.hpp"

#include "util/errors.hpp"
#include "util/text.hpp"

#include <cmath>
#include <optional>
#include <utility>

namespace wulf {
namespace {

struct Field {
  const char* name;
  double FrameworkCosts::*value;
  const char* unit;
};
constexpr Field fields[] = {
    {"copy", &FrameworkCosts::copy_Bps, "bytes/s"},        {"copy_out", &FrameworkCosts::copy_out_Bps, "bytes/s"},
    {"scale", &FrameworkCosts::scale_Bps, "bytes/s"},      {"tensor", &FrameworkCosts::tensor_s, "s"},
    {"bucket", &FrameworkCosts::bucket_s, "s"},            {"iteration", &FrameworkCosts::iteration_s, "s"},
    {"comm_cpu", &FrameworkCosts::comm_cpu_s_per_B, "s/B"}};

std::string names() {
  std::string s;
  for (const Field& f : fields) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

}  // namespace

Json FrameworkCosts::to_json() const {
  Json j = Json::object();
  j["copy_Bps"] = copy_Bps;
  j["copy_out_Bps"] = copy_out_Bps;
  j["scale_Bps"] = scale_Bps;
  j["tensor_s"] = tensor_s;
  j["bucket_s"] = bucket_s;
  j["iteration_s"] = iteration_s;
  j["comm_cpu_s_per_B"] = comm_cpu_s_per_B;
  j["given"] = text;
  return j;
}

FrameworkCosts parse_framework_costs(std::string_view text, const std::string& what) {
  FrameworkCosts c;
  c.text = std::string(text);
  bool seen[std::size(fields)] = {};
  for (const std::string& item : split_list(text)) {
    const std::size_t eq = item.find('=');
    const std::string name = trim(item.substr(0, eq));
    std::size_t k = 0;
    while (k < std::size(fields) && name != fields[k].name) ++k;
    if (eq == std::string::npos || k == std::size(fields))
      throw InputError(what + " \"" + printable(c.text) + "\": \"" + printable(item) + "\" is not NAME=VALUE with a NAME of " +
                       names());
    const std::optional<double> v = parse_number(trim(item.substr(eq + 1)));
    if (!v || !std::isfinite(*v) || *v < 0)
      throw InputError(what + ": " + name + " \"" + printable(trim(item.substr(eq + 1))) + "\" is not a number of " +
                       fields[k].unit + " from 0");
    if (std::exchange(seen[k], true)) throw InputError(what + ": " + name + " is given twice");
    c.*fields[k].value = *v;
  }
  return c;
}

}  // namespace wulf
