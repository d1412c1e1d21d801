// `wulf recommend`: the fastest way to a target error on a platform (predict/recommend.hpp
// has the search). Its phases: parse (every input is checked before any run starts), screen
// the time per iteration, screen the iterations to the target, confirm the finalists, report.
// The runs are `wulf train` programs of their own (engine/launch.hpp's run_wulf_for_record),
// their records read back.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "engine/launch.hpp"
#include "util/json.hpp"
#include "cli/train_options.hpp"
#include "cli/options.hpp"
#include "util/files.hpp"
#include "data/problems.hpp"
#include "predict/recommend.hpp"
#include "train/result_record.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <string_view>
#include <thread>

namespace po = boost::program_options;

namespace wulf {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

// A phase's runs; a run that fails ends the line its phase began before the error.
void run_phase(const std::vector<std::function<void()>>& tasks, long long jobs, std::ostream& out) {
  try {
    run_tasks(tasks, static_cast<int>(jobs));
  } catch (...) {
    out << " stopped\n" << std::flush;
    throw;
  }
}

// The last line wulf printed on its error stream, its message, without "wulf: error: ".
std::string last_line(const std::string& text) { return wulf_last_message(text); }

// One `wulf train` run; a run that ends with a record (finished, or stopped on a fault with
// exit 3) returns it. A refusal (exit 2) is an input error naming the run; anything else
// an internal one.
Json train_record(const std::vector<std::string>& args, const std::string& path, double& wall_s) {
  const auto t0 = Clock::now();
  const WulfRun run = run_wulf_for_record(args, path);
  wall_s = seconds_since(t0);
  if (run.code == exit_input)
    throw InputError("wulf train refused a run of the search: " + last_line(run.err) + " (" + run.command + ")");
  if (run.code == exit_timeout) throw TimedOut{"a run of the search " + last_line(run.err) + " (" + run.command + ")"};
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

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

// Simulated seconds with enough digits to compare runs: 4 significant digits, at least 3
// after the point.
std::string secs(double v) {
  if (!std::isfinite(v)) return "-";
  return fixed(v, std::max(3, 4 - static_cast<int>(std::floor(std::log10(std::max(std::abs(v), 1e-9)))) - 1));
}

// How far the confirmed time is from the estimate: "+1.3%", "0.0%".
std::string percent_change(double confirmed, double estimated) {
  const double pct = 100 * (confirmed / estimated - 1);
  if (std::abs(pct) < 0.05) return "0.0%";
  return (pct > 0 ? "+" : "") + fixed(pct, 1) + "%";
}

std::string never_text(const RunOutcome& r, long long max_epochs) {
  std::string s = r.status == "diverged" ? fmt::format("diverged in iteration {}", r.iterations)
                                         : fmt::format("not within {} iterations", max_epochs);
  if (std::isfinite(r.best_error)) s += fmt::format(" (best {:.5g} in iteration {})", r.best_error, r.best_iteration);
  return s;
}

std::string quoted_command(const std::vector<std::string>& args) {
  std::string s = "wulf";
  for (const std::string& a : args) {
    const bool plain = a.find_first_of(" \t\"'$;&|<>*?()") == std::string::npos && !a.empty();
    s += " " + (plain ? a : "'" + a + "'");
  }
  return s;
}

po::options_description recommend_options() {
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
      "prune", on_off_word("prune")->default_value("on"),
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
      "allreduce", allreduce_value()->default_value("default"), "allreduce algorithm: default|rdb|redbcast")(
      "precision", precision_value()->default_value("float"), "arithmetic: float|double")(
      "bias", on_off_word("bias")->default_value("on"), "bias weights: on|off")(
      "momentum", po::value<std::string>(), "momentum rule: classic|damped (default: the problem's)")(
      "block-step", po::value<std::string>(),
      "a block's update: sum|mean of its patterns' updates (default: the problem's)")(
      "train-size", po::value<long long>()->default_value(0), "use only the first N training patterns (0: all)")(
      "test-size", po::value<long long>()->default_value(0), "use only the first N test patterns (0: all)")(
      "data-dir", po::value<std::string>(), "folder of the MNIST IDX files")(
      "bw-scale", po::value<double>()->default_value(1.0), "what-if: every link's bandwidth times this")(
      "lat-scale", po::value<double>()->default_value(1.0), "what-if: every link's latency times this")(
      "speed-scale", po::value<double>()->default_value(1.0), "what-if: every host's speed times this")(
      "timeout", timeout_value(), timeout_help("each run: ").c_str());
  po::options_description options("wulf recommend --platform FILE.xml --problem NAME --target-error E [options]", 110,
                                  55);
  options.add(search).add(training);
  return options;
}

// Phase 1, parse: what was asked, every input checked.
struct Request {
  std::string platform;
  std::size_t hosts = 0;
  long long cores = 0;       // over all hosts
  std::string problem_spec;  // as given to --problem, passed on to the runs
  Problem problem;           // its sizes and defaults only (shape only: no data read)
  double target = 0;
  long long seed = 1;
  SearchSpace space;
  long long finalists = 3, max_epochs = 0, jobs = 1, show = 10;
  bool prune = true;
  ErrorMetric metric = ErrorMetric::rmse;
  std::vector<std::string> common;    // wulf train's options every run shares
  std::vector<std::string> sim_args;  // and those of every simulation on the platform
  std::optional<std::string> out;     // --out: where the record goes

  std::string epochs() const { return std::to_string(max_epochs); }
  std::string metric_name() const {
    return metric == ErrorMetric::classification ? "class error" : std::string(to_string(metric));
  }
  // wulf train's options that simulate c on the platform, before the phase's own.
  std::vector<std::string> simulation_args(const Candidate& c) const {
    std::vector<std::string> a = common;
    a.insert(a.end(), sim_args.begin(), sim_args.end());
    const std::vector<std::string> own = candidate_args(c);
    a.insert(a.end(), own.begin(), own.end());
    return a;
  }
  // The run that confirms c, and the one that repeats the choice: with arithmetic, to the target.
  std::vector<std::string> confirm_args(const Candidate& c) const {
    std::vector<std::string> a = simulation_args(c);
    a.insert(a.end(), {"--epochs", epochs()});
    return a;
  }
};

// The problem's sizes and defaults, its data not read.
Problem load_problem(const po::variables_map& vm, long long seed) {
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
  return make_problem(vm["problem"].as<std::string>(), po_);
}

std::vector<Strategy> parse_strategies(const std::string& list) {
  std::vector<Strategy> strategies;
  for (const std::string& name : split_list(list)) {
    Strategy s{};
    try {
      s = parse_strategy(name);
    } catch (const InputError&) {
      throw InputError("--strategies: unknown strategy '" + name + "' (expected " + searched_strategy_names(" or ") + ")");
    }
    if (!s->search)
      throw InputError("--strategies: '" + name + "' is not searched (wulf recommend searches " +
                       searched_strategy_names(" and ") + ")");
    strategies.push_back(s);
  }
  if (strategies.empty()) throw InputError("--strategies: empty list");
  return strategies;
}

// --np, or the powers of two up to the platform's cores; 1 always, sorted, once each.
std::vector<int> parse_nps(const po::variables_map& vm, const Request& r) {
  std::vector<int> nps;
  if (vm.count("np")) {
    for (long long p : whole_list(vm["np"].as<std::string>(), "np")) {
      if (p > r.cores)
        throw InputError("--np " + std::to_string(p) + ": the platform " + r.platform + " has only " +
                         std::to_string(r.cores) + " cores on " + std::to_string(r.hosts) + " hosts");
      nps.push_back(static_cast<int>(p));
    }
  } else {
    for (long long p = 2; p <= r.cores; p *= 2) nps.push_back(static_cast<int>(p));
  }
  if (std::find(nps.begin(), nps.end(), 1) == nps.end()) nps.insert(nps.begin(), 1);
  std::sort(nps.begin(), nps.end());
  nps.erase(std::unique(nps.begin(), nps.end()), nps.end());
  return nps;
}

// --blocks, or the problem's block times 1, 4, 16, 64 up to the training set.
std::vector<std::size_t> parse_blocks(const po::variables_map& vm, const Problem& problem) {
  const std::size_t n = problem.train_total;
  const ProblemDefaults& d = problem.defaults;
  std::vector<std::size_t> blocks;
  if (vm.count("blocks")) {
    for (long long b : whole_list(vm["blocks"].as<std::string>(), "blocks")) {
      if (static_cast<std::size_t>(b) > n)
        throw InputError("--blocks: " + std::to_string(b) + " is larger than the training set of " + problem.name +
                         " (" + std::to_string(n) + " patterns)");
      blocks.push_back(static_cast<std::size_t>(b));
    }
  } else {
    const std::size_t b0 = d.learning == Learning::pattern                 ? 1
                           : d.learning == Learning::epoch || d.block == 0 ? n
                                                                           : d.block;
    for (std::size_t f : {1, 4, 16, 64})
      if (b0 * f <= n) blocks.push_back(b0 * f);
    if (blocks.empty()) blocks.push_back(n);
  }
  return blocks;
}

SearchSpace parse_space(const po::variables_map& vm, const Request& r) {
  const ProblemDefaults& d = r.problem.defaults;
  SearchSpace space;
  space.train_patterns = r.problem.train_total;
  space.strategies = parse_strategies(vm["strategies"].as<std::string>());
  space.nps = parse_nps(vm, r);
  space.blocks = parse_blocks(vm, r.problem);
  space.etas = vm.count("etas") ? number_list(vm["etas"].as<std::string>(), "etas") : std::vector<double>{d.eta};
  for (double eta : space.etas)
    if (!(eta > 0)) throw InputError("--etas: " + shortest(eta) + " is not a positive learning rate");
  space.alphas =
      vm.count("alphas") ? number_list(vm["alphas"].as<std::string>(), "alphas") : std::vector<double>{d.alpha};
  for (double alpha : space.alphas)
    if (!(alpha >= 0 && alpha < 1)) throw InputError("--alphas: " + shortest(alpha) + " is not a momentum in [0, 1)");
  for (long long a : whole_list(vm["intervals"].as<std::string>(), "intervals", 0))
    space.intervals.push_back(static_cast<std::size_t>(a));
  return space;
}

// --finalists, --max-epochs, --jobs, --show and --prune.
void parse_limits(const po::variables_map& vm, Request& r) {
  r.finalists = vm["finalists"].as<long long>();
  if (r.finalists < 1) throw InputError("--finalists: must be at least 1");
  r.max_epochs = vm.count("max-epochs") ? vm["max-epochs"].as<long long>() : r.problem.defaults.iterations;
  if (r.max_epochs < 1 || r.max_epochs > 100'000'000) throw InputError("--max-epochs: must be in 1..100000000");
  r.jobs = vm["jobs"].as<long long>();
  if (r.jobs < 1 || r.jobs > 256) throw InputError("--jobs: must be in 1..256");
  r.show = vm["show"].as<long long>();
  if (r.show < 0) throw InputError("--show: must not be negative");
  r.prune = vm["prune"].as<std::string>() == "on";
}

// The training options passed on to the runs, checked here so that no run refuses them;
// returns the error metric.
ErrorMetric check_training_options(const po::variables_map& vm, const Problem& problem) {
  const ErrorMetric metric = vm.count("error")    ? parse_error_metric(vm["error"].as<std::string>())
                             : problem.classifier ? ErrorMetric::classification
                                                  : ErrorMetric::rmse;
  if (metric == ErrorMetric::classification && !problem.classifier)
    throw InputError("--error class: the targets of " + problem.name + " are not classes");
  const ComputeMode mode = parse_compute_mode(vm["compute"].as<std::string>());
  if (mode == ComputeMode::measured)
    throw InputError("--compute measured: screening simulates without the arithmetic, which measured times");
  if (mode == ComputeMode::wall)
    throw InputError("--compute wall: screening simulates, and a simulation has no wall clock to charge (flops or "
                     "calibrated)");
  if (mode == ComputeMode::calibrated && !vm.count("profile"))
    throw InputError("--compute calibrated needs --profile FILE");
  if (vm.count("profile")) {
    if (mode != ComputeMode::calibrated) throw InputError("--profile is for --compute calibrated");
    read_profile(vm["profile"].as<std::string>());
  }
  if (vm.count("momentum")) parse_momentum_rule(vm["momentum"].as<std::string>());
  if (vm.count("block-step")) parse_block_step(vm["block-step"].as<std::string>());
  for (const char* scale : {"bw-scale", "lat-scale", "speed-scale"}) {
    const double v = vm[scale].as<double>();
    if (!(v > 0) || !std::isfinite(v)) throw InputError("--" + std::string(scale) + ": must be a positive number");
  }
  return metric;
}

// The options every run shares (common), and those only simulations take (sim_args): only
// simulations charge compute; the sequential runs count iterations.
void set_run_options(const po::variables_map& vm, Request& r) {
  r.common = {"train",
              "--problem",
              r.problem_spec,
              "--target-error",
              shortest(r.target),
              "--seed",
              std::to_string(r.seed),
              "--quiet",
              "--error",
              std::string(to_string(r.metric))};
  for (const char* key : {"allreduce", "precision", "bias", "momentum", "block-step", "data-dir"})
    if (vm.count(key) && !vm[key].defaulted())
      r.common.insert(r.common.end(), {"--" + std::string(key), vm[key].as<std::string>()});
  for (const char* key : {"train-size", "test-size"})
    if (!vm[key].defaulted())
      r.common.insert(r.common.end(), {"--" + std::string(key), std::to_string(vm[key].as<long long>())});
  if (vm.count("timeout")) r.common.insert(r.common.end(), {"--timeout", shortest(vm["timeout"].as<double>())});
  r.sim_args = {"--engine", "sim", "--platform", r.platform};
  for (const char* key : {"compute", "profile"})
    if (vm.count(key) && !vm[key].defaulted())
      r.sim_args.insert(r.sim_args.end(), {"--" + std::string(key), vm[key].as<std::string>()});
  for (const char* key : {"bw-scale", "lat-scale", "speed-scale"})
    if (!vm[key].defaulted())
      r.sim_args.insert(r.sim_args.end(), {"--" + std::string(key), shortest(vm[key].as<double>())});
}

Request parse_request(const po::variables_map& vm) {
  for (const char* required : {"platform", "problem", "target-error"})
    if (!vm.count(required)) throw InputError("wulf recommend: --" + std::string(required) + " is required");
  Request r;
  r.target = vm["target-error"].as<double>();
  if (!(r.target > 0) || !std::isfinite(r.target))
    throw InputError("--target-error: " + shortest(r.target) +
                     " must be a positive number (for every pattern right with --error class, give one below 1/n)");
  r.platform = vm["platform"].as<std::string>();
  r.problem_spec = vm["problem"].as<std::string>();
  if (vm.count("out")) {
    r.out = vm["out"].as<std::string>();
    check_output(*r.out, "--out", {{"--platform", r.platform}});
  }
  const std::vector<PlatformHost> hosts = platform_hosts(r.platform).hosts;
  r.hosts = hosts.size();
  for (const PlatformHost& h : hosts) r.cores += h.cores;
  r.seed = vm["seed"].as<long long>();
  if (r.seed < 0) throw InputError("--seed: must not be negative");
  r.problem = load_problem(vm, r.seed);
  r.space = parse_space(vm, r);
  parse_limits(vm, r);
  r.metric = check_training_options(vm, r.problem);
  set_run_options(vm, r);
  return r;
}

std::string strategy_list(const SearchSpace& space) {
  std::vector<std::string> names;
  for (Strategy s : space.strategies) names.push_back(std::string(to_string(s)));
  return join(names, ",");
}

std::size_t count_skipped(const std::vector<Candidate>& candidates) {
  return static_cast<std::size_t>(
      std::count_if(candidates.begin(), candidates.end(), [](const Candidate& c) { return !c.skipped.empty(); }));
}

void print_search(const Request& r, const std::vector<Candidate>& candidates, std::ostream& out) {
  const SearchSpace& space = r.space;
  const std::size_t skipped = count_skipped(candidates);
  out << "wulf recommend: " << r.problem.name << " (" << r.problem.train_total << " training, " << r.problem.test_total
      << " test patterns) on " << r.platform << " (" << r.hosts << " hosts, " << r.cores << " cores)\n"
      << "  target: " << r.metric_name() << " <= " << shortest(r.target) << " within " << r.max_epochs
      << " iterations, seed " << r.seed << "\n"
      << "  search: strategies " << strategy_list(space) << "; p " << join_numbers(space.nps) << "; b "
      << join_numbers(space.blocks) << "; eta " << join_numbers(space.etas) << "; alpha " << join_numbers(space.alphas);
  if (std::any_of(space.strategies.begin(), space.strategies.end(),
                  [](Strategy s) { return !s->search->interval_option.empty(); }))
    out << "; average intervals " << join_numbers(space.intervals);
  out << ": " << candidates.size() - skipped << " candidates";
  if (skipped) out << " (" << skipped << " more skipped)";
  out << "\n" << std::flush;
}

// Phase 2, screening the time of one iteration, without arithmetic, once per (strategy, p,
// b, a); returns the wall seconds it took.
double screen_iteration_times(const Request& r, std::vector<Candidate>& candidates, const TempDir& scratch,
                              std::ostream& out) {
  const auto t0 = Clock::now();
  const TimingPlan plan = plan_timings(candidates);
  out << "screening: time per iteration, " << plan.timed.size() << " simulations without arithmetic ..." << std::flush;
  std::vector<double> iteration_s(plan.timed.size());
  std::vector<std::function<void()>> tasks;
  for (std::size_t j = 0; j < plan.timed.size(); ++j)
    tasks.push_back([&, j] {
      std::vector<std::string> a = r.simulation_args(candidates[plan.timed[j]]);
      // Every iteration charges the same simulated time (compute charges depend on counts,
      // not values), so one iteration gives the time per iteration.
      a.insert(a.end(), {"--numerics", "off", "--epochs", "1"});
      double wall = 0;
      const std::string path = scratch.file("time-" + std::to_string(j) + ".json");
      const Json record = train_record(a, path, wall);
      iteration_s[j] =
          json_field<double>(record, "/final/time_s", path) / json_field<double>(record, "/final/iterations", path);
    });
  run_phase(tasks, r.jobs, out);
  set_iteration_times(candidates, plan, iteration_s);
  const double wall_s = seconds_since(t0);
  out << " " << fixed(wall_s, 1) << " s\n";
  return wall_s;
}

// Phase 3, screening the iterations to the target: one sequential run with arithmetic per
// (b, eta, alpha).
struct Convergence {
  std::vector<RunOutcome> runs;  // per learning point
  double wall_s = 0;
};

Convergence screen_convergence(const Request& r, const std::vector<LearningPoint>& points, const TempDir& scratch,
                               std::ostream& out) {
  out << "screening: iterations to the target, " << points.size() << " sequential run(s) with arithmetic ..."
      << std::flush;
  const auto t0 = Clock::now();
  Convergence result;
  result.runs.resize(points.size());
  std::vector<std::function<void()>> tasks;
  for (std::size_t k = 0; k < points.size(); ++k)
    tasks.push_back([&, k] {
      Candidate seq;
      seq.b = points[k].b, seq.eta = points[k].eta, seq.alpha = points[k].alpha;
      std::vector<std::string> a = r.common;
      const std::vector<std::string> own = candidate_args(seq);
      a.insert(a.end(), own.begin(), own.end());
      a.insert(a.end(), {"--engine", "seq", "--epochs", r.epochs()});
      double wall = 0;
      const std::string path = scratch.file("conv-" + std::to_string(k) + ".json");
      result.runs[k] = outcome_of_record(train_record(a, path, wall), path);
      result.runs[k].wall_s = wall;
    });
  run_phase(tasks, r.jobs, out);
  result.wall_s = seconds_since(t0);
  out << " " << fixed(result.wall_s, 1) << " s\n";
  return result;
}

// What the search found, phase by phase.
struct Search {
  std::vector<LearningPoint> points;
  std::vector<Candidate> candidates;    // timed, estimated, the finalists confirmed
  std::vector<RunOutcome> convergence;  // per learning point, its sequential run
  std::vector<std::size_t> finalists;
};

void print_convergence(const Request& r, const Search& s, std::ostream& out) {
  fmt::print(out, "{:>8}{:>9}{:>8}   iterations to the target (sequential)\n", "b", "eta", "alpha");
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    const RunOutcome& run = s.convergence[k];
    fmt::print(out, "{:>8}{:>9}{:>8}   {}\n", s.points[k].b, shortest(s.points[k].eta), shortest(s.points[k].alpha),
               run.reached ? std::to_string(run.iterations) : "never: " + never_text(run, r.max_epochs));
  }
}

// The columns that name a candidate in the tables; the header passes their titles.
template <class P, class B>
std::string name_columns(std::string_view strategy, const P& p, const B& b, std::string_view eta,
                         std::string_view alpha) {
  return fmt::format("  {:<13}{:>4}{:>7}{:>7}{:>7}", strategy, p, b, eta, alpha);
}

std::string name_columns(const Candidate& c) {
  return name_columns(c.label(), c.p, c.b, shortest(c.eta), shortest(c.alpha));
}

void print_estimates(const Request& r, const std::vector<Candidate>& candidates, std::ostream& out) {
  const std::vector<std::size_t> ranked = rank_by_estimate(candidates);
  if (ranked.empty()) return;
  const double reference = sequential_estimate_reference(candidates);
  const std::size_t show = static_cast<std::size_t>(r.show);
  out << "screening estimates (simulated time per iteration x sequential iterations), fastest first:\n";
  fmt::print(out, "{}{:>13}{:>12}{:>12}{:>10}\n", name_columns("strategy", "p", "b", "eta", "alpha"), "s/iteration",
             "iterations", "time_s", "speed-up");
  for (std::size_t k = 0; k < ranked.size() && k < show; ++k) {
    const Candidate& c = candidates[ranked[k]];
    fmt::print(out, "{}{:>13}{:>12}{:>12}{:>10}{}\n", name_columns(c), secs(c.iteration_s), c.estimate_iterations,
               secs(c.estimate_s), reference > 0 ? fixed(reference / c.estimate_s, 2) : "-",
               c.basis == ConvergenceBasis::assumed ? "  (iterations assumed)" : "");
  }
  if (ranked.size() > show) out << "  ... " << ranked.size() - show << " more in the record\n";
}

// Phase 4, confirmation: the finalists simulated with arithmetic on the platform.
struct Confirmation {
  std::vector<std::size_t> finalists;
  double wall_s = 0;  // 0 when there were none
};

Confirmation confirm(const Request& r, std::vector<Candidate>& candidates, const TempDir& scratch, std::ostream& out) {
  Confirmation result;
  result.finalists = pick_finalists(candidates, static_cast<std::size_t>(r.finalists));
  if (result.finalists.empty()) return result;
  const auto t0 = Clock::now();
  out << "confirmation: " << result.finalists.size() << " finalist(s) simulated with real arithmetic on the platform"
      << (r.prune ? " (each stops once slower than the best before it)" : "") << " ..." << std::flush;
  auto run = [&](const Candidate& c, std::size_t f) {
    std::vector<std::string> a = r.confirm_args(c);
    if (c.bound_s > 0) a.insert(a.end(), {"--max-seconds", shortest(c.bound_s)});
    double wall = 0;
    const std::string path = scratch.file("final-" + std::to_string(f) + ".json");
    RunOutcome o = outcome_of_record(train_record(a, path, wall), path);
    o.wall_s = wall;
    return o;
  };
  run_phase({[&] { confirm_finalists(candidates, result.finalists, r.prune, run); }}, 1, out);
  result.wall_s = seconds_since(t0);
  out << " " << fixed(result.wall_s, 1) << " s\n";
  return result;
}

// Phase 5, the report: the speed-ups' references and the choice.
struct Verdict {
  double estimate_reference = 0;  // the fastest sequential estimate (0: none)
  long reference = -1;            // the fastest confirmed sequential candidate (-1: none)
  double reference_s = 0;         // its confirmed time (0: none)
  long choice = -1;               // the fastest confirmed candidate (-1: none)
};

Verdict decide(const std::vector<Candidate>& candidates) {
  Verdict v;
  v.estimate_reference = sequential_estimate_reference(candidates);
  v.reference = best_sequential(candidates);
  v.choice = best_confirmed(candidates);
  v.reference_s = v.reference >= 0 ? candidates[static_cast<std::size_t>(v.reference)].confirmed->time_s : 0;
  return v;
}

void print_confirmed(const Request& r, const Search& s, const Verdict& v, std::ostream& out) {
  if (s.finalists.empty()) return;
  out << "fastest configurations to the target, confirmed (simulated seconds on " << r.platform << "):\n";
  fmt::print(out, "{}{:>12}{:>12}{:>10}{:>11}\n", name_columns("strategy", "p", "b", "eta", "alpha"), "time_s",
             "iterations", "speed-up", "estimate");
  for (std::size_t i : order_by_confirmed(s.candidates, s.finalists)) {
    const Candidate& c = s.candidates[i];
    const RunOutcome& o = *c.confirmed;
    out << name_columns(c);
    if (o.reached)
      fmt::print(out, "{:>12}{:>12}{:>10}{:>10}\n", secs(o.time_s), o.iterations,
                 v.reference_s > 0 ? fixed(v.reference_s / o.time_s, 2) : "-",
                 c.estimate_s > 0 ? percent_change(o.time_s, c.estimate_s) : "-");
    else if (o.status == "time_limit")
      fmt::print(out, "  slower: stopped at {} s, iteration {}, error {:.5g} (the best before it took {} s)\n",
                 secs(o.time_s), o.iterations, o.final_error, secs(c.bound_s));
    else
      out << "  never: " << never_text(o, r.max_epochs) << "\n";
  }
}

// The learning points that never reached the target, and what was skipped.
void print_left_out(const Request& r, const Search& s, std::ostream& out) {
  std::vector<std::string> never;
  for (std::size_t k = 0; k < s.points.size(); ++k)
    if (!s.convergence[k].reached)
      never.push_back("b " + std::to_string(s.points[k].b) + ", eta " + shortest(s.points[k].eta) + ", alpha " +
                      shortest(s.points[k].alpha) + ": " + never_text(s.convergence[k], r.max_epochs));
  if (!never.empty()) {
    out << "never reached by the sequential run, so left out of the estimates:\n";
    for (const std::string& line : never) out << "  " << line << "\n";
  }
  if (count_skipped(s.candidates)) {
    out << "skipped:\n";
    for (const Candidate& c : s.candidates)
      if (!c.skipped.empty())
        out << "  " << c.label() << ", p " << c.p << ", b " << c.b << ", eta " << shortest(c.eta) << ", alpha "
            << shortest(c.alpha) << ": " << c.skipped << "\n";
  }
}

Json config_json(const Request& r) {
  Json cfg = Json::object();
  cfg["command"] = "recommend";
  cfg["platform"] = r.platform;
  cfg["hosts"] = r.hosts;
  cfg["cores"] = r.cores;
  cfg["problem"] = r.problem.name;
  cfg["train_patterns"] = r.problem.train_total;
  cfg["test_patterns"] = r.problem.test_total;
  cfg["target_error"] = r.target;
  cfg["error_metric"] = to_string(r.metric);
  cfg["strategies"] = strategy_list(r.space);
  cfg["np"] = join_numbers(r.space.nps);
  cfg["blocks"] = join_numbers(r.space.blocks);
  cfg["etas"] = join_numbers(r.space.etas);
  cfg["alphas"] = join_numbers(r.space.alphas);
  cfg["intervals"] = join_numbers(r.space.intervals);
  cfg["finalists"] = r.finalists;
  cfg["max_epochs"] = r.max_epochs;
  cfg["seed"] = r.seed;
  cfg["prune"] = r.prune;
  cfg["jobs"] = r.jobs;
  Json common_json = Json::array();
  for (std::size_t i = 1; i < r.common.size(); ++i) common_json.push_back(r.common[i]);
  cfg["train_args"] = std::move(common_json);
  Json sim_json = Json::array();
  for (const std::string& a : r.sim_args) sim_json.push_back(a);
  cfg["sim_args"] = std::move(sim_json);
  cfg["versions"] = versions_json();
  return cfg;
}

// The record without its wall times: every candidate, the screening and the confirmation,
// the reference and the choice.
Json search_record(const Request& r, const Search& s, const Verdict& v) {
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = config_json(r);
  Json conv = Json::array();
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    Json e = outcome_json(s.convergence[k]);
    e["engine"] = "seq";  // time_s: wall seconds here; only iterations and errors matter
    e["b"] = s.points[k].b;
    e["eta"] = s.points[k].eta;
    e["alpha"] = s.points[k].alpha;
    conv.push_back(std::move(e));
  }
  record["convergence"] = std::move(conv);
  Json all = Json::array();
  for (const Candidate& c : s.candidates) all.push_back(candidate_json(c, v.estimate_reference, v.reference_s));
  record["candidates"] = std::move(all);
  if (v.reference >= 0)
    record["reference"] =
        candidate_json(s.candidates[static_cast<std::size_t>(v.reference)], v.estimate_reference, v.reference_s);
  else
    record["reference"] = nullptr;
  if (v.choice >= 0) {
    const Candidate& c = s.candidates[static_cast<std::size_t>(v.choice)];
    Json j = candidate_json(c, v.estimate_reference, v.reference_s);
    j["time_s"] = c.confirmed->time_s;
    j["iterations"] = c.confirmed->iterations;
    j["speedup"] = v.reference_s > 0 ? Json(v.reference_s / c.confirmed->time_s) : Json(nullptr);
    Json cmd = Json::array();
    for (const std::string& a : r.confirm_args(c)) cmd.push_back(a);
    j["command"] = std::move(cmd);
    record["choice"] = std::move(j);
  } else {
    record["choice"] = nullptr;
  }
  return record;
}

// No run reached the target: the lowest error any sequential run came to, and where.
void print_no_choice(const Request& r, const Search& s, std::ostream& out) {
  out << "no configuration reached " << r.metric_name() << " <= " << shortest(r.target) << " within " << r.max_epochs
      << " iterations";
  double best = std::numeric_limits<double>::quiet_NaN();
  std::size_t at = 0;
  for (std::size_t k = 0; k < s.points.size(); ++k)
    if (!(s.convergence[k].best_error >= best)) best = s.convergence[k].best_error, at = k;
  if (std::isfinite(best))
    fmt::print(out, "; the lowest error, {:.5g}, came from b {}, eta {}, alpha {} in iteration {}", best,
               s.points[at].b, shortest(s.points[at].eta), shortest(s.points[at].alpha),
               s.convergence[at].best_iteration);
  out << "\n";
}

void print_recommendation(const Request& r, const Search& s, const Verdict& v, std::ostream& out) {
  if (v.choice < 0) return print_no_choice(r, s, out);
  const Candidate& c = s.candidates[static_cast<std::size_t>(v.choice)];
  out << "recommended: " << c.label() << ", p " << c.p << ", b " << c.b << ", eta " << shortest(c.eta) << ", alpha "
      << shortest(c.alpha) << ": " << r.metric_name() << " <= " << shortest(r.target) << " in "
      << secs(c.confirmed->time_s) << " s simulated, " << c.confirmed->iterations << " iterations";
  if (v.reference == v.choice) {
    out << "; it is the fastest sequential configuration (speed-up 1)";
  } else if (v.reference_s > 0) {
    const Candidate& seq = s.candidates[static_cast<std::size_t>(v.reference)];
    out << "; speed-up " << fixed(v.reference_s / c.confirmed->time_s, 2)
        << " over the best sequential configuration (b " << seq.b << ", eta " << shortest(seq.eta) << ", alpha "
        << shortest(seq.alpha) << ": " << secs(v.reference_s) << " s)";
  }
  out << "\n  " << quoted_command(r.confirm_args(c)) << "\n";
}

// What the search took on this machine.
struct WallTimes {
  double timing_s = 0, convergence_s = 0, screening_s = 0, confirmation_s = 0, total_s = 0;

  Json json() const {
    Json wall = Json::object();
    wall["timing_s"] = timing_s;
    wall["convergence_s"] = convergence_s;
    wall["screening_s"] = screening_s;
    wall["confirmation_s"] = confirmation_s;
    wall["total_s"] = total_s;
    return wall;
  }
};

void print_help(const po::options_description& options, std::ostream& out) {
  out << options << "\n"
      << "Screening times one iteration of every (strategy, p, b) by simulation without arithmetic and counts\n"
         "the iterations to the target once per (b, eta, alpha) by sequential training; their product is the\n"
         "estimate. The finalists are then simulated with real arithmetic on the platform, and decide.\n";
}

}  // namespace

int recommend_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = recommend_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    print_help(options, out);
    return exit_ok;
  }
  const Request r = parse_request(vm);
  Search s;
  s.points = learning_points(r.space);
  s.candidates = make_candidates(r.space, s.points);
  print_search(r, s.candidates, out);

  const TempDir scratch("recommend");
  const auto t_start = Clock::now();
  WallTimes wall;
  wall.timing_s = screen_iteration_times(r, s.candidates, scratch, out);
  Convergence convergence = screen_convergence(r, s.points, scratch, out);
  wall.convergence_s = convergence.wall_s;
  s.convergence = std::move(convergence.runs);
  print_convergence(r, s, out);
  estimate(s.candidates, s.convergence);
  wall.screening_s = seconds_since(t_start);
  print_estimates(r, s.candidates, out);

  Confirmation confirmation = confirm(r, s.candidates, scratch, out);
  wall.confirmation_s = confirmation.wall_s;
  s.finalists = std::move(confirmation.finalists);

  const Verdict v = decide(s.candidates);
  print_confirmed(r, s, v, out);
  print_left_out(r, s, out);
  Json record = search_record(r, s, v);
  print_recommendation(r, s, v, out);
  wall.total_s = seconds_since(t_start);
  record["wall"] = wall.json();
  fmt::print(
      out,
      "wall time: screening {:.1f} s (timing {:.1f} s, convergence {:.1f} s), confirmation {:.1f} s, total {:.1f} s\n",
      wall.screening_s, wall.timing_s, wall.convergence_s, wall.confirmation_s, wall.total_s);
  if (r.out) {
    write_file_atomically(*r.out, record_text(record) + "\n");
    out << "record: " << *r.out << "\n";
  }
  (void)err;
  return exit_ok;
}

}  // namespace wulf
