// `wulf model`: seed 000's predicted speedup and efficiency tables from a calibration
// profile (model.hpp), for lists of p, b and, for weight averaging, a.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "predict/model.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>

#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace po = boost::program_options;

namespace wulf {
namespace {

std::vector<double> parse_numbers(const std::string& text, const std::string& option, double least) {
  std::vector<double> values;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    const auto v = parse_number(item);
    if (!v || *v < least || *v != std::floor(*v))
      throw InputError("--" + option + ": '" + trim(item) + "' is not a whole number >= " +
                       std::to_string(static_cast<long long>(least)));
    values.push_back(*v);
  }
  if (values.empty()) throw InputError("--" + option + ": empty list");
  return values;
}

}  // namespace

int model_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  po::options_description options("wulf model --profile NAME [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("profile", po::value<std::string>(), "calibration profile: a file, or <cluster>-<problem> (platforms/profiles)")
      ("np", po::value<std::string>()->default_value("2,4,8"), "processors, a list")
      ("block", po::value<std::string>()->default_value("16,32,64,128"), "block sizes b, a list")
      ("average-interval", po::value<std::string>(), "weight averaging intervals a, a list (eq. 9; needs Ta_ms)")
      ("n", po::value<double>(), "training patterns (default: the profile's)")
      ("m", po::value<double>(), "test patterns (default: the profile's)")
      ("w", po::value<double>(), "weights (default: the profile's)")
      ("out", po::value<std::string>(), "write the tables (JSON, key grid) to FILE");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  if (!vm.count("profile")) throw InputError("wulf model: --profile is required (e.g. --profile batcave-function)");
  if (vm.count("out")) check_writable(vm["out"].as<std::string>(), "--out");
  const Profile profile = read_profile(vm["profile"].as<std::string>());
  auto given = [&](const char* key) { return vm.count(key) ? vm[key].as<double>() : 0.0; };
  if (given("n") < 0 || given("m") < 0 || given("w") < 0) throw InputError("--n, --m, --w must not be negative");
  const ModelConstants c = model_constants(profile, given("n"), given("m"), given("w"));
  const std::vector<double> ps = parse_numbers(vm["np"].as<std::string>(), "np", 1);
  const std::vector<double> bs = parse_numbers(vm["block"].as<std::string>(), "block", 1);
  std::vector<double> as;
  if (vm.count("average-interval")) {
    as = parse_numbers(vm["average-interval"].as<std::string>(), "average-interval", 1);
    if (!profile.has_ta) throw InputError("--profile " + profile.name + ": weight averaging (eq. 9) needs Ta_ms");
  }
  // The model splits every block over the p processors: b < p leaves processors idle in
  // a way eq. (5) does not describe.
  for (double p : ps)
    for (double b : bs)
      if (b < p)
        throw InputError("--block " + std::to_string(static_cast<long long>(b)) + " < --np " +
                         std::to_string(static_cast<long long>(p)) + ": the model needs b >= p (every processor " +
                         "takes part in every block)");
  if (bs.back() > c.n) throw InputError("--block: larger than the training set (n = " + std::to_string(c.n) + ")");

  out << "seed 000's model, profile " << profile.name << ": n " << c.n << ", m " << c.m << ", w " << c.w << "\n"
      << std::setprecision(6) << "  Tf " << c.Tf * 1e3 << " ms, Tb " << c.Tb * 1e3 << " ms, Tu " << c.Tu * 1e3
      << " ms, Tm " << c.Tm * 1e3 << " ms, Ts " << c.Ts * 1e3 << " ms, To " << c.To * 1e3 << " ms; Ti "
      << c.Ti * 1e6 << " us, Tw " << c.Tw * 1e6 << " us" << (profile.has_ta ? ", Ta " : "")
      << (profile.has_ta ? std::to_string(c.Ta * 1e3) + " ms" : "") << "\n";
  bool fractional = false;
  for (double b : bs) fractional |= std::fmod(c.n, b) != 0;
  if (fractional)
    out << "  (b does not divide n for some b: n/b counts the last, shorter block as a fraction of an update)\n";

  Json grid = Json::array();
  auto table = [&](const char* title, auto value) {
    out << title << "\n" << std::setw(8) << "b \\ p";
    for (double p : ps) out << std::setw(9) << static_cast<long long>(p);
    out << "\n";
    for (double b : bs) {
      out << std::setw(8) << static_cast<long long>(b);
      for (double p : ps) out << std::setw(9) << std::fixed << std::setprecision(2) << value(static_cast<int>(p), b);
      out << std::defaultfloat << "\n";
    }
  };
  table("speedup, eq. (7)", [&](int p, double b) { return model_speedup(c, p, b); });
  table("efficiency, eq. (8)", [&](int p, double b) { return model_efficiency(c, p, b); });
  for (double b : bs)
    for (double p : ps) {
      const int pi = static_cast<int>(p);
      Json e = Json::object();
      e["p"] = p;
      e["b"] = b;
      e["time_s"] = model_parallel(c, pi, b);
      e["sequential_s"] = model_sequential(c, b);
      e["speedup"] = model_speedup(c, pi, b);
      e["efficiency"] = model_efficiency(c, pi, b);
      grid.push_back(std::move(e));
    }
  for (double a : as) {
    std::ostringstream title;
    title << "weight averaging every a = " << a << " patterns: speedup Ts(b) / eq. (9)";
    table(title.str().c_str(), [&](int p, double b) { return model_sequential(c, b) / model_averaging(c, p, b, a); });
    for (double b : bs)
      for (double p : ps) {
        const int pi = static_cast<int>(p);
        const double t = model_averaging(c, pi, b, a);
        Json e = Json::object();
        e["p"] = p;
        e["b"] = b;
        e["a"] = a;
        e["time_s"] = t;
        e["sequential_s"] = model_sequential(c, b);
        e["speedup"] = model_sequential(c, b) / t;
        e["efficiency"] = model_sequential(c, b) / t / p;
        grid.push_back(std::move(e));
      }
  }
  if (vm.count("out")) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"]["command"] = "model";
    record["config"]["profile"] = profile.name;
    record["config"]["versions"] = versions_json();
    Json& k = record["constants"];
    k["Tf_s"] = c.Tf, k["Tb_s"] = c.Tb, k["Tu_s"] = c.Tu, k["Tm_s"] = c.Tm, k["Ts_s"] = c.Ts, k["To_s"] = c.To;
    k["Ti_s"] = c.Ti, k["Tw_s"] = c.Tw, k["Ta_s"] = c.Ta, k["n"] = c.n, k["m"] = c.m, k["w"] = c.w;
    record["grid"] = std::move(grid);
    write_file_atomically(vm["out"].as<std::string>(), record_text(record) + "\n");
    out << "record: " << vm["out"].as<std::string>() << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
