// Resampling of images stored one per column, each row-major (pixel (r, c) at r * cols + c),
// as read_idx_images gives them: MNIST's 28x28 digits shrunk to 20x20 or enlarged to 56x58 or
// 112x112 to vary the input size of a net.
#pragma once

#include "util/errors.hpp"
#include "data/dataset.hpp"

namespace wulf {

// Each axis is resampled on its own. An axis that shrinks takes area-weighted averages (an
// output pixel is the mean of the input area it covers, fractional pixels weighted by their
// overlap), which keeps the image's mean; an axis that grows interpolates linearly between
// pixel centres, clamped at the edges; an axis that keeps its size is copied. Throws InputError
// for a non-positive size or when images.rows() != in_rows * in_cols.
DataMatrix resample_images(const DataMatrix& images, int in_rows, int in_cols, int out_rows,
                           int out_cols);

}  // namespace wulf
