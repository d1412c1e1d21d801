// The problems of the seeds: sizes, targets, defaults and the names they go by.
#include "data/fann_format.hpp"
#include "util/errors.hpp"
#include "data/problems.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>

namespace wulf {
namespace {

// The first `train` and `test` patterns of a problem's sets.
ProblemOptions sized(std::size_t train, std::size_t test) {
  ProblemOptions o;
  o.train_size = train;
  o.test_size = test;
  return o;
}

// The same of MNIST's sets.
ProblemOptions mnist_options(std::size_t train, std::size_t test) {
  ProblemOptions o = sized(train, test);
  o.mnist_dir = testing_support::mnist_dir();
  return o;
}

std::string error_of(std::string_view spec, const ProblemOptions& o = {}) {
  try {
    make_problem(spec, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

// A problem is one row of problems.cpp's registry: every row is taken by its name, listed by
// the help under its usage, and named by the error an unknown problem gets.
TEST(problems, every_row_is_taken_and_listed) {
  const std::string help = problems_help();
  std::string refused;
  try {
    make_problem("no-such-problem", {});
  } catch (const InputError& e) {
    refused = e.what();
  }
  ASSERT_FALSE(problem_kinds().empty());
  for (const ProblemKind& k : problem_kinds()) {
    SCOPED_TRACE(std::string(k.name));
    EXPECT_EQ(problem_kind(k.name), &k);
    EXPECT_EQ(problem_kind(std::string(k.name) + ":x"), &k);
    EXPECT_NE(k.make, nullptr);
    EXPECT_TRUE(k.usage.starts_with(k.name));
    EXPECT_NE(help.find("  " + std::string(k.usage) + " "), std::string::npos) << help;
    EXPECT_NE(refused.find(std::string(k.usage)), std::string::npos) << refused;
  }
  EXPECT_EQ(problem_kind("no-such-problem"), nullptr);
  EXPECT_EQ(problem_kind("digits")->data, ProblemData::mnist);  // the job carries MNIST's folder
  EXPECT_EQ(make_problem("encoder:8", {}).name, "encoder:8");  // a row's maker, by its name and argument
}

TEST(problems, seed000_function_has_its_known_values) {
  EXPECT_DOUBLE_EQ(seed000_function(0, 0), 0.5);
  const double a = std::atan(-1.0) / std::numbers::pi;
  EXPECT_NEAR(seed000_function(1, 1), (std::sin(10.0) + 1) * a + (std::cos(10.0) - 1) * a + 0.5, 1e-15);
}

TEST(problems, function_set_is_seed000s_with_bounded_noise) {
  const Problem p = make_problem("function", {});
  EXPECT_EQ(p.train.size(), 1024u);
  EXPECT_EQ(p.test.size(), 128u);
  double noise_sum = 0;
  for (Eigen::Index j = 0; j < p.train.inputs.cols(); ++j) {
    const double x = p.train.inputs(0, j), y = p.train.inputs(1, j);
    ASSERT_TRUE(x >= 0 && x < 1 && y >= 0 && y < 1);
    const double noise = p.train.targets(0, j) - seed000_function(x, y);
    ASSERT_LE(std::abs(noise), 0.05 + 1e-6);
    noise_sum += noise;
  }
  EXPECT_LT(std::abs(noise_sum / 1024), 0.005);  // uniform noise: mean 0, sd 0.029 / sqrt(1024)
  EXPECT_EQ(p.defaults.hidden, (std::vector<int>{128, 128}));
  // Different seeds give different sets; the same seed the same.
  ProblemOptions o2;
  o2.seed = 2;
  EXPECT_NE(make_problem("function", o2).train.inputs, p.train.inputs);
  EXPECT_EQ(make_problem("function", {}).train.inputs, p.train.inputs);
}

TEST(problems, encoder_is_n_log2n_n_on_the_unit_vectors) {
  const Problem p = make_problem("encoder", {});
  EXPECT_EQ(p.name, "encoder:256");
  EXPECT_EQ(p.train.size(), 256u);
  EXPECT_TRUE(p.train.inputs.isIdentity());
  EXPECT_EQ(p.train.targets, p.train.inputs);
  EXPECT_EQ(p.defaults.hidden, std::vector<int>{8});
  EXPECT_TRUE(p.test.empty());
  EXPECT_EQ(make_problem("encoder:16", {}).defaults.hidden, std::vector<int>{4});
  EXPECT_NE(error_of("encoder:6").find("power of two"), std::string::npos);
}

TEST(problems, parity_targets_agree_with_fanns_parity8) {
  const Problem p = make_problem("parity", {});
  EXPECT_EQ(p.train.size(), 256u);
  EXPECT_EQ(p.defaults.hidden, std::vector<int>{100});
  EXPECT_EQ(p.defaults.learning, Learning::pattern);
  const Dataset fann = read_fann(std::string(WULF_FANN_DATASETS) + "/parity8.train");
  // Every FANN pattern is one of ours with the same target: pattern index = bits.
  for (std::size_t j = 0; j < fann.size(); ++j) {
    Eigen::Index index = 0;
    for (int i = 0; i < 8; ++i)
      if (fann.inputs(i, static_cast<Eigen::Index>(j)) > 0.5f) index |= Eigen::Index{1} << i;
    EXPECT_EQ(p.train.targets(0, index), fann.targets(0, static_cast<Eigen::Index>(j))) << j;
  }
}

TEST(problems, fann_files_get_class_labels_when_their_targets_are_classes) {
  const Problem p = make_problem("fann:" + std::string(WULF_FANN_DATASETS) + "/parity8.train", {});
  ASSERT_TRUE(p.train.has_labels());
  EXPECT_EQ(p.train.labels.size(), 256u);
  EXPECT_FLOAT_EQ(p.train.decision_threshold, 0.5f);
  // Two-spiral's targets are classes too; abelone's are a regression.
  ProblemOptions o;
  o.test_data = std::string(WULF_FANN_DATASETS) + "/two-spiral.test";
  const Problem spiral = make_problem("fann:" + std::string(WULF_FANN_DATASETS) + "/two-spiral.train", o);
  EXPECT_TRUE(spiral.train.has_labels());
  EXPECT_TRUE(spiral.test.has_labels());
  EXPECT_FALSE(make_problem("fann:" + std::string(WULF_FANN_DATASETS) + "/abelone.train", {}).train.has_labels());
}

// A classifier's test pattern whose targets are no class (all outputs 0) would count as
// right: "0 of 3 wrong, 100%". It is refused before training, naming the file and line.
TEST(problems, a_classifiers_test_pattern_that_is_no_class_is_refused_with_its_line) {
  const testing_support::TestDir dir;
  const std::string train = dir.write("train.data", "4 2 3\n0 0\n1 0 0\n0 1\n0 1 0\n1 0\n0 0 1\n1 1\n1 0 0\n");
  ProblemOptions o;
  o.test_data = dir.write("test.data", "3 2 3\n0 0\n1 0 0\n0 1\n0 0 0\n1 0\n0 0 1\n");
  try {
    make_problem("fann:" + train, o);
    FAIL() << "a test pattern with all targets 0 was taken for a class";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(o.test_data + ": line 5: test pattern 2 has targets 0 0 0"), std::string::npos) << m;
    EXPECT_NE(m.find("one output at 1, the others at 0"), std::string::npos) << m;
  }
  // One output: a test target that is neither of the training set's two values.
  const std::string train1 = dir.write("train1.data", "2 1 1\n0\n0\n1\n1\n");
  o.test_data = dir.write("test1.data", "2 1 1\n0\n0\n1\n0.5\n");
  try {
    make_problem("fann:" + train1, o);
    FAIL() << "a test target of 0.5 was taken for a class";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 5: test pattern 2 has targets 0.5"), std::string::npos) << e.what();
  }
  // Test patterns that are classes get the training set's labels.
  o.test_data = dir.write("test2.data", "2 2 3\n0 0\n0 0 1\n0 1\n1 0 0\n");
  const Problem p = make_problem("fann:" + train, o);
  EXPECT_EQ(p.test.labels, (std::vector<int>{2, 0}));
}

TEST(problems, digits_are_mnist_with_seed000s_net) {
  const ProblemOptions o = mnist_options(500, 100);
  const Problem p = make_problem("digits", o);
  EXPECT_EQ(p.name, "digits:28x28");
  EXPECT_EQ(p.train.size(), 500u);
  EXPECT_EQ(p.test.size(), 100u);
  EXPECT_EQ(p.train.n_inputs(), 784);
  EXPECT_EQ(p.train.n_outputs(), 10);
  EXPECT_EQ(p.train.labels[0], 5);
  EXPECT_EQ(p.train.targets(5, 0), 1.0f);
  EXPECT_EQ(p.train.targets.col(0).sum(), 1.0f);
  EXPECT_EQ(p.defaults.hidden, (std::vector<int>{64, 64}));
  EXPECT_DOUBLE_EQ(p.defaults.eta, 1.5);
  EXPECT_EQ(p.defaults.block, 16u);
}

// MNIST's files are checked against each other before any pattern is trained: one label per
// image (an image file of more images than labels was read up to the labels), and every
// label a digit (one of 10 was refused with no file named), in the front end that reads only
// the shapes too.
TEST(problems, digit_files_that_disagree_are_refused_naming_them) {
  testing_support::TestDir dir;
  const std::string mnist = testing_support::small_mnist(dir, 30, 10);
  ProblemOptions o;
  o.mnist_dir = mnist;
  EXPECT_EQ(make_problem("digits", o).train.size(), 30u);
  const std::string more = testing_support::small_mnist(dir, 31, 10, "more");
  std::filesystem::copy_file(more + "/train-images-idx3-ubyte", mnist + "/train-images-idx3-ubyte",
                             std::filesystem::copy_options::overwrite_existing);
  for (const bool shape_only : {false, true}) {
    o.shape_only = shape_only;
    EXPECT_EQ(error_of("digits", o), "IDX file '" + mnist + "/train-images-idx3-ubyte': 31 images, but '" + mnist +
                                         "/train-labels-idx1-ubyte' holds 30 labels (one per image)");
  }
  const std::string labels = mnist + "/t10k-labels-idx1-ubyte";
  std::string text = read_text_file(labels, "labels", data_file_limit);
  text[8 + 6] = 10;  // the seventh label
  write_file_atomically(labels, text);
  o.mnist_dir = testing_support::small_mnist(dir, 30, 10, "again");
  std::filesystem::copy_file(labels, o.mnist_dir + "/t10k-labels-idx1-ubyte",
                             std::filesystem::copy_options::overwrite_existing);
  for (const bool shape_only : {false, true}) {
    o.shape_only = shape_only;
    EXPECT_EQ(error_of("digits", o), "IDX file '" + o.mnist_dir +
                                         "/t10k-labels-idx1-ubyte': label 10 of item 7 is not a digit (MNIST's labels "
                                         "are 0..9)");
  }
}

TEST(problems, resized_digits_follow_seeds_003_and_004) {
  const ProblemOptions o = mnist_options(50, 10);
  const Problem small = make_problem("digits:20x20", o);
  EXPECT_EQ(small.train.n_inputs(), 400);
  EXPECT_EQ(small.defaults.hidden, std::vector<int>{25});
  EXPECT_EQ(small.defaults.loss, Loss::cross_entropy);
  EXPECT_EQ(small.defaults.learning, Learning::epoch);
  const Problem mid = make_problem("digits:56x58", o);
  EXPECT_EQ(mid.train.n_inputs(), 3248);
  EXPECT_TRUE(mid.defaults.hidden.empty());
  EXPECT_EQ(mid.defaults.output_activation, Activation::softmax);
  EXPECT_EQ(make_problem("digits:112x112", o).train.n_inputs(), 12544);
  EXPECT_NE(error_of("digits:20by20", o).find("RxC"), std::string::npos);
}

TEST(problems, chars_have_seed002s_shape) {
  const ProblemOptions o = sized(300, 60);
  const Problem p = make_problem("chars:30", o);
  EXPECT_EQ(p.train.n_inputs(), 400);
  EXPECT_EQ(p.train.n_outputs(), 30);
  EXPECT_EQ(p.train.size(), 300u);
  EXPECT_EQ(p.defaults.hidden, std::vector<int>{480});
  ProblemOptions full;
  full.train_size = full.test_size = 3203;
  EXPECT_EQ(make_problem("chars", full).train.n_outputs(), 3203);
}

TEST(problems, chars_training_and_test_sets_share_their_glyphs) {
  // Nearest class mean of the training set classifies the test set: it could not if the two
  // sets were drawn from different prototypes (chance is 1 in 10).
  const ProblemOptions o = sized(200, 100);
  const Problem p = make_problem("chars:10", o);
  DataMatrix means = DataMatrix::Zero(400, 10);
  for (std::size_t j = 0; j < p.train.size(); ++j)
    means.col(p.train.labels[j]) += p.train.inputs.col(static_cast<Eigen::Index>(j)) / 20.0f;
  int right = 0;
  for (std::size_t j = 0; j < p.test.size(); ++j) {
    Eigen::Index best;
    (means.colwise() - p.test.inputs.col(static_cast<Eigen::Index>(j))).colwise().squaredNorm().minCoeff(&best);
    right += best == p.test.labels[j];
  }
  EXPECT_GE(right, 90);
}

TEST(problems, bad_names_and_sizes_are_refused_with_the_input_named) {
  EXPECT_NE(error_of("xor").find("unknown problem 'xor'"), std::string::npos);
  EXPECT_NE(error_of("parity:x").find("not a whole number"), std::string::npos);
  EXPECT_NE(error_of("parity:0").find("1..24"), std::string::npos);
  EXPECT_NE(error_of("parity:").find("nothing after"), std::string::npos);
  EXPECT_NE(error_of("function:3").find("takes no parameter"), std::string::npos);
  ProblemOptions o;
  o.train_size = 2000;
  EXPECT_NE(error_of("function", o).find("--train-size"), std::string::npos);
  ProblemOptions missing;
  missing.mnist_dir = "/nonexistent/mnist";
  EXPECT_NE(error_of("digits", missing).find("/nonexistent/mnist"), std::string::npos);
  EXPECT_NE(error_of("fann:/nonexistent.data").find("/nonexistent.data"), std::string::npos);
}

}  // namespace
}  // namespace wulf
