#include "cli/cli.hpp"
#include "util/errors.hpp"

#include "comm/comm.hpp"
#include "predict/comm_bench.hpp"
#include "comm/compute.hpp"
#include "engine/launch.hpp"
#include "comm/staged_reduce.hpp"
#include "util/json.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "nn/mlp.hpp"
#include "data/problems.hpp"
#include "train/result_record.hpp"
#include "train/session.hpp"
#include "train/trainer.hpp"
#include "nn/weights_file.hpp"

#include <wulf/build_info.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fcntl.h>
#include <unistd.h>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace po = boost::program_options;

namespace wulf {
namespace {

// A profile's constants are per pattern of one net in one precision: charging them for
// another net or precision would give a silently wrong time, so the run is refused.
void check_profile_fits(const Profile& profile, const std::string& problem, const NetSpec& spec,
                        const std::string& precision) {
  const std::string where = "--profile " + profile.name + ": ";
  if (!profile.problem.empty()) {
    const auto family = [](const std::string& s) { return s.substr(0, s.find(':')); };
    const bool same = profile.problem.find(':') == std::string::npos ? family(problem) == profile.problem
                                                                      : problem == profile.problem;
    if (!same) throw InputError(where + "measured on problem " + profile.problem + ", this run is " + problem);
  }
  if (!profile.precision.empty() && profile.precision != precision)
    throw InputError(where + "measured in " + profile.precision + " precision, this run is " + precision +
                     " (--precision " + profile.precision + ")");
  const double w = static_cast<double>(spec.parameter_count());
  if (profile.w > 0 && profile.w != w)
    throw InputError(where + "measured on a net of " + std::to_string(static_cast<long long>(profile.w)) + " weights, this run's net has " +
                     std::to_string(static_cast<long long>(w)) + " (" + problem + (spec.bias ? ", bias on" : ", bias off") + ")");
}

const char* usage =
    "usage: wulf <command> [options]\n"
    "\n"
    "commands:\n"
    "  study      the main job: seed 000's Table VII by paper, model and simulator, and this machine\n"
    "  train      train a network on a problem and report its errors (wulf train --help)\n"
    "  platform   inspect a SimGrid platform (info) or measure it in simulation (bench)\n"
    "  model      seed 000's predicted speedup and efficiency from a calibration profile\n"
    "  calibrate  measure seed 000's constants on this machine: a profile and a platform\n"
    "  validate   model and simulator against real mpirun on this machine (seed 000's Table VI)\n"
    "  recommend  the fastest strategy, p and b to a target error on a platform, searched by simulation\n"
    "  plot       draw the error curves of result records against time or iterations into one PNG\n"
    "\n"
    "wulf --version prints the version and the libraries it was built with.\n";

// Every option of `wulf train`. Options whose default depends on the problem have no
// Boost default; their help says "the problem's" and ProblemDefaults fills them in.
po::options_description train_options() {
  po::options_description general("general", 110, 55);
  general.add_options()
      ("help,h", "print this help")
      ("config", po::value<std::string>(), "read options from FILE (lines of key = value; the command line wins)");

  po::options_description problem("problem", 110, 55);
  problem.add_options()
      ("problem", po::value<std::string>()->default_value("digits"), "the problem (see the list below)")
      ("data-dir", po::value<std::string>(),
       ("folder of the MNIST IDX files (default: $WULF_MNIST_DIR, else " + std::string(build::mnist_dir) + ")").c_str())
      ("test-data", po::value<std::string>(), "fann: a test set in FANN's format")
      ("train-size", po::value<long long>()->default_value(0), "use only the first N training patterns (0: all)")
      ("test-size", po::value<long long>()->default_value(0), "use only the first N test patterns (0: all)");

  po::options_description net("network", 110, 55);
  net.add_options()
      ("hidden", po::value<std::string>(), "hidden layer sizes, e.g. 64,64, or none (default: the problem's)")
      ("activation", po::value<std::string>(), "hidden activation: sigmoid|tanh|linear (default: the problem's)")
      ("output-activation", po::value<std::string>(), "output activation: sigmoid|tanh|linear|softmax (default: the problem's)")
      ("loss", po::value<std::string>(), "loss: mse|ce (default: the problem's)")
      ("bias", po::value<std::string>()->default_value("on"), "bias weights: on|off (seed 000 counts none)")
      ("precision", po::value<std::string>()->default_value("float"), "arithmetic: float|double")
      ("init-range", po::value<double>(), "initial weights uniform in [-r, r]; 0: 1/sqrt(fan-in) (default: the problem's)");

  po::options_description parallel("engine", 110, 55);
  parallel.add_options()
      ("engine", po::value<std::string>()->default_value("seq"),
       "where it runs: seq (this process), real (mpirun), sim (smpirun on --platform)")
      ("np", po::value<long long>()->default_value(1), "ranks (real, sim)")
      ("strategy", po::value<std::string>()->default_value("block"),
       "parallel strategy: block (training-set parallelism, seed 000), average (weight averaging, seed 000), "
       "ppt (pattern parallel training, seed 001), scatter (scatter/gather, seed 003), root (threads and a "
       "root update, seed 004), session (a parameter sweep, seed 000), cg (master-worker batch conjugate "
       "gradient, seed 002)")
      ("average-interval", po::value<long long>()->default_value(0),
       "average: patterns per rank between weight averagings (0: every block)")
      ("local-epoch", po::value<long long>()->default_value(0), "ppt: patterns each rank draws per round (0: n / np)")
      ("rounds-per-iteration", po::value<long long>()->default_value(0),
       "ppt: rounds in one iteration, i.e. between wulf's error records and their allreduce (0: n / (np e) "
       "rounded up, about n patterns over all ranks)")
      ("error-window", po::value<long long>()->default_value(4),
       "ppt: k, the error estimate covers each rank's last k n / np patterns")
      ("threads", po::value<long long>()->default_value(1), "root: threads inside each rank")
      ("sweep", po::value<std::string>(), "session: e.g. \"eta=0.5,1.5;alpha=0.5,0.9;block=4,16\"")
      ("reduce", po::value<std::string>()->default_value("default"),
       "reduce algorithm: default, binomial (the library reduce of seed 002's LAM), wulf-binomial (the same tree "
       "from wulf's own point-to-point messages), four-stage (seed 002's topology-aware reduce; needs a layout)")
      ("reduce-layout", po::value<std::string>(),
       "four-stage: ranks in nodes and groups, e.g. groups=4,nodes=24,cpus=2,outside=2,fan-in=3 (sim: read from "
       "the platform's wulf:group / wulf:node host properties and wulf:nics zone property when not given)")
      ("bcast", po::value<std::string>()->default_value("default"), "broadcast algorithm: default, binomial")
      ("allreduce", po::value<std::string>()->default_value("default"),
       "allreduce algorithm: default (the MPI's own choice), rdb (recursive doubling, seed 000), "
       "redbcast (reduce then broadcast)")
      ("platform", po::value<std::string>(), "sim: the SimGrid platform file (XML)")
      ("compute", po::value<std::string>()->default_value("flops"),
       "sim: how compute time is charged: flops|calibrated|measured")
      ("profile", po::value<std::string>(), "sim: the calibration profile of --compute calibrated")
      ("measured-scale", po::value<double>()->default_value(1.0),
       "sim: --compute measured charges the kernel's time here times this")
      ("bw-scale", po::value<double>()->default_value(1.0), "sim what-if: every link's bandwidth times this")
      ("lat-scale", po::value<double>()->default_value(1.0), "sim what-if: every link's latency times this")
      ("speed-scale", po::value<double>()->default_value(1.0), "sim what-if: every host's speed times this")
      ("grow", po::value<long long>()->default_value(0),
       "sim what-if: the platform's one homogeneous cluster with this many hosts (0: as it is)")
      ("ranks-per-host", po::value<long long>()->default_value(0),
       "sim: at most this many ranks on a host, e.g. 1 for one rank per node of multi-core hosts (0: fill "
       "each host's cores in order)")
      ("numerics", po::value<std::string>()->default_value("on"),
       "sim: off skips the arithmetic and only charges time: on|off")
      ("oversubscribe", po::value<std::string>()->default_value("auto"),
       "real: let mpirun put more ranks than cores on this machine: auto|on|off");

  // Seed 002's conjugate gradient: f is the training loss per pattern, f'(s) its slope
  // along the search direction d at step s.
  po::options_description cg("conjugate gradient (--strategy cg, seed 002)", 110, 55);
  cg.add_options()
      ("cg-step", po::value<double>()->default_value(1.0),
       "first step of the first line search (later ones start at the previous accepted step)")
      ("cg-expansions", po::value<long long>()->default_value(30),
       "most doublings (or halvings) of the step in search of a sign change of f'")
      ("cg-refinements", po::value<long long>()->default_value(2),
       "quadratic interpolations in the bracket; all but the last are probed (>= 1)")
      ("cg-flat", po::value<double>()->default_value(0.0),
       "|f'(0)| at or below this is a flat direction, which stops training (0: only an exact 0)")
      ("load-balance", po::value<double>()->default_value(0.0),
       "FRACTION: rank 0 only polls, ranks 1.. end each pass once this fraction of the training set is "
       "consumed (0: off; needs --np >= 2)")
      ("chunk", po::value<long long>()->default_value(64), "with --load-balance: patterns a rank takes between polls");

  po::options_description training("training", 110, 55);
  training.add_options()
      ("learning", po::value<std::string>(), "update after each: pattern|block|epoch (default: the problem's)")
      ("block", po::value<long long>(), "patterns per update with --learning block (default: the problem's)")
      ("eta", po::value<double>(), "learning rate (default: the problem's)")
      ("alpha", po::value<double>(), "momentum in [0, 1) (default: the problem's)")
      ("momentum", po::value<std::string>(), "momentum rule: classic|damped (damped scales the step by 1 - alpha) (default: the problem's)")
      ("block-step", po::value<std::string>(), "a block's update: sum|mean of its patterns' updates (sum: eta is each pattern's step; mean: the block's) (default: the problem's)")
      ("epochs", po::value<long long>(), "most iterations (passes over the training set) (default: the problem's)")
      ("target-error", po::value<double>(), "stop when the test error (the training error where there is no test set) is <= E")
      ("error", po::value<std::string>(), "what errors mean: rmse|mse|loss|class (default: class for classifiers, else rmse)")
      ("max-seconds", po::value<double>()->default_value(0.0), "stop after this much training time (0: no limit)")
      ("seed", po::value<long long>()->default_value(1), "seed of the data, the weights and the pattern order")
      ("shuffle", po::value<std::string>()->default_value("on"), "new pattern order every iteration: on|off")
      ("eval-train", po::value<std::string>()->default_value("off"),
       "exact training-set error after every iteration: on|off (always on without a test set)")
      ("history-every", po::value<long long>()->default_value(1),
       "keep every Nth iteration in the record's history (and iteration 0 and the last; the stopping rule "
       "still checks every iteration)");

  po::options_description output("output", 110, 55);
  output.add_options()
      ("out", po::value<std::string>(), "write the result record (JSON) to FILE")
      ("weights-out", po::value<std::string>(),
       "write the final weights to FILE (text, header naming the net; after a fault the last good weights)")
      ("machine-cost", po::value<double>(),
       "USD: the record's price/performance, cents per MFlop/s of the run's flop rate (sim: default the "
       "platform's wulf:cost-usd zone property)")
      ("quiet,q", "print no progress, only the result");

  po::options_description all("wulf train --problem NAME [options]", 110, 55);
  all.add(general).add(problem).add(net).add(parallel).add(cg).add(training).add(output);
  return all;
}

bool parse_on_off(const po::variables_map& vm, const std::string& key) {
  const std::string v = vm[key].as<std::string>();
  if (v == "on" || v == "yes" || v == "true" || v == "1") return true;
  if (v == "off" || v == "no" || v == "false" || v == "0") return false;
  throw InputError("--" + key + ": '" + v + "' is neither on nor off");
}

std::size_t positive(const po::variables_map& vm, const std::string& key, bool zero_ok = false) {
  const long long v = vm[key].as<long long>();
  if (v < 0 || (v == 0 && !zero_ok))
    throw InputError("--" + key + ": " + std::to_string(v) + (zero_ok ? " is negative" : " must be at least 1"));
  return static_cast<std::size_t>(v);
}

std::vector<int> parse_hidden(const std::string& text) {
  std::vector<int> sizes;
  if (text == "none" || text.empty()) return sizes;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    std::size_t used = 0;
    long v = 0;
    try {
      v = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty())
      throw InputError("--hidden: '" + item + "' is not a whole number (expected e.g. 64,64 or none)");
    if (v <= 0) throw InputError("--hidden: layer size " + std::to_string(v) + " must be at least 1");
    if (v > 1'000'000) throw InputError("--hidden: layer size " + std::to_string(v) + " is too large");
    sizes.push_back(static_cast<int>(v));
  }
  return sizes;
}

// Everything a training run needs, resolved from options and problem defaults.
struct TrainJob {
  Problem problem;
  NetSpec spec;
  TrainConfig config;
  bool double_precision = false;
  bool quiet = false;
  std::string out_path;
  std::string weights_path;
  Json config_json;
  double load_seconds = 0;
  // The engine: seq, real or sim, on np ranks.
  std::string engine = "seq";
  int np = 1;
  std::string allreduce = "default";
  std::string reduce = "default";
  ReduceLayout reduce_layout;  // four-stage (empty: the library reduce)
  bool has_reduce_layout = false;
  std::string bcast = "default";
  std::string platform;
  ComputeConfig compute;
  std::string oversubscribe = "auto";
  Strategy strategy = Strategy::block;
  std::vector<TrainConfig> sessions;  // session: the sweep
  long long grow = 0;                 // sim what-if: hosts of the grown cluster (0: none)
  long long ranks_per_host = 0;       // sim: most ranks on one host (0: its cores)
  double machine_cost_usd = 0;        // price/performance (0: none; sim: the platform's)
};

// Where this rank stands; the front end is rank 0 of 1.
struct RankPlace {
  int rank = 0;
  int ranks = 1;
  bool in_rank_program = false;
};

const char* const allreduce_names[] = {"default", "rdb", "redbcast"};

// The MPI library's reduce under wulf's own: four-stage's last stage is the library
// reduce, binomial as LAM's in seed 002; wulf-binomial makes no library call.
std::string library_reduce(const std::string& reduce) {
  return is_point_to_point_reduce(reduce) ? "binomial" : reduce;
}

TrainJob resolve(const po::variables_map& vm, const RankPlace& place) {
  TrainJob job;
  job.engine = vm["engine"].as<std::string>();
  if (job.engine != "seq" && job.engine != "real" && job.engine != "sim")
    throw InputError("--engine: unknown engine '" + job.engine + "' (expected seq, real or sim)");
  const long long np = vm["np"].as<long long>();
  if (np < 1) throw InputError("--np: " + std::to_string(np) + " must be at least 1");
  if (np > 1'000'000) throw InputError("--np: " + std::to_string(np) + " ranks is too many");
  job.np = static_cast<int>(np);
  if (job.engine == "seq" && job.np > 1) throw InputError("--np " + std::to_string(np) + " needs --engine real or sim");
  job.strategy = parse_strategy(vm["strategy"].as<std::string>());
  if (job.strategy == Strategy::session && !vm.count("sweep"))
    throw InputError("--strategy session needs --sweep, e.g. --sweep \"eta=0.5,1.5;alpha=0.5,0.9\"");
  job.allreduce = vm["allreduce"].as<std::string>();
  job.reduce = vm["reduce"].as<std::string>();
  job.bcast = vm["bcast"].as<std::string>();
  if (job.reduce != "default" && job.reduce != "binomial" && !is_point_to_point_reduce(job.reduce))
    throw InputError("--reduce: unknown algorithm '" + job.reduce +
                     "' (expected default, binomial, wulf-binomial or four-stage)");
  if (vm.count("reduce-layout")) {
    if (job.reduce != "four-stage") throw InputError("--reduce-layout is for --reduce four-stage");
    job.reduce_layout = ReduceLayout::parse(vm["reduce-layout"].as<std::string>(), job.np);
    job.has_reduce_layout = true;
  }
  if (job.bcast != "default" && job.bcast != "binomial")
    throw InputError("--bcast: unknown algorithm '" + job.bcast + "' (expected default or binomial)");
  if (std::find(std::begin(allreduce_names), std::end(allreduce_names), job.allreduce) == std::end(allreduce_names))
    throw InputError("--allreduce: unknown algorithm '" + job.allreduce + "' (expected default, rdb or redbcast)");
  job.compute.numerics = parse_on_off(vm, "numerics");
  job.compute.ranks = job.np;
  job.compute.measured_scale = vm["measured-scale"].as<double>();
  if (!(job.compute.measured_scale > 0) || !std::isfinite(job.compute.measured_scale))
    throw InputError("--measured-scale: must be a positive number");
  for (const char* scale : {"bw-scale", "lat-scale", "speed-scale"}) {
    const double v = vm[scale].as<double>();
    if (!(v > 0) || !std::isfinite(v)) throw InputError("--" + std::string(scale) + ": must be a positive number");
  }
  job.compute.bw_scale = vm["bw-scale"].as<double>();
  job.compute.lat_scale = vm["lat-scale"].as<double>();
  job.compute.speed_scale = vm["speed-scale"].as<double>();
  job.grow = vm["grow"].as<long long>();
  if (job.grow < 0) throw InputError("--grow: must not be negative");
  job.ranks_per_host = vm["ranks-per-host"].as<long long>();
  if (job.ranks_per_host < 0) throw InputError("--ranks-per-host: must not be negative");
  if (job.engine == "sim") {
    job.compute.mode = parse_compute_mode(vm["compute"].as<std::string>());
    if (!vm.count("platform")) throw InputError("--engine sim needs --platform FILE.xml");
    job.platform = vm["platform"].as<std::string>();
    if (job.compute.mode == ComputeMode::calibrated) {
      if (!vm.count("profile")) throw InputError("--compute calibrated needs --profile FILE");
      job.compute.profile = read_profile(vm["profile"].as<std::string>());
    }
    if (job.compute.mode == ComputeMode::measured && !job.compute.numerics)
      throw InputError("--compute measured times the arithmetic, which --numerics off skips");
  } else {
    for (const char* sim_only : {"compute", "platform", "profile", "measured-scale", "bw-scale", "lat-scale",
                                 "speed-scale", "grow", "ranks-per-host"})
      if (vm.count(sim_only) && !vm[sim_only].defaulted())
        throw InputError("--" + std::string(sim_only) + " is for --engine sim");
    if (!job.compute.numerics) throw InputError("--numerics off: only --engine sim can skip the arithmetic");
  }
  if (vm.count("machine-cost")) {
    job.machine_cost_usd = vm["machine-cost"].as<double>();
    if (!(job.machine_cost_usd > 0) || !std::isfinite(job.machine_cost_usd))
      throw InputError("--machine-cost: must be a positive number of USD");
  }
  job.oversubscribe = vm["oversubscribe"].as<std::string>();
  if (job.oversubscribe != "auto" && job.oversubscribe != "on" && job.oversubscribe != "off")
    throw InputError("--oversubscribe: '" + job.oversubscribe + "' (expected auto, on or off)");

  const std::string precision = vm["precision"].as<std::string>();
  if (precision != "float" && precision != "double")
    throw InputError("--precision: '" + precision + "' (expected float or double)");
  job.double_precision = precision == "double";
  job.quiet = vm.count("quiet") > 0;
  if (vm.count("out")) {
    job.out_path = vm["out"].as<std::string>();
    check_writable(job.out_path, "--out");
  }
  if (vm.count("weights-out")) {
    if (job.strategy == Strategy::session)
      throw InputError("--weights-out: --strategy session trains one net per point of the sweep, not one net");
    if (!job.compute.numerics) throw InputError("--weights-out: --numerics off computes no weights");
    job.weights_path = vm["weights-out"].as<std::string>();
    check_writable(job.weights_path, "--weights-out");
  }
  // cg's settings, checked before the data is read and before any rank starts.
  CgConfig cg;
  cg.initial_step = vm["cg-step"].as<double>();
  cg.max_expansions = static_cast<int>(std::clamp(vm["cg-expansions"].as<long long>(), -1LL, 1001LL));
  cg.refinements = static_cast<int>(std::clamp(vm["cg-refinements"].as<long long>(), 0LL, 1001LL));
  cg.flat_tolerance = vm["cg-flat"].as<double>();
  cg.load_balance = vm["load-balance"].as<double>();
  const long long chunk = vm["chunk"].as<long long>();
  cg.chunk = chunk > 0 ? static_cast<std::size_t>(chunk) : 0;
  if (job.strategy == Strategy::cg) {
    validate_cg(cg);
    if (cg.load_balance > 0 && job.np < 2)
      throw InputError("--load-balance: needs at least 2 ranks, a master that polls and a worker (--np " +
                       std::to_string(job.np) + "; use --engine real or sim with --np 2 or more)");
  } else {
    for (const char* cg_only : {"cg-step", "cg-expansions", "cg-refinements", "cg-flat", "load-balance", "chunk"})
      if (!vm[cg_only].defaulted())
        throw InputError("--" + std::string(cg_only) + " is for --strategy cg");
  }

  ProblemOptions po_;
  // The front end of a parallel run checks the data once, whole; a rank reads what its
  // strategy gives it (data_layout).
  TrainConfig layout_of;
  layout_of.strategy = job.strategy;
  layout_of.cg = cg;
  const DataLayout layout = data_layout(layout_of);
  const bool shared_out = place.in_rank_program && (layout == DataLayout::shares || layout == DataLayout::whole_train);
  po_.ranks = shared_out ? place.ranks : 1;
  po_.rank = shared_out ? place.rank : 0;
  // The workers share the data; the master loads the first worker's share and drops it
  // below, keeping the sets' shapes.
  const bool workers = place.in_rank_program && layout == DataLayout::workers;
  if (workers) po_.ranks = place.ranks - 1, po_.rank = std::max(0, place.rank - 1);
  po_.whole_train = layout == DataLayout::whole_train;
  // The front end of a parallel run only checks the data (its ranks load it).
  po_.shape_only = !job.compute.numerics || (!place.in_rank_program && job.engine != "seq") ||
                   (place.in_rank_program && layout == DataLayout::root_only && place.rank != 0);
  const long long seed = vm["seed"].as<long long>();
  if (seed < 0) throw InputError("--seed: must not be negative");
  po_.seed = static_cast<std::uint64_t>(seed);
  if (vm.count("data-dir")) {
    po_.mnist_dir = vm["data-dir"].as<std::string>();
  } else if (const char* env = std::getenv("WULF_MNIST_DIR"); env && *env) {
    po_.mnist_dir = env;
  } else {
    po_.mnist_dir = build::mnist_dir;
  }
  if (vm.count("test-data")) po_.test_data = vm["test-data"].as<std::string>();
  po_.train_size = positive(vm, "train-size", true);
  po_.test_size = positive(vm, "test-size", true);

  // Everything about the options that can be checked without the data is checked first.
  const std::optional<Learning> learning =
      vm.count("learning") ? std::optional(parse_learning(vm["learning"].as<std::string>())) : std::nullopt;
  const std::optional<std::size_t> block =
      vm.count("block") ? std::optional(positive(vm, "block")) : std::nullopt;
  const std::optional<std::size_t> epochs =
      vm.count("epochs") ? std::optional(positive(vm, "epochs")) : std::nullopt;
  const std::optional<std::vector<int>> hidden =
      vm.count("hidden") ? std::optional(parse_hidden(vm["hidden"].as<std::string>())) : std::nullopt;
  const std::optional<Activation> hidden_act =
      vm.count("activation") ? std::optional(parse_activation(vm["activation"].as<std::string>(), "activation"))
                             : std::nullopt;
  const std::optional<Activation> output_act =
      vm.count("output-activation")
          ? std::optional(parse_activation(vm["output-activation"].as<std::string>(), "output-activation"))
          : std::nullopt;
  const std::optional<Loss> loss =
      vm.count("loss") ? std::optional(parse_loss(vm["loss"].as<std::string>(), "loss")) : std::nullopt;
  const std::optional<MomentumRule> momentum =
      vm.count("momentum") ? std::optional(parse_momentum_rule(vm["momentum"].as<std::string>())) : std::nullopt;
  const std::optional<BlockStep> block_step =
      vm.count("block-step") ? std::optional(parse_block_step(vm["block-step"].as<std::string>())) : std::nullopt;
  const std::optional<ErrorMetric> metric =
      vm.count("error") ? std::optional(parse_error_metric(vm["error"].as<std::string>())) : std::nullopt;
  const bool bias = parse_on_off(vm, "bias");
  const bool shuffle = parse_on_off(vm, "shuffle");
  const bool eval_train = parse_on_off(vm, "eval-train");
  if (epochs && *epochs > 100'000'000) throw InputError("--epochs: too many");

  const auto t0 = std::chrono::steady_clock::now();
  job.problem = make_problem(vm["problem"].as<std::string>(), po_);
  if (workers && place.rank == 0) job.problem.train.keep(0, 0), job.problem.test.keep(0, 0);
  job.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Problem& p = job.problem;
  const ProblemDefaults& d = p.defaults;

  job.spec.sizes.push_back(p.inputs);
  for (int h : hidden.value_or(d.hidden)) job.spec.sizes.push_back(h);
  job.spec.sizes.push_back(p.outputs);
  const int n_hidden = static_cast<int>(job.spec.sizes.size()) - 2;
  job.spec.activations.assign(static_cast<std::size_t>(n_hidden), hidden_act.value_or(d.hidden_activation));
  job.spec.activations.push_back(output_act.value_or(d.output_activation));
  job.spec.loss = loss.value_or(d.loss);
  job.spec.bias = bias;
  job.spec.validate();
  if (job.compute.mode == ComputeMode::calibrated) check_profile_fits(job.compute.profile, p.name, job.spec, precision);

  TrainConfig& c = job.config;
  c.learning = learning.value_or(d.learning);
  c.block = block.value_or(d.block == 0 ? p.train_total : d.block);
  if (block && c.learning != Learning::block && !learning) c.learning = Learning::block;
  c.eta = vm.count("eta") ? vm["eta"].as<double>() : d.eta;
  c.alpha = vm.count("alpha") ? vm["alpha"].as<double>() : d.alpha;
  c.momentum = momentum.value_or(d.momentum);
  c.block_step = block_step.value_or(d.block_step);
  c.max_iterations = static_cast<int>(epochs.value_or(static_cast<std::size_t>(d.iterations)));
  if (vm.count("target-error")) c.target_error = vm["target-error"].as<double>();
  c.max_seconds = vm["max-seconds"].as<double>();
  c.metric = metric.value_or(p.classifier ? ErrorMetric::classification : ErrorMetric::rmse);
  c.shuffle = shuffle;
  c.eval_train = eval_train;
  c.history_every = static_cast<int>(std::min<std::size_t>(positive(vm, "history-every"), 1'000'000'000));
  c.seed = po_.seed;
  c.init_range = vm.count("init-range") ? vm["init-range"].as<double>() : d.init_range;
  c.strategy = job.strategy;
  c.average_interval = positive(vm, "average-interval", true);
  c.local_epoch = positive(vm, "local-epoch", true);
  c.error_window = static_cast<int>(std::min<std::size_t>(positive(vm, "error-window"), 1000));
  c.rounds_per_iteration = positive(vm, "rounds-per-iteration", true);
  c.threads = static_cast<int>(std::min<std::size_t>(positive(vm, "threads"), 1024));
  c.cg = cg;
  if (job.strategy == Strategy::session) {
    job.sessions = sweep_configs(c, vm["sweep"].as<std::string>());
    for (const TrainConfig& s : job.sessions) validate(s, p.train_total, p.classifier, 1);
  } else {
    validate(c, p.train_total, p.classifier, splits_blocks(job.strategy) ? job.np : 1);
  }

  Json& j = job.config_json;
  j = Json::object();
  j["command"] = "train";
  j["engine"] = job.engine;
  j["np"] = job.np;
  j["strategy"] = job.engine == "seq" ? "sequential" : to_string(job.strategy);
  if (job.strategy == Strategy::average) j["average_interval"] = c.average_interval;
  if (job.strategy == Strategy::ppt)
    j["local_epoch"] = c.local_epoch, j["error_window"] = c.error_window,
    j["rounds_per_iteration"] = c.rounds_per_iteration;
  if (job.strategy == Strategy::root) j["threads"] = c.threads;
  if (job.strategy == Strategy::cg) {
    Json g = Json::object();
    g["direction"] = "polak-ribiere (beta >= 0, restart when not downhill)";
    g["objective"] = "training loss per pattern of the pass";
    g["initial_step"] = cg.initial_step;
    g["max_expansions"] = cg.max_expansions;
    g["refinements"] = cg.refinements;
    g["flat_tolerance"] = cg.flat_tolerance;
    g["load_balance"] = cg.load_balance;
    g["chunk"] = cg.load_balance > 0 ? Json(cg.chunk) : Json(nullptr);
    g["master"] = cg.load_balance > 0 ? "rank 0 polls only, ranks 1.. hold the data"
                                      : "rank 0 computes its share too";
    j["cg"] = std::move(g);
  }
  j["weights_out"] = job.weights_path.empty() ? Json(nullptr) : Json(job.weights_path);
  j["machine_cost_usd"] = job.machine_cost_usd > 0 ? Json(job.machine_cost_usd) : Json(nullptr);
  if (job.strategy == Strategy::session) j["sweep"] = vm["sweep"].as<std::string>();
  j["platform"] = job.platform.empty() ? Json(nullptr) : Json(job.platform);
  j["collective_algorithm"] = job.engine == "seq" ? Json(nullptr)
                                                  : Json("allreduce:" + job.allreduce + ", reduce:" + job.reduce +
                                                         ", bcast:" + job.bcast);
  if (job.reduce == "four-stage") {
    // Without a layout (or with no rank in a group) the four-stage reduce is the library's.
    j["reduce_layout"] = job.has_reduce_layout ? Json(job.reduce_layout.to_string()) : Json(nullptr);
    j["reduce_falls_back"] = !job.has_reduce_layout || !job.reduce_layout.has_groups();
  }
  j["compute"] = to_string(job.compute.mode);
  j["numerics"] = job.compute.numerics;
  if (job.compute.mode == ComputeMode::calibrated) j["profile"] = job.compute.profile.name;
  if (job.compute.mode == ComputeMode::measured) j["measured_scale"] = job.compute.measured_scale;
  if (job.engine == "sim") {
    Json what_if = Json::object();
    what_if["bw_scale"] = job.compute.bw_scale;
    what_if["lat_scale"] = job.compute.lat_scale;
    what_if["speed_scale"] = job.compute.speed_scale;
    what_if["grow"] = job.grow;
    j["what_if"] = std::move(what_if);
    j["ranks_per_host"] = job.ranks_per_host;
  }
  j["problem"] = p.name;
  j["problem_description"] = p.description;
  j["defaults_from"] = d.source;
  j["train_patterns"] = p.train_total;
  j["test_patterns"] = p.test_total;
  j["inputs"] = p.inputs;
  j["outputs"] = p.outputs;
  Json sizes = Json::array();
  for (int s : job.spec.sizes) sizes.push_back(s);
  j["layers"] = std::move(sizes);
  Json acts = Json::array();
  for (Activation a : job.spec.activations) acts.push_back(to_string(a));
  j["activations"] = std::move(acts);
  j["loss"] = to_string(job.spec.loss);
  j["bias"] = job.spec.bias;
  j["parameters"] = job.spec.parameter_count();
  j["precision"] = precision;
  j["learning"] = to_string(c.learning);
  j["block"] = c.learning == Learning::pattern ? 1 : c.learning == Learning::epoch ? p.train_total : c.block;
  j["eta"] = c.eta;
  j["alpha"] = c.alpha;
  j["momentum"] = to_string(c.momentum);
  j["block_step"] = to_string(c.block_step);
  j["max_iterations"] = c.max_iterations;
  j["target_error"] = c.target_error ? Json(*c.target_error) : Json(nullptr);
  j["error_metric"] = to_string(c.metric);
  j["max_seconds"] = c.max_seconds;
  j["seed"] = seed;
  j["shuffle"] = c.shuffle;
  j["eval_train"] = c.eval_train;
  j["history_every"] = c.history_every;
  j["init_range"] = c.init_range;
  j["data_dir"] = p.name.rfind("digits", 0) == 0 ? Json(po_.mnist_dir) : Json(nullptr);
  j["load_s"] = job.load_seconds;
  j["versions"] = versions_json();
  return job;
}

std::string percent(double fraction) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << 100.0 * fraction << "%";
  return s.str();
}

void print_evaluation(std::ostream& out, const char* what, const Evaluation& e) {
  out << "  " << what << ": rmse " << std::setprecision(6) << e.rmse << ", loss " << e.loss;
  if (e.classifier)
    out << ", " << e.class_errors << " of " << e.patterns << " wrong, accuracy " << percent(e.accuracy());
  out << "\n";
}

// The session strategy: the sweep's runs over the ranks, one table on rank 0.
template <class T>
int run_sessions(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out) {
  PhaseTimes phases;
  const std::vector<SessionOutcome> table =
      train_sessions<T>(job.spec, job.problem.train, job.problem.test, job.sessions, comm, compute, phases);
  const std::vector<PhaseTimes> per_rank = gather_phases(comm, phases);
  if (comm.rank() != 0) return exit_ok;
  const std::string metric(to_string(job.config.metric));
  out << "sessions of the sweep, " << comm.size() << " ranks (errors in " << metric << "):\n";
  out << "    #  rank      eta    alpha  block   seed   iter     time_s  " << std::setw(11) << "train" << std::setw(11)
      << "test" << "  status\n";
  Json sessions = Json::array();
  for (const SessionOutcome& s : table) {
    out << std::setw(5) << s.index << std::setw(6) << s.rank << std::setw(9) << s.config.eta << std::setw(9)
        << s.config.alpha << std::setw(7) << s.config.block << std::setw(7) << s.config.seed << std::setw(7)
        << s.iterations << std::setw(11) << std::setprecision(5) << s.seconds << "  " << std::setw(11) << s.train_error
        << std::setw(11) << s.test_error << "  " << s.status << "\n";
    Json e = Json::object();
    e["index"] = s.index;
    e["rank"] = s.rank;
    e["eta"] = s.config.eta;
    e["alpha"] = s.config.alpha;
    e["block"] = s.config.block;
    e["seed"] = s.config.seed;
    e["iterations"] = s.iterations;
    e["time_s"] = s.seconds;
    e["status"] = s.status;
    e["train_error"] = s.train_error;
    e["test_error"] = s.test_error;
    e["test_accuracy"] = s.test_accuracy;
    Json history = Json::array();  // the session's curve, as a run's history (NaN: null)
    for (const auto& h : s.history) {
      Json entry = Json::object();
      entry["iteration"] = static_cast<long long>(h[0]);
      entry["time_s"] = h[1];
      entry["train_error"] = h[2];
      entry["test_error"] = h[3];
      if (!std::isnan(h[4])) entry["test_accuracy"] = h[4];
      history.push_back(std::move(entry));
    }
    e["history"] = std::move(history);
    sessions.push_back(std::move(e));
  }
  if (!job.out_path.empty()) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"] = job.config_json;
    record["sessions"] = std::move(sessions);
    record["history"] = Json::array();
    Json ranks = Json::array();
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      Json one = phases_json(per_rank[r]);
      one["rank"] = r;
      ranks.push_back(std::move(one));
    }
    record["phases"]["ranks"] = std::move(ranks);
    Json fin = Json::object();
    fin["status"] = "sessions";
    fin["sessions"] = table.size();
    fin["parameters"] = job.spec.parameter_count();
    record["final"] = std::move(fin);
    write_file_atomically(job.out_path, record_text(record) + "\n");
    out << "record: " << job.out_path << "\n";
  }
  return exit_ok;
}

// Trains on comm's ranks (SerialComm for --engine seq); rank 0 prints and writes the record.
template <class T>
int run_train(TrainJob& job, Comm& comm, Compute& compute, std::ostream& out, std::ostream& err) {
  const bool lead = comm.rank() == 0;
  // --numerics off: parameters and gradients in memory all simulated ranks share.
  void* shared = compute.shared_storage(2 * job.spec.parameter_count() * sizeof(T));
  Mlp<T> net(job.spec, static_cast<T*>(shared));
  Rng init_rng(job.config.seed);
  Rng weights_rng = init_rng.split(3);
  // Every rank draws the same weights from the same seed: seed 000 initialises on one
  // processor and distributes them, which ends in the same state.
  if (compute.numerics()) net.init_uniform(job.config.init_range, weights_rng);
  const TrainConfig& c = job.config;

  if (!job.quiet && lead) {
    out << "wulf train: " << job.problem.name << " (" << job.problem.description << ")\n"
        << "  " << job.problem.train_total << " training, " << job.problem.test_total << " test patterns; net "
        << job.spec.describe() << ", w = " << net.parameter_count() << "\n";
    if (job.strategy == Strategy::cg) {
      out << "  " << (job.double_precision ? "double" : "float")
          << ", Polak-Ribiere conjugate gradient on the whole training set, line search from step "
          << c.cg.initial_step << " with " << c.cg.refinements << " interpolation(s)";
      if (c.cg.load_balance > 0)
        out << ", load balancing: passes end at " << c.cg.load_balance << " of the patterns, polls every "
            << c.cg.chunk << " patterns";
      out << ", at most " << c.max_iterations << " iterations, seed " << c.seed << "\n";
    } else {
      out << "  " << (job.double_precision ? "double" : "float") << ", learning by " << to_string(c.learning)
          << (c.learning == Learning::block ? " (b = " + std::to_string(c.block) + ")" : "") << ", eta " << c.eta
          << ", alpha " << c.alpha << " (" << to_string(c.momentum) << "), " << to_string(c.block_step)
          << " of the block's updates, at most " << c.max_iterations
          << " iterations, seed " << c.seed << "\n";
    }
    if (job.engine != "seq")
      out << "  engine " << job.engine << ", " << comm.size() << " ranks, strategy " << to_string(job.strategy)
          << ", allreduce "
          << job.allreduce
          << (job.engine == "sim" ? ", platform " + job.platform + ", compute " +
                                        std::string(to_string(job.compute.mode)) +
                                        (job.compute.numerics ? "" : ", numerics off")
                                  : "")
          << "\n";
  }
  const std::string metric(to_string(c.metric));
  auto progress = [&](const IterationRecord& r) {
    if (job.quiet) return;
    out << "iter " << std::setw(5) << r.iteration << "  " << std::fixed << std::setprecision(2) << std::setw(8)
        << r.time_s << " s" << std::defaultfloat << std::setprecision(5);
    if (std::isfinite(r.train_error)) out << "  train " << metric << " " << r.train_error;
    if (r.test) {
      out << "  test " << metric << " " << r.test->error(c.metric);
      if (r.test->classifier)
        out << "  test errors " << r.test->class_errors << "/" << r.test->patterns << " (" << percent(r.test->accuracy())
            << ")";
    } else if (r.train && r.train->classifier) {
      out << "  train errors " << r.train->class_errors << "/" << r.train->patterns;
    }
    out << std::endl;
  };

  const Problem& p = job.problem;
  compute.prepare(comm);  // sim: the what-if scales of the links
  if (job.strategy == Strategy::session) return run_sessions<T>(job, comm, compute, out);
  TrainResult result = train_strategy(net, p.train, p.test, GlobalSizes{p.train_total, p.test_total, p.classifier}, c,
                                      comm, compute, progress);

  // Every rank's phase times to rank 0, for the record.
  const std::vector<PhaseTimes> per_rank = gather_phases(comm, result.phases);
  const bool fault = stopped_on_fault(result.reason);
  if (!lead) return fault ? exit_diverged : exit_ok;

  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = job.config_json;
  add_train_result(record, result, net.parameter_count(), c.metric, per_rank);
  const Performance rate =
      training_performance(per_rank, net.parameter_count(), result.seconds, job.machine_cost_usd);
  record["performance"] = performance_json(rate, per_rank.size(), job.machine_cost_usd);
  // Seed 002's figures of merit: the training flop rate and, with a machine cost, its price.
  auto print_rate = [&] {
    out << "rate: " << std::setprecision(4) << rate.flops_per_s * 1e-9 << " GFlop/s of forward and backward passes ("
        << std::fixed << std::setprecision(0) << rate.flops_per_s * 1e-6 / comm.size() << " MFlop/s per rank)";
    if (rate.cents_per_mflops > 0)
      out << "; price/performance " << std::setprecision(3) << rate.cents_per_mflops << " cents per MFlop/s of USD "
          << std::setprecision(10) << job.machine_cost_usd;
    out << std::defaultfloat << std::setprecision(6) << "\n";
  };
  if (!job.weights_path.empty()) {
    // The net holds the final weights, or after a fault the last good ones (Run).
    write_file_atomically(job.weights_path,
                          weights_text(net, std::string(to_string(result.reason)), result.weights_iteration));
    record["final"]["weights_file"] = job.weights_path;
    record["final"]["weights_iteration"] = result.weights_iteration;
  }
  if (!job.out_path.empty()) write_file_atomically(job.out_path, record_text(record) + "\n");

  if (!compute.numerics()) {
    out << "stopped: " << result.reason_detail << "; " << std::setprecision(6) << result.seconds
        << " s simulated, " << result.seconds / static_cast<double>(result.history.back().iteration)
        << " s per iteration (numerics off: no errors)\n";
    print_rate();
    if (!job.out_path.empty()) out << "record: " << job.out_path << "\n";
    return exit_ok;
  }
  if (fault) {
    err << "wulf train: " << result.reason_detail << "\n";
    if (!job.out_path.empty()) err << "wulf train: the record up to that point is in " << job.out_path << "\n";
    if (!job.weights_path.empty())
      err << "wulf train: the last good weights (iteration " << result.weights_iteration << ") are in "
          << job.weights_path << "\n";
    return exit_diverged;
  }
  out << "stopped: " << result.reason_detail << " in " << std::fixed << std::setprecision(2) << result.seconds
      << " s" << std::defaultfloat << "\n";
  out << "final (w = " << net.parameter_count() << "):\n";
  print_evaluation(out, "train", result.final_train);
  if (result.final_test) print_evaluation(out, "test ", *result.final_test);
  print_rate();
  if (!job.out_path.empty()) out << "record: " << job.out_path << "\n";
  if (!job.weights_path.empty()) out << "weights: " << job.weights_path << "\n";
  return exit_ok;
}

// Starts the ranks under mpirun or smpirun with the same arguments and waits for them.
int launch(const TrainJob& job, const std::vector<std::string>& args, std::ostream& err) {
  std::vector<std::string> cmd;
  std::unique_ptr<Hostfile> hostfile;
  std::unique_ptr<MpiSessionDir> session;
  if (job.engine == "real") {
    const std::string program = wulf_program("wulf-rank-real");
    // Already inside an mpirun the user started: become the rank program.
    if (std::getenv("OMPI_COMM_WORLD_SIZE")) {
      std::vector<std::string> argv{program};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> c_argv;
      for (auto& a : argv) c_argv.push_back(a.data());
      c_argv.push_back(nullptr);
      ::execv(program.c_str(), c_argv.data());
      throw InputError("cannot start " + program + ": " + std::strerror(errno));
    }
    session = std::make_unique<MpiSessionDir>();
    cmd = mpirun_command(job.np, job.oversubscribe, {job.allreduce, library_reduce(job.reduce), job.bcast}, program,
                         *session);
  } else {
    std::unique_ptr<GrownPlatform> grown;
    if (job.grow > 0) grown = std::make_unique<GrownPlatform>(job.platform, job.grow);
    const std::string platform = grown ? grown->path() : job.platform;
    const std::vector<PlatformHost> hosts = platform_hosts(platform, job.np, job.ranks_per_host);
    long long cores = 0;
    for (const auto& h : hosts) cores += h.cores;
    if (job.np > cores)
      throw InputError("--np " + std::to_string(job.np) + ": the platform " + job.platform + " has only " +
                       std::to_string(cores) + " cores on " + std::to_string(hosts.size()) + " hosts" +
                       (job.ranks_per_host > 0 ? " for --ranks-per-host " + std::to_string(job.ranks_per_host) : ""));
    hostfile = std::make_unique<Hostfile>(hosts);
    std::vector<std::string> cfg;
    if (job.allreduce != "default") cfg.push_back("smpi/allreduce:" + job.allreduce);
    if (library_reduce(job.reduce) != "default") cfg.push_back("smpi/reduce:" + library_reduce(job.reduce));
    if (job.bcast != "default") cfg.push_back("smpi/bcast:binomial_tree");  // SMPI's name for it
    cmd = smpirun_command(platform, *hostfile, job.np, cfg, wulf_program("wulf-rank-sim"));
    cmd.insert(cmd.end(), args.begin(), args.end());
    if (job.machine_cost_usd == 0)
      if (const double cost = platform_cost_usd(platform); cost > 0) {
        std::ostringstream text;
        text << std::setprecision(17) << cost;
        cmd.insert(cmd.end(), {"--machine-cost", text.str()});
      }
    // The four-stage reduce's layout, unless given: the platform's groups of nodes.
    if (job.reduce == "four-stage" && !job.has_reduce_layout) {
      const std::string layout = reduce_layout_of(hosts, job.np);
      if (!layout.empty()) cmd.insert(cmd.end(), {"--reduce-layout", layout});
    }
    const RanksOutcome outcome = run_ranks(cmd, true, false);
    if (outcome.code != exit_ok && outcome.code != exit_diverged)
      err << "wulf train: the smpirun run failed (code " << outcome.code << ")"
          << (outcome.failure.empty() ? std::string() : ": " + outcome.failure) << "\n";
    return outcome.code;
  }
  cmd.insert(cmd.end(), args.begin(), args.end());
  const RanksOutcome outcome = run_ranks(cmd, job.engine == "sim", false);
  const char* runner = job.engine == "real" ? "mpirun" : "smpirun";
  if (outcome.code != exit_ok && outcome.code != exit_diverged)
    err << "wulf train: the " << runner << " run failed (code " << outcome.code << ")"
        << (outcome.failure.empty() ? std::string() : ": " + outcome.failure) << "\n";
  return outcome.code;
}

po::variables_map parse_train(const std::vector<std::string>& args, const po::options_description& options) {
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("config")) {
    const std::string path = vm["config"].as<std::string>();
    std::ifstream file(path);
    if (!file) throw InputError("--config " + path + ": cannot open it");
    try {
      po::store(po::parse_config_file(file, options), vm);
    } catch (const po::error& e) {
      throw InputError("--config " + path + ": " + e.what());
    }
  }
  po::notify(vm);
  return vm;
}

int train_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = train_options();
  const po::variables_map vm = parse_train(args, options);
  if (vm.count("help")) {
    out << options << "\n" << problems_help();
    return exit_ok;
  }
  TrainJob job = resolve(vm, RankPlace{});
  if (job.engine != "seq") return launch(job, args, err);
  SerialComm comm;
  const std::unique_ptr<Compute> compute = make_wall_compute();
  return job.double_precision ? run_train<double>(job, comm, *compute, out, err)
                              : run_train<float>(job, comm, *compute, out, err);
}

}  // namespace

int run_rank_bench(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
                   std::ostream& out, std::ostream& err) {
  std::string message;
  try {
    const CommBenchConfig bench = parse_comm_bench(args);
    ComputeConfig config;  // charges no compute: only the collectives' own cost
    config.bw_scale = bench.bw_scale;
    config.lat_scale = bench.lat_scale;
    const std::unique_ptr<Compute> compute = make_compute(config);
    compute->prepare(comm);
    if (is_point_to_point_reduce(bench.reduce)) {
      ReduceComm reducing(comm, parse_point_to_point_reduce(bench.reduce),
                          bench.reduce_layout.empty() ? ReduceLayout{}
                                                      : ReduceLayout::parse(bench.reduce_layout, comm.size()));
      run_comm_bench(bench, reducing, *compute, out, &reducing.reducer());
    } else {
      run_comm_bench(bench, comm, *compute, out);
    }
    if (comm.rank() == 0) report_rank_status(exit_ok, 0, "finished");
    return exit_ok;
  } catch (const std::exception& e) {
    message = std::string("error: ") + e.what();
  }
  report_rank_status(exit_input, comm.rank(), message);
  if (comm.size() > 1) comm.abort(message, exit_input);
  err << "wulf: " << message << "\n";
  return exit_input;
}

int run_rank(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
             std::ostream& out, std::ostream& err) {
  // Every rank checks the same options the front end checked; a fault found only here (a
  // file that vanished, memory) ends all ranks with this rank named, never a hang.
  std::string message;
  int code = exit_ok;
  try {
    const po::options_description options = train_options();
    const po::variables_map vm = parse_train(args, options);
    TrainJob job = resolve(vm, RankPlace{comm.rank(), comm.size(), true});
    if (job.np != comm.size())
      throw InputError("--np " + std::to_string(job.np) + " but " + std::to_string(comm.size()) +
                       " ranks were started");
    const std::unique_ptr<Compute> compute = make_compute(job.compute);
    // wulf's own reduces wrap the engine's communicator; the strategies see one Comm.
    std::unique_ptr<ReduceComm> reducing;
    if (is_point_to_point_reduce(job.reduce))
      reducing = std::make_unique<ReduceComm>(comm, parse_point_to_point_reduce(job.reduce), job.reduce_layout);
    Comm& used = reducing ? static_cast<Comm&>(*reducing) : comm;
    const int done = job.double_precision ? run_train<double>(job, used, *compute, out, err)
                                          : run_train<float>(job, used, *compute, out, err);
    if (comm.rank() == 0) report_rank_status(done, 0, "finished");
    return done;
  } catch (const InputError& e) {
    message = std::string("error: ") + e.what(), code = exit_input;
  } catch (const po::error& e) {
    message = std::string("error: ") + e.what(), code = exit_input;
  } catch (const std::exception& e) {
    message = std::string("internal error: ") + e.what(), code = exit_internal;
  }
  report_rank_status(code, comm.rank(), message);
  if (comm.size() > 1) comm.abort(message, code);
  err << "wulf: " << message << "\n";
  return code;
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << usage;
      return args.empty() ? exit_input : exit_ok;
    }
    if (args[0] == "--version") {
      out << "wulf " << build::version << "\n" << record_text(versions_json()) << "\n";
      return exit_ok;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "train") return train_command(rest, out, err);
    if (args[0] == "platform") return platform_command(rest, out, err);
    if (args[0] == "model") return model_command(rest, out, err);
    if (args[0] == "calibrate") return calibrate_command(rest, out, err);
    if (args[0] == "validate") return validate_command(rest, out, err);
    if (args[0] == "study") return study_command(rest, out, err);
    if (args[0] == "recommend") return recommend_command(rest, out, err);
    if (args[0] == "plot") return plot_command(rest, out, err);
    err << "wulf: unknown command '" << args[0] << "'\n" << usage;
    return exit_input;
  } catch (const InputError& e) {
    err << "wulf: error: " << e.what() << "\n";
    return exit_input;
  } catch (const po::error& e) {
    err << "wulf: error: " << e.what() << " (see wulf " << (args.empty() ? "" : args[0]) << " --help)\n";
    return exit_input;
  } catch (const std::bad_alloc&) {
    err << "wulf: error: out of memory (try --train-size or --precision float)\n";
    return exit_internal;
  } catch (const std::exception& e) {
    err << "wulf: internal error: " << e.what() << "\n";
    return exit_internal;
  }
}

}  // namespace wulf
