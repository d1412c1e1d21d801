#include "job/train_job.hpp"

#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "job/memory_estimate.hpp"
#include "job/train_options.hpp"
#include "train/result_record.hpp"
#include "train/session.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"
#include "nn/weights_file.hpp"
#include "util/files.hpp"

#include <wulf/build_info.hpp>

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace po = boost::program_options;

namespace wulf {
namespace {

// The value of an option that has no default, or nothing where it was not given.
template <class T>
std::optional<T> given(const po::variables_map& vm, const char* key) {
  return vm.count(key) ? std::optional<T>(vm[key].as<T>()) : std::nullopt;
}

std::size_t positive(const po::variables_map& vm, const std::string& key, bool zero_ok = false) {
  const long long v = vm[key].as<long long>();
  if (v < 0 || (v == 0 && !zero_ok))
    throw InputError("--" + key + ": " + std::to_string(v) + (zero_ok ? " is negative" : " must be at least 1"));
  return static_cast<std::size_t>(v);
}

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

const char* precision_name(const TrainJob& job) { return job.double_precision ? "double" : "float"; }

// --engine, --np, --strategy and the collectives; an option the choices would ignore is refused.
void resolve_engine(const po::variables_map& vm, TrainJob& job) {
  job.engine = vm["engine"].as<std::string>();
  const long long np = vm["np"].as<long long>();
  if (np < 1) throw InputError("--np: " + std::to_string(np) + " must be at least 1");
  if (np > 1'000'000) throw InputError("--np: " + std::to_string(np) + " ranks is too many");
  job.np = static_cast<int>(np);
  if (job.engine == "seq" && job.np > 1) throw InputError("--np " + std::to_string(np) + " needs --engine real or sim");
  job.strategy = vm["strategy"].as<Strategy>();
  if (job.strategy == Strategy::session) {
    if (!vm.count("sweep"))
      throw InputError("--strategy session needs --sweep, e.g. --sweep \"eta=0.5,1.5;alpha=0.5,0.9\"");
    job.sweep = vm["sweep"].as<std::string>();
  }
  job.allreduce = vm["allreduce"].as<std::string>();
  job.reduce = vm["reduce"].as<std::string>();
  job.bcast = vm["bcast"].as<std::string>();
  job.oversubscribe = vm["oversubscribe"].as<std::string>();
  check_option_scopes(vm, job.engine, job.strategy, job.reduce);
  if (vm.count("hostfile")) {
    job.hostfile = vm["hostfile"].as<std::string>();
    read_text_file(job.hostfile, "--hostfile");  // there and readable, before mpirun is started
  }
  if (vm.count("mpirun-args"))
    for (const std::string& word : split_list(vm["mpirun-args"].as<std::string>(), ' '))
      if (!word.empty()) job.mpirun_args.push_back(word);
  if (vm.count("reduce-layout")) {
    job.reduce_layout = ReduceLayout::parse(vm["reduce-layout"].as<std::string>(), job.np);
    job.has_reduce_layout = true;
  }
}

// --hosts: a file of one host name per line (blank lines and # comments skipped), else a
// list; one host per rank. The names are checked against the platform when it is read.
std::vector<std::string> rank_hosts(const std::string& text, const TrainJob& job) {
  std::vector<std::string> names;
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) {
    for (const std::string& line : split_list(read_text_file(text, "--hosts"), '\n')) {
      const std::string name = trim(line.substr(0, line.find('#')));
      if (!name.empty()) names.push_back(name);
    }
  } else {
    names = split_list(text);
  }
  for (const std::string& name : names)
    if (name.empty() || name.find_first_of(" \t,") != std::string::npos)
      throw InputError("--hosts " + text + ": '" + name + "' is not a host name");
  if (names.size() != static_cast<std::size_t>(job.np))
    throw InputError("--hosts " + text + ": " + std::to_string(names.size()) + " hosts for --np " +
                     std::to_string(job.np) + " (one host per rank)");
  if (job.ranks_per_host > 0) throw InputError("--hosts places every rank itself: drop --ranks-per-host");
  return names;
}

// --engine real: the wall clock (wall), or each kernel padded with sleep to its profile's
// time (calibrated), which may skip the arithmetic. The hosts' speeds are a platform's.
void resolve_real_compute(const po::variables_map& vm, ComputeConfig& compute) {
  compute.mode = vm.count("compute") ? vm["compute"].as<ComputeMode>() : ComputeMode::wall;
  if (compute.mode == ComputeMode::flops)
    throw InputError("--compute flops on --engine real: the hosts' speeds are the platform's: use --engine testbed "
                     "--platform FILE");
  if (compute.mode == ComputeMode::measured)
    throw InputError("--compute measured on --engine real: the wall clock already measures the arithmetic; measured "
                     "is for --engine sim");
  if (!compute.numerics && compute.mode != ComputeMode::calibrated)
    throw InputError("--numerics off on --engine real needs --compute calibrated --profile FILE (each kernel then "
                     "sleeps its profile's time instead of computing)");
}

// --engine sim: a simulated kernel takes no time until charged (default: flops).
void resolve_sim_compute(const po::variables_map& vm, TrainJob& job) {
  ComputeConfig& compute = job.compute;
  compute.mode = vm.count("compute") ? vm["compute"].as<ComputeMode>() : ComputeMode::flops;
  if (compute.mode == ComputeMode::wall)
    throw InputError("--compute wall on --engine sim: the simulated clock does not see this machine's wall clock, so "
                     "the kernels would take no time; use flops, calibrated or measured");
  if (!vm.count("platform")) throw InputError("--engine sim needs --platform FILE.xml");
  job.platform = vm["platform"].as<std::string>();
  if (compute.mode == ComputeMode::measured && !compute.numerics)
    throw InputError("--compute measured times the arithmetic, which --numerics off skips");
}

// --engine testbed: every kernel is padded with sleep to its charge (flops, the default, or
// calibrated) times the time dilation. Without --dilation the front end chooses it
// (dilation 0 until then); the ranks are always given one.
void resolve_testbed_compute(const po::variables_map& vm, TrainJob& job) {
  ComputeConfig& compute = job.compute;
  if (!vm.count("platform")) throw InputError("--engine testbed needs --platform FILE.xml");
  job.platform = vm["platform"].as<std::string>();
  compute.mode = vm.count("compute") ? vm["compute"].as<ComputeMode>() : ComputeMode::flops;
  if (compute.mode == ComputeMode::measured)
    throw InputError("--compute measured on --engine testbed: a testbed kernel is padded to a time known ahead; use "
                     "flops (the platform's host speeds) or calibrated");
  if (compute.mode == ComputeMode::wall)
    throw InputError("--compute wall on --engine testbed: the kernels would take this machine's time, not the "
                     "platform's hosts'; use flops (the platform's host speeds) or calibrated");
  compute.dilation = 0;
  if (vm.count("dilation")) {
    const double d = vm["dilation"].as<double>();
    if (!std::isfinite(d) || !(d >= 1))
      throw InputError(fmt::format("--dilation: {:g} must be a finite number of at least 1 (wall seconds per "
                                   "platform second)", d));
    compute.dilation = d;
  }
}

// The arithmetic (precision, numerics) and, under sim, how its time is charged and the
// platform's what-if.
void resolve_compute(const po::variables_map& vm, TrainJob& job) {
  job.double_precision = vm["precision"].as<std::string>() == "double";
  ComputeConfig& compute = job.compute;
  compute.numerics = vm["numerics"].as<bool>();
  compute.ranks = job.np;
  compute.measured_scale = vm["measured-scale"].as<double>();
  if (!(compute.measured_scale > 0) || !std::isfinite(compute.measured_scale))
    throw InputError("--measured-scale: must be a positive number");
  for (const char* scale : {"bw-scale", "lat-scale", "speed-scale"}) {
    const double v = vm[scale].as<double>();
    if (!(v > 0) || !std::isfinite(v)) throw InputError("--" + std::string(scale) + ": must be a positive number");
  }
  compute.bw_scale = vm["bw-scale"].as<double>();
  compute.lat_scale = vm["lat-scale"].as<double>();
  compute.speed_scale = vm["speed-scale"].as<double>();
  job.grow = vm["grow"].as<long long>();
  if (job.grow < 0) throw InputError("--grow: must not be negative");
  if (vm.count("eager-limit")) {
    job.eager_limit = vm["eager-limit"].as<long long>();
    check_eager_limit(job.eager_limit, "--eager-limit");
  }
  job.ranks_per_host = vm["ranks-per-host"].as<long long>();
  if (job.ranks_per_host < 0) throw InputError("--ranks-per-host: must not be negative");
  if (vm.count("hosts")) job.rank_hosts = rank_hosts(vm["hosts"].as<std::string>(), job);
  if (!job.rank_hosts.empty() && job.reduce == "four-stage" && !job.has_reduce_layout)
    throw InputError("--hosts with --reduce four-stage needs --reduce-layout (the layout read from the platform "
                     "follows its own host order)");
  if (vm.count("profile") && !(vm.count("compute") && vm["compute"].as<ComputeMode>() == ComputeMode::calibrated))
    throw InputError("--profile is for --compute calibrated");
  if (job.engine == "seq") {
    if (vm.count("compute")) throw InputError("--compute is for --engine sim, testbed or real");
    if (!compute.numerics) throw InputError("--numerics off: --engine seq runs the arithmetic (it charges no time)");
    return;
  }
  if (job.engine == "real") resolve_real_compute(vm, compute);
  else if (job.engine == "testbed") resolve_testbed_compute(vm, job);
  else resolve_sim_compute(vm, job);
  if (compute.mode == ComputeMode::calibrated) {
    if (!vm.count("profile")) throw InputError("--compute calibrated needs --profile FILE");
    compute.profile = read_profile(vm["profile"].as<std::string>());
  }
  // Each session is a whole training run on one rank's copy of the data, which a time-only
  // run does not load.
  if (job.strategy == Strategy::session && !compute.numerics)
    throw InputError("--numerics off: --strategy session trains whole nets and needs the arithmetic");
}

// The record and the weights file, checked writable before any work is done.
void resolve_output(const po::variables_map& vm, TrainJob& job) {
  if (vm.count("machine-cost")) {
    job.machine_cost_usd = vm["machine-cost"].as<double>();
    if (!(job.machine_cost_usd > 0) || !std::isfinite(job.machine_cost_usd))
      throw InputError("--machine-cost: must be a positive number of USD");
  }
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
}

// --weights-in: the file's values, checked to be a net of this run's shape (layer sizes,
// activations, loss, bias) before any rank starts; every rank reads the same file.
void resolve_weights_in(const po::variables_map& vm, TrainJob& job) {
  if (!vm.count("weights-in")) return;
  const std::string where = "--weights-in " + vm["weights-in"].as<std::string>() + ": ";
  if (job.strategy == Strategy::session)
    throw InputError(where + "--strategy session trains one net per point of the sweep, each from its own seed");
  if (!job.compute.numerics) throw InputError(where + "--numerics off computes with no weights");
  job.weights_in = vm["weights-in"].as<std::string>();
  const WeightsFile file = read_weights(job.weights_in);
  if (file.net != job.spec.describe())
    throw InputError(where + "holds a net " + file.net + ", this run's is " + job.spec.describe() +
                     " (--hidden, --activation, --output-activation, --loss and --bias must match)");
  if (file.values.size() != job.spec.parameter_count())
    throw InputError(where + std::to_string(file.values.size()) + " values for a net of " +
                     std::to_string(job.spec.parameter_count()) + " weights");
  job.initial_weights = file.values;
}

// cg's settings, checked before the data is read and before any rank starts.
CgConfig resolve_cg(const po::variables_map& vm, const TrainJob& job) {
  CgConfig cg;
  cg.initial_step = vm["cg-step"].as<double>();
  cg.max_expansions = static_cast<int>(std::clamp(vm["cg-expansions"].as<long long>(), -1LL, 1001LL));
  cg.refinements = static_cast<int>(std::clamp(vm["cg-refinements"].as<long long>(), 0LL, 1001LL));
  cg.flat_tolerance = vm["cg-flat"].as<double>();
  if (vm.count("cg-probes")) {
    if (job.compute.numerics)
      throw InputError("--cg-probes is for --numerics off (a run with the arithmetic probes as its search needs)");
    cg.time_only_probes = vm["cg-probes"].as<double>();
  }
  cg.load_balance = vm["load-balance"].as<double>();
  const long long chunk = vm["chunk"].as<long long>();
  cg.chunk = chunk > 0 ? static_cast<std::size_t>(chunk) : 0;
  if (job.strategy == Strategy::cg) {
    validate_cg(cg);
    if (cg.load_balance > 0 && job.np < 2)
      throw InputError("--load-balance: needs at least 2 ranks, a master that polls and a worker (--np " +
                       std::to_string(job.np) + "; use --engine real or sim with --np 2 or more)");
  }
  return cg;
}

// Reads the problem's data: the part this rank trains on (data_layout of job.config's
// strategy), or only its shape where nothing is trained here. Returns the options it was
// read with.
ProblemOptions resolve_data(const po::variables_map& vm, const RankPlace& place, TrainJob& job) {
  ProblemOptions data;
  // The front end of a parallel run checks the data once, whole; a rank reads what its
  // strategy gives it.
  const DataLayout layout = data_layout(job.config);
  const bool shared_out = place.in_rank_program && (layout == DataLayout::shares || layout == DataLayout::whole_train);
  data.ranks = shared_out ? place.ranks : 1;
  data.rank = shared_out ? place.rank : 0;
  // The workers share the data; the master loads the first worker's share and drops it
  // below, keeping the sets' shapes.
  const bool workers = place.in_rank_program && layout == DataLayout::workers;
  if (workers) data.ranks = place.ranks - 1, data.rank = std::max(0, place.rank - 1);
  data.whole_train = layout == DataLayout::whole_train;
  // The front end of a parallel run only checks the data (its ranks load it).
  data.shape_only = !job.compute.numerics || (!place.in_rank_program && job.engine != "seq") ||
                    (place.in_rank_program && layout == DataLayout::root_only && place.rank != 0);
  const long long seed = vm["seed"].as<long long>();
  if (seed < 0) throw InputError("--seed: must not be negative");
  data.seed = static_cast<std::uint64_t>(seed);
  if (vm.count("data-dir")) {
    data.mnist_dir = vm["data-dir"].as<std::string>();
  } else if (const char* env = std::getenv("WULF_MNIST_DIR"); env && *env) {
    data.mnist_dir = env;
  } else {
    data.mnist_dir = build::mnist_dir;
  }
  if (vm.count("test-data")) data.test_data = vm["test-data"].as<std::string>();
  data.train_size = positive(vm, "train-size", true);
  data.test_size = positive(vm, "test-size", true);

  const auto t0 = std::chrono::steady_clock::now();
  job.problem = make_problem(vm["problem"].as<std::string>(), data);
  if (workers && place.rank == 0) job.problem.train.keep(0, 0), job.problem.test.keep(0, 0);
  job.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return data;
}

// The net: the options, and the problem's defaults where they say nothing.
// A regression set whose targets lie outside the output activation's range (targets near
// 1 000 under a sigmoid) trains to an error no weights can lower: said before training.
void warn_of_unreachable_targets(TrainJob& job) {
  const Problem& p = job.problem;
  const Activation out = job.spec.activations.back();
  if (p.classifier || p.train.empty() || (out != Activation::sigmoid && out != Activation::tanh)) return;
  const double lo = out == Activation::sigmoid ? 0.0 : -1.0, hi = 1.0;
  const double t_lo = p.train.targets.minCoeff(), t_hi = p.train.targets.maxCoeff();
  if (t_lo >= lo && t_hi <= hi) return;
  job.warnings.push_back(fmt::format(
      "the training targets of {} lie in [{:g}, {:g}], outside [{:g}, {:g}], the range of the {} output: the net "
      "cannot reach them (scale the targets, or --output-activation linear)",
      p.name, t_lo, t_hi, lo, hi, to_string(out)));
}

NetSpec net_spec(const po::variables_map& vm, const Problem& p) {
  const ProblemDefaults& d = p.defaults;
  NetSpec spec;
  spec.sizes.push_back(p.inputs);
  for (int h : given<std::vector<int>>(vm, "hidden").value_or(d.hidden)) spec.sizes.push_back(h);
  spec.sizes.push_back(p.outputs);
  const int n_hidden = static_cast<int>(spec.sizes.size()) - 2;
  spec.activations.assign(static_cast<std::size_t>(n_hidden),
                          given<Activation>(vm, "activation").value_or(d.hidden_activation));
  spec.activations.push_back(given<Activation>(vm, "output-activation").value_or(d.output_activation));
  spec.loss = given<Loss>(vm, "loss").value_or(d.loss);
  spec.bias = vm["bias"].as<bool>();
  spec.clip_sigmoid_derivative = vm["sigmoid-derivative"].as<std::string>() == "fann";
  spec.validate();
  return spec;
}

// The training: the options, and the problem's defaults where they say nothing; under
// --strategy session, the sweep's points. block and epochs were checked before the data
// was read.
void resolve_training(const po::variables_map& vm, std::optional<std::size_t> block,
                      std::optional<std::size_t> epochs, TrainJob& job) {
  const Problem& p = job.problem;
  const ProblemDefaults& d = p.defaults;
  TrainConfig& c = job.config;
  const std::optional<Learning> learning = given<Learning>(vm, "learning");
  c.learning = learning.value_or(d.learning);
  if (c.learning == Learning::rprop)  // RPROP's steps are its own: these would say nothing
    for (const char* option : {"eta", "alpha", "momentum", "block-step", "block"})
      if (vm.count(option))
        throw InputError(fmt::format("--{} has no part in --learning rprop (an update per epoch, whose steps follow "
                                     "only the gradient's signs; see --rprop-*)",
                                     option));
  c.block = block.value_or(d.block == 0 ? p.train_total : d.block);
  if (block && c.learning != Learning::block && !learning) c.learning = Learning::block;
  c.rprop = {vm["rprop-increase"].as<double>(), vm["rprop-decrease"].as<double>(), vm["rprop-delta-min"].as<double>(),
             vm["rprop-delta-max"].as<double>(), vm["rprop-delta-zero"].as<double>()};
  c.eta = given<double>(vm, "eta").value_or(d.eta);
  c.alpha = given<double>(vm, "alpha").value_or(d.alpha);
  c.momentum = given<MomentumRule>(vm, "momentum").value_or(d.momentum);
  c.block_step = given<BlockStep>(vm, "block-step").value_or(d.block_step);
  c.max_iterations = static_cast<int>(epochs.value_or(static_cast<std::size_t>(d.iterations)));
  if (vm.count("target-error")) c.target_error = vm["target-error"].as<double>();
  c.max_seconds = vm["max-seconds"].as<double>();
  c.metric = given<ErrorMetric>(vm, "error").value_or(p.classifier ? ErrorMetric::classification : ErrorMetric::rmse);
  c.shuffle = vm["shuffle"].as<bool>();
  c.eval_train = vm["eval-train"].as<bool>();
  c.history_every = static_cast<int>(std::min<std::size_t>(positive(vm, "history-every"), 1'000'000'000));
  c.init_range = given<double>(vm, "init-range").value_or(d.init_range);
  c.average_interval = positive(vm, "average-interval", true);
  c.local_epoch = positive(vm, "local-epoch", true);
  c.error_window = static_cast<int>(std::min<std::size_t>(positive(vm, "error-window"), 1000));
  c.rounds_per_iteration = positive(vm, "rounds-per-iteration", true);
  c.threads = static_cast<int>(std::min<std::size_t>(positive(vm, "threads"), 1024));
  if (job.strategy == Strategy::session) {
    job.sessions = sweep_configs(c, job.sweep);
    for (const TrainConfig& s : job.sessions) validate(s, p.train_total, p.classifier, 1);
  } else {
    validate(c, p.train_total, p.classifier, splits_blocks(job.strategy) ? job.np : 1);
  }
}

// The engine's part of the record's config.
void add_engine_json(Json& j, const TrainJob& job) {
  const TrainConfig& c = job.config;
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
    g["initial_step"] = c.cg.initial_step;
    g["max_expansions"] = c.cg.max_expansions;
    g["refinements"] = c.cg.refinements;
    if (!job.compute.numerics)
      g["time_only_probes"] = c.cg.time_only_probes > 0 ? c.cg.time_only_probes : c.cg.refinements;
    g["flat_tolerance"] = c.cg.flat_tolerance;
    g["load_balance"] = c.cg.load_balance;
    g["chunk"] = c.cg.load_balance > 0 ? Json(c.cg.chunk) : Json(nullptr);
    g["master"] = c.cg.load_balance > 0 ? "rank 0 polls only, ranks 1.. hold the data"
                                        : "rank 0 computes its share too";
    j["cg"] = std::move(g);
  }
  j["weights_out"] = job.weights_path.empty() ? Json(nullptr) : Json(job.weights_path);
  j["weights_in"] = job.weights_in.empty() ? Json(nullptr) : Json(job.weights_in);
  j["machine_cost_usd"] = job.machine_cost_usd > 0 ? Json(job.machine_cost_usd) : Json(nullptr);
  if (job.strategy == Strategy::session) j["sweep"] = job.sweep;
  j["platform"] = job.platform.empty() ? Json(nullptr) : Json(job.platform);
  if (job.engine == "real") {
    j["hostfile"] = job.hostfile.empty() ? Json(nullptr) : Json(job.hostfile);
    j["mpirun_args"] = job.mpirun_args;
  }
  j["collective_algorithm"] = job.engine == "seq" ? Json(nullptr)
                                                  : Json("allreduce:" + job.allreduce + ", reduce:" + job.reduce +
                                                         ", bcast:" + job.bcast);
  if (job.engine == "testbed" && job.allreduce == "default")
    j["collective_note"] = kTestbedDefaultAllreduceNote;
  if (job.reduce == "four-stage") {
    // Without a layout (or with no rank in a group) the four-stage reduce is the library's.
    j["reduce_layout"] = job.has_reduce_layout ? Json(job.reduce_layout.to_string()) : Json(nullptr);
    j["reduce_falls_back"] = !job.has_reduce_layout || !job.reduce_layout.has_groups();
  }
  j["compute"] = to_string(job.compute.mode);
  j["numerics"] = job.compute.numerics;
  if (job.compute.mode == ComputeMode::calibrated) j["profile"] = job.compute.profile.name;
  if (job.compute.mode == ComputeMode::measured) j["measured_scale"] = job.compute.measured_scale;
  if (job.engine == "testbed")
    j["dilation"] = job.compute.dilation > 0 ? Json(job.compute.dilation) : Json(nullptr);  // null: not chosen yet
  if (job.engine == "sim" || job.engine == "testbed") {
    Json what_if = Json::object();
    what_if["bw_scale"] = job.compute.bw_scale;
    if (job.engine == "sim") what_if["lat_scale"] = job.compute.lat_scale;
    what_if["speed_scale"] = job.compute.speed_scale;
    what_if["grow"] = job.grow;
    j["what_if"] = std::move(what_if);
    // null: the engine's default (SMPI: no data flows before the receive is posted; the
    // testbed: kTestbedEagerBytes, in config.testbed.open_mpi).
    j["eager_limit_bytes"] = job.eager_limit > 0 ? Json(job.eager_limit) : Json(nullptr);
    j["ranks_per_host"] = job.ranks_per_host;
    j["placement"] = job.rank_hosts.empty() ? "the platform's hosts in order" : "--hosts";
  }
}

// The problem's, the net's and the training's part of the record's config.
void add_training_json(Json& j, const TrainJob& job, const ProblemOptions& data) {
  const Problem& p = job.problem;
  const TrainConfig& c = job.config;
  j["problem"] = p.name;
  j["problem_description"] = p.description;
  j["defaults_from"] = p.defaults.source;
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
  j["sigmoid_derivative"] = job.spec.clip_sigmoid_derivative ? "fann" : "exact";
  j["parameters"] = job.spec.parameter_count();
  j["precision"] = precision_name(job);
  j["learning"] = to_string(c.learning);
  j["block"] = block_size(c, p.train_total);
  if (c.learning == Learning::rprop)
    j["rprop"] = {{"variant", "iRprop- as FANN 2.2"},         {"increase", c.rprop.increase},
                  {"decrease", c.rprop.decrease},             {"delta_min", c.rprop.delta_min},
                  {"delta_max", c.rprop.delta_max},           {"delta_zero", c.rprop.delta_zero}};
  j["eta"] = c.eta;
  j["alpha"] = c.alpha;
  j["momentum"] = to_string(c.momentum);
  j["block_step"] = to_string(c.block_step);
  j["max_iterations"] = c.max_iterations;
  j["target_error"] = c.target_error ? Json(*c.target_error) : Json(nullptr);
  j["error_metric"] = to_string(c.metric);
  j["max_seconds"] = c.max_seconds;
  j["seed"] = c.seed;
  j["shuffle"] = c.shuffle;
  j["eval_train"] = c.eval_train;
  j["history_every"] = c.history_every;
  j["init_range"] = c.init_range;
  j["data_dir"] = p.name.rfind("digits", 0) == 0 ? Json(data.mnist_dir) : Json(nullptr);
  j["load_s"] = job.load_seconds;
  j["versions"] = versions_json();
}

// An output that names one of the run's inputs, or the other output, would destroy it: refused
// before the run, naming both (check_output).
void check_outputs_apart(const po::variables_map& vm, const TrainJob& job) {
  std::vector<NamedPath> inputs;
  if (vm.count("config")) inputs.push_back({"--config", vm["config"].as<std::string>()});
  if (const std::string problem = vm["problem"].as<std::string>(); problem.rfind("fann:", 0) == 0)
    inputs.push_back({"--problem", problem.substr(5)});
  if (vm.count("test-data")) inputs.push_back({"--test-data", vm["test-data"].as<std::string>()});
  inputs.push_back({"--weights-in", job.weights_in});
  if (job.compute.mode == ComputeMode::calibrated) inputs.push_back({"--profile", job.compute.profile.name});
  inputs.push_back({"--platform", job.platform});
  inputs.push_back({"--hostfile", job.hostfile});
  if (vm.count("hosts")) inputs.push_back({"--hosts", vm["hosts"].as<std::string>()});
  if (!job.out_path.empty()) check_output(job.out_path, "--out", inputs);
  inputs.push_back({"--out", job.out_path});
  if (!job.weights_path.empty()) check_output(job.weights_path, "--weights-out", inputs);
}

}  // namespace

TrainJob resolve(const po::variables_map& vm, const RankPlace& place) {
  TrainJob job;
  resolve_engine(vm, job);
  resolve_compute(vm, job);
  resolve_output(vm, job);
  job.config.strategy = job.strategy;
  job.config.cg = resolve_cg(vm, job);
  // Everything about the options that can be checked without the data is checked first
  // (the typed options were checked as they were read).
  const std::optional<std::size_t> block = vm.count("block") ? std::optional(positive(vm, "block")) : std::nullopt;
  const std::optional<std::size_t> epochs =
      vm.count("epochs") ? std::optional(positive(vm, "epochs", true)) : std::nullopt;
  if (epochs && *epochs > 100'000'000) throw InputError("--epochs: too many");

  const ProblemOptions data = resolve_data(vm, place, job);
  job.config.seed = data.seed;
  job.spec = net_spec(vm, job.problem);
  warn_of_unreachable_targets(job);
  if (job.compute.mode == ComputeMode::calibrated)
    check_profile_fits(job.compute.profile, job.problem.name, job.spec, precision_name(job));
  resolve_training(vm, block, epochs, job);
  resolve_weights_in(vm, job);
  check_outputs_apart(vm, job);
  // The memory the run needs, against this machine's, before any rank starts (the ranks
  // themselves only record it); then the counts its collectives pass to MPI.
  const MemoryEstimate memory = estimate_memory(job);
  if (!place.in_rank_program) check_memory_fits(memory, machine_memory(), vm.count("force") > 0, "");
  check_message_counts(job);

  job.config_json = Json::object();
  add_engine_json(job.config_json, job);
  add_training_json(job.config_json, job, data);
  job.config_json["memory_estimate"] = memory.to_json();
  return job;
}

}  // namespace wulf
