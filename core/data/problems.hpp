// The problems of the seed papers, any data set in FANN's text format, and nets given by their
// layers: one row each in the registry of problems.cpp (problem_kinds), whose help lines
// problems_help prints.
#pragma once

#include "util/errors.hpp"
#include "nn/activation.hpp"
#include "data/dataset.hpp"
#include "nn/layer_table.hpp"
#include "util/random.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

// rprop: batch learning (an update per pass, as epoch) with the RPROP step (train/rprop.hpp);
// adam: an update after each block, as block, with the Adam step (train/adam.hpp).
enum class Learning { pattern, block, epoch, rprop, adam };
std::string_view to_string(Learning l);
Learning parse_learning(std::string_view name);  // throws InputError

// How momentum scales the step (trainer.hpp has the two formulas).
enum class MomentumRule { classic, damped };
std::string_view to_string(MomentumRule r);
MomentumRule parse_momentum_rule(std::string_view name);  // throws InputError

// What a block's update is made of (trainer.hpp): the mean of its patterns' updates, so
// that eta is the step of the whole block, or their sum, so that eta is every pattern's
// step at any block size. Seeds 000 and 001 ("accumulated", "a running total") fit both;
// trainer.hpp says why every problem defaults to mean.
enum class BlockStep { sum, mean };
std::string_view to_string(BlockStep s);
BlockStep parse_block_step(std::string_view name);  // throws InputError

// What a problem trains with unless the user says otherwise, with the seed that chose it.
struct ProblemDefaults {
  std::vector<int> hidden;
  Activation hidden_activation = Activation::sigmoid;
  Activation output_activation = Activation::sigmoid;
  Loss loss = Loss::mse;
  double eta = 0.1;
  double alpha = 0.0;
  Learning learning = Learning::block;
  MomentumRule momentum = MomentumRule::classic;
  std::size_t block = 1;
  int iterations = 100;
  std::string source;  // "seed 000, section IV" ...
  double init_range = 0;  // initial weights in [-r, r]; 0: 1/sqrt(fan-in) per layer
  BlockStep block_step = BlockStep::mean;
};

struct Problem {
  std::string name;  // canonical, with its parameter: "digits:20x20", "encoder:256"
  std::string description;
  Dataset train;
  Dataset test;  // may be empty (encoder, parity): then the training set is the check set
  ProblemDefaults defaults;
  // The whole problem's sizes, also when train and test hold one rank's share or nothing.
  std::size_t train_total = 0;
  std::size_t test_total = 0;
  int inputs = 0;
  int outputs = 0;
  bool classifier = false;
  int bytes_per_input = 4;  // a float, or 1 where the inputs are kept as bytes (Dataset)
  // layers:FILE: the net the problem is, given by its layers; its data is only its sizes.
  std::shared_ptr<const LayerTable> table;
};

// layers:NAME's file: NAME itself where it holds a '/' or ends in .layers, else the shipped
// platforms/nets/NAME.layers.
std::string layer_table_path(std::string_view name);

struct ProblemOptions {
  std::uint64_t seed = 1;
  std::string mnist_dir;     // folder of the four MNIST IDX files
  std::string test_data;     // fann: test set file (optional)
  std::size_t train_size = 0;  // keep only the first N training patterns (0: all)
  std::size_t test_size = 0;   // keep only the first N test patterns (0: all)
  // Keep only rank's share (partition.hpp) of both sets, as a rank of a parallel run does.
  int rank = 0;
  int ranks = 1;
  bool whole_train = false;  // all ranks keep the whole training set (only the test set is shared out)
  // Only the sizes are wanted (--numerics off): large data is neither read nor made.
  bool shape_only = false;
};

// Throws InputError for an unknown name, a bad parameter or unreadable data.
Problem make_problem(std::string_view spec, const ProblemOptions& options);

// How a problem's data comes to a rank, as the memory estimate and the job read it.
enum class ProblemData {
  made,                // made (or read) whole on every rank, then its share kept
  mnist,               // MNIST's files, read share by share; the job carries their folder
  made_with_numerics,  // made only with the arithmetic on (--numerics off: nothing)
  none,                // no data: the sizes of an epoch only (layers:FILE)
};

// A problem --problem takes, one row of the registry in problems.cpp: adding a problem is its
// maker and one row (ARCHITECTURE.md, "How to add ...").
struct ProblemKind {
  std::string_view name;   // before the ':' of --problem NAME[:ARG]
  std::string_view usage;  // "digits[:RxC]", for the help
  std::string_view help;   // its help, lines after the first under the first's text
  ProblemData data = ProblemData::made;
  bool takes_test_data = false;  // --test-data gives its test set
  // The problem of NAME:ARG (has_arg: a ':' was given; ARG is then not empty).
  Problem (*make)(std::string_view arg, bool has_arg, const ProblemOptions& options) = nullptr;
};
std::span<const ProblemKind> problem_kinds();
// The row of a --problem value (by the name before its ':'); nullptr for an unknown one.
const ProblemKind* problem_kind(std::string_view spec);

// The generators, also used directly by tests.
Dataset make_function_set(std::size_t n, double noise, Rng& rng);
Dataset make_encoder_set(int n);
Dataset make_parity_set(int bits);
// seed 000's target function f(x, y), in [0, 1] on [0, 1]^2.
double seed000_function(double x, double y);

// One line per problem for --help.
std::string problems_help();

}  // namespace wulf
