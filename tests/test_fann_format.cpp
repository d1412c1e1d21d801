#include "data/fann_format.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>


namespace {

namespace fs = std::filesystem;

#ifndef WULF_FANN_DATASETS
#error "WULF_FANN_DATASETS must name the folder of FANN's example data sets"
#endif

using namespace wulf::testing_support;

// read_fann refuses a file holding text, naming the file and every one of the parts.
void expect_read_error(const std::string& text, const std::vector<std::string>& parts) {
  TestDir dir;
  const std::string path = dir.write("bad.data", text);
  expect_input_error([&] { wulf::read_fann(path); }, with({path}, parts));
}

TEST(fann_format, reads_parity8_with_targets_equal_to_input_parity) {
  const wulf::Dataset d = wulf::read_fann(std::string(WULF_FANN_DATASETS) + "/parity8.train");
  ASSERT_EQ(d.size(), 256u);
  ASSERT_EQ(d.n_inputs(), 8);
  ASSERT_EQ(d.n_outputs(), 1);
  EXPECT_FALSE(d.has_labels());
  for (Eigen::Index p = 0; p < 256; ++p) {
    int ones = 0;
    for (Eigen::Index i = 0; i < 8; ++i) {
      const float x = d.inputs(i, p);
      ASSERT_TRUE(x == 0.0f || x == 1.0f) << "pattern " << p;
      ones += x == 1.0f;
    }
    EXPECT_EQ(d.targets(0, p), static_cast<float>(ones % 2)) << "pattern " << p;
  }
  // The first pattern of the file: "1 1 0 0 0 0 0 1" -> "1".
  EXPECT_EQ(d.inputs(0, 0), 1.0f);
  EXPECT_EQ(d.inputs(2, 0), 0.0f);
  EXPECT_EQ(d.inputs(7, 0), 1.0f);
}

TEST(fann_format, write_then_read_gives_the_same_floats) {
  TestDir dir;
  wulf::Dataset d;
  d.inputs.resize(3, 4);
  d.inputs << 0.1f, -2.5f, 1e-7f, 3.0f,        //
      123456.789f, -0.0f, 1.0f / 3.0f, 7e20f,  //
      -1e-38f, 0.999999f, 2.0f, -4.25f;
  d.targets.resize(2, 4);
  d.targets << 1, 0, 0, 1,  //
      0, 1, 1, 0;
  d.labels = {0, 1, 1, 0};
  const std::string path = dir.file("round.data");
  wulf::write_fann(path, d);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const wulf::Dataset r = wulf::read_fann(path);
  EXPECT_EQ(r.inputs, d.inputs);  // bit for bit: %.9g round-trips every float
  EXPECT_EQ(r.targets, d.targets);
  EXPECT_FALSE(r.has_labels());
  // FANN's layout: the header, then inputs and outputs of each pattern on lines of their own.
  std::ifstream in(path);
  std::string header, inputs, outputs;
  std::getline(in, header);
  std::getline(in, inputs);
  std::getline(in, outputs);
  EXPECT_EQ(header, "4 3 2");
  EXPECT_EQ(inputs, "0.100000001 123456.789 -9.99999935e-39");
  EXPECT_EQ(outputs, "1 0");
}

TEST(fann_format, write_replaces_an_existing_file) {
  TestDir dir;
  const std::string path = dir.write("over.data", "old contents that are not FANN data");
  wulf::Dataset d;
  d.inputs = wulf::DataMatrix::Constant(2, 1, 0.5f);
  d.targets = wulf::DataMatrix::Constant(1, 1, -1.0f);
  wulf::write_fann(path, d);
  EXPECT_EQ(wulf::read_fann(path).targets(0, 0), -1.0f);
}

TEST(fann_format, write_refuses_sets_it_could_not_read_back) {
  TestDir dir;
  wulf::Dataset empty;
  empty.inputs.resize(2, 0);
  empty.targets.resize(1, 0);
  EXPECT_THROW(wulf::write_fann(dir.file("a"), empty), wulf::InputError);
  wulf::Dataset nan;
  nan.inputs = wulf::DataMatrix::Constant(2, 1, std::nanf(""));
  nan.targets = wulf::DataMatrix::Zero(1, 1);
  EXPECT_THROW(wulf::write_fann(dir.file("b"), nan), wulf::InputError);
  EXPECT_FALSE(fs::exists(dir.file("a")));
  EXPECT_FALSE(fs::exists(dir.file("b")));
}

TEST(fann_format, write_into_a_missing_folder_names_the_file) {
  wulf::Dataset d;
  d.inputs = wulf::DataMatrix::Zero(1, 1);
  d.targets = wulf::DataMatrix::Zero(1, 1);
  const std::string path = "/nonexistent/wulf/out.data";
  expect_input_error([&] { wulf::write_fann(path, d); }, {path});
}

TEST(fann_format, accepts_any_whitespace_signs_and_exponents) {
  TestDir dir;
  const std::string path = dir.write("loose.data", "2 2 1\r\n+1 -2.5e1\r\n\t.5\n\n3E-2   4\n-0\n");
  const wulf::Dataset d = wulf::read_fann(path);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.inputs(0, 0), 1.0f);
  EXPECT_EQ(d.inputs(1, 0), -25.0f);
  EXPECT_EQ(d.targets(0, 0), 0.5f);
  EXPECT_EQ(d.inputs(0, 1), 0.03f);
  EXPECT_EQ(d.inputs(1, 1), 4.0f);
  EXPECT_EQ(d.targets(0, 1), 0.0f);
}

TEST(fann_format, missing_file_says_cannot_open) {
  const std::string path = "/nonexistent/wulf/parity8.train";
  expect_input_error([&] { wulf::read_fann(path); }, {path, "no such file"});
}

TEST(fann_format, fewer_numbers_than_the_header_promises) {
  expect_read_error("3 2 1\n1 2\n3\n4 5\n6\n7 8\n", {"3 patterns x (2 inputs + 1 outputs) = 9 numbers", "only 8"});
}

TEST(fann_format, more_numbers_than_the_header_promises) {
  expect_read_error("2 2 1\n1 2\n3\n4 5\n6\n7 8\n9\n", {"= 6 numbers", "holds 9", "more"});
}

TEST(fann_format, a_token_that_is_not_a_number_names_its_line) {
  expect_read_error("2 2 1\n1 2\n3\n4 x5\n6\n", {"line 4", "'x5'", "not a number"});
  // Trailing junk after a number is no number either.
  expect_read_error("1 1 1\n0.5abc\n1\n", {"'0.5abc'"});
  expect_read_error("1 1 1\n1,5\n1\n", {"not a number"});
}

TEST(fann_format, non_finite_values_are_rejected_with_their_line) {
  for (const char* bad : {"nan", "inf", "-inf", "1e39", "1e999"})
    expect_read_error(std::string("1 2 1\n0 0\n\n") + bad + "\n", {"line 4", "finite"});
}

TEST(fann_format, bad_headers_are_rejected) {
  expect_read_error("", {"header"});
  expect_read_error("\n1 1\n", {"header"});
  expect_read_error("2 2\n1 2\n3 4\n", {"header"});
  expect_read_error("-1 2 1\n", {"'-1'"});
  expect_read_error("2.5 2 1\n", {"'2.5'"});
  expect_read_error("two 2 1\n", {"'two'"});
  expect_read_error("1 1 1 1\n1 1\n", {"more"});
}

// FANN's reader takes the header as the file's first three numbers (fscanf): after blank
// lines, split over lines, or sharing a line with the first pattern. wulf reads them alike,
// and a pattern's error still names its line.
TEST(fann_format, reads_the_header_as_fann_does) {
  TestDir dir;
  for (const char* text : {"2 1 1\n0\n1\n1\n0\n", "\n\n2 1 1\n0\n1\n1\n0\n", "2\n1\n1\n0\n1\n1\n0\n",
                           "2 1 1 0\n1\n1\n0\n", "2 1 1 0 1 1 0"}) {
    const wulf::Dataset d = wulf::read_fann(dir.write("h.data", text));
    ASSERT_EQ(d.size(), 2u) << text;
    EXPECT_EQ(d.inputs(0, 0), 0.0f) << text;
    EXPECT_EQ(d.targets(0, 0), 1.0f) << text;
    EXPECT_EQ(d.inputs(0, 1), 1.0f) << text;
    EXPECT_EQ(d.targets(0, 1), 0.0f) << text;
  }
  expect_read_error("\n2\n1 1\n0\nx\n1\n0\n", {"line 5", "'x'"});
}

TEST(fann_format, zero_counts_are_rejected) {
  for (const char* header : {"0 2 1\n", "2 0 1\n1\n1\n", "2 1 0\n1\n1\n"}) expect_read_error(header, {"zero"});
}

// A header of billions: a count beyond what wulf reads is named with its line; counts within
// it are checked against the numbers the file holds before anything is allocated (2e9
// patterns of 2e6 numbers would be 16 PB of floats).
TEST(fann_format, huge_header_counts_are_refused_with_their_line_before_allocating) {
  expect_read_error("4000000000 1000000 1000000\n1 2 3\n",
                    {"line 1: the header's count of patterns, 4000000000, is more than wulf reads (2147483647)"});
  expect_read_error("\n\n1\n1\n99999999999\n1 2\n", {"line 5", "count of outputs, 99999999999"});
  expect_read_error("2000000000 1000000 1000000\n1 2 3\n",
                    {"2000000000 patterns x (1000000 inputs + 1000000 outputs) = 4000000000000000 numbers",
                     "only 3"});
}

// A file that is no text at all (binary garbage, a program, bytes that are not UTF-8): named
// with the line, in a message of plain text however long the token; NaN in any spelling
// is no finite number.
TEST(fann_format, binary_garbage_and_nan_are_refused_in_plain_words) {
  TestDir dir;
  const std::vector<std::pair<std::string, std::string>> cases{
      {std::string("\x7f" "ELF\x02\x01\x01\x00\x00\x00", 10), "line 1: the header must be"},
      {"1 1 1\n\xff\xfe\x01\x02\n1\n", "line 2: '\\xff\\xfe\\x01\\x02' is not a number"},
      {"1 1 1\n0\n" + std::string(1 << 20, '\x80') + "\n", "... (1048576 bytes)' is not a number"},
      {"1 2 1\n0 NaN\n1\n", "line 2: 'NaN' is not a finite"},
      {"1 2 1\n0 -nan\n1\n", "line 2: '-nan' is not a finite"}};
  for (const auto& [text, part] : cases) {
    SCOPED_TRACE(part);
    const std::string path = dir.write("bad.data", text);
    const std::string message = input_error([&] { wulf::read_fann(path); });
    EXPECT_TRUE(contains(message, path)) << message;
    EXPECT_TRUE(contains(message, part)) << message;
    EXPECT_TRUE(plain_text(message)) << message;
    EXPECT_LT(message.size(), 400u);
  }
}

}  // namespace
