#include "data/idx.hpp"

#include "data/dataset.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>


namespace {

namespace fs = std::filesystem;

using namespace wulf::testing_support;

std::string mnist(const std::string& name) { return mnist_dir() + "/" + name; }

// Skips (rather than fails) only when no folder was given at all; a folder that was given but
// lacks the files fails the tests.
#define REQUIRE_MNIST()                                                                  \
  do {                                                                                   \
    if (mnist_dir().empty()) WULF_SKIP("no WULF_MNIST_DIR or WULF_TEST_MNIST_DIR");     \
  } while (0)

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The labels of the MNIST file `name`, expected to be `count` and to begin with `first`.
std::vector<int> expect_labels(const std::string& name, std::size_t count, const std::vector<int>& first) {
  const std::vector<int> labels = wulf::read_idx_labels(mnist(name));
  EXPECT_EQ(labels.size(), count);
  const std::size_t n = std::min(labels.size(), first.size());
  EXPECT_EQ(std::vector<int>(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(n)), first);
  return labels;
}

TEST(idx, reads_first_mnist_train_labels) {
  REQUIRE_MNIST();
  expect_labels("train-labels-idx1-ubyte", 60000, {5, 0, 4, 1, 9, 2, 1, 3, 1, 4});
}

TEST(idx, reads_first_mnist_test_labels) {
  REQUIRE_MNIST();
  for (int l : expect_labels("t10k-labels-idx1-ubyte", 10000, {7, 2, 1, 0, 4, 1, 4, 9, 5, 9})) {
    EXPECT_GE(l, 0);
    EXPECT_LE(l, 9);
  }
}

TEST(idx, reads_all_mnist_train_images_as_28x28_columns_in_unit_range) {
  REQUIRE_MNIST();
  const wulf::IdxImages im = wulf::read_idx_images(mnist("train-images-idx3-ubyte"));
  EXPECT_EQ(im.rows, 28);
  EXPECT_EQ(im.cols, 28);
  EXPECT_EQ(im.bytes.rows(), 784);
  EXPECT_EQ(im.bytes.cols(), 60000);
  // std::minmax_element rather than minCoeff/maxCoeff: g++ 12 with AVX-512 warns falsely
  // (-Wmaybe-uninitialized, GCC bug 105593) inside Eigen's vectorised float min/max.
  const wulf::DataMatrix pixels = im.pixels();
  const float* begin = pixels.data();
  const auto [lo, hi] = std::minmax_element(begin, begin + pixels.size());
  // Both ends of the range occur: the background is 0 and strokes saturate at 255.
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);
}

TEST(idx, first_mnist_train_image_has_known_pixel_sum) {
  REQUIRE_MNIST();
  const wulf::IdxImages im = wulf::read_idx_images(mnist("train-images-idx3-ubyte"), 1);
  ASSERT_EQ(im.bytes.cols(), 1);
  const wulf::DataMatrix pixels = im.pixels();
  // sum(bytes[16:16+784]) / 255 computed from the file with python3: 27525 / 255.
  EXPECT_NEAR(pixels.col(0).cast<double>().sum(), 107.94117647058823, 1e-3);
  // Pixels are byte / 255, so every value times 255 is a whole number.
  for (float v : pixels.reshaped()) EXPECT_FLOAT_EQ(v * 255.0f, std::round(v * 255.0f));
}

TEST(idx, keeps_pixels_row_major_within_an_image) {
  REQUIRE_MNIST();
  const std::string path = mnist("train-images-idx3-ubyte");
  const std::vector<char> bytes = read_bytes(path);
  const wulf::IdxImages im = wulf::read_idx_images(path, 2);
  const wulf::DataMatrix pixels = im.pixels();  // made anew at each call
  // Image 1, pixel (r, c) is byte 16 + 784 + r * 28 + c of the file.
  for (int r = 0; r < 28; ++r)
    for (int c = 0; c < 28; ++c) {
      const auto byte = static_cast<unsigned char>(bytes[16 + 784 + r * 28 + c]);
      EXPECT_EQ(im.bytes(r * 28 + c, 1), byte);
      EXPECT_EQ(pixels(r * 28 + c, 1), static_cast<float>(byte) / 255.0f);
    }
}

TEST(idx, max_count_limits_images_and_labels) {
  REQUIRE_MNIST();
  const wulf::IdxImages im = wulf::read_idx_images(mnist("t10k-images-idx3-ubyte"), 5);
  EXPECT_EQ(im.bytes.cols(), 5);
  EXPECT_EQ(im.bytes.rows(), 784);
  const std::vector<int> labels = wulf::read_idx_labels(mnist("t10k-labels-idx1-ubyte"), 3);
  EXPECT_EQ(labels, (std::vector<int>{7, 2, 1}));
  // A limit above the count reads everything.
  EXPECT_EQ(wulf::read_idx_labels(mnist("t10k-labels-idx1-ubyte"), 20000).size(), 10000u);
  // The first images read with a limit equal the first images read in full.
  const wulf::IdxImages all = wulf::read_idx_images(mnist("t10k-images-idx3-ubyte"));
  EXPECT_EQ(im.bytes, all.bytes.leftCols(5));
}

TEST(idx, missing_file_names_the_path) {
  const std::string path = "/nonexistent/wulf/train-images-idx3-ubyte";
  expect_input_error([&] { wulf::read_idx_images(path); }, {path, "no such file"});
  expect_input_error([&] { wulf::read_idx_labels(path); }, {"no such file"});
}

// The first `size` bytes of the MNIST file `name`, written to a file in dir: its path.
std::string cut_copy(const TestDir& dir, const std::string& name, std::size_t size) {
  std::vector<char> bytes = read_bytes(mnist(name));
  bytes.resize(size);
  const std::string path = dir.file("cut-" + name);
  write_bytes(path, bytes);
  return path;
}

TEST(idx, truncated_image_file_says_what_the_header_promised) {
  REQUIRE_MNIST();
  TestDir dir;
  const std::string path = cut_copy(dir, "t10k-images-idx3-ubyte", 16 + 784 * 10 + 100);
  expect_input_error([&] { wulf::read_idx_images(path); },
                     {path, "truncated", "10000 images of 28 x 28 bytes = 7840000 bytes", "only 7940"});
  // The whole promise is checked, even when fewer images are asked for.
  expect_input_error([&] { wulf::read_idx_images(path, 1); }, {"truncated"});
}

TEST(idx, truncated_label_file_and_short_header_are_reported) {
  REQUIRE_MNIST();
  TestDir dir;
  const std::string path = cut_copy(dir, "t10k-labels-idx1-ubyte", 8 + 9999);
  expect_input_error([&] { wulf::read_idx_labels(path); }, {path, "truncated", "only 9999"});
  cut_copy(dir, "t10k-labels-idx1-ubyte", 6);  // the magic, then half of the count
  expect_input_error([&] { wulf::read_idx_labels(path); }, {"truncated"});
  cut_copy(dir, "t10k-labels-idx1-ubyte", 0);
  expect_input_error([&] { wulf::read_idx_labels(path); }, {"truncated"});
}

TEST(idx, wrong_magic_says_expected_and_found) {
  REQUIRE_MNIST();
  // A label file read as images, and an image file read as labels.
  const std::string labels = mnist("t10k-labels-idx1-ubyte");
  expect_input_error([&] { wulf::read_idx_images(labels); }, {labels, "magic", "0x00000803", "0x00000801"});
  const std::string images = mnist("t10k-images-idx3-ubyte");
  expect_input_error([&] { wulf::read_idx_labels(images); }, {"expected 0x00000801, found 0x00000803"});
}

TEST(idx, zero_dimensions_are_rejected) {
  TestDir dir;
  const std::string path = dir.file("empty-images");
  // Magic 0x803, then 5 images of 0 x 28.
  write_bytes(path, {0, 0, 8, 3, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 28});
  expect_input_error([&] { wulf::read_idx_images(path); }, {path, "zero"});
}

// A header that claims 2^31 items (or 2^32 - 1) in a file of a few bytes: refused with the
// file named and the promise spelt out, from the file's size, before anything is allocated
// (2 GB of labels or 1.7 TB of images would be a bad_alloc, or a machine brought to a halt).
TEST(idx, a_header_claiming_billions_of_items_is_refused_before_allocating) {
  TestDir dir;
  const std::string labels = dir.file("labels"), images = dir.file("images");
  for (const char top : {char(0x80), char(0xff)}) {
    const std::string count = top == char(0x80) ? "2147483648" : "4294967295";
    SCOPED_TRACE(count);
    const char low = top == char(0x80) ? 0 : char(0xff);
    write_bytes(labels, {0, 0, 8, 1, top, low, low, low, 7, 1, 2});
    write_bytes(images, {0, 0, 8, 3, top, low, low, low, 0, 0, 0, 28, 0, 0, 0, 28, 1, 2, 3});
    for (const std::size_t first : {std::size_t{0}, std::size_t{2147483647}}) {
      expect_input_error([&] { wulf::read_idx_labels(labels, SIZE_MAX, first); },
                         {labels, "truncated: the header promises " + count + " labels of 1 byte", "only 3"});
      expect_input_error([&] { wulf::read_idx_images(images, 1, first); },
                         {images, "truncated: the header promises " + count + " images of 28 x 28 bytes", "only 3"});
    }
  }
}

TEST(idx, labels_outside_0_to_9_are_kept_as_read) {
  TestDir dir;
  const std::string path = dir.file("labels");
  write_bytes(path, {0, 0, 8, 1, 0, 0, 0, 3, 7, 42, static_cast<char>(255)});
  EXPECT_EQ(wulf::read_idx_labels(path), (std::vector<int>{7, 42, 255}));
}

TEST(idx, reads_a_small_handmade_image_file) {
  TestDir dir;
  const std::string path = dir.file("images");
  // Two images of 2 rows x 3 columns; the size bytes are big-endian.
  const std::vector<char> header = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3};
  std::vector<char> bytes = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, static_cast<char>(255)};
  bytes.insert(bytes.begin(), header.begin(), header.end());
  write_bytes(path, bytes);
  const wulf::IdxImages im = wulf::read_idx_images(path);
  EXPECT_EQ(im.rows, 2);
  EXPECT_EQ(im.cols, 3);
  ASSERT_EQ(im.bytes.rows(), 6);
  ASSERT_EQ(im.bytes.cols(), 2);
  const wulf::DataMatrix pixels = im.pixels();
  EXPECT_EQ(pixels(5, 0), 5.0f / 255.0f);  // image 0, row 1, column 2
  EXPECT_EQ(pixels(1, 1), 11.0f / 255.0f);
  EXPECT_EQ(pixels(5, 1), 1.0f);
}

}  // namespace
