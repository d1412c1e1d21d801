// `wulf model`: seed 000's predicted speedup and efficiency tables from a calibration
// profile (model.hpp), for lists of p, b and, for weight averaging, a; with --overlap,
// --strategy overlap's pipeline of bucket allreduces on a platform (cli/model_overlap.cpp).
#include "cli/cli.hpp"
#include "cli/model_overlap.hpp"
#include "cli/options.hpp"
#include "cli/train_options.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "predict/model.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <ostream>

namespace po = boost::program_options;

namespace wulf {
namespace {

// wulf model's options, checked: the constants and the lists of p, b and a.
struct ModelJob {
  Profile profile;
  ModelConstants c;
  std::vector<double> ps, bs, as;
  std::string out;  // the record to write (empty: none)
};

// --n, --m and --w: counts of patterns and weights (0: the profile's).
constexpr Range model_counts{.lo = 0, .hi = 1e12};

// --np: the processors the model predicts for, none started.
constexpr Range model_processors = kRanksRange;

std::vector<double> whole_numbers(const std::string& text, const std::string& option, Range range) {
  const std::vector<long long> values = whole_list(text, option, range);
  return std::vector<double>(values.begin(), values.end());
}

ModelJob read_model_job(const po::variables_map& vm) {
  if (!vm.count("profile")) throw InputError("wulf model: --profile is required (e.g. --profile batcave-function)");
  ModelJob job;
  if (vm.count("out")) job.out = vm["out"].as<std::string>();
  job.profile = read_profile(vm["profile"].as<std::string>());
  if (!job.out.empty()) check_output(job.out, "--out", {{"--profile", job.profile.name}});
  auto given = [&](const char* key) { return vm.count(key) ? vm[key].as<double>() : 0.0; };
  job.c = model_constants(job.profile, given("n"), given("m"), given("w"));
  job.ps = whole_numbers(vm["np"].as<std::string>(), "np", model_processors);
  job.bs = whole_numbers(vm["block"].as<std::string>(), "block", kBlockRange);
  if (vm.count("average-interval")) {
    job.as = whole_numbers(vm["average-interval"].as<std::string>(), "average-interval", kBlockRange);
    if (!job.profile.has_ta)
      throw InputError("--profile " + job.profile.name + ": weight averaging (eq. 9) needs Ta_ms");
  }
  // The model splits every block over the p processors: b < p leaves processors idle in
  // a way eq. (5) does not describe.
  for (double p : job.ps)
    for (double b : job.bs)
      if (b < p)
        throw InputError("--block " + std::to_string(static_cast<long long>(b)) + " < --np " +
                         std::to_string(static_cast<long long>(p)) + ": the model needs b >= p (every processor " +
                         "takes part in every block)");
  if (job.bs.back() > job.c.n)
    throw InputError("--block: larger than the training set (n = " + std::to_string(job.c.n) + ")");
  return job;
}

void print_constants(std::ostream& out, const ModelJob& job) {
  const ModelConstants& c = job.c;
  fmt::print(out, "seed 000's model, profile {}: n {:g}, m {:g}, w {:g}\n", job.profile.name, c.n, c.m, c.w);
  fmt::print(out,
             "  Tf {:g} ms, Tb {:g} ms, Tu {:g} ms, Tm {:g} ms, Ts {:g} ms, To {:g} ms; Ti {:g} us, Tw {:g} us{}\n",
             c.Tf * 1e3, c.Tb * 1e3, c.Tu * 1e3, c.Tm * 1e3, c.Ts * 1e3, c.To * 1e3, c.Ti * 1e6, c.Tw * 1e6,
             job.profile.has_ta ? fmt::format(", Ta {:f} ms", c.Ta * 1e3) : "");
  bool fractional = false;
  for (double b : job.bs) fractional |= std::fmod(c.n, b) != 0;
  if (fractional)
    out << "  (b does not divide n for some b: n/b counts the last, shorter block as a fraction of an update)\n";
}

// A table of value(p, b): a row per b, a column per p.
template <class Value>
void print_table(std::ostream& out, const std::string& title, const ModelJob& job, Value value) {
  fmt::print(out, "{}\n{:>8}", title, "b \\ p");
  for (double p : job.ps) fmt::print(out, "{:>9}", static_cast<long long>(p));
  out << "\n";
  for (double b : job.bs) {
    fmt::print(out, "{:>8}", static_cast<long long>(b));
    for (double p : job.ps) fmt::print(out, "{:>9.2f}", value(static_cast<int>(p), b));
    out << "\n";
  }
}

// The tables: speedup, efficiency, and the speedup under weight averaging for each a.
void print_tables(std::ostream& out, const ModelJob& job) {
  const ModelConstants& c = job.c;
  print_table(out, "speedup, eq. (7)", job, [&](int p, double b) { return model_speedup(c, p, b); });
  print_table(out, "efficiency, eq. (8)", job, [&](int p, double b) { return model_efficiency(c, p, b); });
  for (double a : job.as)
    print_table(out, fmt::format("weight averaging every a = {:g} patterns: speedup Ts(b) / eq. (9)", a), job,
                [&](int p, double b) { return model_sequential(c, b) / model_averaging(c, p, b, a); });
}

// The record's grid: the tables' numbers, with the times they come from.
Json model_grid(const ModelJob& job) {
  const ModelConstants& c = job.c;
  Json grid = Json::array();
  for (double b : job.bs)
    for (double p : job.ps) {
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
  for (double a : job.as)
    for (double b : job.bs)
      for (double p : job.ps) {
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
  return grid;
}

}  // namespace

po::options_description model_options() {
  po::options_description options("wulf model --profile NAME [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("profile", po::value<std::string>(), "calibration profile: a file, or <cluster>-<problem> (platforms/profiles)")
      ("np", po::value<std::string>()->default_value("2,4,8"),
       fmt::format("processors, a list, each in {}", range_text(model_processors)).c_str())
      ("block", po::value<std::string>()->default_value("16,32,64,128"),
       fmt::format("block sizes b, a list, each in {}", range_text(kBlockRange)).c_str())
      ("average-interval", po::value<std::string>(),
       fmt::format("weight averaging intervals a, a list, each in {} (eq. 9; needs Ta_ms)", range_text(kBlockRange))
           .c_str())
      ("n", number_in("n", model_counts), "training patterns (default: the profile's)")
      ("m", number_in("m", model_counts), "test patterns (default: the profile's)")
      ("w", number_in("w", model_counts), "weights (default: the profile's)")
      ("out", po::value<std::string>(), "write the tables (JSON, key grid) to FILE");
  options.add(model_overlap_options());
  return options;
}

int model_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
  const po::options_description options = model_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  if (vm["overlap"].as<bool>() || vm.count("strategy")) return overlap_model_command(vm, out);
  check_overlap_scope(vm);
  const ModelJob job = read_model_job(vm);
  const ModelConstants& c = job.c;
  print_constants(out, job);
  print_tables(out, job);
  if (!job.out.empty()) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"]["command"] = "model";
    record["config"]["profile"] = job.profile.name;
    record["config"]["versions"] = versions_json();
    Json& k = record["constants"];
    k["Tf_s"] = c.Tf, k["Tb_s"] = c.Tb, k["Tu_s"] = c.Tu, k["Tm_s"] = c.Tm, k["Ts_s"] = c.Ts, k["To_s"] = c.To;
    k["Ti_s"] = c.Ti, k["Tw_s"] = c.Tw, k["Ta_s"] = c.Ta, k["n"] = c.n, k["m"] = c.m, k["w"] = c.w;
    record["grid"] = model_grid(job);
    write_file_atomically(job.out, record_text(record) + "\n");
    out << "record: " << job.out << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
