#include "data/image.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "util/random.hpp"

#include <gtest/gtest.h>

#include <initializer_list>

namespace {

using wulf::DataMatrix;

// n random images of rows x cols pixels in [0, 1).
DataMatrix random_images(int rows, int cols, int n, std::uint64_t seed) {
  wulf::Rng rng(seed);
  DataMatrix m(rows * cols, n);
  for (float& v : m.reshaped()) v = static_cast<float>(rng.uniform());
  return m;
}

TEST(image, constant_image_stays_constant_whatever_the_sizes) {
  const DataMatrix img = DataMatrix::Constant(28 * 28, 2, 0.375f);
  for (auto [r, c] : {std::pair{20, 20}, {56, 58}, {112, 112}, {7, 40}, {40, 7}, {1, 1}}) {
    const DataMatrix out = wulf::resample_images(img, 28, 28, r, c);
    ASSERT_EQ(out.rows(), r * c);
    ASSERT_EQ(out.cols(), 2);
    for (float v : out.reshaped()) EXPECT_NEAR(v, 0.375f, 1e-6f) << r << "x" << c;
  }
}

TEST(image, shrinking_28x28_to_20x20_keeps_the_mean) {
  const DataMatrix img = random_images(28, 28, 5, 7);
  const DataMatrix out = wulf::resample_images(img, 28, 28, 20, 20);
  ASSERT_EQ(out.rows(), 400);
  for (Eigen::Index k = 0; k < img.cols(); ++k)
    EXPECT_NEAR(out.col(k).cast<double>().mean(), img.col(k).cast<double>().mean(), 1e-5);
}

TEST(image, shrinking_by_a_whole_factor_averages_blocks) {
  // 4x4 -> 2x2: each output pixel is the mean of a 2x2 block.
  DataMatrix img(16, 1);
  for (int i = 0; i < 16; ++i) img(i, 0) = static_cast<float>(i);
  const DataMatrix out = wulf::resample_images(img, 4, 4, 2, 2);
  EXPECT_FLOAT_EQ(out(0, 0), (0 + 1 + 4 + 5) / 4.0f);
  EXPECT_FLOAT_EQ(out(1, 0), (2 + 3 + 6 + 7) / 4.0f);
  EXPECT_FLOAT_EQ(out(2, 0), (8 + 9 + 12 + 13) / 4.0f);
  EXPECT_FLOAT_EQ(out(3, 0), (10 + 11 + 14 + 15) / 4.0f);
}

TEST(image, shrinking_by_a_fractional_factor_weights_partial_pixels) {
  // One row of 3 -> 2: output 0 covers pixel 0 and half of pixel 1, output 1 the other half
  // of pixel 1 and pixel 2.
  DataMatrix img(3, 1);
  img << 3.0f, 6.0f, 9.0f;
  const DataMatrix out = wulf::resample_images(img, 1, 3, 1, 2);
  EXPECT_FLOAT_EQ(out(0, 0), (3.0f + 0.5f * 6.0f) / 1.5f);
  EXPECT_FLOAT_EQ(out(1, 0), (0.5f * 6.0f + 9.0f) / 1.5f);
}

TEST(image, enlarging_2x2_to_4x4_interpolates_between_pixel_centres) {
  // Pixel (r, c) = 2r + c. Along each axis the output centres fall at input coordinates
  // -0.25, 0.25, 0.75, 1.25, clamped to 0, 0.25, 0.75, 1, so out(r, c) = 2 a[r] + a[c].
  DataMatrix img(4, 1);
  img << 0.0f, 1.0f, 2.0f, 3.0f;
  const DataMatrix out = wulf::resample_images(img, 2, 2, 4, 4);
  const float expected[16] = {0.0f, 0.25f, 0.75f, 1.0f,  //
                              0.5f, 0.75f, 1.25f, 1.5f,  //
                              1.5f, 1.75f, 2.25f, 2.5f,  //
                              2.0f, 2.25f, 2.75f, 3.0f};
  ASSERT_EQ(out.rows(), 16);
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(out(i, 0), expected[i]) << "pixel " << i;
}

TEST(image, shrinking_one_axis_and_enlarging_the_other_is_separable) {
  // 2 rows x 4 cols -> 4 rows x 2 cols: columns averaged in pairs, rows interpolated.
  DataMatrix img(8, 1);
  img << 0.0f, 2.0f, 4.0f, 6.0f,  //
      8.0f, 10.0f, 12.0f, 14.0f;
  const DataMatrix out = wulf::resample_images(img, 2, 4, 4, 2);
  // Column pairs give rows (1, 5) and (9, 13); rows interpolate with weights 0, .25, .75, 1.
  const float expected[8] = {1.0f, 5.0f, 3.0f, 7.0f, 7.0f, 11.0f, 9.0f, 13.0f};
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(out(i, 0), expected[i]) << "pixel " << i;
}

TEST(image, same_size_returns_the_same_images) {
  const DataMatrix img = random_images(28, 28, 3, 11);
  EXPECT_EQ(wulf::resample_images(img, 28, 28, 28, 28), img);
  const DataMatrix rect = random_images(3, 5, 2, 12);
  EXPECT_EQ(wulf::resample_images(rect, 3, 5, 3, 5), rect);
}

TEST(image, enlarging_keeps_values_within_the_input_range) {
  const DataMatrix img = random_images(28, 28, 2, 13);
  const DataMatrix out = wulf::resample_images(img, 28, 28, 112, 112);
  ASSERT_EQ(out.rows(), 112 * 112);
  for (float v : out.reshaped()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
  // 56x58 gives 3 248 inputs.
  EXPECT_EQ(wulf::resample_images(img, 28, 28, 56, 58).rows(), 3248);
}

TEST(image, no_images_gives_no_images) {
  const DataMatrix out = wulf::resample_images(DataMatrix(784, 0), 28, 28, 20, 20);
  EXPECT_EQ(out.rows(), 400);
  EXPECT_EQ(out.cols(), 0);
}

TEST(image, bad_sizes_throw) {
  const DataMatrix img = DataMatrix::Zero(784, 1);
  EXPECT_THROW(wulf::resample_images(img, 28, 28, 0, 20), wulf::InputError);
  EXPECT_THROW(wulf::resample_images(img, 28, 28, 20, -1), wulf::InputError);
  EXPECT_THROW(wulf::resample_images(img, 0, 28, 20, 20), wulf::InputError);
  EXPECT_THROW(wulf::resample_images(img, 28, 27, 20, 20), wulf::InputError);
  EXPECT_THROW(wulf::resample_images(img, 20, 20, 20, 20), wulf::InputError);
}

}  // namespace
