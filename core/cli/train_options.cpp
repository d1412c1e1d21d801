#include "cli/train_options.hpp"

#include "comm/allreduce_algorithms.hpp"
#include "comm/compute.hpp"
#include "job/train_job.hpp"
#include "data/problems.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "nn/activation.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "cli/options.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <wulf/build_info.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

namespace po = boost::program_options;

namespace wulf {

// Boost's typed_value<Strategy> asks for a reader even where parsed() reads the value.
std::istream& operator>>(std::istream& in, Strategy& s) {
  std::string name;
  in >> name;
  s = parse_strategy(name);
  return in;
}

namespace {

// A job's names (job/train_job.hpp) as an option's choices.
template <std::size_t N>
std::vector<std::string> names(const std::array<std::string_view, N>& list) {
  return {list.begin(), list.end()};
}

// Help lines of 110 characters, descriptions from column 55.
constexpr unsigned line_length = 110, description_column = 55;

// The ranges of options that share one.
constexpr Range rank_count = kRanksRange;
constexpr Range step = kStepRange;          // a learning rate, an RPROP step
constexpr Range error_value = kErrorRange;  // an error of any --error metric

// A hidden layer's size: up to an int; a net too large for the memory is refused by the
// memory estimate.
constexpr Range layer_size{.lo = 1, .hi = 2147483647};

std::vector<int> parse_hidden(const std::string& text) {
  std::vector<int> sizes;
  if (text == "none" || text.empty()) return sizes;
  for (const long long size : whole_list(text, "hidden", layer_size)) sizes.push_back(static_cast<int>(size));
  return sizes;
}

ParsedValue<Activation>* activation(const std::string& option) {
  return parsed<Activation>([option](const std::string& name) { return parse_activation(name, option); });
}

po::options_description problem_options() {
  po::options_description problem("problem", line_length, description_column);
  problem.add_options()
      ("problem", po::value<std::string>()->default_value("digits"), "the problem (see the list below)")
      ("data-dir", po::value<std::string>(),
       ("folder of the MNIST IDX files (default: $WULF_MNIST_DIR, else " + std::string(build::mnist_dir) + ")").c_str())
      ("test-data", po::value<std::string>(), "fann: a test set in FANN's format")
      ("train-size", whole_in("train-size", kPatternCountRange)->default_value(0),
       "use only the first N training patterns (0: all)")
      ("test-size", whole_in("test-size", kPatternCountRange)->default_value(0), "use only the first N test patterns (0: all)");
  return problem;
}

po::options_description net_options() {
  po::options_description net("network", line_length, description_column);
  net.add_options()
      ("hidden", parsed<std::vector<int>>(parse_hidden),
       fmt::format("hidden layer sizes, each in {}, e.g. 64,64, or none (default: the problem's)",
                   range_text(layer_size)).c_str())
      ("activation", activation("activation"), "hidden activation: sigmoid|tanh|linear (default: the problem's)")
      ("output-activation", activation("output-activation"), "output activation: sigmoid|tanh|linear|softmax (default: the problem's)")
      ("loss", parsed<Loss>([](const std::string& name) { return parse_loss(name, "loss"); }),
       "loss: mse|ce (default: the problem's)")
      ("bias", on_off("bias")->default_value(true, "on"), "bias weights: on|off (seed 000 counts none)")
      ("sigmoid-derivative", one_of({"exact", "fann"}, "--sigmoid-derivative: '{}' (expected exact or fann)")->default_value("exact"),
       "in training, the sigmoid's derivative a (1 - a): exact, or fann: at a clipped to [0.01, 0.99] as FANN 2.2 "
       "takes it, which keeps saturated units learning")
      ("precision", one_of({"float", "double", "bf16", "fp16"},
                           "--precision: '{}' (expected float, double, bf16 or fp16)")->default_value("float"),
       "arithmetic: float|double; or bf16|fp16, time only (--numerics off): parameters and gradients sent in 2 bytes, "
       "the conv, linear and attention layers charged at the host's 16-bit rate (its wulf:speed16), with float "
       "master weights and optimizer state (the device memory counts them)")
      ("init-range", number_in("init-range", kInitRange), "initial weights uniform in [-r, r]; 0: 1/sqrt(fan-in) (default: the problem's)")
      ("weights-in", po::value<std::string>(),
       "start from the weights in FILE (as --weights-out writes them) instead of random ones; with --epochs 0 the "
       "net is only evaluated");
  return net;
}

// --strategy's help: every registered strategy, with its descriptor's line.
std::string strategy_help() {
  std::string help = "parallel strategy:";
  const auto all = registered_strategies();
  for (std::size_t i = 0; i < all.size(); ++i)
    help += fmt::format("{} {} ({})", i == 0 ? "" : ",", to_string(all[i]), all[i]->help);
  return help;
}

po::options_description engine_options() {
  po::options_description parallel("engine", line_length, description_column);
  parallel.add_options()
      ("engine", one_of({"seq", "real", "sim", "testbed"},
                        "--engine: unknown engine '{}' (expected seq, real, sim or testbed)")
                     ->default_value("seq"),
       "where it runs: seq (this process), real (mpirun), sim (smpirun on --platform), testbed (mpirun over "
       "an emulated cluster of --platform's hosts and links on this machine, as root)")
      ("np", whole_in("np", rank_count)->default_value(1), "ranks (real, sim, testbed)")
      ("strategy", parsed<Strategy>(parse_strategy)->default_value(Strategy(), "block"), strategy_help().c_str())
      ("reduce", reduce_value()->default_value("default"),
       "reduce algorithm, the same on every engine: default (the one Open MPI 4.1 chooses for the ranks and the "
       "gradients' size, or the allreduce's where the strategy makes no reduce but redbcast's, named in the "
       "record), Open MPI's linear, chain, pipeline, binary, binomial (its in-order "
       "tree, the next child's receive posted first) or in-order-binary, unsegmented; wulf's own wulf-binomial "
       "(the binomial tree one receive at a time, as seed 002's LAM, MPICH and SMPI) or four-stage (seed 002's "
       "topology-aware reduce; needs a layout)")
      ("reduce-layout", po::value<std::string>(),
       "four-stage: ranks in nodes and groups, e.g. groups=4,nodes=24,cpus=2,outside=2,fan-in=3 (sim: read from "
       "the platform's wulf:group / wulf:node host properties and wulf:nics zone property when not given)")
      ("bcast", bcast_value()->default_value("default"),
       "broadcast algorithm, the same on every engine: default (the one Open MPI 4.1 chooses for the ranks and the "
       "parameters' size, or the allreduce's where the strategy makes no broadcast but redbcast's, named in the "
       "record), or Open MPI's linear, chain, pipeline, split-bintree, bintree, "
       "binomial, knomial (radix 4), unsegmented, or scatter-allgather")
      ("allreduce", allreduce_value()->default_value("default"),
       ("allreduce algorithm, the same on every engine: default (the one Open MPI 4.1 chooses for the ranks and "
        "the gradients' size, or the error sums' 32 bytes where the strategy's gradients go otherwise, named in the "
        "record), " + allreduce_help(AllreduceRows::all)).c_str())
      ("platform", po::value<std::string>(), "sim, testbed: the SimGrid platform file (XML)")
      ("compute", parsed<ComputeMode>(parse_compute_mode),
       "how compute time is charged: sim flops (default)|calibrated|measured; testbed flops (default)|"
       "calibrated, each kernel padded with sleep to its charge times --dilation; real wall (default)|calibrated")
      ("profile", po::value<std::string>(), "sim, testbed, real: the calibration profile of --compute calibrated")
      ("dilation", number_in("dilation", kDilationRange),
       "testbed: time dilation D, every link's bandwidth over D and every charged compute time times D, times "
       "reported over D (default: 10 per 8 ranks on 2 cores and 800 Mbit/s of links, more where the ranks or the "
       "links' sum are larger; docs/testbed.md)")
      ("measured-scale", number_in("measured-scale", kScaleRange)->default_value(1.0),
       "sim: --compute measured charges the kernel's time here times this")
      ("bw-scale", number_in("bw-scale", kWhatIfScaleRange)->default_value(1.0), "sim, testbed what-if: every link's bandwidth times this")
      ("lat-scale", number_in("lat-scale", kWhatIfScaleRange)->default_value(1.0), "sim what-if: every link's latency times this")
      ("eager-limit", whole_in("eager-limit", kEagerLimitRange),
       "sim, testbed: messages up to this many bytes are sent without waiting for the receiver (default: sim "
       "SMPI's, where no data flows before the receive is posted; testbed 4194304, Open MPI's btl_tcp_eager_limit)")
      ("sim-messages",
       one_of(names(sim_messages_names), "--sim-messages: '{}' (expected " + listed(sim_messages_names) + ")")
           ->default_value("s4u"),
       "sim: how the messages of wulf's own collectives and of overlap's buckets travel: s4u, as SimGrid comms that "
       "give SMPI's simulated times and scale (default); fifo, the same but those from one rank to another one after "
       "another, as Open MPI over TCP writes them to one socket a peer (the testbed's), those of at least the eager "
       "limit (--eager-limit, else the testbed's 4194304) after Open MPI's rendezvous handshake, each end moving on only "
       "inside its calls; or smpi, as SMPI's MPI requests (slower: SimGrid 3.32 keeps every request MPI_Test "
       "completes); SMPI's own where a host or the platform charges per-message overheads")
      ("speed-scale", number_in("speed-scale", kWhatIfScaleRange)->default_value(1.0), "sim, testbed what-if: every host's speed times this")
      ("grow", whole_in("grow", kGrowRange)->default_value(0),
       "sim what-if: the platform's one homogeneous cluster with this many hosts (0: as it is)")
      ("hosts", po::value<std::string>(),
       "sim, testbed: the host of each rank, in rank order: a list (a,b,a,b) or a file of one host name per line "
       "(default: the platform's hosts in the order it declares them, each filled to its cores)")
      ("ranks-per-host", whole_in("ranks-per-host", {.lo = 0, .hi = rank_count.hi})->default_value(0),
       "sim, testbed: at most this many ranks on a host, e.g. 1 for one rank per node of multi-core hosts (0: fill "
       "each host's cores in order)")
      ("numerics", on_off("numerics")->default_value(true, "on"),
       "sim, testbed (and real with --compute calibrated): off skips the arithmetic and only charges time: on|off")
      ("oversubscribe",
       one_of(names(oversubscribe_modes), "--oversubscribe: '{}' (expected " + listed(oversubscribe_modes) + ")")
           ->default_value("auto"),
       "real, testbed: let mpirun put more ranks than cores on this machine: auto|on|off (auto: off with --hostfile)")
      ("hostfile", po::value<std::string>(), "real: Open MPI's hostfile for wulf's own mpirun, to span machines")
      ("mpirun-args", po::value<std::string>(),
       "real: more arguments for wulf's own mpirun, split at blanks (no quoting), e.g. \"--mca btl tcp,self\"")
      ("timeout", timeout_value(), (timeout_help("") + "; seq: checked after each iteration").c_str());
  return parallel;
}

// The options of every strategy that owns some, a group each (an option two strategies own
// is declared by the first).
void add_strategy_options(po::options_description& all) {
  std::vector<std::string_view> declared;
  for (const Strategy s : registered_strategies()) {
    if (s->options.empty()) continue;
    po::options_description group(std::string(s->options_title), line_length, description_column);
    for (const StrategyOption& o : s->options) {
      if (std::find(declared.begin(), declared.end(), o.name) != declared.end()) continue;
      declared.push_back(o.name);
      const std::string name(o.name), help = std::string(o.help) + (o.values_help ? o.values_help() : "");
      switch (o.kind) {
        case StrategyOption::Kind::whole:
          group.add_options()(name.c_str(),
                              whole_in(name, o.range)->default_value(static_cast<long long>(o.default_value)),
                              help.c_str());
          break;
        case StrategyOption::Kind::number:
          group.add_options()(name.c_str(), number_in(name, o.range)->default_value(o.default_value), help.c_str());
          break;
        case StrategyOption::Kind::text: {
          auto* value = po::value<std::string>();
          if (!o.default_text.empty()) value->default_value(std::string(o.default_text));
          group.add_options()(name.c_str(), value, help.c_str());
          break;
        }
      }
    }
    all.add(group);
  }
}

// RPROP's parameters (train/rprop.hpp), FANN 2.2's defaults.
po::options_description rprop_options() {
  po::options_description rprop("RPROP (--learning rprop)", line_length, description_column);
  rprop.add_options()
      ("rprop-increase", number_in("rprop-increase", kRpropIncreaseRange)->default_value(1.2, "1.2"),
       "a weight's step grows by this factor while its gradient keeps its sign")
      ("rprop-decrease", number_in("rprop-decrease", kRpropDecreaseRange)
                             ->default_value(0.5, "0.5"),
       "and shrinks by this one when the sign changes")
      ("rprop-delta-min", number_in("rprop-delta-min", kRpropDeltaMinRange)->default_value(0.0, "0"), "smallest step")
      ("rprop-delta-max", number_in("rprop-delta-max", step)->default_value(50.0, "50"), "largest step")
      ("rprop-delta-zero", number_in("rprop-delta-zero", step)->default_value(0.1, "0.1"),
       "every weight's step before the first update");
  return rprop;
}

// Adam's parameters (train/adam.hpp), PyTorch's defaults.
po::options_description adam_options() {
  po::options_description adam("Adam (--learning adam)", line_length, description_column);
  adam.add_options()
      ("adam-beta1", number_in("adam-beta1", kAdamBetaRange)->default_value(0.9, "0.9"),
       "decay of the gradient's running mean (torch.optim.Adam's betas[0])")
      ("adam-beta2", number_in("adam-beta2", kAdamBetaRange)->default_value(0.999, "0.999"),
       "decay of the squared gradient's running mean (betas[1])")
      ("adam-epsilon", number_in("adam-epsilon", kAdamEpsilonRange)->default_value(1e-8, "1e-08"),
       "added to the denominator (eps)");
  return adam;
}

po::options_description training_options() {
  po::options_description training("training", line_length, description_column);
  training.add_options()
      ("learning", parsed<Learning>(parse_learning),
       fmt::format("update after each: pattern|block|epoch; rprop: an RPROP update after each epoch (FANN 2.2's "
                   "iRprop-; {}); adam: an Adam update after each block, --eta its learning rate (PyTorch's "
                   "torch.optim.Adam; {}) (default: the problem's)",
                   strategies_that_run(Learning::rprop), strategies_that_run(Learning::adam)).c_str())
      ("block", whole_in("block", {.lo = 1, .hi = kPatternCountRange.hi}), "patterns per update with --learning block (default: the problem's)")
      ("eta", number_in("eta", step), "learning rate (default: the problem's)")
      ("alpha", number_in("alpha", kAlphaRange), "momentum (default: the problem's)")
      ("momentum", parsed<MomentumRule>(parse_momentum_rule), "momentum rule: classic|damped (damped scales the step by 1 - alpha) (default: the problem's)")
      ("block-step", parsed<BlockStep>(parse_block_step), "a block's update: sum|mean of its patterns' updates (sum: eta is each pattern's step; mean: the block's) (default: the problem's)")
      ("epochs", whole_in("epochs", kEpochsRange),
       "most iterations (passes over the training set); 0: evaluate the net only (default: the problem's)")
      ("target-error", number_in("target-error", error_value), "stop when the test error (the training error where there is no test set) is <= E")
      ("error", parsed<ErrorMetric>(parse_error_metric), "what errors mean: rmse|mse|loss|class (default: class for classifiers, else rmse)")
      ("max-seconds", number_in("max-seconds", {.lo = 0, .hi = kTimeoutRange.hi})->default_value(0.0), "stop after this much training time (0: no limit)")
      ("seed", whole_in("seed", {.lo = 0, .hi = 1e18})->default_value(1), "seed of the data, the weights and the pattern order")
      ("shuffle", on_off("shuffle")->default_value(true, "on"), "new pattern order every iteration: on|off")
      ("recompute", on_off("recompute")->default_value(false, "off"),
       "activation checkpointing: on keeps only each unit's input from the forward pass and computes each layer's "
       "forward again before its backward, charged as forward compute (the device memory estimate counts what it "
       "saves): on|off")
      ("eval-train", on_off("eval-train")->default_value(false, "off"),
       "exact training-set error after every iteration: on|off (always on without a test set)")
      ("history-every", whole_in("history-every", {.lo = 1, .hi = 1e9})->default_value(1),
       "keep every Nth iteration in the record's history (and iteration 0 and the last; the stopping rule "
       "still checks every iteration)");
  return training;
}

po::options_description output_options() {
  po::options_description output("output", line_length, description_column);
  output.add_options()
      ("out", po::value<std::string>(), "write the result record (JSON) to FILE")
      ("weights-out", po::value<std::string>(),
       "write the final weights to FILE (text, header naming the net; after a fault the last good weights)")
      ("machine-cost", number_in("machine-cost", {.lo = 0, .hi = 1e12, .lo_open = true}),
       "USD: the record's price/performance, cents per MFlop/s of the run's flop rate (sim: default the "
       "platform's wulf:cost-usd zone property)")
      ("quiet,q", "print no progress, only the result");
  return output;
}

// Options that only one engine, strategy or reduce reads. Given with another they would be
// ignored without a word, so they are refused, the first in this order.
struct OptionScope {
  const char* option;
  const char* scope;  // the choice that reads it, as the command line writes it
  const char* also = nullptr;  // and another choice that reads it too (nullptr: none)
};
constexpr OptionScope option_scopes[] = {
    {"reduce-layout", "--reduce four-stage"},
    {"platform", "--engine sim", "--engine testbed"},
    {"dilation", "--engine testbed"},
    {"measured-scale", "--engine sim"},
    {"bw-scale", "--engine sim", "--engine testbed"},
    {"lat-scale", "--engine sim"},
    {"eager-limit", "--engine sim", "--engine testbed"},
    {"sim-messages", "--engine sim"},
    {"speed-scale", "--engine sim", "--engine testbed"},
    {"grow", "--engine sim", "--engine testbed"},
    {"ranks-per-host", "--engine sim", "--engine testbed"},
    {"hosts", "--engine sim", "--engine testbed"},
    {"hostfile", "--engine real"},
    {"mpirun-args", "--engine real"},
    {"rprop-increase", "--learning rprop"},
    {"rprop-decrease", "--learning rprop"},
    {"rprop-delta-min", "--learning rprop"},
    {"rprop-delta-max", "--learning rprop"},
    {"rprop-delta-zero", "--learning rprop"},
    {"adam-beta1", "--learning adam"},
    {"adam-beta2", "--learning adam"},
    {"adam-epsilon", "--learning adam"},
};

}  // namespace

po::typed_value<std::string>* precision_value() {
  return one_of({"float", "double"}, "--precision: '{}' (expected float or double)");
}

po::typed_value<std::string>* allreduce_value() {
  return one_of(names(allreduce_algorithms),
                "--allreduce: unknown algorithm '{}' (expected default, " + allreduce_names(AllreduceRows::all) + ")");
}

po::typed_value<std::string>* reduce_value() {
  return one_of(names(reduce_algorithms),
                "--reduce: unknown algorithm '{}' (expected " + listed(reduce_algorithms) + ")");
}

po::typed_value<std::string>* bcast_value() {
  return one_of(names(bcast_algorithms),
                "--bcast: unknown algorithm '{}' (expected " + listed(bcast_algorithms) + ")");
}

po::typed_value<double>* timeout_value() {
  return number_in("timeout", kTimeoutRange, "at most about 31 years; without --timeout a run has no limit");
}

std::string timeout_help(const std::string& what) {
  return fmt::format("{}end a run that takes longer than this many seconds: its processes get SIGTERM, then SIGKILL "
                     "{:g} s later, and wulf exits {}, saying 'timed out after N s' (default: no limit; at most {:g} "
                     "s, about {:.0f} years)",
                     what, kGraceSeconds, static_cast<int>(exit_timeout), kTimeoutRange.hi,
                     kTimeoutRange.hi / (365.25 * 86400));
}

po::options_description train_options() {
  po::options_description general("general", line_length, description_column);
  general.add_options()
      ("help,h", "print this help")
      ("config", po::value<std::string>(), "read options from FILE (lines of key = value; the command line wins)")
      ("rerun", po::value<std::string>(),
       "run the job of a record (its config) again: RECORD.json, with only where and how it runs and its outputs "
       "changed by --engine, --np, --platform, --compute, --profile, --dilation, --hostfile, --mpirun-args, "
       "--oversubscribe, --allreduce, --reduce, --bcast, --sim-messages, --data-dir, --out, --weights-out, --quiet, "
       "--timeout, --force, --take-changed-inputs")
      ("take-changed-inputs", "--rerun: take the files that changed since the record's run (its layer file, data "
                              "files, --weights-in, platform) as they are now (without it, a changed file is refused)")
      ("force", "run even where the memory estimate exceeds this machine's memory (MemAvailable, or "
                "$WULF_MEMORY_LIMIT_BYTES)");
  po::options_description all("wulf train --problem NAME [options]", line_length, description_column);
  all.add(general).add(problem_options()).add(net_options()).add(engine_options());
  add_strategy_options(all);
  all.add(training_options()).add(rprop_options()).add(adam_options()).add(output_options());
  return all;
}

namespace {

// The text of a --config file. Boost reads a line "[name]" as the start of a section whose
// options are "name.key", which wulf train has none of: a file of section headers alone (or
// a JSON file of brackets) would set nothing and the run would go on with the defaults, so
// such a line is refused, with its number.
std::string config_text(const std::string& path) {
  const std::string text = read_text_file(path, "--config");
  std::size_t start = 0;
  for (int line = 1; start <= text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string trimmed = trim(std::string_view(text).substr(start, end - start));
    if (!trimmed.empty() && trimmed.front() == '[')
      throw InputError("--config " + path + ":" + std::to_string(line) + ": '" + printable(trimmed) +
                       "' is no line of key = value (wulf train's options without the --, e.g. eta = 0.5)");
    start = end + 1;
  }
  return text;
}

}  // namespace

po::variables_map parse_train(const std::vector<std::string>& args, const po::options_description& options) {
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("config")) {
    const std::string path = vm["config"].as<std::string>();
    std::istringstream file(config_text(path));
    try {
      po::store(po::parse_config_file(file, options), vm);
    } catch (const po::error& e) {
      throw InputError("--config " + path + ": " + printable(e.what(), 300));  // e.what() quotes the file's line
    }
  }
  po::notify(vm);
  return vm;
}

void check_option_scopes(const po::variables_map& vm, const std::string& engine, Strategy strategy,
                         const std::string& reduce) {
  const std::string learning = vm.count("learning") ? std::string(to_string(vm["learning"].as<Learning>())) : "";
  const std::string chosen[] = {"--engine " + engine, "--strategy " + std::string(to_string(strategy)),
                                "--reduce " + reduce, "--learning " + learning};
  const auto is_chosen = [&](const char* scope) {
    return scope && std::find(std::begin(chosen), std::end(chosen), scope) != std::end(chosen);
  };
  const auto given = [&](std::string_view option) {
    const std::string name(option);
    return vm.count(name) && !vm[name].defaulted();
  };
  for (const OptionScope& s : option_scopes)
    if (given(s.option) && !is_chosen(s.scope) && !is_chosen(s.also))
      throw InputError(s.also ? fmt::format("--{} is for {} or {}", s.option, s.scope, s.also)
                              : fmt::format("--{} is for {}", s.option, s.scope));
  // A strategy's options, for the strategies that own them.
  for (const Strategy s : registered_strategies())
    for (const StrategyOption& o : s->options) {
      if (!given(o.name) || strategy->option(o.name)) continue;
      std::string owners;
      for (const Strategy t : registered_strategies())
        if (t->option(o.name)) owners += (owners.empty() ? "--strategy " : " or --strategy ") + std::string(t->name);
      throw InputError(fmt::format("--{} is for {}", o.name, owners));
    }
}

// The settings of the job's strategy: every option it owns, given or its default.
void read_strategy_settings(const po::variables_map& vm, TrainConfig& config) {
  for (const StrategyOption& o : config.strategy->options) {
    const std::string name(o.name);
    if (!vm.count(name)) continue;
    switch (o.kind) {
      case StrategyOption::Kind::whole:
        config.settings.set(o.name, static_cast<double>(vm[name].as<long long>()));
        break;
      case StrategyOption::Kind::number: config.settings.set(o.name, vm[name].as<double>()); break;
      case StrategyOption::Kind::text: config.settings.set_text(o.name, vm[name].as<std::string>()); break;
    }
  }
}

}  // namespace wulf
