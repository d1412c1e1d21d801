// `wulf recommend`'s request (cli/recommend_search.hpp): its options read and checked, the
// search space and the options passed on to the runs, before any run starts.
#include "cli/recommend_search.hpp"

#include "cli/launcher.hpp"
#include "cli/platform_model.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "comm/allreduce_algorithms.hpp"
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace po = boost::program_options;

namespace wulf {
namespace {

// wulf train's options that recommend passes on to every run, as wulf train declares them;
// those only simulations take (the sequential runs count iterations and charge nothing).
const std::vector<std::string> run_options{"hidden",     "activation", "output-activation", "loss",
                                           "allreduce",  "precision",  "bias",              "momentum",
                                           "block-step", "data-dir",   "train-size",        "test-size"};
const std::vector<std::string> simulation_options{"compute", "profile", "bw-scale", "lat-scale", "speed-scale"};

// An option's value as wulf train reads it back.
std::string option_text(const po::variable_value& v) {
  const boost::any& a = v.value();
  if (const auto* s = boost::any_cast<std::string>(&a)) return *s;
  if (const auto* x = boost::any_cast<double>(&a)) return shortest(*x);
  if (const auto* n = boost::any_cast<long long>(&a)) return std::to_string(*n);
  if (const auto* b = boost::any_cast<bool>(&a)) return *b ? "on" : "off";
  if (const auto* m = boost::any_cast<MomentumRule>(&a)) return std::string(to_string(*m));
  if (const auto* s = boost::any_cast<BlockStep>(&a)) return std::string(to_string(*s));
  if (const auto* c = boost::any_cast<ComputeMode>(&a)) return std::string(to_string(*c));
  if (const auto* f = boost::any_cast<Activation>(&a)) return std::string(to_string(*f));
  if (const auto* h = boost::any_cast<std::vector<int>>(&a)) {  // --hidden
    std::string sizes;
    for (const int n : *h) sizes += (sizes.empty() ? "" : ",") + std::to_string(n);
    return sizes.empty() ? "none" : sizes;
  }
  if (const auto* l = boost::any_cast<Loss>(&a)) return std::string(to_string(*l));
  throw std::logic_error("an option of a type recommend does not pass on");
}

// The options of `keys` that were given, as wulf train's arguments.
std::vector<std::string> given_options(const po::variables_map& vm, const std::vector<std::string>& keys) {
  std::vector<std::string> args;
  for (const std::string& key : keys)
    if (vm.count(key) && !vm[key].defaulted()) args.insert(args.end(), {"--" + key, option_text(vm[key])});
  return args;
}

// The searched strategies whose b is the samples of one update over all ranks (block and
// overlap): those a time per epoch is searched for, named as "block and overlap".
std::string per_update_strategy_names() {
  std::vector<std::string> names;
  for (const Strategy s : searched_strategies())
    if (s->search->same_updates) names.emplace_back(to_string(s));
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

// --strategies, or block (block and overlap for a time per epoch); for a time per epoch only
// those whose b is the samples of one update over all ranks.
std::vector<Strategy> parse_strategies(const po::variables_map& vm, const Request& r) {
  const std::string list = vm.count("strategies") ? vm["strategies"].as<std::string>()
                           : r.by_model           ? "overlap,fsdp"
                           : r.by_epoch()         ? "block,overlap"
                                                  : "block";
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
    if (r.by_epoch() && !s->search->same_updates)
      throw InputError("--strategies: '" + name + "' with --target-epoch-seconds: a time per epoch is searched for " +
                       per_update_strategy_names() + ", whose b is the samples of one update over all ranks (" + name +
                       " changes the arithmetic with p" +
                       (r.problem.table
                            ? "; and " + r.problem.name + ", a net given by its layers, trains with no other"
                            : std::string()) +
                       ")");
    if (r.by_model && !s->search->bucket_option.empty() == !s->search->sharding_option.empty())
      throw InputError("--strategies: '" + name + "' with --screen model: the platform model times overlap and fsdp "
                       "(block's allreduce is the MPI library's; overlap with one bucket of the whole net sends it "
                       "after the backward pass as block does)");
    strategies.push_back(s);
  }
  if (strategies.empty()) throw InputError("--strategies: empty list");
  return strategies;
}

// --np, or the powers of two up to the platform's cores; 1 always, sorted, once each.
std::vector<int> parse_nps(const po::variables_map& vm, const Request& r) {
  std::vector<int> nps;
  if (vm.count("np")) {
    for (long long p : whole_list(vm["np"].as<std::string>(), "np", kSearchNpRange)) {
      if (p > r.cores && !r.by_model)
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

// --batches, a rank's samples of an update: the blocks p x batch of every p (those above the
// training set are made, and skipped saying so).
std::vector<std::size_t> parse_batches(const po::variables_map& vm, SearchSpace& space) {
  if (vm.count("blocks"))
    throw InputError("--blocks " + vm["blocks"].as<std::string>() + " and --batches " +
                     vm["batches"].as<std::string>() + ": give one (b over all ranks, or a rank's share of it)");
  std::vector<std::size_t> blocks;
  for (long long batch : whole_list(vm["batches"].as<std::string>(), "batches", kBlockRange)) {
    space.batches.push_back(static_cast<std::size_t>(batch));
    for (int p : space.nps) blocks.push_back(static_cast<std::size_t>(batch) * static_cast<std::size_t>(p));
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

// --blocks, or the problem's block times 1, 4, 16, 64 up to the training set.
std::vector<std::size_t> parse_blocks(const po::variables_map& vm, const Problem& problem) {
  const std::size_t n = problem.train_total;
  const ProblemDefaults& d = problem.defaults;
  std::vector<std::size_t> blocks;
  if (vm.count("blocks")) {
    for (long long b : whole_list(vm["blocks"].as<std::string>(), "blocks", kBlockRange)) {
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

// --allreduces: the algorithms both strategies that take one (block, overlap) know, for them;
// not beside --allreduce, which would fix it for every run.
std::vector<std::string> parse_allreduces(const po::variables_map& vm, const SearchSpace& space) {
  if (!vm.count("allreduces")) return {};
  const std::string list = vm["allreduces"].as<std::string>();
  if (vm.count("allreduce") && !vm["allreduce"].defaulted())
    throw InputError("--allreduces " + list + " and --allreduce " + vm["allreduce"].as<std::string>() +
                     ": give one (--allreduce fixes every run's, --allreduces searches block's and overlap's)");
  if (std::none_of(space.strategies.begin(), space.strategies.end(),
                   [](Strategy s) { return !s->search->allreduce_option.empty(); }))
    throw InputError("--allreduces " + list + ": none of --strategies takes an allreduce algorithm (block and "
                     "overlap do)");
  std::vector<std::string> names;
  for (const std::string& name : split_list(list)) {
    const AllreduceAlgorithm* a = find_allreduce(name);
    if (!a || !a->scheduled)
      throw InputError("--allreduces: '" + name + "': expected " + allreduce_names(AllreduceRows::scheduled) +
                       " (block's the MPI library's where it has one, overlap's wulf's own non-blocking one)");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (names.empty()) throw InputError("--allreduces: empty list");
  return names;
}

// --bucket-sizes for overlap, or a bucket per tensor, about a quarter of the net and the whole
// net; each with the buckets it cuts the net into, and the first size that cuts it alike.
void parse_bucket_sizes(const po::variables_map& vm, const Request& r, SearchSpace& space) {
  const bool bucketed = std::any_of(space.strategies.begin(), space.strategies.end(),
                                    [](Strategy s) { return !s->search->bucket_option.empty(); });
  if (vm.count("bucket-sizes") && !bucketed)
    throw InputError("--bucket-sizes " + vm["bucket-sizes"].as<std::string>() +
                     ": none of --strategies has buckets (overlap does)");
  if (!bucketed) return;
  const std::size_t net_bytes = r.gradient_bytes();
  if (vm.count("bucket-sizes")) {
    for (long long b : whole_list(vm["bucket-sizes"].as<std::string>(), "bucket-sizes", kSearchBucketRange))
      space.bucket_bytes.push_back(static_cast<std::size_t>(b));
  } else {
    space.bucket_bytes = {0, net_bytes / 4, net_bytes};
  }
  std::vector<std::vector<BucketCut>> cuts;
  for (std::size_t bytes : space.bucket_bytes) {
    cuts.push_back(cut_buckets(r.tensors, r.value_bytes, bytes));
    std::size_t first = 0;
    while (first + 1 < cuts.size() && cuts[first] != cuts.back()) ++first;
    space.bucket_counts.push_back(cuts.back().size());
    space.bucket_same_as.push_back(first);
  }
}

// The values of `option` of the searched strategies that take it (SearchTraits' sharding
// options): each one of the strategy's own choices, once; none taking it is refused.
std::vector<std::string> parse_setting_list(const po::variables_map& vm, const SearchSpace& space, const char* list_name,
                                            std::string_view SearchTraits::*option) {
  if (!vm.count(list_name)) return {};
  const std::string list = vm[list_name].as<std::string>();
  const auto takes = std::find_if(space.strategies.begin(), space.strategies.end(),
                                  [&](Strategy s) { return !(s->search->*option).empty(); });
  if (takes == space.strategies.end())
    throw InputError("--" + std::string(list_name) + " " + list + ": none of --strategies takes it (fsdp does)");
  const std::string_view name = (*takes)->search->*option;
  const auto described = std::find_if((*takes)->options.begin(), (*takes)->options.end(),
                                      [&](const StrategyOption& o) { return o.name == name; });
  std::vector<std::string> values, choices;
  for (const std::string_view c : described->choices) choices.emplace_back(c);
  for (const std::string& value : split_list(list)) {
    if (std::find(choices.begin(), choices.end(), value) == choices.end())
      throw InputError("--" + std::string(list_name) + ": '" + value + "': expected " + listed(choices, " or ") +
                       " (" + std::string(to_string(*takes)) + "'s --" + std::string(name) + ")");
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  if (values.empty()) throw InputError("--" + std::string(list_name) + ": empty list");
  return values;
}

void parse_shardings(const po::variables_map& vm, SearchSpace& space) {
  space.shardings = parse_setting_list(vm, space, "shardings", &SearchTraits::sharding_option);
  space.shard_algorithms = parse_setting_list(vm, space, "shard-algorithms", &SearchTraits::shard_algorithm_option);
}

SearchSpace parse_space(const po::variables_map& vm, const Request& r) {
  const ProblemDefaults& d = r.problem.defaults;
  SearchSpace space;
  space.train_patterns = r.problem.train_total;
  space.strategies = parse_strategies(vm, r);
  space.allreduces = parse_allreduces(vm, space);
  parse_bucket_sizes(vm, r, space);
  parse_shardings(vm, space);
  space.nps = parse_nps(vm, r);
  space.blocks = vm.count("batches") ? parse_batches(vm, space) : parse_blocks(vm, r.problem);
  space.etas = vm.count("etas") ? number_list(vm["etas"].as<std::string>(), "etas", kSearchEtaRange)
                                : std::vector<double>{d.eta};
  space.alphas = vm.count("alphas") ? number_list(vm["alphas"].as<std::string>(), "alphas", kSearchAlphaRange)
                                    : std::vector<double>{d.alpha};
  for (long long a : whole_list(vm["intervals"].as<std::string>(), "intervals", kSearchIntervalRange))
    space.intervals.push_back(static_cast<std::size_t>(a));
  return space;
}

// --finalists, --max-epochs, --jobs, --show (each in its range, cli/recommend.cpp) and --prune.
void parse_limits(const po::variables_map& vm, Request& r) {
  r.finalists = vm["finalists"].as<long long>();
  r.max_epochs = vm.count("max-epochs") ? vm["max-epochs"].as<long long>() : r.problem.defaults.iterations;
  r.jobs = vm["jobs"].as<long long>();
  r.show = vm["show"].as<long long>();
  r.prune = vm["prune"].as<std::string>() == "on";
}

// The options every run shares (common) and those only simulations take (sim_args), checked
// by wulf train's own resolution of a simulation on the platform, so that no run refuses
// them; it also gives the problem's sizes and defaults (no data read).
void set_run_options(const po::variables_map& vm, Request& r) {
  if (vm.count("compute") && vm["compute"].as<ComputeMode>() == ComputeMode::measured)
    throw InputError("--compute measured: screening simulates without the arithmetic, which measured times");
  if (vm.count("compute") && vm["compute"].as<ComputeMode>() == ComputeMode::wall)
    throw InputError(
        "--compute wall: screening simulates, and a simulation has no wall clock to charge (flops or "
        "calibrated)");
  r.seed = vm["seed"].as<long long>();
  // A time per epoch: every run is time-only, in blocks of b over all ranks, on the training
  // samples its phase gives it (--train-size sets n, checked by the probe, not the runs').
  const std::vector<std::string> shared =
      r.by_epoch()
          ? std::vector<std::string>{"--problem", r.problem_spec, "--numerics",           "off",    "--learning",
                                     "block",     "--seed",       std::to_string(r.seed), "--quiet"}
          : std::vector<std::string>{"--problem", r.problem_spec,         "--target-error", shortest(r.target),
                                     "--seed",    std::to_string(r.seed), "--quiet"};
  std::vector<std::string> own = given_options(vm, run_options);
  r.given = own;
  if (vm.count("timeout")) own.insert(own.end(), {"--timeout", shortest(vm["timeout"].as<double>())});
  r.sim_args = {"--engine", "sim", "--platform", r.platform};
  const std::vector<std::string> sim_own = given_options(vm, simulation_options);
  if (r.by_model && !sim_own.empty())
    throw InputError(sim_own[0] + " with --screen model: the model charges the platform's hosts and links as they "
                     "are (--compute flops); simulate what-ifs with --screen simulation");
  r.sim_args.insert(r.sim_args.end(), sim_own.begin(), sim_own.end());
  std::vector<std::string> probe = shared;
  for (const auto* more : {&own, &r.sim_args}) probe.insert(probe.end(), more->begin(), more->end());
  // The problem's block may be above a small training set; the search's own are checked later.
  if (r.by_epoch()) probe.insert(probe.end(), {"--block", "1"});
  // A net too large for block's one allreduce of every weight is searched sharded: its probe
  // is fsdp's where that is searched.
  const std::string searched = vm.count("strategies") ? vm["strategies"].as<std::string>() : r.by_model ? "fsdp" : "";
  const std::vector<std::string> names = split_list(searched);
  if (r.by_epoch() && std::find(names.begin(), names.end(), "fsdp") != names.end())
    probe.insert(probe.end(), {"--strategy", "fsdp"});
  const TrainJob job = resolve(parse_train(probe, train_options()));
  r.problem = job.problem;
  r.tensors = backward_tensors(job.spec);
  r.value_bytes = job.double_precision ? sizeof(double) : sizeof(float);
  r.spec = job.spec;
  r.config = job.config;
  r.metric = vm.count("error") ? vm["error"].as<ErrorMetric>() : job.config.metric;
  if (r.metric == ErrorMetric::classification && !r.problem.classifier)
    throw InputError("--error class: the targets of " + r.problem.name + " are not classes");
  r.common = {"train"};
  r.common.insert(r.common.end(), shared.begin(), shared.end());
  if (r.by_epoch()) {
    for (std::size_t i = 0; i < own.size(); i += 2)
      if (own[i] != "--train-size") r.common.insert(r.common.end(), {own[i], own[i + 1]});
    return;
  }
  r.common.insert(r.common.end(), {"--error", std::string(to_string(r.metric))});
  r.common.insert(r.common.end(), own.begin(), own.end());
}

// --target-error or --target-epoch-seconds, one of them; a net given by its layers takes only
// the time per epoch, and that target refuses what only the search for an error uses.
void parse_target(const po::variables_map& vm, Request& r) {
  const bool error = vm.count("target-error") > 0, epoch = vm.count("target-epoch-seconds") > 0;
  if (error && epoch)
    throw InputError(
        "--target-error and --target-epoch-seconds: give one (the fastest way to an error, or the "
        "fewest processors that train an epoch in a time)");
  if (!error && !epoch) throw InputError("wulf recommend: --target-error E or --target-epoch-seconds T is required");
  if (error && r.problem_spec.starts_with("layers:"))
    throw InputError("--problem " + r.problem_spec +
                     ": wulf recommend searches for the time to a target error with "
                     "--target-error, and a net given by its layers has no arithmetic to reach one; ask for a time "
                     "per epoch with --target-epoch-seconds T");
  r.target_kind = epoch ? TargetKind::epoch_seconds : TargetKind::error;
  r.by_model = vm["screen"].as<std::string>() == "model";
  if (r.by_model && !epoch)
    throw InputError("--screen model with --target-error: the model times an update, not the iterations to an error; "
                     "give --target-epoch-seconds T");
  if (vm.count("confirm") && !vm["confirm"].defaulted() && !r.by_model)
    throw InputError("--confirm is for --screen model (a simulation's screening is its own confirmation)");
  r.confirm = vm["confirm"].as<long long>();
  r.target = epoch ? vm["target-epoch-seconds"].as<double>() : vm["target-error"].as<double>();  // in range
  if (!epoch) return;
  // Each with why a time per epoch has no use for it; refused, not ignored. (--intervals,
  // --finalists, --prune and --show have defaults: only a value given counts.)
  const std::pair<const char*, const char*> unused[] = {
      {"etas", "a learning rate changes an update's arithmetic, not its time"},
      {"alphas", "a momentum rate changes an update's arithmetic, not its time"},
      {"momentum", "the momentum rule changes an update's arithmetic, not its time"},
      {"block-step", "a block's sum or mean changes an update's arithmetic, not its time"},
      {"intervals", "average's averaging interval; a time per epoch is searched for block and overlap"},
      {"error", "it names the kind of a target error"},
      {"max-epochs", "it bounds the runs to a target error; an epoch's time is simulated from two updates"},
      {"finalists", "finalists are confirmed with arithmetic; a time per epoch is decided by screening alone"},
      {"prune", "it bounds the finalists' runs with arithmetic; a time per epoch has none"},
      {"show", "it limits the error target's estimates; a time per epoch prints every candidate (--screen model: "
               "the best --show)"}};
  for (const auto& [option, why] : unused)
    if (vm.count(option) && !vm[option].defaulted() && !(r.by_model && std::string_view(option) == "show"))
      throw InputError("--" + std::string(option) + " with --target-epoch-seconds: " + why);
}

}  // namespace

std::vector<std::string> passed_train_options() {
  std::vector<std::string> names{"seed", "error"};
  for (const auto* list : {&run_options, &simulation_options}) names.insert(names.end(), list->begin(), list->end());
  return names;
}

Request parse_request(const po::variables_map& vm) {
  for (const char* required : {"platform", "problem"})
    if (!vm.count(required)) throw InputError("wulf recommend: --" + std::string(required) + " is required");
  Request r;
  r.platform = vm["platform"].as<std::string>();
  r.problem_spec = vm["problem"].as<std::string>();
  parse_target(vm, r);
  if (vm.count("out")) r.out = vm["out"].as<std::string>();
  if (vm.count("records")) r.records = vm["records"].as<std::string>();
  if (r.records && is_leader()) {
    std::error_code ec;
    std::filesystem::create_directories(*r.records, ec);
    if (ec) throw InputError("--records " + *r.records + ": " + ec.message());
  }
  const std::vector<PlatformHost> hosts = platform_hosts(r.platform).hosts;
  r.hosts = hosts.size();
  for (const PlatformHost& h : hosts) {
    r.cores += h.cores;
    if (h.memory > 0) r.device_bytes = r.device_bytes > 0 ? std::min(r.device_bytes, h.memory) : h.memory;
  }
  set_run_options(vm, r);
  // After the probe's resolve, which read the problem's files: --out may be none of them.
  if (r.out && is_leader()) check_output(*r.out, "--out", {{"--platform", r.platform}});
  r.space = parse_space(vm, r);
  if (r.by_model) {  // more GPUs than the file has: only where the model extends its servers
    PlatformJob job;
    job.platform = r.platform, job.hosts = hosts;
    extended_servers_of(job, *std::max_element(r.space.nps.begin(), r.space.nps.end()));
  }
  parse_limits(vm, r);
  return r;
}

}  // namespace wulf
