// `wulf calibrate`: seed 000's constants measured on this machine, as the paper measured
// them on its clusters (section V-A): a few instrumented iterations of the real training
// code on one process give Tf, Tb, Tu, Tm, Ts and To; a micro-benchmark of the
// recursive-doubling allreduce under mpirun gives Ti and Tw by least squares on
// w ceil(log2 p). The result is a profile for `wulf model` and `--compute calibrated`, and a
// SimGrid platform describing this machine.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "engine/launch.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace po = boost::program_options;

namespace wulf {
namespace {

std::vector<std::size_t> whole_numbers(const std::string& text, const std::string& option) {
  const std::vector<long long> values = whole_list(text, option);
  return std::vector<std::size_t>(values.begin(), values.end());
}

struct Fit {
  double slope = 0, intercept = 0;
  std::vector<double> residuals;
};

// Least squares of t = slope x + intercept.
Fit least_squares(const std::vector<double>& x, const std::vector<double>& t) {
  const double n = static_cast<double>(x.size());
  double sx = 0, st = 0, sxx = 0, sxt = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sx += x[i], st += t[i], sxx += x[i] * x[i], sxt += x[i] * t[i];
  const double det = n * sxx - sx * sx;
  if (x.size() < 2 || det <= 0) throw InputError("the allreduce fit needs at least two different w ceil(log2 p)");
  Fit f;
  f.slope = (n * sxt - sx * st) / det;
  f.intercept = (st - f.slope * sx) / n;
  for (std::size_t i = 0; i < x.size(); ++i) f.residuals.push_back(t[i] - (f.slope * x[i] + f.intercept));
  return f;
}

}  // namespace

int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("wulf calibrate --problem NAME [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("problem", po::value<std::string>(), "the problem whose phases are timed (wulf train's names)")
      ("block", po::value<long long>()->default_value(16), "block size of the instrumented iterations")
      ("iterations", po::value<long long>()->default_value(20),
       "instrumented iterations (seed 000 used a few of its long ones; ours take milliseconds)")
      ("precision", po::value<std::string>()->default_value("double"), "float|double (Table V's w are doubles)")
      ("bias", po::value<std::string>()->default_value("off"), "bias weights: on|off (seed 000 counts none)")
      ("train-size", po::value<long long>()->default_value(0), "use only the first N training patterns (0: all)")
      ("test-size", po::value<long long>()->default_value(0), "use only the first N test patterns (0: all)")
      ("np", po::value<std::string>()->default_value("2,4"), "ranks of the allreduce benchmark under mpirun")
      ("elements", po::value<std::string>()->default_value("around"),
       "doubles per allreduce, a list; around: w/2, w and 2w of the problem's net (the fit is local)")
      ("repeat", po::value<long long>()->default_value(20), "allreduce calls per point (the mean is used)")
      ("profile-out", po::value<std::string>(), "the profile to write (default: platforms/generated/<machine>-<problem>.profile)")
      ("platform-out", po::value<std::string>(), "the platform to write (default: platforms/generated/<machine>.xml)")
      ("machine", po::value<std::string>()->default_value("this-machine"), "the machine's name in the files it writes");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) return out << options << "\n", exit_ok;
  if (!vm.count("problem")) throw InputError("wulf calibrate: --problem is required");
  const std::string problem = vm["problem"].as<std::string>(), machine = vm["machine"].as<std::string>();
  if (machine.empty() || machine.find_first_of("/ \"<>&") != std::string::npos)
    throw InputError("--machine: '" + machine + "' must be a plain name");
  const std::vector<std::size_t> nps = whole_numbers(vm["np"].as<std::string>(), "np");
  // "around" is resolved once the net's size w is known (w/2, w, 2w); 1, 2, 4 have the same
  // ratios, so the check of distinct points below counts what the real sizes will give.
  const bool around = vm["elements"].as<std::string>() == "around";
  std::vector<std::size_t> elements =
      around ? std::vector<std::size_t>{1, 2, 4} : whole_numbers(vm["elements"].as<std::string>(), "elements");
  const long long iterations = vm["iterations"].as<long long>(), repeat = vm["repeat"].as<long long>();
  if (iterations < 1) throw InputError("--iterations: must be at least 1");
  if (repeat < 1) throw InputError("--repeat: must be at least 1");
  std::size_t distinct_x = 0;
  {
    std::vector<double> xs;
    for (std::size_t p : nps)
      for (std::size_t w : elements) {
        if (p < 2) throw InputError("--np: the allreduce benchmark needs p >= 2");
        const double x = static_cast<double>(w) * std::ceil(std::log2(static_cast<double>(p)));
        if (std::find(xs.begin(), xs.end(), x) == xs.end()) xs.push_back(x);
      }
    distinct_x = xs.size();
  }
  if (distinct_x < 2) throw InputError("--np and --elements give fewer than two points for the allreduce fit");
  const std::string generated = std::string(build::source_dir) + "/platforms/generated";
  std::string safe_problem = problem;
  for (char& c : safe_problem)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  const std::string profile_path =
      vm.count("profile-out") ? vm["profile-out"].as<std::string>() : generated + "/" + machine + "-" + safe_problem + ".profile";
  const std::string platform_path =
      vm.count("platform-out") ? vm["platform-out"].as<std::string>() : generated + "/" + machine + ".xml";
  if (!vm.count("profile-out") || !vm.count("platform-out")) std::filesystem::create_directories(generated);
  check_writable(profile_path, "--profile-out");
  check_writable(platform_path, "--platform-out");

  // 1. The phases: the training code itself on one rank of the real engine (mpirun -np 1),
  // as the runs it predicts will be started, its phase timers on.
  char tmp_name[] = "/tmp/wulf-calibrate-XXXXXX";
  const int fd = ::mkstemp(tmp_name);
  if (fd < 0) throw InputError("cannot create a file in /tmp");
  ::close(fd);
  const std::string record_path = tmp_name;
  const std::vector<std::string> train_args{wulf_program("wulf"), "train", "--engine", "real", "--np", "1",
                                            "--problem", problem, "--block",
                                            std::to_string(vm["block"].as<long long>()), "--epochs",
                                            std::to_string(iterations), "--precision", vm["precision"].as<std::string>(),
                                            "--bias", vm["bias"].as<std::string>(), "--train-size",
                                            std::to_string(vm["train-size"].as<long long>()), "--test-size",
                                            std::to_string(vm["test-size"].as<long long>()), "--quiet", "--out",
                                            record_path};
  out << "timing " << iterations << " iterations of " << problem << " on one rank under mpirun ..." << std::endl;
  std::string train_out, train_err;
  const int train_code = run_program_captured(train_args, train_out, train_err);
  if (train_code != exit_ok) {
    std::filesystem::remove(record_path);
    err << train_err;
    throw InputError("the instrumented training run failed (code " + std::to_string(train_code) + ")");
  }
  const Json record = read_json_file(record_path);
  std::filesystem::remove(record_path);
  auto field = [&](const std::string& pointer) { return json_field<double>(record, pointer, record_path); };
  // Without a test set, wulf checks the error on the whole training set after every
  // iteration: that pass is the model's m test patterns, m = n.
  const double n = field("/config/train_patterns");
  const double m = field("/config/test_patterns") > 0 ? field("/config/test_patterns") : n;
  const double w = field("/config/parameters"), b = field("/config/block");
  const double its = field("/final/iterations");
  auto per = [&](const char* seconds, const char* count) {
    const double c = field(std::string("/phases/") + count);
    return c > 0 ? field(std::string("/phases/") + seconds) / c : 0.0;
  };
  const double Tf = per("forward_s", "forward_patterns"), Tb = per("backward_s", "backward_patterns");
  const double Tu = per("update_s", "updates");
  const double Tm = 0;  // wulf's momentum step updates the weights and keeps dw in one pass: inside Tu
  // A test pattern costs a forward pass and its error; the error alone is what is left. It
  // is negative when the test pass, one batch of the whole set, runs faster per pattern than
  // the training forward pass in blocks of b: the model's m (Tf + Ts) is then still the test
  // pass's time (clamping Ts at 0 over-predicted every iteration by up to 14%).
  const double Ts = per("test_s", "test_patterns") - Tf;
  const double iteration = field("/final/time_s") / its;
  // To: what one iteration took beyond eq. (3)'s terms (gathering, shuffling, bookkeeping).
  const double counted = (n + m) * Tf + n * Tb + n / b * (Tu + Tm) + m * Ts;
  const double To = std::max(0.0, iteration - counted);

  // 2. Ti and Tw: recursive-doubling allreduce of w doubles under mpirun.
  if (around) {
    const auto W = static_cast<std::size_t>(w);
    elements = {std::max<std::size_t>(1, W / 2), std::max<std::size_t>(2, W), std::max<std::size_t>(4, 2 * W)};
  }
  std::vector<double> xs, ts;
  std::vector<Json> points;
  std::ostringstream sizes;
  for (std::size_t i = 0; i < elements.size(); ++i) sizes << (i ? "," : "") << elements[i];
  for (std::size_t p : nps) {
    out << "timing the allreduce on " << p << " ranks under mpirun ..." << std::endl;
    const MpiSessionDir session;
    std::vector<std::string> cmd = mpirun_command(static_cast<int>(p), "auto", Collectives{"rdb", "default", "default"},
                                                  wulf_program("wulf-rank-real"), session);
    cmd.insert(cmd.end(), {"bench", "--what", "allreduce", "--sizes", sizes.str(), "--repeat", std::to_string(repeat)});
    const RanksOutcome o = run_ranks(cmd, false, true);
    if (o.code != 0) throw InputError("the allreduce benchmark under mpirun failed: " + o.failure);
    std::istringstream lines(o.output);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line.front() != '{') continue;
      Json row = parse_json(line, "the allreduce benchmark's output");
      xs.push_back(row.at("size").get<double>() * std::ceil(std::log2(static_cast<double>(p))));
      ts.push_back(row.at("time_s").get<double>());
      points.push_back(std::move(row));
    }
  }
  const Fit fit = least_squares(xs, ts);
  const double Tw = std::max(0.0, fit.slope), Ti = std::max(0.0, fit.intercept);

  out << std::setprecision(6) << "\nphases of " << problem << " (n " << n << ", m " << m << ", w " << w << ", b " << b
      << "), per pattern unless said:\n"
      << "  Tf " << Tf * 1e3 << " ms, Tb " << Tb * 1e3 << " ms, Tu " << Tu * 1e3 << " ms per update, Tm 0 (in Tu), Ts "
      << Ts * 1e3 << " ms, To " << To * 1e3 << " ms per iteration\n";
  out << "allreduce: Tr(p) = Tw w ceil(log2 p) + Ti, least squares over " << xs.size() << " points:\n"
      << "  Tw " << Tw * 1e6 << " us per 8-byte value, Ti " << Ti * 1e6 << " us\n"
      << std::setw(6) << "p" << std::setw(10) << "w" << std::setw(14) << "measured" << std::setw(14) << "fit"
      << std::setw(12) << "residual\n";
  for (std::size_t i = 0; i < points.size(); ++i)
    out << std::setw(6) << points[i].at("np").get<double>() << std::setw(10) << points[i].at("size").get<double>()
        << std::setw(11) << ts[i] * 1e6 << " us" << std::setw(11) << (ts[i] - fit.residuals[i]) * 1e6 << " us"
        << std::setw(10) << std::showpos << 100 * fit.residuals[i] / ts[i] << std::noshowpos << " %\n";

  // 3. The profile.
  {
    std::ostringstream p;
    p << std::setprecision(9) << "# " << machine << "-" << problem << ": wulf calibrate on " << machine << ", "
      << iterations << " iterations of " << problem << " (b " << b << ", " << vm["precision"].as<std::string>()
      << ", bias " << vm["bias"].as<std::string>() << ") and the allreduce over mpirun.\n"
      << "# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.\n"
      << "Tf_ms = " << Tf * 1e3 << "\nTb_ms = " << Tb * 1e3 << "\nTu_ms = " << Tu * 1e3 << "\nTm_ms = " << Tm * 1e3
      << "\nTs_ms = " << Ts * 1e3 << "\nTo_ms = " << To * 1e3 << "\nTi_us = " << Ti * 1e6 << "\nTw_us = " << Tw * 1e6
      << "\nn = " << n << "\nm = " << m << "\nw = " << w
      << "\nproblem = " << json_field<std::string>(record, "/config/problem", record_path)
      << "\nprecision = " << vm["precision"].as<std::string>() << "\n";
    write_file_atomically(profile_path, p.str());
  }
  // 4. The platform: one single-core host per core of this machine, at the flop rate the
  // backward and forward passes reached, on links that give the fitted Tw (8 bytes per Tw,
  // plus SimGrid's 5.6% for acknowledgements on full-duplex links, as in batcave.xml) and
  // the fitted Ti per collective call.
  {
    const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
    const double speed = Tf + Tb > 0 ? 6.0 * w / (Tf + Tb) : 1e9;
    const double bw = Tw > 0 ? 8.0 / Tw * 1.056 : 1e10;
    std::ostringstream x;
    x << std::setprecision(9) << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      << "<!--\n  " << machine << ": this machine as wulf calibrate measured it (" << problem << ", "
      << vm["precision"].as<std::string>() << ").\n"
      << "  " << cores << " hosts of 1 core, one per core, each at the flop rate of the measured forward\n"
      << "  and backward passes: 6 w / (Tf + Tb) = " << speed / 1e9 << " Gflop/s.\n"
      << "  Links: the fitted Tw = " << Tw * 1e6 << " us per 8-byte value, as a bandwidth (8 B / Tw,\n"
      << "  plus 5.6% for SimGrid's acknowledgements on full-duplex links); the fitted Ti = " << Ti * 1e6 << " us\n"
      << "  is the collective call overhead. Ranks beyond the cores share them in reality, not here.\n-->\n"
      << "<platform version=\"4.1\">\n  <config>\n    <prop id=\"smpi/bw-factor\" value=\"0:1\"/>\n"
      << "    <prop id=\"smpi/lat-factor\" value=\"0:1\"/>\n  </config>\n"
      << "  <zone id=\"" << machine << "_zone\" routing=\"Full\">\n"
      << "    <cluster id=\"" << machine << "\" prefix=\"" << machine << "-\" suffix=\"\" radical=\"0-" << cores - 1
      << "\" speed=\"" << speed << "f\" core=\"1\"\n             bw=\"" << bw << "Bps\" lat=\"1us\" sharing_policy=\"SPLITDUPLEX\""
      << " bb_bw=\"" << bw * cores << "Bps\" bb_lat=\"0us\" bb_sharing_policy=\"FATPIPE\">\n"
      << "      <prop id=\"wulf:collective_overhead\" value=\"" << Ti * 1e6 << "us\"/>\n"
      << "    </cluster>\n  </zone>\n</platform>\n";
    write_file_atomically(platform_path, x.str());
  }
  out << "profile: " << profile_path << "\nplatform: " << platform_path << "\n";
  return exit_ok;
}

}  // namespace wulf
