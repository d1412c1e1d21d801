#include "data/problems.hpp"
#include "util/errors.hpp"
#include "util/names.hpp"

#include "data/chars.hpp"
#include "data/fann_format.hpp"
#include "data/idx.hpp"
#include "data/image.hpp"
#include "data/partition.hpp"
#include "util/paths.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <optional>

namespace wulf {

namespace {

constexpr Named<Learning> learning_names[] = {
    {Learning::pattern, "pattern"}, {Learning::block, "block"}, {Learning::epoch, "epoch"}, {Learning::rprop, "rprop"},
    {Learning::adam, "adam"}};
constexpr Named<MomentumRule> momentum_names[] = {{MomentumRule::classic, "classic"}, {MomentumRule::damped, "damped"}};
constexpr Named<BlockStep> block_step_names[] = {{BlockStep::sum, "sum"}, {BlockStep::mean, "mean"}};

}  // namespace

std::string_view to_string(Learning l) { return name_of(l, learning_names); }

Learning parse_learning(std::string_view name) { return parse_named(name, learning_names, "learning", "mode"); }

std::string_view to_string(MomentumRule r) { return name_of(r, momentum_names); }

MomentumRule parse_momentum_rule(std::string_view name) {
  return parse_named(name, momentum_names, "momentum", "rule");
}

std::string_view to_string(BlockStep s) { return name_of(s, block_step_names); }

BlockStep parse_block_step(std::string_view name) { return parse_named(name, block_step_names, "block-step", "rule"); }

double seed000_function(double x, double y) {
  using std::numbers::inv_pi;
  return inv_pi * (std::sin(10 * x) + 1) * std::atan(-x) +
         inv_pi * (std::cos(10 * y) - 1) * std::atan(-y) + 0.5;
}

Dataset make_function_set(std::size_t n, double noise, Rng& rng) {
  Dataset d;
  d.inputs.resize(2, static_cast<Eigen::Index>(n));
  d.targets.resize(1, static_cast<Eigen::Index>(n));
  for (Eigen::Index j = 0; j < d.inputs.cols(); ++j) {
    const double x = rng.uniform(), y = rng.uniform();
    d.inputs(0, j) = static_cast<float>(x);
    d.inputs(1, j) = static_cast<float>(y);
    d.targets(0, j) = static_cast<float>(seed000_function(x, y) + rng.uniform(-noise, noise));
  }
  return d;
}

Dataset make_encoder_set(int n) {
  Dataset d;
  d.inputs = DataMatrix::Identity(n, n);
  d.targets = d.inputs;
  d.labels.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) d.labels[static_cast<std::size_t>(i)] = i;
  return d;
}

Dataset make_parity_set(int bits) {
  const Eigen::Index count = Eigen::Index{1} << bits;
  Dataset d;
  d.inputs.resize(bits, count);
  d.targets.resize(1, count);
  d.labels.resize(static_cast<std::size_t>(count));
  for (Eigen::Index p = 0; p < count; ++p) {
    int ones = 0;
    // Bit 0 is the first input, as in FANN's parity8.train.
    for (int i = 0; i < bits; ++i) {
      const int bit = static_cast<int>((p >> i) & 1);
      d.inputs(i, p) = static_cast<float>(bit);
      ones += bit;
    }
    d.targets(0, p) = static_cast<float>(ones % 2);
    d.labels[static_cast<std::size_t>(p)] = ones % 2;
  }
  return d;
}

namespace {

int parse_int(std::string_view text, std::string_view what) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw InputError("--problem: '" + std::string(text) + "' is not a whole number (" + std::string(what) + ")");
  return v;
}

// The two target values of a classifier's code: the lowest and the highest target.
struct ClassCode {
  float lo = 0, hi = 0;
};

// Pattern j's class in code: a single output at hi is class 1, at lo class 0; several
// outputs are one-of-k, exactly one at hi and the others at lo. Nothing when the targets
// are no class of the code (a regression target, a row of all lo, two at hi).
std::optional<int> class_of(const Dataset& d, Eigen::Index j, ClassCode code) {
  if (d.n_outputs() == 1) {
    const float v = d.targets(0, j);
    if (v != code.lo && v != code.hi) return std::nullopt;
    return v == code.hi ? 1 : 0;
  }
  int hot = -1;
  for (Eigen::Index i = 0; i < d.targets.rows(); ++i) {
    const float v = d.targets(i, j);
    if (v == code.hi && hot < 0) {
      hot = static_cast<int>(i);
    } else if (v != code.lo) {
      return std::nullopt;
    }
  }
  if (hot < 0) return std::nullopt;
  return hot;
}

// Gives a single-output or one-of-k set its class labels when all its targets are classes:
// FANN files carry no labels, but parity or one-of-k targets are plainly classes.
void derive_labels(Dataset& d) {
  if (d.has_labels() || d.empty()) return;
  const ClassCode code{d.targets.minCoeff(), d.targets.maxCoeff()};
  if (!(code.lo < code.hi)) return;
  std::vector<int> labels(d.size());
  for (Eigen::Index j = 0; j < d.targets.cols(); ++j) {
    const std::optional<int> c = class_of(d, j, code);
    if (!c) return;  // a regression set
    labels[static_cast<std::size_t>(j)] = *c;
  }
  if (d.n_outputs() == 1) d.decision_threshold = 0.5f * (code.lo + code.hi);
  d.labels = std::move(labels);
}

// The test set of a classifier, labelled in the training set's code, so that a test pattern
// is right or wrong as a training pattern would be. A test pattern that is no class of that
// code (all outputs at 0, say) is refused, naming its line (target_lines, from read_fann):
// counted as right it would report a false accuracy, and it could not be counted as wrong
// either, having no class to get wrong.
void label_like_training(const Dataset& train, Dataset& test, const std::string& path,
                         const std::vector<int>& target_lines) {
  if (test.empty()) return;
  const ClassCode code{train.targets.minCoeff(), train.targets.maxCoeff()};
  std::vector<int> labels(test.size());
  for (Eigen::Index j = 0; j < test.targets.cols(); ++j) {
    const std::optional<int> c = class_of(test, j, code);
    if (!c) {
      std::string targets;
      for (Eigen::Index i = 0; i < test.targets.rows(); ++i)
        targets += (i ? " " : "") + fmt::format("{:g}", test.targets(i, j));
      const std::string which = train.n_outputs() == 1 ? fmt::format("{:g} or {:g}", code.lo, code.hi)
                                                       : fmt::format("one output at {:g}, the others at {:g}",
                                                                     code.hi, code.lo);
      throw InputError(fmt::format(
          "--test-data {}: line {}: test pattern {} has targets {}, which are no class of the training set "
          "(its targets are classes: {}); a classifier's test patterns must be classes too",
          path, target_lines[static_cast<std::size_t>(j)], j + 1, targets, which));
    }
    labels[static_cast<std::size_t>(j)] = *c;
  }
  test.labels = std::move(labels);
  test.decision_threshold = train.decision_threshold;
}

void apply_sizes(Problem& p, const ProblemOptions& o) {
  if (o.train_size > 0) {
    if (o.train_size > p.train.size())
      throw InputError("--train-size: " + std::to_string(o.train_size) + " is more than the " +
                       std::to_string(p.train.size()) + " training patterns of " + p.name);
    p.train.truncate(o.train_size);
  }
  if (o.test_size > 0) {
    if (o.test_size > p.test.size())
      throw InputError("--test-size: " + std::to_string(o.test_size) + " is more than the " +
                       std::to_string(p.test.size()) + " test patterns of " + p.name);
    p.test.truncate(o.test_size);
  }
}

Problem make_function(const ProblemOptions& o) {
  Problem p;
  p.name = "function";
  p.description = "seed 000 function f(x,y) on [0,1]^2, uniform noise in [-0.05, 0.05]";
  Rng rng(o.seed);
  Rng train_rng = rng.split(1), test_rng = rng.split(2);
  p.train = make_function_set(1024, 0.05, train_rng);
  p.test = make_function_set(128, 0.05, test_rng);
  // Seed 000 section IV: a 128-128 net, eta 0.9, alpha 0.5, blocks of 4..16 work best.
  // f lies in [0, 1], so the output is a sigmoid like the hidden units.
  p.defaults = {{128, 128}, Activation::sigmoid, Activation::sigmoid, Loss::mse, 0.9, 0.5,
                Learning::block, MomentumRule::damped, 4, 10000, "seed 000, section IV (function)"};
  return p;
}

Problem make_encoder(int n) {
  if (n < 2 || (n & (n - 1)) != 0)
    throw InputError("--problem encoder:" + std::to_string(n) + ": N must be a power of two >= 2");
  Problem p;
  p.name = "encoder:" + std::to_string(n);
  p.description = "seed 000 encoder: the " + std::to_string(n) + " unit vectors through a log2(N) bottleneck";
  p.train = make_encoder_set(n);
  const int hidden = static_cast<int>(std::lround(std::log2(n)));
  // Seed 000 section IV: 256-8-256, eta 2.0, alpha 0.9, small blocks best (Fig. 7: b = 4).
  p.defaults = {{hidden}, Activation::sigmoid, Activation::sigmoid, Loss::mse, 2.0, 0.9,
                Learning::block, MomentumRule::damped, 4, 20000, "seed 000, section IV (encoder)"};
  return p;
}

Problem make_parity(int bits) {
  if (bits < 1 || bits > 24)
    throw InputError("--problem parity:" + std::to_string(bits) + ": K must be in 1..24");
  Problem p;
  p.name = "parity:" + std::to_string(bits);
  p.description = std::to_string(bits) + "-bit parity, all " + std::to_string(1 << bits) + " patterns";
  p.train = make_parity_set(bits);
  // Seed 001: 8-100-1, learning rate 0.1, momentum 0.3, FANN's incremental training.
  p.defaults = {{100}, Activation::sigmoid, Activation::sigmoid, Loss::mse, 0.1, 0.3,
                Learning::pattern, MomentumRule::classic, 1, 20000, "seed 001, section 4 (8-bit parity)"};
  // Seed 001 does not give the initial weights. From +-1/sqrt(8) or FANN's +-0.1 the 100
  // hidden units start alike and the net sits in a flat spot, or in a minimum with one
  // pattern wrong, for over 100 000 epochs on most seeds; from +-2 it learns all 256
  // within a few thousand (experiments/foundation/parity.md).
  p.defaults.init_range = 2.0;
  return p;
}

Problem make_digits(std::string_view size, const ProblemOptions& o) {
  int rows = 28, cols = 28;
  if (!size.empty()) {
    const auto x = size.find('x');
    if (x == std::string_view::npos)
      throw InputError("--problem digits:" + std::string(size) + ": the size must read RxC, e.g. 20x20");
    rows = parse_int(size.substr(0, x), "rows");
    cols = parse_int(size.substr(x + 1), "columns");
    if (rows < 1 || cols < 1 || rows > 1024 || cols > 1024)
      throw InputError("--problem digits:" + std::string(size) + ": rows and columns must be in 1..1024");
  }
  if (o.mnist_dir.empty()) throw InputError("--data-dir: no MNIST folder given");
  const std::filesystem::path dir(o.mnist_dir);
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec))
    throw InputError("--data-dir: MNIST folder '" + o.mnist_dir +
                     "' does not exist (the set-up installs it: see README.md)");
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError("--data-dir: '" + o.mnist_dir + "' is not a folder (the folder of MNIST's four IDX files)");
  Problem p;
  p.bytes_per_input = 1;  // unless the images are resampled
  p.name = "digits:" + std::to_string(rows) + "x" + std::to_string(cols);
  p.description = "MNIST handwritten digits, " + std::to_string(rows) + "x" + std::to_string(cols) + " pixels";
  // The label files (60 000 and 10 000 bytes) give the sizes; a rank then reads only the
  // images of its share, and --numerics off reads none.
  auto load = [&](Dataset& d, std::size_t& total, const char* images, const char* labels, std::size_t wanted,
                  const char* option, bool whole) {
    const std::string label_path = (dir / labels).string(), image_path = (dir / images).string();
    std::vector<int> all = read_idx_labels(label_path);
    for (std::size_t i = 0; i < all.size(); ++i)  // all of them, in the front end too, before any rank starts
      if (all[i] > 9)
        throw InputError(fmt::format("IDX file '{}': label {} of item {} is not a digit (MNIST's labels are 0..9)",
                                     label_path, all[i], i + 1));
    if (wanted > all.size())
      throw InputError(std::string(option) + ": " + std::to_string(wanted) + " is more than the " +
                       std::to_string(all.size()) + " patterns of " + label_path);
    total = wanted ? wanted : all.size();
    const Share share = whole ? Share{0, total} : share_of(total, o.ranks, o.rank);
    d.labels.assign(all.begin() + static_cast<std::ptrdiff_t>(share.begin),
                    all.begin() + static_cast<std::ptrdiff_t>(share.begin + share.count));
    // With only the shape wanted no image is read, but the file's header and length are
    // still checked.
    IdxImages img = read_idx_images(image_path, o.shape_only ? 0 : share.count, share.begin);
    if (img.count != all.size())  // one label per image
      throw InputError(fmt::format("IDX file '{}': {} images, but '{}' holds {} labels (one per image)", image_path,
                                   img.count, label_path, all.size()));
    const bool own_size = rows == img.rows && cols == img.cols;
    if (!own_size) p.bytes_per_input = 4;
    if (o.shape_only) return;
    if (own_size)
      d.input_bytes = std::move(img.bytes);
    else
      d.inputs = resample_images(img.pixels(), img.rows, img.cols, rows, cols);
    d.targets = one_of_k(d.labels, 10);
  };
  load(p.train, p.train_total, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", o.train_size, "--train-size",
       o.whole_train);
  load(p.test, p.test_total, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", o.test_size, "--test-size", false);
  p.inputs = rows * cols;
  p.outputs = 10;
  p.classifier = true;

  if (rows == 28 && cols == 28) {
    // Seed 000 section IV: 784-64-64-10, eta 1.5, alpha 0.9, block 16 fastest.
    p.defaults = {{64, 64}, Activation::sigmoid, Activation::sigmoid, Loss::mse, 1.5, 0.9,
                  Learning::block, MomentumRule::damped, 16, 30, "seed 000, section IV (digits)"};
  } else if (rows == 20 && cols == 20) {
    // Seed 003: Andrew Ng's 400-25-10 sigmoid net, logistic cost, batch gradient descent,
    // learning rate 2, 1 000 iterations.
    p.defaults = {{25}, Activation::sigmoid, Activation::sigmoid, Loss::cross_entropy, 2.0, 0.0,
                  Learning::epoch, MomentumRule::classic, 0, 1000, "seed 003 (400-25-10, batch gradient descent)"};
  } else {
    // Seed 004: a softmax classifier with no hidden layer; the errors of all images are
    // accumulated over the epoch, then one update (100 epochs). The paper gives no rate.
    p.defaults = {{}, Activation::sigmoid, Activation::softmax, Loss::cross_entropy, 0.5, 0.0,
                  Learning::epoch, MomentumRule::classic, 0, 100, "seed 004 (softmax classifier, 100 epochs)"};
  }
  return p;
}

Problem make_chars_problem(int classes, const ProblemOptions& o) {
  if (classes < 2 || classes > 100000)
    throw InputError("--problem chars:" + std::to_string(classes) + ": C must be in 2..100000");
  Problem p;
  p.name = "chars:" + std::to_string(classes);
  p.description = "generated 20x20 character-like glyphs of " + std::to_string(classes) + " classes";
  // 16 training and 4 test patterns per class unless --train-size/--test-size say otherwise
  // (seed 002 trained on 9.26 M patterns; the shape, not the count, is what timing needs).
  const std::size_t n_train = o.train_size ? o.train_size : 16 * static_cast<std::size_t>(classes);
  const std::size_t n_test = o.test_size ? o.test_size : 4 * static_cast<std::size_t>(classes);
  p.train_total = n_train;
  p.test_total = n_test;
  p.inputs = chars_side * chars_side;
  p.outputs = classes;
  p.classifier = true;
  // Seed 002: one hidden layer of 480 tanh units for 3 203 classes (JOCR 400-480-3203).
  p.defaults = {{480}, Activation::tanh, Activation::tanh, Loss::mse, 0.05, 0.9, Learning::block, MomentumRule::classic,
                1024, 10, "seed 002 (JOCR net shape)"};
  if (o.shape_only) return p;
  Rng rng(o.seed);
  Rng train_rng = rng.split(1), test_rng = rng.split(2);
  const DataMatrix prototypes = chars_prototypes(classes, rng.split(3));  // shared by both sets
  p.train = make_chars(prototypes, n_train, train_rng);
  p.test = make_chars(prototypes, n_test, test_rng);
  const Share train_share = o.whole_train ? Share{0, n_train} : share_of(n_train, o.ranks, o.rank);
  const Share test_share = share_of(n_test, o.ranks, o.rank);
  p.train.keep(train_share.begin, train_share.count);
  p.test.keep(test_share.begin, test_share.count);
  return p;
}

Problem make_fann(std::string_view path, const ProblemOptions& o) {
  if (path.empty()) throw InputError("--problem fann:PATH: no file named");
  Problem p;
  p.name = "fann:" + std::string(path);
  p.description = "FANN data file " + std::string(path);
  p.train = read_fann(std::string(path));
  std::vector<int> test_target_lines;
  if (!o.test_data.empty()) {
    p.test = read_fann(o.test_data, &test_target_lines);
    if (p.test.n_inputs() != p.train.n_inputs() || p.test.n_outputs() != p.train.n_outputs())
      throw InputError("--test-data " + o.test_data + ": " + std::to_string(p.test.n_inputs()) + " inputs and " +
                       std::to_string(p.test.n_outputs()) + " outputs, but the training file has " +
                       std::to_string(p.train.n_inputs()) + " and " + std::to_string(p.train.n_outputs()));
  }
  derive_labels(p.train);
  if (p.train.has_labels()) label_like_training(p.train, p.test, o.test_data, test_target_lines);
  // Targets below zero call for a symmetric output. The rest is what wulf does with FANN
  // data, not FANN 2.2's own default, which is RPROP with the tanh error function.
  const bool symmetric = p.train.targets.minCoeff() < 0;
  p.defaults = {{16},
                Activation::sigmoid,
                symmetric ? Activation::tanh : Activation::sigmoid,
                Loss::mse,
                0.7,
                0.0,
                Learning::pattern,
                MomentumRule::classic,
                1,
                1000,
                "wulf's for FANN data: 16 hidden sigmoid units, backpropagation by pattern at FANN's learning "
                "rate 0.7, no momentum, 1000 epochs (FANN 2.2's own default is RPROP with the tanh error "
                "function)"};
  return p;
}

// layers:FILE: the net is the file's; the data is the sizes of an epoch it gives (cut by
// --train-size and --test-size; a file without them takes the options' sizes), never read or
// made.
Problem make_layers(std::string_view name, const ProblemOptions& o) {
  if (name.empty()) throw InputError("--problem layers:FILE: name a layer file or a net of platforms/nets/");
  Problem p;
  const std::string path = layer_table_path(name);
  if (std::error_code ec; path != name && !std::filesystem::exists(path, ec)) {
    std::string shipped;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path(), ec))
      if (e.path().extension() == ".layers") shipped += (shipped.empty() ? "" : ", ") + e.path().stem().string();
    throw InputError("--problem layers:" + std::string(name) + ": no net " + path +
                     (shipped.empty() ? std::string() : " (shipped: " + shipped + ")"));
  }
  auto table = std::make_shared<LayerTable>(read_layer_table(path));
  p.name = "layers:" + path;  // canonical: the file, which every rank reads
  p.description = table->name + ", given by its layers: " + std::to_string(table->layers.size()) +
                  " layers, " + std::to_string(table->parameter_count()) + " parameters";
  auto cut = [&](std::size_t kept, std::size_t all, const char* option, const char* what) {
    if (table->samples_given && kept > all)
      throw InputError(fmt::format("{}: {} is more than the {} {} samples of {}", option, kept, all, what, p.name));
    return kept > 0 ? kept : all;
  };
  p.train_total = cut(o.train_size, table->train_samples, "--train-size", "training");
  p.test_total = cut(o.test_size, table->test_samples, "--test-size", "test");
  p.inputs = table->inputs, p.outputs = table->outputs;
  p.defaults = {{}, Activation::linear, Activation::linear, Loss::mse, 0.1, 0.9, Learning::block,
                MomentumRule::classic, 256, 1,
                "a minibatch of 256 samples, as He et al. 2016 (ResNet) and Devlin et al. 2019 (BERT) train"};
  p.table = std::move(table);
  return p;
}

// The problems, one row each: the name --problem takes, its usage and help line, how its data
// loads, and its maker (given what follows the ':', whether there was one, and the options).
// Constants, not statics made at run time: the simulated ranks share wulf-rank-sim's globals.
constexpr ProblemKind problem_table[] = {
    {.name = "function",
     .usage = "function",
     .help = "seed 000: f(x,y) on [0,1]^2, 1024 train + 128 test points, 2-128-128-1",
     .make = [](std::string_view, bool has_arg, const ProblemOptions& o) {
       if (has_arg) throw InputError("--problem function takes no parameter");
       return make_function(o);
     }},
    {.name = "encoder",
     .usage = "encoder[:N]",
     .help = "seed 000: the N unit vectors, N-log2(N)-N (N = 256)",
     .make = [](std::string_view arg, bool has_arg, const ProblemOptions&) {
       return make_encoder(has_arg ? parse_int(arg, "N") : 256);
     }},
    {.name = "parity",
     .usage = "parity[:K]",
     .help = "seed 001: K-bit parity, K-100-1 (K = 8)",
     .make = [](std::string_view arg, bool has_arg, const ProblemOptions&) {
       return make_parity(has_arg ? parse_int(arg, "bits") : 8);
     }},
    {.name = "digits",
     .usage = "digits[:RxC]",
     .help = "MNIST 60000 + 10000; 28x28: seed 000's 784-64-64-10; 20x20: seed 003's\n"
             "400-25-10; other sizes (56x58, 112x112): seed 004's softmax classifier",
     .data = ProblemData::mnist,
     .make = [](std::string_view arg, bool, const ProblemOptions& o) { return make_digits(arg, o); }},
    {.name = "chars",
     .usage = "chars[:C]",
     .help = "generated 20x20 glyphs of C classes, 400-480-C (C = 3203, seed 002)",
     .data = ProblemData::made_with_numerics,
     .make = [](std::string_view arg, bool has_arg, const ProblemOptions& o) {
       return make_chars_problem(has_arg ? parse_int(arg, "classes") : 3203, o);
     }},
    {.name = "fann",
     .usage = "fann:PATH",
     .help = "a data file in FANN's format (test set: --test-data)",
     .takes_test_data = true,
     .make = [](std::string_view arg, bool, const ProblemOptions& o) { return make_fann(arg, o); }},
    {.name = "layers",
     .usage = "layers:FILE",
     .help = "a net given by its layers, time only (--numerics off); FILE a path, or\n"
             "a net of platforms/nets/: resnet50, resnet101, vgg16, inception_v3,\n"
             "bert_large, gpt2",
     .data = ProblemData::none,
     .make = [](std::string_view arg, bool, const ProblemOptions& o) { return make_layers(arg, o); }},
};

}  // namespace

std::span<const ProblemKind> problem_kinds() { return problem_table; }

const ProblemKind* problem_kind(std::string_view spec) {
  const std::string_view name = spec.substr(0, spec.find(':'));
  for (const ProblemKind& k : problem_table)
    if (k.name == name) return &k;
  return nullptr;
}

std::string layer_table_path(std::string_view name) {
  const std::string n(name);
  if (n.find('/') != std::string::npos || n.ends_with(".layers")) return n;
  return platforms_dir() + "/nets/" + n + ".layers";
}

Problem make_problem(std::string_view spec, const ProblemOptions& o) {
  const auto colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  const bool has_arg = colon != std::string_view::npos;
  if (has_arg && arg.empty())
    throw InputError("--problem " + std::string(spec) + ": nothing after the ':'");

  const ProblemKind* kind = problem_kind(name);
  if (!kind) throw InputError("--problem: unknown problem '" + std::string(spec) + "'\n" + problems_help());
  if (!o.test_data.empty() && !kind->takes_test_data)
    throw InputError("--test-data is for --problem fann:PATH; " + std::string(spec) +
                     " makes its own test set or has none");
  Problem p = kind->make(arg, has_arg, o);
  // Digits and chars set their sizes themselves (and hold only the share, or nothing);
  // the others were made whole: take the sizes, then keep the share.
  if (p.train_total == 0) {
    apply_sizes(p, o);
    p.train_total = p.train.size();
    p.test_total = p.test.size();
    p.inputs = p.train.n_inputs();
    p.outputs = p.train.n_outputs();
    p.classifier = p.train.has_labels();
    const Share train_share = o.whole_train ? Share{0, p.train_total} : share_of(p.train_total, o.ranks, o.rank);
    const Share test_share = share_of(p.test_total, o.ranks, o.rank);
    p.train.keep(train_share.begin, train_share.count);
    p.test.keep(test_share.begin, test_share.count);
  }
  if (o.shape_only) p.train = p.test = Dataset{};
  return p;
}

std::string problems_help() {
  std::string help = "problems:\n";
  for (const ProblemKind& k : problem_table) {
    std::string text(k.help);
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1))
      text.insert(at + 1, std::string(17, ' '));  // under the first line's text
    help += fmt::format("  {:<15}{}\n", k.usage, text);
  }
  return help;
}

}  // namespace wulf
