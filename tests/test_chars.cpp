#include "data/chars.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"
#include "util/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace {

using wulf::DataMatrix;

TEST(chars, has_400_inputs_and_one_of_k_targets) {
  wulf::Rng rng(1);
  const wulf::Dataset d = wulf::make_chars(50, 120, rng);
  EXPECT_EQ(d.n_inputs(), 400);
  EXPECT_EQ(d.n_outputs(), 50);
  ASSERT_EQ(d.size(), 120u);
  ASSERT_EQ(d.labels.size(), 120u);
  for (Eigen::Index p = 0; p < 120; ++p) {
    EXPECT_EQ(d.targets.col(p).sum(), 1.0f);
    EXPECT_EQ(d.targets(d.labels[static_cast<std::size_t>(p)], p), 1.0f);
  }
  for (float v : d.inputs.reshaped()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
}

TEST(chars, pattern_i_has_class_i_mod_k_so_classes_are_balanced) {
  wulf::Rng rng(2);
  const wulf::Dataset d = wulf::make_chars(7, 70, rng);
  std::vector<int> count(7, 0);
  for (std::size_t i = 0; i < d.labels.size(); ++i) {
    EXPECT_EQ(d.labels[i], static_cast<int>(i % 7));
    ++count[static_cast<std::size_t>(d.labels[i])];
  }
  for (int c : count) EXPECT_EQ(c, 10);
}

TEST(chars, same_seed_gives_the_same_set_and_another_seed_another) {
  wulf::Rng a(3), b(3), c(4);
  const wulf::Dataset da = wulf::make_chars(20, 100, a);
  const wulf::Dataset db = wulf::make_chars(20, 100, b);
  const wulf::Dataset dc = wulf::make_chars(20, 100, c);
  EXPECT_EQ(da.inputs, db.inputs);
  EXPECT_EQ(da.labels, db.labels);
  EXPECT_NE(da.inputs, dc.inputs);
}

TEST(chars, prototypes_do_not_depend_on_how_many_classes_are_made) {
  const wulf::Rng rng(5);
  const DataMatrix few = wulf::chars_prototypes(10, rng);
  const DataMatrix many = wulf::chars_prototypes(3000, rng);
  ASSERT_EQ(few.rows(), 400);
  ASSERT_EQ(many.cols(), 3000);
  EXPECT_EQ(few, many.leftCols(10));
}

TEST(chars, a_larger_set_from_the_same_seed_extends_a_smaller_one) {
  // Prototypes do not advance the stream and patterns draw from it in order.
  wulf::Rng a(10), b(10);
  const wulf::Dataset small = wulf::make_chars(10, 25, a);
  const wulf::Dataset large = wulf::make_chars(10, 60, b);
  EXPECT_EQ(small.inputs, large.inputs.leftCols(25));
}

TEST(chars, patterns_are_shifted_noisy_copies_of_their_prototype) {
  wulf::Rng rng(6);
  const DataMatrix protos = wulf::chars_prototypes(30, rng);
  const wulf::Dataset d = wulf::make_chars(30, 300, rng);
  for (Eigen::Index p = 0; p < 300; ++p) {
    const auto k = static_cast<Eigen::Index>(d.labels[static_cast<std::size_t>(p)]);
    // One of the nine shifts matches within the noise (0.1, clamping only shrinks it).
    float best = std::numeric_limits<float>::max();
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        float worst = 0.0f;
        for (int r = 0; r < 20; ++r)
          for (int c = 0; c < 20; ++c) {
            const int sr = r - dy, sc = c - dx;
            const bool inside = sr >= 0 && sr < 20 && sc >= 0 && sc < 20;
            const float want = inside ? protos(sr * 20 + sc, k) : 0.0f;
            worst = std::max(worst, std::abs(d.inputs(r * 20 + c, p) - want));
          }
        best = std::min(best, worst);
      }
    EXPECT_LE(best, 0.1f + 1e-6f) << "pattern " << p;
  }
}

TEST(chars, prototypes_are_strokes_in_the_unit_range) {
  const DataMatrix protos = wulf::chars_prototypes(200, wulf::Rng(7));
  for (Eigen::Index k = 0; k < protos.cols(); ++k) {
    // At least one fully inked pixel, and ink only in [0, 1]; the strokes stay inside the
    // border (points in [2, 17], at most 1.25 px of ink either side), so rows 0 and 19 and
    // columns 0 and 19 are blank and a shift by one pixel loses nothing.
    // std::minmax_element rather than minCoeff/maxCoeff: g++ 12 with AVX-512 warns falsely
    // (-Wmaybe-uninitialized, GCC bug 105593) inside Eigen's vectorised float min/max.
    const float* col = protos.col(k).data();
    const auto [lo, hi] = std::minmax_element(col, col + protos.rows());
    EXPECT_EQ(*hi, 1.0f) << "class " << k;
    EXPECT_GE(*lo, 0.0f) << "class " << k;
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(protos(i, k), 0.0f);
      EXPECT_EQ(protos(19 * 20 + i, k), 0.0f);
      EXPECT_EQ(protos(i * 20, k), 0.0f);
      EXPECT_EQ(protos(i * 20 + 19, k), 0.0f);
    }
  }
}

TEST(chars, distinct_classes_have_distinct_prototypes) {
  const DataMatrix protos = wulf::chars_prototypes(300, wulf::Rng(8));
  float closest = std::numeric_limits<float>::max();
  for (Eigen::Index a = 0; a < protos.cols(); ++a)
    for (Eigen::Index b = a + 1; b < protos.cols(); ++b)
      closest = std::min(closest, (protos.col(a) - protos.col(b)).norm());
  // Well above the noise a pattern carries (at most 0.1 per pixel).
  EXPECT_GT(closest, 1.0f);
}

TEST(chars, bad_sizes_throw) {
  wulf::Rng rng(9);
  EXPECT_THROW(wulf::make_chars(1, 10, rng), wulf::InputError);
  EXPECT_THROW(wulf::make_chars(0, 10, rng), wulf::InputError);
  EXPECT_THROW(wulf::make_chars(10, 0, rng), wulf::InputError);
  EXPECT_THROW(wulf::chars_prototypes(0, rng), wulf::InputError);
}

}  // namespace
