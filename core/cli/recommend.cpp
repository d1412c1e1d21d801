// `wulf recommend`: the fastest way to a target error on a platform (recommend.hpp has the
// search). Every input is checked here before any run starts; the runs are `wulf train`
// programs of their own (engine/launch.hpp's run_wulf_for_record), their records read back.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "engine/launch.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "data/problems.hpp"
#include "predict/recommend.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace po = boost::program_options;

namespace wulf {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A scratch folder for the runs' records, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() : path_(std::filesystem::temp_directory_path() / ("wulf-recommend-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Runs tasks, at most `jobs` at a time (each task waits on a program of its own); the first
// exception a task throws is thrown here once all have ended.
void run_tasks(const std::vector<std::function<void()>>& tasks, int jobs) {
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(tasks.size());
  auto worker = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::min<int>(jobs, static_cast<int>(tasks.size())); ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// The last line wulf printed on its error stream, its message, without "wulf: error: ".
std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::size_t nl = text.rfind('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  for (const std::string prefix : {"wulf: error: ", "wulf: "})
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return line;
}

// One `wulf train` run; a run that ends with a record (finished, or stopped on a fault with
// exit 3) returns it. A refusal (exit 2) is an input error naming the run; anything else
// an internal one.
Json train_record(const std::vector<std::string>& args, const std::string& path, double& wall_s) {
  const auto t0 = Clock::now();
  const WulfRun run = run_wulf_for_record(args, path);
  wall_s = seconds_since(t0);
  if (run.code == exit_input)
    throw InputError("wulf train refused a run of the search: " + last_line(run.err) + " (" + run.command + ")");
  if (run.code != exit_ok && run.code != exit_diverged)
    throw std::runtime_error("a run of the search failed (code " + std::to_string(run.code) +
                             "): " + last_line(run.err) + " (" + run.command + ")");
  return read_json_file(path);
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

template <class T>
std::string join_numbers(const std::vector<T>& values) {
  std::vector<std::string> items;
  for (const T& v : values) {
    if constexpr (std::is_floating_point_v<T>)
      items.push_back(shortest(v));
    else
      items.push_back(std::to_string(v));
  }
  return join(items, ",");
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// Simulated seconds with enough digits to compare runs: 4 significant digits, at least 3
// after the point.
std::string secs(double v) {
  if (!std::isfinite(v)) return "-";
  std::ostringstream s;
  s << std::setprecision(std::max(3, 4 - static_cast<int>(std::floor(std::log10(std::max(std::abs(v), 1e-9)))) - 1))
    << std::fixed << v;
  return s.str();
}

// How far the confirmed time is from the estimate: "+1.3%", "0.0%".
std::string percent_change(double confirmed, double estimated) {
  const double pct = 100 * (confirmed / estimated - 1);
  if (std::abs(pct) < 0.05) return "0.0%";
  return (pct > 0 ? "+" : "") + fixed(pct, 1) + "%";
}

std::string never_text(const RunOutcome& r, int max_epochs) {
  std::ostringstream s;
  if (r.status == "diverged")
    s << "diverged in iteration " << r.iterations;
  else
    s << "not within " << max_epochs << " iterations";
  if (std::isfinite(r.best_error))
    s << " (best " << std::setprecision(5) << r.best_error << " in iteration " << r.best_iteration << ")";
  return s.str();
}

std::string quoted_command(const std::vector<std::string>& args) {
  std::string s = "wulf";
  for (const std::string& a : args) {
    const bool plain = a.find_first_of(" \t\"'$;&|<>*?()") == std::string::npos && !a.empty();
    s += " " + (plain ? a : "'" + a + "'");
  }
  return s;
}

}  // namespace

int recommend_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description search("search", 110, 55);
  search.add_options()("help,h", "print this help")("platform", po::value<std::string>(),
                                                    "the SimGrid platform file (XML) to train on")(
      "problem", po::value<std::string>(), "the problem (wulf train --help lists them)")(
      "target-error", po::value<double>(),
      "reach this check error (test error, or training error without a test set; --error says which kind)")(
      "strategies", po::value<std::string>()->default_value("block"),
      "strategies to search, a list of block (training-set parallelism), average (weight averaging), ppt "
      "(pattern parallel training; b is each rank's local epoch)")(
      "np", po::value<std::string>(),
      "processors, a list; 1, the sequential reference, is always added (default: 1 and the powers of two up "
      "to the platform's cores)")(
      "blocks", po::value<std::string>(),
      "block sizes b, a list (default: the problem's block times 1, 4, 16, 64, up to the training set)")(
      "etas", po::value<std::string>(), "learning rates, a list (default: the problem's)")(
      "alphas", po::value<std::string>(), "momentum rates, a list (default: the problem's)")(
      "intervals", po::value<std::string>()->default_value("0"),
      "average: patterns per rank between averagings, a list (0: after every block)")(
      "finalists", po::value<long long>()->default_value(3),
      "K: the K fastest estimates are simulated with real arithmetic, with the fastest of each strategy and "
      "the fastest sequential one")("max-epochs", po::value<long long>(),
                                    "most iterations of any run (default: the problem's)")(
      "seed", po::value<long long>()->default_value(1), "seed of every run (data, weights, pattern order)")(
      "prune", po::value<std::string>()->default_value("on"),
      "on: a finalist's simulation stops once it is slower than the best one confirmed before it")(
      "jobs", po::value<long long>()->default_value(1), "runs at once (each is a program of its own)")(
      "show", po::value<long long>()->default_value(10), "screening estimates printed")(
      "out", po::value<std::string>(), "write the record (JSON) to FILE");
  po::options_description training("training options passed to every run (wulf train --help)", 110, 55);
  training.add_options()("error", po::value<std::string>(),
                         "what errors mean: rmse|mse|loss|class (default: class for classifiers, else rmse)")(
      "compute", po::value<std::string>()->default_value("flops"),
      "how simulated compute is charged: flops|calibrated")("profile", po::value<std::string>(),
                                                            "the calibration profile of --compute calibrated")(
      "allreduce", po::value<std::string>()->default_value("default"), "allreduce algorithm: default|rdb|redbcast")(
      "precision", po::value<std::string>()->default_value("float"), "arithmetic: float|double")(
      "bias", po::value<std::string>()->default_value("on"), "bias weights: on|off")(
      "momentum", po::value<std::string>(), "momentum rule: classic|damped (default: the problem's)")(
      "block-step", po::value<std::string>(), "a block's update: sum|mean of its patterns' updates (default: the problem's)")(
      "train-size", po::value<long long>()->default_value(0), "use only the first N training patterns (0: all)")(
      "test-size", po::value<long long>()->default_value(0), "use only the first N test patterns (0: all)")(
      "data-dir", po::value<std::string>(), "folder of the MNIST IDX files")(
      "bw-scale", po::value<double>()->default_value(1.0), "what-if: every link's bandwidth times this")(
      "lat-scale", po::value<double>()->default_value(1.0), "what-if: every link's latency times this")(
      "speed-scale", po::value<double>()->default_value(1.0), "what-if: every host's speed times this");
  po::options_description options("wulf recommend --platform FILE.xml --problem NAME --target-error E [options]", 110,
                                  55);
  options.add(search).add(training);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    out << options << "\n"
        << "Screening times one iteration of every (strategy, p, b) by simulation without arithmetic and counts\n"
           "the iterations to the target once per (b, eta, alpha) by sequential training; their product is the\n"
           "estimate. The finalists are then simulated with real arithmetic on the platform, and decide.\n";
    return exit_ok;
  }

  // Everything is checked before any run starts.
  for (const char* required : {"platform", "problem", "target-error"})
    if (!vm.count(required)) throw InputError("wulf recommend: --" + std::string(required) + " is required");
  const double target = vm["target-error"].as<double>();
  if (!(target > 0) || !std::isfinite(target))
    throw InputError("--target-error: " + shortest(target) +
                     " must be a positive number (for every pattern right with --error class, give one below 1/n)");
  const std::string platform = vm["platform"].as<std::string>();
  const std::string problem_name = vm["problem"].as<std::string>();
  if (vm.count("out")) check_writable(vm["out"].as<std::string>(), "--out");

  const std::vector<PlatformHost> hosts = platform_hosts(platform);
  long long cores = 0;
  for (const PlatformHost& h : hosts) cores += h.cores;

  const long long seed = vm["seed"].as<long long>();
  if (seed < 0) throw InputError("--seed: must not be negative");
  ProblemOptions po_;
  po_.seed = static_cast<std::uint64_t>(seed);
  po_.shape_only = true;
  if (vm.count("data-dir"))
    po_.mnist_dir = vm["data-dir"].as<std::string>();
  else if (const char* env = std::getenv("WULF_MNIST_DIR"); env && *env)
    po_.mnist_dir = env;
  else
    po_.mnist_dir = build::mnist_dir;
  for (const char* size : {"train-size", "test-size"})
    if (vm[size].as<long long>() < 0) throw InputError("--" + std::string(size) + ": must not be negative");
  po_.train_size = static_cast<std::size_t>(vm["train-size"].as<long long>());
  po_.test_size = static_cast<std::size_t>(vm["test-size"].as<long long>());
  const Problem problem = make_problem(problem_name, po_);
  const std::size_t n = problem.train_total;
  const ProblemDefaults& d = problem.defaults;

  SearchSpace space;
  space.train_patterns = n;
  for (const std::string& name : split_list(vm["strategies"].as<std::string>())) {
    Strategy s{};
    try {
      s = parse_strategy(name);
    } catch (const InputError&) {
      throw InputError("--strategies: unknown strategy '" + name + "' (expected block, average or ppt)");
    }
    if (s != Strategy::block && s != Strategy::average && s != Strategy::ppt)
      throw InputError("--strategies: '" + name + "' is not searched (wulf recommend searches block, average and ppt)");
    space.strategies.push_back(s);
  }
  if (space.strategies.empty()) throw InputError("--strategies: empty list");

  if (vm.count("np")) {
    for (long long p : whole_list(vm["np"].as<std::string>(), "np")) {
      if (p > cores)
        throw InputError("--np " + std::to_string(p) + ": the platform " + platform + " has only " +
                         std::to_string(cores) + " cores on " + std::to_string(hosts.size()) + " hosts");
      space.nps.push_back(static_cast<int>(p));
    }
  } else {
    for (long long p = 2; p <= cores; p *= 2) space.nps.push_back(static_cast<int>(p));
  }
  if (std::find(space.nps.begin(), space.nps.end(), 1) == space.nps.end()) space.nps.insert(space.nps.begin(), 1);
  std::sort(space.nps.begin(), space.nps.end());
  space.nps.erase(std::unique(space.nps.begin(), space.nps.end()), space.nps.end());

  if (vm.count("blocks")) {
    for (long long b : whole_list(vm["blocks"].as<std::string>(), "blocks")) {
      if (static_cast<std::size_t>(b) > n)
        throw InputError("--blocks: " + std::to_string(b) + " is larger than the training set of " + problem.name +
                         " (" + std::to_string(n) + " patterns)");
      space.blocks.push_back(static_cast<std::size_t>(b));
    }
  } else {
    const std::size_t b0 = d.learning == Learning::pattern                 ? 1
                           : d.learning == Learning::epoch || d.block == 0 ? n
                                                                           : d.block;
    for (std::size_t f : {1, 4, 16, 64})
      if (b0 * f <= n) space.blocks.push_back(b0 * f);
    if (space.blocks.empty()) space.blocks.push_back(n);
  }
  space.etas = vm.count("etas") ? number_list(vm["etas"].as<std::string>(), "etas") : std::vector<double>{d.eta};
  for (double eta : space.etas)
    if (!(eta > 0)) throw InputError("--etas: " + shortest(eta) + " is not a positive learning rate");
  space.alphas =
      vm.count("alphas") ? number_list(vm["alphas"].as<std::string>(), "alphas") : std::vector<double>{d.alpha};
  for (double alpha : space.alphas)
    if (!(alpha >= 0 && alpha < 1)) throw InputError("--alphas: " + shortest(alpha) + " is not a momentum in [0, 1)");
  for (long long a : whole_list(vm["intervals"].as<std::string>(), "intervals", 0))
    space.intervals.push_back(static_cast<std::size_t>(a));

  const long long finalists_k = vm["finalists"].as<long long>();
  if (finalists_k < 1) throw InputError("--finalists: must be at least 1");
  const long long max_epochs = vm.count("max-epochs") ? vm["max-epochs"].as<long long>() : d.iterations;
  if (max_epochs < 1 || max_epochs > 100'000'000) throw InputError("--max-epochs: must be in 1..100000000");
  const long long jobs = vm["jobs"].as<long long>();
  if (jobs < 1 || jobs > 256) throw InputError("--jobs: must be in 1..256");
  const long long show = vm["show"].as<long long>();
  if (show < 0) throw InputError("--show: must not be negative");
  const std::string prune_text = vm["prune"].as<std::string>();
  if (prune_text != "on" && prune_text != "off")
    throw InputError("--prune: '" + prune_text + "' is neither on nor off");
  const bool prune = prune_text == "on";

  const ErrorMetric metric = vm.count("error")    ? parse_error_metric(vm["error"].as<std::string>())
                             : problem.classifier ? ErrorMetric::classification
                                                  : ErrorMetric::rmse;
  if (metric == ErrorMetric::classification && !problem.classifier)
    throw InputError("--error class: the targets of " + problem.name + " are not classes");
  const ComputeMode mode = parse_compute_mode(vm["compute"].as<std::string>());
  if (mode == ComputeMode::measured)
    throw InputError("--compute measured: screening simulates without the arithmetic, which measured times");
  if (mode == ComputeMode::calibrated && !vm.count("profile"))
    throw InputError("--compute calibrated needs --profile FILE");
  if (vm.count("profile")) {
    if (mode != ComputeMode::calibrated) throw InputError("--profile is for --compute calibrated");
    read_profile(vm["profile"].as<std::string>());
  }
  const std::string allreduce = vm["allreduce"].as<std::string>();
  if (allreduce != "default" && allreduce != "rdb" && allreduce != "redbcast")
    throw InputError("--allreduce: unknown algorithm '" + allreduce + "' (expected default, rdb or redbcast)");
  const std::string precision = vm["precision"].as<std::string>(), bias = vm["bias"].as<std::string>();
  if (precision != "float" && precision != "double")
    throw InputError("--precision: '" + precision + "' (expected float or double)");
  if (bias != "on" && bias != "off") throw InputError("--bias: '" + bias + "' is neither on nor off");
  if (vm.count("momentum")) parse_momentum_rule(vm["momentum"].as<std::string>());
  if (vm.count("block-step")) parse_block_step(vm["block-step"].as<std::string>());
  for (const char* scale : {"bw-scale", "lat-scale", "speed-scale"}) {
    const double v = vm[scale].as<double>();
    if (!(v > 0) || !std::isfinite(v)) throw InputError("--" + std::string(scale) + ": must be a positive number");
  }

  // The options every run shares.
  std::vector<std::string> common{
      "train",  "--problem",          problem_name, "--target-error", shortest(target),
      "--seed", std::to_string(seed), "--quiet",    "--error",        std::string(to_string(metric))};
  for (const char* key : {"allreduce", "precision", "bias", "momentum", "block-step", "data-dir"})
    if (vm.count(key) && !vm[key].defaulted())
      common.insert(common.end(), {"--" + std::string(key), vm[key].as<std::string>()});
  for (const char* key : {"train-size", "test-size"})
    if (!vm[key].defaulted())
      common.insert(common.end(), {"--" + std::string(key), std::to_string(vm[key].as<long long>())});
  // Only simulations charge compute; the sequential runs count iterations.
  std::vector<std::string> sim_args{"--engine", "sim", "--platform", platform};
  for (const char* key : {"compute", "profile"})
    if (vm.count(key) && !vm[key].defaulted())
      sim_args.insert(sim_args.end(), {"--" + std::string(key), vm[key].as<std::string>()});
  for (const char* key : {"bw-scale", "lat-scale", "speed-scale"})
    if (!vm[key].defaulted())
      sim_args.insert(sim_args.end(), {"--" + std::string(key), shortest(vm[key].as<double>())});
  const std::string epochs = std::to_string(max_epochs);

  const std::vector<LearningPoint> points = learning_points(space);
  std::vector<Candidate> candidates = make_candidates(space, points);
  std::size_t skipped = 0;
  for (const Candidate& c : candidates) skipped += !c.skipped.empty();

  const std::string metric_name =
      metric == ErrorMetric::classification ? "class error" : std::string(to_string(metric));
  std::vector<std::string> strategy_names;
  for (Strategy s : space.strategies) strategy_names.push_back(std::string(to_string(s)));
  out << "wulf recommend: " << problem.name << " (" << n << " training, " << problem.test_total << " test patterns) on "
      << platform << " (" << hosts.size() << " hosts, " << cores << " cores)\n"
      << "  target: " << metric_name << " <= " << shortest(target) << " within " << max_epochs << " iterations, seed "
      << seed << "\n"
      << "  search: strategies " << join(strategy_names, ",") << "; p " << join_numbers(space.nps) << "; b "
      << join_numbers(space.blocks) << "; eta " << join_numbers(space.etas) << "; alpha " << join_numbers(space.alphas);
  if (std::find(space.strategies.begin(), space.strategies.end(), Strategy::average) != space.strategies.end())
    out << "; average intervals " << join_numbers(space.intervals);
  out << ": " << candidates.size() - skipped << " candidates";
  if (skipped) out << " (" << skipped << " more skipped)";
  out << "\n" << std::flush;

  ScratchDir scratch;
  const auto t_start = Clock::now();
  // A phase's runs; a run that fails ends the line its phase began before the error.
  auto run_phase = [&](const std::vector<std::function<void()>>& tasks) {
    try {
      run_tasks(tasks, static_cast<int>(jobs));
    } catch (...) {
      out << " stopped\n" << std::flush;
      throw;
    }
  };

  // Screening 1: the time of one iteration, without arithmetic, once per (strategy, p, b, a).
  std::vector<std::size_t> timed;  // one candidate per distinct timing
  std::vector<std::size_t> timing_of(candidates.size(), 0);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (!c.skipped.empty()) continue;
    std::size_t j = 0;
    for (; j < timed.size(); ++j) {
      const Candidate& t = candidates[timed[j]];
      if (t.p == c.p && t.b == c.b && t.strategy == c.strategy && t.interval == c.interval) break;
    }
    if (j == timed.size()) timed.push_back(i);
    timing_of[i] = j;
  }
  out << "screening: time per iteration, " << timed.size() << " simulations without arithmetic ..." << std::flush;
  std::vector<double> iteration_s(timed.size());
  std::vector<double> timing_wall(timed.size());
  {
    std::vector<std::function<void()>> tasks;
    for (std::size_t j = 0; j < timed.size(); ++j)
      tasks.push_back([&, j] {
        std::vector<std::string> a = common;
        a.insert(a.end(), sim_args.begin(), sim_args.end());
        const std::vector<std::string> own = candidate_args(candidates[timed[j]]);
        a.insert(a.end(), own.begin(), own.end());
        // Every iteration charges the same simulated time (compute charges depend on counts,
        // not values), so one iteration gives the time per iteration.
        a.insert(a.end(), {"--numerics", "off", "--epochs", "1"});
        // Without a test set, training with arithmetic checks the error on the whole
        // training set after every iteration; without arithmetic only --eval-train charges it.
        if (problem.test_total == 0) a.insert(a.end(), {"--eval-train", "on"});
        const std::string path = scratch.file("time-" + std::to_string(j) + ".json");
        const Json r = train_record(a, path, timing_wall[j]);
        iteration_s[j] =
            json_field<double>(r, "/final/time_s", path) / json_field<double>(r, "/final/iterations", path);
      });
    run_phase(tasks);
  }
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].skipped.empty()) candidates[i].iteration_s = iteration_s[timing_of[i]];
  const double timing_s = seconds_since(t_start);
  out << " " << fixed(timing_s, 1) << " s\n";

  // Screening 2: iterations to the target, with arithmetic, sequentially, per (b, eta, alpha).
  out << "screening: iterations to the target, " << points.size() << " sequential run(s) with arithmetic ..."
      << std::flush;
  const auto t_conv = Clock::now();
  std::vector<RunOutcome> convergence(points.size());
  {
    std::vector<std::function<void()>> tasks;
    for (std::size_t k = 0; k < points.size(); ++k)
      tasks.push_back([&, k] {
        Candidate seq;
        seq.b = points[k].b, seq.eta = points[k].eta, seq.alpha = points[k].alpha;
        std::vector<std::string> a = common;
        const std::vector<std::string> own = candidate_args(seq);
        a.insert(a.end(), own.begin(), own.end());
        a.insert(a.end(), {"--engine", "seq", "--epochs", epochs});
        double wall = 0;
        const std::string path = scratch.file("conv-" + std::to_string(k) + ".json");
        convergence[k] = outcome_of_record(train_record(a, path, wall), path);
        convergence[k].wall_s = wall;
      });
    run_phase(tasks);
  }
  const double convergence_s = seconds_since(t_conv);
  out << " " << fixed(convergence_s, 1) << " s\n";
  out << std::setw(8) << "b" << std::setw(9) << "eta" << std::setw(8) << "alpha"
      << "   iterations to the target (sequential)\n";
  for (std::size_t k = 0; k < points.size(); ++k) {
    out << std::setw(8) << points[k].b << std::setw(9) << shortest(points[k].eta) << std::setw(8)
        << shortest(points[k].alpha) << "   ";
    if (convergence[k].reached)
      out << convergence[k].iterations;
    else
      out << "never: " << never_text(convergence[k], static_cast<int>(max_epochs));
    out << "\n";
  }
  estimate(candidates, convergence);
  const double screening_s = seconds_since(t_start);

  // The screening's own reference: the fastest sequential estimate.
  double estimate_reference = 0;
  for (const Candidate& c : candidates)
    if (c.sequential() && c.estimate_reached && (estimate_reference == 0 || c.estimate_s < estimate_reference))
      estimate_reference = c.estimate_s;
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].estimate_reached) ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
    return candidates[a].estimate_s < candidates[b].estimate_s ||
           (candidates[a].estimate_s == candidates[b].estimate_s && candidates[a].p < candidates[b].p);
  });
  auto row_head = [&](const Candidate& c) {
    out << "  " << std::left << std::setw(13) << c.label() << std::right << std::setw(4) << c.p << std::setw(7) << c.b
        << std::setw(7) << shortest(c.eta) << std::setw(7) << shortest(c.alpha);
  };
  if (!ranked.empty()) {
    out << "screening estimates (simulated time per iteration x sequential iterations), fastest first:\n"
        << "  " << std::left << std::setw(13) << "strategy" << std::right << std::setw(4) << "p" << std::setw(7) << "b"
        << std::setw(7) << "eta" << std::setw(7) << "alpha" << std::setw(13) << "s/iteration" << std::setw(12)
        << "iterations" << std::setw(12) << "time_s" << std::setw(10) << "speed-up"
        << "\n";
    for (std::size_t r = 0; r < ranked.size() && r < static_cast<std::size_t>(show); ++r) {
      const Candidate& c = candidates[ranked[r]];
      row_head(c);
      out << std::setw(13) << secs(c.iteration_s) << std::setw(12) << c.estimate_iterations << std::setw(12)
          << secs(c.estimate_s) << std::setw(10)
          << (estimate_reference > 0 ? fixed(estimate_reference / c.estimate_s, 2) : std::string("-"))
          << (c.basis == ConvergenceBasis::assumed ? "  (iterations assumed)" : "") << "\n";
    }
    if (ranked.size() > static_cast<std::size_t>(show))
      out << "  ... " << ranked.size() - static_cast<std::size_t>(show) << " more in the record\n";
  }

  // Confirmation: the finalists simulated with arithmetic on the platform.
  const std::vector<std::size_t> finalists = pick_finalists(candidates, static_cast<std::size_t>(finalists_k));
  const auto t_confirm = Clock::now();
  double confirmed_best = 0;  // the fastest confirmed time so far (0: none)
  if (!finalists.empty()) {
    out << "confirmation: " << finalists.size() << " finalist(s) simulated with real arithmetic on the platform"
        << (prune ? " (each stops once slower than the best before it)" : "") << " ..." << std::flush;
    // One after another: each bound is the best time confirmed before it.
    for (std::size_t f = 0; f < finalists.size(); ++f)
      run_phase({[&, f] {
        Candidate& c = candidates[finalists[f]];
        c.finalist = true;
        std::vector<std::string> a = common;
        a.insert(a.end(), sim_args.begin(), sim_args.end());
        const std::vector<std::string> own = candidate_args(c);
        a.insert(a.end(), own.begin(), own.end());
        a.insert(a.end(), {"--epochs", epochs});
        if (prune && confirmed_best > 0) {
          c.bound_s = confirmed_best;
          a.insert(a.end(), {"--max-seconds", shortest(confirmed_best)});
        }
        double wall = 0;
        const std::string path = scratch.file("final-" + std::to_string(f) + ".json");
        c.confirmed = outcome_of_record(train_record(a, path, wall), path);
        c.confirmed->wall_s = wall;
        if (c.confirmed->reached && (confirmed_best == 0 || c.confirmed->time_s < confirmed_best))
          confirmed_best = c.confirmed->time_s;
      }});
  }
  const double confirmation_s = seconds_since(t_confirm);
  if (!finalists.empty()) out << " " << fixed(confirmation_s, 1) << " s\n";

  const long reference = best_sequential(candidates), choice = best_confirmed(candidates);
  const double reference_s = reference >= 0 ? candidates[static_cast<std::size_t>(reference)].confirmed->time_s : 0;
  if (!finalists.empty()) {
    std::vector<std::size_t> order = finalists;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const RunOutcome &ra = *candidates[a].confirmed, &rb = *candidates[b].confirmed;
      if (ra.reached != rb.reached) return ra.reached;
      return ra.reached && (ra.time_s < rb.time_s || (ra.time_s == rb.time_s && candidates[a].p < candidates[b].p));
    });
    out << "fastest configurations to the target, confirmed (simulated seconds on " << platform << "):\n"
        << "  " << std::left << std::setw(13) << "strategy" << std::right << std::setw(4) << "p" << std::setw(7) << "b"
        << std::setw(7) << "eta" << std::setw(7) << "alpha" << std::setw(12) << "time_s" << std::setw(12)
        << "iterations" << std::setw(10) << "speed-up" << std::setw(11) << "estimate"
        << "\n";
    for (std::size_t i : order) {
      const Candidate& c = candidates[i];
      const RunOutcome& r = *c.confirmed;
      row_head(c);
      if (r.reached) {
        out << std::setw(12) << secs(r.time_s) << std::setw(12) << r.iterations << std::setw(10)
            << (reference_s > 0 ? fixed(reference_s / r.time_s, 2) : std::string("-")) << std::setw(10)
            << (c.estimate_s > 0 ? percent_change(r.time_s, c.estimate_s) : std::string("-")) << "\n";
      } else if (r.status == "time_limit") {
        out << "  slower: stopped at " << secs(r.time_s) << " s, iteration " << r.iterations << ", error "
            << std::setprecision(5) << r.final_error << " (the best before it took " << secs(c.bound_s) << " s)\n";
      } else {
        out << "  never: " << never_text(r, static_cast<int>(max_epochs)) << "\n";
      }
    }
  }

  // Learning points that never reached the target, and what was skipped.
  std::vector<std::string> never;
  for (std::size_t k = 0; k < points.size(); ++k)
    if (!convergence[k].reached)
      never.push_back("b " + std::to_string(points[k].b) + ", eta " + shortest(points[k].eta) + ", alpha " +
                      shortest(points[k].alpha) + ": " + never_text(convergence[k], static_cast<int>(max_epochs)));
  if (!never.empty()) {
    out << "never reached by the sequential run, so left out of the estimates:\n";
    for (const std::string& s : never) out << "  " << s << "\n";
  }
  if (skipped) {
    out << "skipped:\n";
    for (const Candidate& c : candidates)
      if (!c.skipped.empty())
        out << "  " << c.label() << ", p " << c.p << ", b " << c.b << ", eta " << shortest(c.eta) << ", alpha "
            << shortest(c.alpha) << ": " << c.skipped << "\n";
  }

  Json record = Json::object();
  record["wulf_record"] = 1;
  Json& cfg = record["config"];
  cfg = Json::object();
  cfg["command"] = "recommend";
  cfg["platform"] = platform;
  cfg["hosts"] = hosts.size();
  cfg["cores"] = cores;
  cfg["problem"] = problem.name;
  cfg["train_patterns"] = n;
  cfg["test_patterns"] = problem.test_total;
  cfg["target_error"] = target;
  cfg["error_metric"] = to_string(metric);
  cfg["strategies"] = join(strategy_names, ",");
  cfg["np"] = join_numbers(space.nps);
  cfg["blocks"] = join_numbers(space.blocks);
  cfg["etas"] = join_numbers(space.etas);
  cfg["alphas"] = join_numbers(space.alphas);
  cfg["intervals"] = join_numbers(space.intervals);
  cfg["finalists"] = finalists_k;
  cfg["max_epochs"] = max_epochs;
  cfg["seed"] = seed;
  cfg["prune"] = prune;
  cfg["jobs"] = jobs;
  Json common_json = Json::array();
  for (std::size_t i = 1; i < common.size(); ++i) common_json.push_back(common[i]);
  cfg["train_args"] = std::move(common_json);
  Json sim_json = Json::array();
  for (const std::string& s : sim_args) sim_json.push_back(s);
  cfg["sim_args"] = std::move(sim_json);
  cfg["versions"] = versions_json();
  Json conv = Json::array();
  for (std::size_t k = 0; k < points.size(); ++k) {
    Json e = outcome_json(convergence[k]);
    e["engine"] = "seq";  // time_s: wall seconds here; only iterations and errors matter
    e["b"] = points[k].b;
    e["eta"] = points[k].eta;
    e["alpha"] = points[k].alpha;
    conv.push_back(std::move(e));
  }
  record["convergence"] = std::move(conv);
  Json all = Json::array();
  for (const Candidate& c : candidates) all.push_back(candidate_json(c, estimate_reference, reference_s));
  record["candidates"] = std::move(all);

  std::vector<std::string> rerun;
  if (reference >= 0)
    record["reference"] =
        candidate_json(candidates[static_cast<std::size_t>(reference)], estimate_reference, reference_s);
  else
    record["reference"] = nullptr;
  if (choice >= 0) {
    const Candidate& c = candidates[static_cast<std::size_t>(choice)];
    Json j = candidate_json(c, estimate_reference, reference_s);
    j["time_s"] = c.confirmed->time_s;
    j["iterations"] = c.confirmed->iterations;
    j["speedup"] = reference_s > 0 ? Json(reference_s / c.confirmed->time_s) : Json(nullptr);
    rerun = common;
    rerun.insert(rerun.end(), sim_args.begin(), sim_args.end());
    const std::vector<std::string> own = candidate_args(c);
    rerun.insert(rerun.end(), own.begin(), own.end());
    rerun.insert(rerun.end(), {"--epochs", epochs});
    Json cmd = Json::array();
    for (const std::string& s : rerun) cmd.push_back(s);
    j["command"] = std::move(cmd);
    record["choice"] = std::move(j);
    out << "recommended: " << c.label() << ", p " << c.p << ", b " << c.b << ", eta " << shortest(c.eta) << ", alpha "
        << shortest(c.alpha) << ": " << metric_name << " <= " << shortest(target) << " in " << secs(c.confirmed->time_s)
        << " s simulated, " << c.confirmed->iterations << " iterations";
    if (reference == choice) {
      out << "; it is the fastest sequential configuration (speed-up 1)";
    } else if (reference_s > 0) {
      const Candidate& s = candidates[static_cast<std::size_t>(reference)];
      out << "; speed-up " << fixed(reference_s / c.confirmed->time_s, 2)
          << " over the best sequential configuration (b " << s.b << ", eta " << shortest(s.eta) << ", alpha "
          << shortest(s.alpha) << ": " << secs(reference_s) << " s)";
    }
    out << "\n  " << quoted_command(rerun) << "\n";
  } else {
    record["choice"] = nullptr;
    out << "no configuration reached " << metric_name << " <= " << shortest(target) << " within " << max_epochs
        << " iterations";
    double best = std::numeric_limits<double>::quiet_NaN();
    std::size_t at = 0;
    for (std::size_t k = 0; k < points.size(); ++k)
      if (!(convergence[k].best_error >= best)) best = convergence[k].best_error, at = k;
    if (std::isfinite(best))
      out << "; the lowest error, " << std::setprecision(5) << best << ", came from b " << points[at].b << ", eta "
          << shortest(points[at].eta) << ", alpha " << shortest(points[at].alpha) << " in iteration "
          << convergence[at].best_iteration;
    out << "\n";
  }
  const double total_s = seconds_since(t_start);
  Json wall = Json::object();
  wall["timing_s"] = timing_s;
  wall["convergence_s"] = convergence_s;
  wall["screening_s"] = screening_s;
  wall["confirmation_s"] = finalists.empty() ? 0.0 : confirmation_s;
  wall["total_s"] = total_s;
  record["wall"] = std::move(wall);
  out << "wall time: screening " << fixed(screening_s, 1) << " s (timing " << fixed(timing_s, 1) << " s, convergence "
      << fixed(convergence_s, 1) << " s), confirmation " << fixed(finalists.empty() ? 0.0 : confirmation_s, 1)
      << " s, total " << fixed(total_s, 1) << " s\n";
  if (vm.count("out")) {
    write_file_atomically(vm["out"].as<std::string>(), record_text(record) + "\n");
    out << "record: " << vm["out"].as<std::string>() << "\n";
  }
  (void)err;
  return exit_ok;
}

}  // namespace wulf
