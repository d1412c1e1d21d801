// `wulf calibrate`: seed 000's constants measured on this machine, as the paper measured
// them on its clusters (section V-A): a few instrumented iterations of the real training
// code on one process give Tf, Tb, Tu, Tm, Ts and To; a micro-benchmark of the
// recursive-doubling allreduce under mpirun gives Ti and Tw by least squares on
// w ceil(log2 p). The result is a profile for `wulf model` and `--compute calibrated`, and a
// SimGrid platform describing this machine.
#include "cli/cli.hpp"
#include "cli/launcher.hpp"
#include "cli/runner.hpp"
#include "predict/model.hpp"
#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "engine/launch.hpp"
#include "util/json.hpp"
#include "cli/train_options.hpp"
#include "cli/options.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"
#include "util/paths.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"
#include "comm/comm_bench.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <thread>

namespace po = boost::program_options;

namespace wulf {
namespace {


// wulf calibrate's options, checked, and the files it writes.
struct CalibrateJob {
  std::string problem, machine;
  long long block = 0, iterations = 0, repeat = 0, train_size = 0, test_size = 0;
  std::string precision, bias;
  std::vector<std::size_t> nps;       // the allreduce benchmark's ranks
  bool around = false;                // elements: w/2, w and 2w of the problem's net
  std::vector<std::size_t> elements;  // the benchmark's sizes, unless around
  std::string profile_path, platform_path;
  double timeout = 0;                 // --timeout of each run (0: none)
};

// The allreduce benchmark's ranks (at least 2: an allreduce).
constexpr Range calibrate_ranks{.lo = 2, .hi = kRanksHereRange.hi};

}  // namespace

po::options_description calibrate_options() {
  po::options_description options("wulf calibrate --problem NAME [options]", 110, 55);
  options.add_options()
      ("help,h", "print this help")
      ("problem", po::value<std::string>(), "the problem whose phases are timed (wulf train's names)")
      ("block", whole_in("block", {.lo = 1, .hi = kPatternCountRange.hi})->default_value(16), "block size of the instrumented iterations")
      ("iterations", whole_in("iterations", {.lo = 1, .hi = 1e6})->default_value(20),
       "instrumented iterations (seed 000 used a few of its long ones; ours take milliseconds)")
      ("precision", precision_value()->default_value("double"),
       "float|double (Table V's w are doubles)")
      ("bias", on_off_word("bias")->default_value("off"),
       "bias weights: on|off (seed 000 counts none)")
      ("train-size", whole_in("train-size", kPatternCountRange)->default_value(0), "use only the first N training patterns (0: all)")
      ("test-size", whole_in("test-size", kPatternCountRange)->default_value(0), "use only the first N test patterns (0: all)")
      ("np", po::value<std::string>()->default_value("2,4"),
       fmt::format("ranks of the allreduce benchmark under mpirun, a list, each in {}", range_text(calibrate_ranks)).c_str())
      ("elements", po::value<std::string>()->default_value("around"),
       fmt::format("doubles per allreduce, a list, each in {}; around: w/2, w and 2w of the problem's net (the fit is "
                   "local)", range_text(kBenchElementsRange)).c_str())
      ("repeat", whole_in("repeat", {.lo = 1, .hi = 1e6})->default_value(20), "allreduce calls per point (the mean is used)")
      ("profile-out", po::value<std::string>(), "the profile to write (default: platforms/generated/<machine>-<problem>.profile)")
      ("platform-out", po::value<std::string>(), "the platform to write (default: platforms/generated/<machine>.xml)")
      ("machine", po::value<std::string>()->default_value("this-machine"), "the machine's name in the files it writes")
      ("timeout", timeout_value(), timeout_help("each run (the training run, each benchmark): ").c_str());
  return options;
}

namespace {

CalibrateJob read_calibrate_job(const po::variables_map& vm) {
  if (!vm.count("problem")) throw InputError("wulf calibrate: --problem is required");
  CalibrateJob job;
  job.problem = vm["problem"].as<std::string>(), job.machine = vm["machine"].as<std::string>();
  if (job.problem.starts_with("layers:"))
    throw InputError("--problem " + printable(job.problem, 200) + ": calibrate times a net's arithmetic (its "
                     "phases, seed 000's profile), and a net given by its layers has none; its compute is its "
                     "layers' flops or measured times (time lines, platforms/nets/README.md)");
  const std::string& machine = job.machine;
  if (machine.empty() || machine.find_first_of("/ \"<>&") != std::string::npos)
    throw InputError("--machine: '" + machine + "' must be a plain name");
  job.nps = size_list(vm["np"].as<std::string>(), "np", calibrate_ranks);
  // "around" is resolved once the net's size w is known (w/2, w, 2w); 1, 2, 4 have the same
  // ratios, so the check of distinct points below counts what the real sizes will give.
  job.around = vm["elements"].as<std::string>() == "around";
  job.elements =
      job.around ? std::vector<std::size_t>{1, 2, 4} : size_list(vm["elements"].as<std::string>(), "elements", kBenchElementsRange);
  job.iterations = vm["iterations"].as<long long>(), job.repeat = vm["repeat"].as<long long>();
  if (vm.count("timeout")) job.timeout = vm["timeout"].as<double>();
  std::vector<double> xs;
  for (std::size_t p : job.nps)
    for (std::size_t w : job.elements) {
      const double x = static_cast<double>(w) * std::ceil(std::log2(static_cast<double>(p)));
      if (std::find(xs.begin(), xs.end(), x) == xs.end()) xs.push_back(x);
    }
  if (xs.size() < 2) throw InputError("--np and --elements give fewer than two points for the allreduce fit");
  job.block = vm["block"].as<long long>();
  job.precision = vm["precision"].as<std::string>(), job.bias = vm["bias"].as<std::string>();
  job.train_size = vm["train-size"].as<long long>(), job.test_size = vm["test-size"].as<long long>();
  const std::string generated = generated_platforms_dir();
  std::string safe_problem = job.problem;
  for (char& c : safe_problem)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  job.profile_path = vm.count("profile-out") ? vm["profile-out"].as<std::string>()
                                             : generated + "/" + machine + "-" + safe_problem + ".profile";
  job.platform_path =
      vm.count("platform-out") ? vm["platform-out"].as<std::string>() : generated + "/" + machine + ".xml";
  if (!is_leader()) return job;  // only process 0 writes the files
  if (!vm.count("profile-out") || !vm.count("platform-out")) std::filesystem::create_directories(generated);
  check_writable(job.profile_path, "--profile-out");
  check_output(job.platform_path, "--platform-out", {{"--profile-out", job.profile_path}});
  return job;
}

// Seed 000's phase constants, in seconds, and the net they were measured on.
struct Phases {
  double n = 0, m = 0, w = 0, b = 0;  // training and test patterns, weights, block
  double flops = 0;                   // a training pattern's forward and backward flops (the record's)
  double Tf = 0, Tb = 0, Tu = 0, Tm = 0, Ts = 0, To = 0;
  std::string problem;  // the problem as the record names it
};

// The phases: the training code itself on one rank of the real engine (mpirun -np 1), as
// the runs it predicts will be started, its phase timers on.
Phases measure_phases(const CalibrateJob& job, const Runner& runner, std::ostream& out, std::ostream& err) {
  // The record goes to a folder of this run's own: write_file_atomically puts its file
  // beside the record, which must not be the shared /tmp.
  const TempDir scratch("calibrate");
  const std::string record_path = scratch.file("record.json");
  std::vector<std::string> train_args{
      "train", "--engine", "real", "--np", "1", "--problem", job.problem,
      "--block", std::to_string(job.block), "--epochs", std::to_string(job.iterations),
      "--precision", job.precision, "--bias", job.bias, "--train-size", std::to_string(job.train_size),
      "--test-size", std::to_string(job.test_size), "--quiet"};
  out << "timing " << job.iterations << " iterations of " << job.problem << " on one rank under mpirun ..."
      << std::endl;
  if (job.timeout > 0) train_args.insert(train_args.end(), {"--timeout", fmt::format("{}", job.timeout)});
  // It times this machine: alone.
  const JobResult train = runner.run({{train_args, record_path, {}, {}}}, Spread::one_at_a_time).front();
  if (train.code == exit_timeout) throw TimedOut{"the instrumented training run " + train.message()};
  if (train.code != exit_ok) {
    err << train.err;
    throw InputError("the instrumented training run failed (code " + std::to_string(train.code) + ")");
  }
  const Json& record = train.record;
  auto field = [&](const std::string& pointer) { return json_field<double>(record, pointer, record_path); };
  Phases f;
  // Without a test set, wulf checks the error on the whole training set after every
  // iteration: that pass is the model's m test patterns, m = n.
  f.n = field("/config/train_patterns");
  f.m = field("/config/test_patterns") > 0 ? field("/config/test_patterns") : f.n;
  f.w = field("/config/parameters"), f.b = field("/config/block");
  f.flops = field("/performance/forward_flops_per_pattern") + field("/performance/backward_flops_per_pattern");
  f.problem = json_field<std::string>(record, "/config/problem", record_path);
  const double its = field("/final/iterations");
  auto per = [&](const char* seconds, const char* count) {
    const double c = field(std::string("/phases/") + count);
    return c > 0 ? field(std::string("/phases/") + seconds) / c : 0.0;
  };
  f.Tf = per("forward_s", "forward_patterns"), f.Tb = per("backward_s", "backward_patterns");
  f.Tu = per("update_s", "updates");
  f.Tm = 0;  // wulf's momentum step updates the weights and keeps dw in one pass: inside Tu
  // A test pattern costs a forward pass and its error; the error alone is what is left. It
  // is negative when the test pass, one batch of the whole set, runs faster per pattern than
  // the training forward pass in blocks of b: the model's m (Tf + Ts) is then still the test
  // pass's time (clamping Ts at 0 over-predicted every iteration by up to 14%).
  f.Ts = per("test_s", "test_patterns") - f.Tf;
  const double iteration = field("/final/time_s") / its;
  // To: what one iteration took beyond eq. (3)'s terms (gathering, shuffling, bookkeeping).
  const double counted = (f.n + f.m) * f.Tf + f.n * f.Tb + f.n / f.b * (f.Tu + f.Tm) + f.m * f.Ts;
  f.To = std::max(0.0, iteration - counted);
  return f;
}

// Ti and Tw: the allreduce's points (p, w, measured time) and their least-squares line.
struct AllreduceFit {
  std::vector<Json> points;  // the benchmark's rows
  std::vector<double> xs, ts;  // w ceil(log2 p) and the measured time of each point
  LineFit fit;
  double Tw = 0, Ti = 0;
};

// The recursive-doubling allreduce of sizes under mpirun on p ranks of wulf-rank-real: a job
// that is no wulf command, its output the benchmark's rows.
Job allreduce_benchmark(const CalibrateJob& job, const std::vector<std::size_t>& sizes, std::size_t p) {
  return {{"mpirun", "-np", std::to_string(p), "wulf-rank-real", "bench"}, "", {}, [&job, sizes, p] {
            const MpiSessionDir session;
            std::vector<std::string> cmd = mpirun_command(static_cast<int>(p), "auto", Collectives{"rdb"},
                                                          wulf_program("wulf-rank-real"), session);
            CommBenchConfig bench;
            bench.what = "allreduce";
            bench.sizes = sizes;
            bench.repeat = static_cast<int>(job.repeat);
            validate(bench);
            const RankJobArgs args(comm_bench_json(bench), true);
            cmd.push_back("bench");
            cmd.insert(cmd.end(), args.args().begin(), args.args().end());
            try {
              const RanksOutcome o = run_ranks(cmd, false, true, job.timeout);
              return JobResult{o.code, o.output, o.failure, "", Json(), 0};
            } catch (const TimedOut& e) {
              throw TimedOut{"the allreduce benchmark on " + std::to_string(p) + " ranks under mpirun " + e.message};
            }
          }};
}

// Recursive-doubling allreduce of the job's sizes under mpirun on each p of the job, with
// "around" resolved from the net's w.
AllreduceFit measure_allreduce(const CalibrateJob& job, const Runner& runner, double w, std::ostream& out) {
  std::vector<std::size_t> elements = job.elements;
  if (job.around) {
    const auto W = static_cast<std::size_t>(w);
    elements = {std::max<std::size_t>(1, W / 2), std::max<std::size_t>(2, W), std::max<std::size_t>(4, 2 * W)};
  }
  // Each benchmark times this machine: one after another, no other run beside it.
  std::vector<Job> benchmarks;
  for (std::size_t p : job.nps) benchmarks.push_back(allreduce_benchmark(job, elements, p));
  const std::vector<JobResult> runs = runner.run(benchmarks, Spread::one_at_a_time, [&](std::size_t k) {
    out << "timing the allreduce on " << job.nps[k] << " ranks under mpirun ..." << std::endl;
  });
  AllreduceFit a;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (runs[k].code != 0) throw InputError("the allreduce benchmark under mpirun failed: " + runs[k].err);
    for (Json& row : read_bench_rows(runs[k].out, "the allreduce benchmark's output")) {
      a.xs.push_back(row.at("size").get<double>() * std::ceil(std::log2(static_cast<double>(job.nps[k]))));
      a.ts.push_back(row.at("time_s").get<double>());
      a.points.push_back(std::move(row));
    }
  }
  a.fit = least_squares(a.xs, a.ts);
  a.Tw = std::max(0.0, a.fit.slope), a.Ti = std::max(0.0, a.fit.intercept);
  return a;
}

void print_calibration(std::ostream& out, const CalibrateJob& job, const Phases& f, const AllreduceFit& a) {
  fmt::print(out, "\nphases of {} (n {:g}, m {:g}, w {:g}, b {:g}), per pattern unless said:\n", job.problem, f.n, f.m,
             f.w, f.b);
  fmt::print(out,
             "  Tf {:g} ms, Tb {:g} ms, Tu {:g} ms per update, Tm 0 (in Tu), Ts {:g} ms, To {:g} ms per iteration\n",
             f.Tf * 1e3, f.Tb * 1e3, f.Tu * 1e3, f.Ts * 1e3, f.To * 1e3);
  fmt::print(out, "allreduce: Tr(p) = Tw w ceil(log2 p) + Ti, least squares over {} points:\n", a.xs.size());
  fmt::print(out, "  Tw {:g} us per 8-byte value, Ti {:g} us\n", a.Tw * 1e6, a.Ti * 1e6);
  fmt::print(out, "{:>6}{:>10}{:>14}{:>14}{:>11}\n", "p", "w", "measured", "fit", "residual");
  for (std::size_t i = 0; i < a.points.size(); ++i)
    fmt::print(out, "{:>6g}{:>10g}{:>11g} us{:>11g} us{:>+10g} %\n", a.points[i].at("np").get<double>(),
               a.points[i].at("size").get<double>(), a.ts[i] * 1e6, (a.ts[i] - a.fit.residuals[i]) * 1e6,
               100 * a.fit.residuals[i] / a.ts[i]);
}

// The profile, for wulf model and --compute calibrated.
std::string profile_text(const CalibrateJob& job, const Phases& f, const AllreduceFit& a) {
  return fmt::format(
      "# {machine}-{problem}: wulf calibrate on {machine}, {iterations} iterations of {problem} (b {b:.9g}, "
      "{precision}, bias {bias}) and the allreduce over mpirun.\n"
      "# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.\n"
      "Tf_ms = {Tf:.9g}\nTb_ms = {Tb:.9g}\nTu_ms = {Tu:.9g}\nTm_ms = {Tm:.9g}\nTs_ms = {Ts:.9g}\nTo_ms = {To:.9g}\n"
      "Ti_us = {Ti:.9g}\nTw_us = {Tw:.9g}\nn = {n:.9g}\nm = {m:.9g}\nw = {w:.9g}\nproblem = {name}\n"
      "precision = {precision}\n",
      fmt::arg("machine", job.machine), fmt::arg("problem", job.problem), fmt::arg("iterations", job.iterations),
      fmt::arg("b", f.b), fmt::arg("precision", job.precision), fmt::arg("bias", job.bias), fmt::arg("Tf", f.Tf * 1e3),
      fmt::arg("Tb", f.Tb * 1e3), fmt::arg("Tu", f.Tu * 1e3), fmt::arg("Tm", f.Tm * 1e3), fmt::arg("Ts", f.Ts * 1e3),
      fmt::arg("To", f.To * 1e3), fmt::arg("Ti", a.Ti * 1e6), fmt::arg("Tw", a.Tw * 1e6), fmt::arg("n", f.n),
      fmt::arg("m", f.m), fmt::arg("w", f.w), fmt::arg("name", f.problem));
}

// The platform: one single-core host per core of this machine, at the flop rate the
// backward and forward passes reached, on links that give the fitted Tw (8 bytes per Tw,
// plus SimGrid's 5.6% for acknowledgements on full-duplex links, as in batcave.xml) and
// the fitted Ti per collective call.
std::string platform_text(const CalibrateJob& job, const Phases& f, const AllreduceFit& a) {
  const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  const double speed = f.Tf + f.Tb > 0 ? f.flops / (f.Tf + f.Tb) : 1e9;
  const double bw = a.Tw > 0 ? 8.0 / a.Tw * 1.056 : 1e10;
  return fmt::format(
      "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      "<!--\n  {machine}: this machine as wulf calibrate measured it ({problem}, {precision}).\n"
      "  {cores} hosts of 1 core, one per core, each at the flop rate of the measured forward\n"
      "  and backward passes: their flops per pattern over Tf + Tb = {gflops:.9g} Gflop/s.\n"
      "  Links: the fitted Tw = {Tw:.9g} us per 8-byte value, as a bandwidth (8 B / Tw,\n"
      "  plus 5.6% for SimGrid's acknowledgements on full-duplex links); the fitted Ti = {Ti:.9g} us\n"
      "  is the collective call overhead. Ranks beyond the cores share them in reality, not here.\n-->\n"
      "<platform version=\"4.1\">\n  <config>\n    <prop id=\"smpi/bw-factor\" value=\"0:1\"/>\n"
      "    <prop id=\"smpi/lat-factor\" value=\"0:1\"/>\n  </config>\n"
      "  <zone id=\"{machine}_zone\" routing=\"Full\">\n"
      "    <cluster id=\"{machine}\" prefix=\"{machine}-\" suffix=\"\" radical=\"0-{last}\" speed=\"{speed:.9g}f\" "
      "core=\"1\"\n             bw=\"{bw:.9g}Bps\" lat=\"1us\" sharing_policy=\"SPLITDUPLEX\" bb_bw=\"{bb_bw:.9g}Bps\" "
      "bb_lat=\"0us\" bb_sharing_policy=\"FATPIPE\">\n"
      "      <prop id=\"wulf:collective_overhead\" value=\"{Ti:.9g}us\"/>\n"
      "    </cluster>\n  </zone>\n</platform>\n",
      fmt::arg("machine", job.machine), fmt::arg("problem", job.problem), fmt::arg("precision", job.precision),
      fmt::arg("cores", cores), fmt::arg("gflops", speed / 1e9), fmt::arg("Tw", a.Tw * 1e6), fmt::arg("Ti", a.Ti * 1e6),
      fmt::arg("last", cores - 1), fmt::arg("speed", speed), fmt::arg("bw", bw), fmt::arg("bb_bw", bw * cores));
}

}  // namespace

int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = calibrate_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) {
    out << options << "\n"
        << "platforms/generated/ is the source tree's for a wulf run from its build tree, and the\n"
        << "current folder's for an installed wulf; here: " << generated_platforms_dir() << "\n";
    return exit_ok;
  }
  const CalibrateJob job = read_calibrate_job(vm);
  const Runner runner;
  const Phases phases = measure_phases(job, runner, out, err);
  const AllreduceFit allreduce = measure_allreduce(job, runner, phases.w, out);
  print_calibration(out, job, phases, allreduce);
  if (!is_leader()) return exit_ok;
  write_file_atomically(job.profile_path, profile_text(job, phases, allreduce));
  write_file_atomically(job.platform_path, platform_text(job, phases, allreduce));
  out << "profile: " << job.profile_path << "\nplatform: " << job.platform_path << "\n";
  return exit_ok;
}

}  // namespace wulf
