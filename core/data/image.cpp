#include "data/image.hpp"
#include "util/errors.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace wulf {
namespace {

// Area weights, (out, in): output pixel j covers [j * in / out, (j + 1) * in / out) in input
// pixels. Measured in units of 1 / out pixel, input pixel i spans [i * out, (i + 1) * out) and
// output pixel j spans [j * in, (j + 1) * in), so overlaps are exact integers; dividing by the
// output pixel's width (in) makes each row sum to 1. Each column sums to out / in, which is why
// the mean is kept: mean(out) = (1 / out) * sum_i (out / in) * x_i = mean(in).
Eigen::MatrixXd area_weights(int in, int out) {
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(out, in);
  for (int j = 0; j < out; ++j) {
    const long lo = static_cast<long>(j) * in, hi = lo + in;
    for (long i = lo / out; i < in && i * out < hi; ++i) {
      const long overlap = std::min(hi, (i + 1) * out) - std::max(lo, i * out);
      if (overlap > 0) w(j, i) = static_cast<double>(overlap) / in;
    }
  }
  return w;
}

// Linear weights, (out, in), with pixel centres aligned: the centre of output pixel j lies at
// input coordinate (j + 0.5) * in / out - 0.5, clamped to [0, in - 1] so that the outermost
// output pixels copy the edge instead of blending with zeros beyond it.
Eigen::MatrixXd linear_weights(int in, int out) {
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(out, in);
  const double scale = static_cast<double>(in) / out;
  for (int j = 0; j < out; ++j) {
    const double x = std::clamp((j + 0.5) * scale - 0.5, 0.0, static_cast<double>(in - 1));
    const int i0 = static_cast<int>(std::floor(x));
    const int i1 = std::min(i0 + 1, in - 1);
    const double frac = x - i0;
    w(j, i0) += 1.0 - frac;
    w(j, i1) += frac;
  }
  return w;
}

// Weights in double (exact area fractions) rounded once to float.
DataMatrix axis_weights(int in, int out) {
  if (out == in) return DataMatrix::Identity(out, in);
  return (out < in ? area_weights(in, out) : linear_weights(in, out)).cast<float>();
}

}  // namespace

DataMatrix resample_images(const DataMatrix& images, int in_rows, int in_cols, int out_rows,
                           int out_cols) {
  if (in_rows <= 0 || in_cols <= 0 || out_rows <= 0 || out_cols <= 0)
    throw InputError("resample_images: sizes must be positive, got " + std::to_string(in_rows) +
                     "x" + std::to_string(in_cols) + " -> " + std::to_string(out_rows) + "x" +
                     std::to_string(out_cols));
  const Eigen::Index in_pixels = Eigen::Index{in_rows} * in_cols;
  const Eigen::Index out_pixels = Eigen::Index{out_rows} * out_cols;
  if (images.rows() != in_pixels)
    throw InputError("resample_images: images have " + std::to_string(images.rows()) +
                     " pixels, but " + std::to_string(in_rows) + "x" + std::to_string(in_cols) +
                     " images have " + std::to_string(in_pixels));

  const DataMatrix wr = axis_weights(in_rows, out_rows);  // (out_rows, in_rows)
  const DataMatrix wc = axis_weights(in_cols, out_cols);  // (out_cols, in_cols)
  const Eigen::Index n = images.cols();
  DataMatrix out(out_pixels, n);
  // Images go in blocks so that the intermediate stays in cache (64 at 112 x 28 is 800 KiB).
  constexpr Eigen::Index block = 64;
  DataMatrix tmp;
  for (Eigen::Index k0 = 0; k0 < n; k0 += block) {
    const Eigen::Index b = std::min(block, n - k0);
    // Row-major images one after another, viewed as (in_cols, in_rows * b): column
    // r + in_rows * k is row r of image k0 + k, so one product resamples the columns axis of
    // every row in the block.
    const Eigen::Map<const DataMatrix> rows_in(images.col(k0).data(), in_cols, in_rows * b);
    tmp.noalias() = wc * rows_in;  // (out_cols, in_rows * b)
    // Along the rows axis each output row mixes the few input rows its weights touch (two when
    // enlarging, about in / out when shrinking), so adding those rows beats a dense product.
    for (Eigen::Index k = 0; k < b; ++k) {
      Eigen::Map<DataMatrix> res(out.col(k0 + k).data(), out_cols, out_rows);
      for (int r = 0; r < out_rows; ++r) {
        auto dst = res.col(r);
        dst.setZero();
        for (int i = 0; i < in_rows; ++i)
          if (wr(r, i) != 0.0f) dst += wr(r, i) * tmp.col(i + in_rows * k);
      }
    }
  }
  return out;
}

}  // namespace wulf
