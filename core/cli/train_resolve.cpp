// `wulf train`'s options resolved into a job (job/train_job.hpp): the problem's defaults
// where the options say nothing, every option checked, before any rank starts.
#include "cli/train_resolve.hpp"

#include "cli/train_options.hpp"
#include "engine/launch.hpp"
#include "job/job_json.hpp"
#include "job/memory_estimate.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace po = boost::program_options;

namespace wulf {
namespace {

// What the front end alone knows of a sim job, then the job's last checks and its config
// (job/train_job's finish_front_end).
void finish(TrainJob& job, bool force) {
  if (job.engine == Engine::sim) job.sim_malloc = sim_allocator().name;
  finish_front_end(job, force);
}


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

// --engine, --np, --strategy and the collectives; an option the choices would ignore is refused.
void resolve_engine(const po::variables_map& vm, TrainJob& job) {
  job.engine = parse_engine(vm["engine"].as<std::string>());
  const long long np = vm["np"].as<long long>();  // in its range (cli/train_options.cpp)
  job.np = static_cast<int>(np);
  if (job.engine == Engine::seq && job.np > 1) throw InputError("--np " + std::to_string(np) + " needs --engine real or sim");
  job.strategy = vm["strategy"].as<Strategy>();
  job.config.strategy = job.strategy;
  read_strategy_settings(vm, job.config);
  job.allreduce = vm["allreduce"].as<std::string>();
  job.reduce = vm["reduce"].as<std::string>();
  job.bcast = vm["bcast"].as<std::string>();
  job.oversubscribe = vm["oversubscribe"].as<std::string>();
  check_option_scopes(vm, std::string(to_string(job.engine)), job.strategy, job.reduce);
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

}  // namespace

std::vector<std::string> rank_hosts(const std::string& text, long long np, long long ranks_per_host) {
  std::vector<std::string> names;
  std::error_code ec;
  if (std::filesystem::exists(text, ec)) {  // a file (read_text_file refuses a FIFO, a folder ...)
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
  if (names.size() != static_cast<std::size_t>(np))
    throw InputError("--hosts " + text + ": " + std::to_string(names.size()) + " hosts for --np " + std::to_string(np) +
                     " (one host per rank)");
  if (ranks_per_host > 0) throw InputError("--hosts places every rank itself: drop --ranks-per-host");
  return names;
}

namespace {

// What each engine asks of the job's compute charging and platform; resolve and a re-run's
// overrides both end here.
// - seq charges nothing: the arithmetic, one rank.
// - real: the wall clock (wall), or each kernel padded with sleep to its profile's time
//   (calibrated), which may skip the arithmetic. The hosts' speeds are a platform's.
// - sim: a simulated kernel takes no time until charged (flops, calibrated or measured).
// - testbed: every kernel is padded with sleep to its charge (flops or calibrated) times the
//   time dilation.
void check_engine_fits(const TrainJob& job) {
  const ComputeConfig& c = job.compute;
  const std::string engine(to_string(job.engine));
  switch (job.engine) {
    case Engine::seq:
      if (job.np > 1) throw InputError("--np " + std::to_string(job.np) + " needs --engine real or sim");
      if (c.mode != ComputeMode::wall) throw InputError("--compute is for --engine sim, testbed or real");
      if (!c.numerics) throw InputError("--numerics off: --engine seq runs the arithmetic (it charges no time)");
      break;
    case Engine::real:
      if (c.mode == ComputeMode::flops)
        throw InputError("--compute flops on --engine real: the hosts' speeds are the platform's: use --engine "
                         "testbed --platform FILE");
      if (c.mode == ComputeMode::measured)
        throw InputError("--compute measured on --engine real: the wall clock already measures the arithmetic; "
                         "measured is for --engine sim");
      if (!c.numerics && c.mode != ComputeMode::calibrated)
        throw InputError("--numerics off on --engine real needs --compute calibrated --profile FILE (each kernel "
                         "then sleeps its profile's time instead of computing)");
      check_mpirun_launch(job.np, job.hostfile, job.oversubscribe, job.mpirun_args);
      break;
    case Engine::sim:
      if (c.mode == ComputeMode::wall)
        throw InputError("--compute wall on --engine sim: the simulated clock does not see this machine's wall "
                         "clock, so the kernels would take no time; use flops, calibrated or measured");
      if (job.platform.empty()) throw InputError("--engine sim needs --platform FILE.xml");
      if (c.mode == ComputeMode::measured && !c.numerics)
        throw InputError("--compute measured times the arithmetic, which --numerics off skips");
      break;
    case Engine::testbed:
      if (job.platform.empty()) throw InputError("--engine testbed needs --platform FILE.xml");
      if (c.mode == ComputeMode::measured)
        throw InputError("--compute measured on --engine testbed: a testbed kernel is padded to a time known ahead; "
                         "use flops (the platform's host speeds) or calibrated");
      if (c.mode == ComputeMode::wall)
        throw InputError("--compute wall on --engine testbed: the kernels would take this machine's time, not the "
                         "platform's hosts'; use flops (the platform's host speeds) or calibrated");
      break;
  }
  if (!on_platform(job.engine) && !job.platform.empty())
    throw InputError("--platform is for --engine sim or --engine testbed");
  if (job.eager_limit > 0) check_eager_limit(job.eager_limit, "--eager-limit");
  check_strategy(job.config, job.np, c.numerics);
  if (!job.rank_hosts.empty() && job.rank_hosts.size() != static_cast<std::size_t>(job.np))
    throw InputError(fmt::format("--np {}: {} ranks are placed with --hosts", job.np, job.rank_hosts.size()));
}

// --engine testbed: without --dilation the front end chooses it (dilation 0 until then);
// the ranks are always given one. --dilation is in its range (kDilationRange).
void resolve_dilation(const po::variables_map& vm, ComputeConfig& compute) {
  compute.dilation = vm.count("dilation") ? vm["dilation"].as<double>() : 0;
}

// The arithmetic (precision, numerics) and, under sim, how its time is charged and the
// platform's what-if.
void resolve_compute(const po::variables_map& vm, TrainJob& job) {
  const std::string precision = vm["precision"].as<std::string>();
  job.double_precision = precision == "double";
  job.half = precision == "bf16" || precision == "fp16" ? precision : "";
  job.config.value_bytes = job.half.empty() ? 0 : 2;
  ComputeConfig& compute = job.compute;
  compute.numerics = vm["numerics"].as<bool>();
  compute.ranks = job.np;
  // The numbers are in their ranges (cli/train_options.cpp), checked as they were read.
  compute.measured_scale = vm["measured-scale"].as<double>();
  compute.bw_scale = vm["bw-scale"].as<double>();
  compute.lat_scale = vm["lat-scale"].as<double>();
  compute.speed_scale = vm["speed-scale"].as<double>();
  job.grow = vm["grow"].as<long long>();
  if (vm.count("eager-limit")) job.eager_limit = vm["eager-limit"].as<long long>();
  job.sim_messages = vm["sim-messages"].as<std::string>();
  job.ranks_per_host = vm["ranks-per-host"].as<long long>();
  if (vm.count("hosts")) job.rank_hosts = rank_hosts(vm["hosts"].as<std::string>(), job.np, job.ranks_per_host);
  if (!job.rank_hosts.empty() && job.reduce == "four-stage" && !job.has_reduce_layout)
    throw InputError("--hosts with --reduce four-stage needs --reduce-layout (the layout read from the platform "
                     "follows its own host order)");
  if (vm.count("profile") && !(vm.count("compute") && vm["compute"].as<ComputeMode>() == ComputeMode::calibrated))
    throw InputError("--profile is for --compute calibrated");
  if (job.engine == Engine::seq && vm.count("compute")) throw InputError("--compute is for --engine sim, testbed or real");
  compute.mode = vm.count("compute")  ? vm["compute"].as<ComputeMode>()
                 : on_platform(job.engine) ? ComputeMode::flops
                                           : ComputeMode::wall;
  if (vm.count("platform")) job.platform = vm["platform"].as<std::string>();
  if (job.engine == Engine::testbed) resolve_dilation(vm, compute);
  check_engine_fits(job);
  if (job.engine == Engine::seq) return;
  if (compute.mode == ComputeMode::calibrated) {
    if (!vm.count("profile")) throw InputError("--compute calibrated needs --profile FILE");
    compute.profile = read_profile(vm["profile"].as<std::string>());
  }
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
    if (job.strategy->sessions)
      throw InputError("--weights-out: --strategy " + std::string(to_string(job.strategy)) +
                       " trains one net per session, not one net");
    if (!job.compute.numerics) throw InputError("--weights-out: --numerics off computes no weights");
    job.weights_path = vm["weights-out"].as<std::string>();
    check_writable(job.weights_path, "--weights-out");
  }
}

// The data's options: the seed, the MNIST folder (--data-dir, else $WULF_MNIST_DIR, else the
// one found at build time), a FANN test set, the sizes kept.
ProblemOptions data_options(const po::variables_map& vm) {
  ProblemOptions data;
  const long long seed = vm["seed"].as<long long>();
  if (seed < 0) throw InputError("--seed: must not be negative");
  data.seed = static_cast<std::uint64_t>(seed);
  if (vm.count("data-dir")) {
    data.mnist_dir = vm["data-dir"].as<std::string>();
  } else {
    data.mnist_dir = default_mnist_dir();
  }
  if (vm.count("test-data")) data.test_data = vm["test-data"].as<std::string>();
  data.train_size = positive(vm, "train-size", true);
  data.test_size = positive(vm, "test-size", true);
  return data;
}

// The net: the options, and the problem's defaults where they say nothing.
NetSpec net_spec(const po::variables_map& vm, const Problem& p) {
  const ProblemDefaults& d = p.defaults;
  NetSpec spec;
  if (p.table) {  // the net is the file's
    for (const char* option : {"hidden", "activation", "output-activation", "loss"})
      if (vm.count(option) && !vm[option].defaulted())
        throw InputError(fmt::format("--{}: {} is a net given by its layers ({}), which has no {}", option, p.name,
                                     p.table->path, option == std::string("hidden") ? "other layers" : "arithmetic"));
    spec.sizes = {p.inputs, p.outputs};
    spec.activations = {Activation::linear};
    spec.table = p.table;
    spec.validate();
    return spec;
  }
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

// The training: the options, and the problem's defaults where they say nothing (check_job
// checks it against the data). block and epochs were checked before the data was read.
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
  if (c.learning == Learning::adam)  // Adam's moments are its own
    for (const char* option : {"alpha", "momentum"})
      if (vm.count(option))
        throw InputError(fmt::format("--{} has no part in --learning adam (its running means are --adam-beta1 and "
                                     "--adam-beta2; --eta is its learning rate)",
                                     option));
  c.block = block.value_or(d.block == 0 ? p.train_total : d.block);
  if (block && c.learning != Learning::block && !learning) c.learning = Learning::block;
  c.rprop = {vm["rprop-increase"].as<double>(), vm["rprop-decrease"].as<double>(), vm["rprop-delta-min"].as<double>(),
             vm["rprop-delta-max"].as<double>(), vm["rprop-delta-zero"].as<double>()};
  c.adam = {vm["adam-beta1"].as<double>(), vm["adam-beta2"].as<double>(), vm["adam-epsilon"].as<double>()};
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
  c.recompute = vm["recompute"].as<bool>();
  c.history_every = static_cast<int>(std::min<std::size_t>(positive(vm, "history-every"), kMostHistoryEvery));
  c.init_range = given<double>(vm, "init-range").value_or(d.init_range);
}

// An output that names a file the run reads, or the other output, would destroy it: refused
// before the run, naming both. check_output compares each output with every file the command
// has read so far (InputLog: --config, the problem's data files, --weights-in, --profile, a
// --hosts file, the record --rerun reads, ...); the files the engine reads only when the run
// starts, the platform and mpirun's hostfile, are named here.
void check_outputs_apart(const TrainJob& job) {
  std::vector<NamedPath> others{{"--platform", job.platform}, {"--hostfile", job.hostfile}};
  if (!job.out_path.empty()) check_output(job.out_path, "--out", others);
  others.push_back({"--out", job.out_path});
  if (!job.weights_path.empty()) check_output(job.weights_path, "--weights-out", others);
}

}  // namespace

double train_memory_bytes(const std::vector<std::string>& args) {
  if (args.empty() || args.front() != "train") return 0;
  std::vector<std::string> given(args.begin() + 1, args.end());
  // The estimate, not the check against this machine: the run checks its own.
  if (std::find(given.begin(), given.end(), "--force") == given.end()) given.emplace_back("--force");
  try {
    const po::variables_map vm = parse_train(given, train_options());
    if (vm.count("help")) return 0;
    const TrainJob job = vm.count("rerun") ? resolve_rerun(vm) : resolve(vm);
    return estimate_memory(job).machine_bytes;
  } catch (const InputError&) {
    return 0;
  }
}

std::string default_mnist_dir() {
  const char* env = std::getenv("WULF_MNIST_DIR");
  return env && *env ? env : build::mnist_dir;
}

TrainJob resolve(const po::variables_map& vm) {
  if (vm.count("take-changed-inputs")) throw InputError("--take-changed-inputs is for --rerun");
  TrainJob job;
  resolve_engine(vm, job);
  resolve_compute(vm, job);
  resolve_output(vm, job);
  // Everything about the options that can be checked without the data is checked first
  // (the typed options were checked as they were read).
  const std::optional<std::size_t> block = vm.count("block") ? std::optional(positive(vm, "block")) : std::nullopt;
  const std::optional<std::size_t> epochs =
      vm.count("epochs") ? std::optional(positive(vm, "epochs", true)) : std::nullopt;

  job.data = data_options(vm);
  job.problem_name = vm["problem"].as<std::string>();
  load_problem(job, RankPlace{});
  job.problem_name = job.problem.name;  // canonical: "encoder" is "encoder:256"
  job.config.seed = job.data.seed;
  job.spec = net_spec(vm, job.problem);
  resolve_training(vm, block, epochs, job);
  job.weights_in = given<std::string>(vm, "weights-in").value_or("");
  check_job(job);
  if (uses_node_layout(job) && !on_platform(job.engine)) {  // sim and testbed: the placement's (cli/train)
    if (!job.hostfile.empty())
      throw InputError("hierarchical allreduce with --hostfile: which ranks share a machine is mpirun's mapping, "
                       "which wulf does not read; run it on this machine, or on --engine sim or testbed");
    job.config.rank_nodes.assign(static_cast<std::size_t>(job.np), 0);  // one machine: one node
  }
  if (uses_rings(job) && !on_platform(job.engine)) {  // sim and testbed: the platform's (cli/train)
    if (!job.hostfile.empty())
      throw InputError("the rings allreduce with --hostfile: which rank is where is mpirun's mapping, which wulf "
                       "does not read; run it on this machine, or on --engine sim or testbed");
    std::vector<int> ring(static_cast<std::size_t>(job.np));  // one machine: one ring in rank order
    for (int r = 0; r < job.np; ++r) ring[static_cast<std::size_t>(r)] = r;
    job.config.rank_rings = {ring};
  }
  check_outputs_apart(job);
  finish(job, vm.count("force") > 0);
  return job;
}

namespace {

// The options a re-run may give: where and how it runs, and its outputs. Any other would
// make it another job.
constexpr const char* rerun_overrides[] = {"engine",  "np",         "platform",    "compute",       "profile",
                                           "dilation", "hostfile",  "mpirun-args", "oversubscribe", "allreduce",
                                           "reduce",  "bcast",      "sim-messages", "data-dir",     "out",
                                           "weights-out", "quiet",  "timeout",     "force",         "rerun",
                                           "take-changed-inputs", "help"};

void check_rerun_options(const po::variables_map& vm) {
  for (const auto& [name, value] : vm) {
    if (value.defaulted()) continue;
    if (std::find(std::begin(rerun_overrides), std::end(rerun_overrides), name) != std::end(rerun_overrides)) continue;
    throw InputError("--" + name + ": --rerun runs the record's job as it is; only where and how it runs and its "
                     "outputs may change (--engine, --np, --platform, --compute, --profile, --dilation, --hostfile, "
                     "--mpirun-args, --oversubscribe, --allreduce, --reduce, --bcast, --sim-messages, --data-dir, "
                     "--out, --weights-out, --quiet, --timeout, --force, --take-changed-inputs)");
  }
}

// The engine's compute charging of a re-run on another engine: the record's calibrated
// profile goes along; otherwise the new engine's default (seq, real: the wall clock; sim,
// testbed: flops).
void rerun_on_engine(TrainJob& job, Engine engine) {
  if (engine == job.engine) return;
  const bool platform_before = on_platform(job.engine);
  job.engine = engine;
  if (job.compute.mode != ComputeMode::calibrated || engine == Engine::seq)
    job.compute.mode = on_platform(engine) ? ComputeMode::flops : ComputeMode::wall;
  if (platform_before && !on_platform(engine)) {
    // This machine's network, not the platform's: a what-if or a placement would be lost.
    const ComputeConfig& c = job.compute;
    if (c.bw_scale != 1 || c.lat_scale != 1 || c.speed_scale != 1 || job.grow != 0 || !job.rank_hosts.empty())
      throw InputError("--engine " + std::string(to_string(engine)) + ": the record's job asks a what-if of its "
                       "platform (--bw-scale, --lat-scale, --speed-scale, --grow or --hosts), which this machine "
                       "cannot answer");
    job.platform.clear();
    job.ranks_per_host = 0, job.eager_limit = 0;
    job.machine_cost_usd = 0;
  }
  job.compute.dilation = engine == Engine::testbed ? 0 : 1;  // the testbed's is chosen when it is built
  if (engine == Engine::testbed) job.compute.lat_scale = 1;
  if (engine != Engine::real) job.hostfile.clear(), job.mpirun_args.clear();
}

// The overrides of a re-run applied to the record's job, checked as resolve checks them.
void apply_rerun_overrides(const po::variables_map& vm, TrainJob& job) {
  const auto given = [&](const char* key) { return vm.count(key) && !vm[key].defaulted(); };
  if (given("engine")) rerun_on_engine(job, parse_engine(vm["engine"].as<std::string>()));
  if (given("np")) job.np = static_cast<int>(vm["np"].as<long long>());
  job.compute.ranks = job.np;
  if (job.has_reduce_layout) job.reduce_layout = ReduceLayout::parse(job.reduce_layout.to_string(), job.np);
  if (given("platform")) job.platform = vm["platform"].as<std::string>();
  if (given("compute")) job.compute.mode = vm["compute"].as<ComputeMode>();
  if (given("profile")) {
    if (job.compute.mode != ComputeMode::calibrated) throw InputError("--profile is for --compute calibrated");
    job.compute.profile = read_profile(vm["profile"].as<std::string>());
  } else if (job.compute.mode == ComputeMode::calibrated && job.compute.profile.Tf == 0) {
    throw InputError("--compute calibrated needs --profile FILE");
  }
  if (given("dilation")) {
    if (job.engine != Engine::testbed) throw InputError("--dilation is for --engine testbed");
    job.compute.dilation = vm["dilation"].as<double>();
  }
  if (given("hostfile")) job.hostfile = vm["hostfile"].as<std::string>();
  if (given("mpirun-args")) job.mpirun_args = split_list(vm["mpirun-args"].as<std::string>(), ' ');
  std::erase(job.mpirun_args, std::string());
  for (const char* option : {"hostfile", "mpirun-args"})
    if (given(option) && job.engine != Engine::real) throw InputError(fmt::format("--{} is for --engine real", option));
  // A collective the record's run took by default is chosen again for this run's ranks;
  // one an option names is taken as it is (chosen again: "--reduce").
  for (const JobCollective& c : job_collectives(job)) {
    const std::string option(c.name);
    if (given(option.c_str())) {
      c.algorithm = vm[option].as<std::string>();
      c.chosen_by.clear();
    } else if (c.chosen_by.rfind("default", 0) == 0) {
      c.algorithm = "default";
      c.chosen_by.clear();
    }
  }
  if (given("oversubscribe")) job.oversubscribe = vm["oversubscribe"].as<std::string>();
  if (given("sim-messages")) job.sim_messages = vm["sim-messages"].as<std::string>();
  if (given("data-dir")) job.data.mnist_dir = vm["data-dir"].as<std::string>();
  // A re-run writes only where it is told to: the record's own outputs are the originals.
  job.out_path = given("out") ? vm["out"].as<std::string>() : "";
  job.weights_path = given("weights-out") ? vm["weights-out"].as<std::string>() : "";
  if (!job.out_path.empty()) check_writable(job.out_path, "--out");
  if (!job.weights_path.empty()) check_writable(job.weights_path, "--weights-out");
  job.quiet = given("quiet");
  check_engine_fits(job);
}

}  // namespace

TrainJob resolve_rerun(const po::variables_map& vm) {
  check_rerun_options(vm);
  const std::string path = vm["rerun"].as<std::string>();
  const Json record = read_json_file(path, "--rerun");
  if (!record.is_object() || !record.contains("config"))
    throw InputError(path + ": config: missing (not a record of wulf train)");
  TrainJob job = job_from_json(record.at("config"), path);
  apply_rerun_overrides(vm, job);
  load_problem(job, RankPlace{});
  // The record's run read its layer file as it was then; another file under its name is
  // another net, run only when the user says so.
  if (const auto& table = job.problem.table;
      table && !job.layer_file_digest.empty() && table->digest != job.layer_file_digest) {
    if (!vm.count("take-changed-inputs"))
      throw InputError(path + ": the layer file " + table->path + " is not the one the record's run read (" +
                       job.layer_file_digest + " then, " + table->digest + " now); give --take-changed-inputs to " +
                       "run the net the file holds now");
    job.layer_file_digest = table->digest;
  }
  // check_job would say "add --numerics off", which --rerun does not take: the record is wrong.
  if (job.problem.table && job.compute.numerics)
    throw InputError(path + ": config.numerics: true, but " + job.problem.name +
                     " is a net given by its layers, which has no arithmetic (wulf records such a run with numerics "
                     "false): the record was changed");
  check_job(job);
  // The data files the record's run read, as the front end reads them now (with arithmetic;
  // a time-only run reads none).
  if (const std::string changed = changed_input(job.inputs, inputs_read(job));
      !changed.empty() && !vm.count("take-changed-inputs"))
    throw InputError(path + ": the " + changed + " is not what the record's run read; give --take-changed-inputs to "
                     "run on it as it is now");
  check_outputs_apart(job);  // nor the record read (InputLog)
  finish(job, vm.count("force") > 0);
  return job;
}

}  // namespace wulf
