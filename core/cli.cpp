#include "cli.hpp"

#include "json.hpp"
#include "mlp.hpp"
#include "problems.hpp"
#include "result_record.hpp"
#include "trainer.hpp"

#include <wulf/build_info.hpp>

#include <boost/program_options.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace po = boost::program_options;

namespace wulf {
namespace {

const char* usage =
    "usage: wulf <command> [options]\n"
    "\n"
    "commands:\n"
    "  train      train a network on a problem and report its errors (wulf train --help)\n"
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

  po::options_description training("training", 110, 55);
  training.add_options()
      ("engine", po::value<std::string>()->default_value("seq"), "where it runs: seq (one process)")
      ("learning", po::value<std::string>(), "update after each: pattern|block|epoch (default: the problem's)")
      ("block", po::value<long long>(), "patterns per update with --learning block (default: the problem's)")
      ("eta", po::value<double>(), "learning rate (default: the problem's)")
      ("alpha", po::value<double>(), "momentum in [0, 1) (default: the problem's)")
      ("momentum", po::value<std::string>(), "momentum rule: classic|damped (damped scales the step by 1 - alpha) (default: the problem's)")
      ("epochs", po::value<long long>(), "most iterations (passes over the training set) (default: the problem's)")
      ("target-error", po::value<double>(), "stop when the test error (the training error where there is no test set) is <= E")
      ("error", po::value<std::string>(), "what errors mean: rmse|mse|loss|class (default: class for classifiers, else rmse)")
      ("max-seconds", po::value<double>()->default_value(0.0), "stop after this much training time (0: no limit)")
      ("seed", po::value<long long>()->default_value(1), "seed of the data, the weights and the pattern order")
      ("shuffle", po::value<std::string>()->default_value("on"), "new pattern order every iteration: on|off")
      ("eval-train", po::value<std::string>()->default_value("off"),
       "exact training-set error after every iteration: on|off (always on without a test set)");

  po::options_description output("output", 110, 55);
  output.add_options()
      ("out", po::value<std::string>(), "write the result record (JSON) to FILE")
      ("quiet,q", "print no progress, only the result");

  po::options_description all("wulf train --problem NAME [options]", 110, 55);
  all.add(general).add(problem).add(net).add(training).add(output);
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
  Json config_json;
  double load_seconds = 0;
};

TrainJob resolve(const po::variables_map& vm) {
  TrainJob job;
  const std::string engine = vm["engine"].as<std::string>();
  if (engine != "seq")
    throw InputError("--engine: '" + engine + "' is not available in this build (only seq)");
  const std::string precision = vm["precision"].as<std::string>();
  if (precision != "float" && precision != "double")
    throw InputError("--precision: '" + precision + "' (expected float or double)");
  job.double_precision = precision == "double";
  job.quiet = vm.count("quiet") > 0;
  if (vm.count("out")) {
    job.out_path = vm["out"].as<std::string>();
    check_writable(job.out_path, "--out");
  }

  ProblemOptions po_;
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
  const std::optional<ErrorMetric> metric =
      vm.count("error") ? std::optional(parse_error_metric(vm["error"].as<std::string>())) : std::nullopt;
  const bool bias = parse_on_off(vm, "bias");
  const bool shuffle = parse_on_off(vm, "shuffle");
  const bool eval_train = parse_on_off(vm, "eval-train");
  if (epochs && *epochs > 100'000'000) throw InputError("--epochs: too many");

  const auto t0 = std::chrono::steady_clock::now();
  job.problem = make_problem(vm["problem"].as<std::string>(), po_);
  job.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Problem& p = job.problem;
  const ProblemDefaults& d = p.defaults;

  job.spec.sizes.push_back(p.train.n_inputs());
  for (int h : hidden.value_or(d.hidden)) job.spec.sizes.push_back(h);
  job.spec.sizes.push_back(p.train.n_outputs());
  const int n_hidden = static_cast<int>(job.spec.sizes.size()) - 2;
  job.spec.activations.assign(static_cast<std::size_t>(n_hidden), hidden_act.value_or(d.hidden_activation));
  job.spec.activations.push_back(output_act.value_or(d.output_activation));
  job.spec.loss = loss.value_or(d.loss);
  job.spec.bias = bias;
  job.spec.validate();

  TrainConfig& c = job.config;
  c.learning = learning.value_or(d.learning);
  c.block = block.value_or(d.block == 0 ? p.train.size() : d.block);
  if (block && c.learning != Learning::block && !learning) c.learning = Learning::block;
  c.eta = vm.count("eta") ? vm["eta"].as<double>() : d.eta;
  c.alpha = vm.count("alpha") ? vm["alpha"].as<double>() : d.alpha;
  c.momentum = momentum.value_or(d.momentum);
  c.max_iterations = static_cast<int>(epochs.value_or(static_cast<std::size_t>(d.iterations)));
  if (vm.count("target-error")) c.target_error = vm["target-error"].as<double>();
  c.max_seconds = vm["max-seconds"].as<double>();
  c.metric = metric.value_or(p.train.has_labels() ? ErrorMetric::classification : ErrorMetric::rmse);
  c.shuffle = shuffle;
  c.eval_train = eval_train;
  c.seed = po_.seed;
  c.init_range = vm.count("init-range") ? vm["init-range"].as<double>() : d.init_range;
  validate(c, p.train);

  Json& j = job.config_json;
  j = Json::object();
  j["command"] = "train";
  j["engine"] = "seq";
  j["platform"] = nullptr;
  j["collective_algorithm"] = nullptr;
  j["compute"] = "wall";
  j["np"] = 1;
  j["strategy"] = "sequential";
  j["problem"] = p.name;
  j["problem_description"] = p.description;
  j["defaults_from"] = d.source;
  j["train_patterns"] = p.train.size();
  j["test_patterns"] = p.test.size();
  j["inputs"] = p.train.n_inputs();
  j["outputs"] = p.train.n_outputs();
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
  j["block"] = c.learning == Learning::pattern ? 1 : c.learning == Learning::epoch ? p.train.size() : c.block;
  j["eta"] = c.eta;
  j["alpha"] = c.alpha;
  j["momentum"] = to_string(c.momentum);
  j["max_iterations"] = c.max_iterations;
  j["target_error"] = c.target_error ? Json(*c.target_error) : Json(nullptr);
  j["error_metric"] = to_string(c.metric);
  j["max_seconds"] = c.max_seconds;
  j["seed"] = seed;
  j["shuffle"] = c.shuffle;
  j["eval_train"] = c.eval_train;
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

template <class T>
int run_train(TrainJob& job, std::ostream& out, std::ostream& err) {
  Mlp<T> net(job.spec);
  Rng init_rng(job.config.seed);
  Rng weights_rng = init_rng.split(3);
  net.init_uniform(job.config.init_range, weights_rng);
  const TrainConfig& c = job.config;

  if (!job.quiet) {
    out << "wulf train: " << job.problem.name << " (" << job.problem.description << ")\n"
        << "  " << job.problem.train.size() << " training, " << job.problem.test.size() << " test patterns; net "
        << job.spec.describe() << ", w = " << net.parameter_count() << "\n"
        << "  " << (job.double_precision ? "double" : "float") << ", learning by " << to_string(c.learning)
        << (c.learning == Learning::block ? " (b = " + std::to_string(c.block) + ")" : "") << ", eta "
        << c.eta << ", alpha " << c.alpha << " (" << to_string(c.momentum) << ")" << ", at most " << c.max_iterations << " iterations, seed " << c.seed
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

  TrainResult result = train(net, job.problem.train, job.problem.test, c, progress);

  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = job.config_json;
  add_train_result(record, result, net.parameter_count(), c.metric);
  if (!job.out_path.empty()) write_file_atomically(job.out_path, record.dump() + "\n");

  if (result.reason == StopReason::diverged) {
    err << "wulf train: " << result.reason_detail << "\n";
    if (!job.out_path.empty()) err << "wulf train: the record up to that point is in " << job.out_path << "\n";
    return exit_diverged;
  }
  out << "stopped: " << result.reason_detail << " in " << std::fixed << std::setprecision(2) << result.seconds
      << " s" << std::defaultfloat << "\n";
  out << "final (w = " << net.parameter_count() << "):\n";
  print_evaluation(out, "train", result.final_train);
  if (result.final_test) print_evaluation(out, "test ", *result.final_test);
  if (!job.out_path.empty()) out << "record: " << job.out_path << "\n";
  return exit_ok;
}

int train_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = train_options();
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) {
    out << options << "\n" << problems_help();
    return exit_ok;
  }
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
  TrainJob job = resolve(vm);
  return job.double_precision ? run_train<double>(job, out, err) : run_train<float>(job, out, err);
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << usage;
      return args.empty() ? exit_input : exit_ok;
    }
    if (args[0] == "--version") {
      out << "wulf " << build::version << "\n" << versions_json().dump() << "\n";
      return exit_ok;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "train") return train_command(rest, out, err);
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
