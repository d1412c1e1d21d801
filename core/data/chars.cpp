#include "data/chars.hpp"
#include "util/errors.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace wulf {
namespace {

constexpr int side = chars_side;
constexpr int pixels = side * side;

// Distance from point (y, x) to the segment from (y0, x0) to (y1, x1).
double segment_distance(double y, double x, double y0, double x0, double y1, double x1) {
  const double dy = y1 - y0, dx = x1 - x0;
  const double len2 = dy * dy + dx * dx;
  // Projection of the point onto the segment's line, as a fraction of the way along it.
  const double t = len2 > 0 ? std::clamp(((y - y0) * dy + (x - x0) * dx) / len2, 0.0, 1.0) : 0.0;
  return std::hypot(y - (y0 + t * dy), x - (x0 + t * dx));
}

// Draws one stroke into a glyph (column of 400), keeping the brighter value where strokes
// cross. A pixel whose centre lies within half the width of the stroke's axis is 1; beyond
// that the value falls linearly to 0 over one pixel, which approximates the pixel's coverage.
void draw_stroke(Eigen::Ref<Eigen::VectorXf> glyph, double y0, double x0, double y1, double x1) {
  constexpr double half_width = 0.75;
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      const double d = segment_distance(r, c, y0, x0, y1, x1);
      const double v = std::clamp(half_width + 0.5 - d, 0.0, 1.0);
      float& px = glyph(r * side + c);
      px = std::max(px, static_cast<float>(v));
    }
}

}  // namespace

DataMatrix chars_prototypes(int n_classes, const Rng& rng) {
  if (n_classes < 1)
    throw InputError("chars: the number of classes must be positive, got " +
                     std::to_string(n_classes));
  DataMatrix protos = DataMatrix::Zero(pixels, n_classes);
  for (int k = 0; k < n_classes; ++k) {
    Rng g = rng.split(static_cast<std::uint64_t>(k));
    const int strokes = 2 + static_cast<int>(g.below(4));
    for (int s = 0; s < strokes; ++s) {
      const double y0 = g.uniform(2, 17), x0 = g.uniform(2, 17);
      const double y1 = g.uniform(2, 17), x1 = g.uniform(2, 17);
      draw_stroke(protos.col(k), y0, x0, y1, x1);
    }
  }
  return protos;
}

Dataset make_chars(int n_classes, std::size_t n_patterns, Rng& rng) {
  if (n_classes < 2)
    throw InputError("chars: at least 2 classes are needed, got " + std::to_string(n_classes));
  return make_chars(chars_prototypes(n_classes, rng), n_patterns, rng);
}

Dataset make_chars(const DataMatrix& protos, std::size_t n_patterns, Rng& rng) {
  const int n_classes = static_cast<int>(protos.cols());
  if (n_classes < 2)
    throw InputError("chars: at least 2 classes are needed, got " + std::to_string(n_classes));
  if (protos.rows() != pixels)
    throw InputError("chars: prototypes have " + std::to_string(protos.rows()) + " pixels, not " +
                     std::to_string(pixels));
  if (n_patterns == 0) throw InputError("chars: the number of patterns must be positive");

  Dataset d;
  const auto n = static_cast<Eigen::Index>(n_patterns);
  d.inputs.resize(pixels, n);
  d.labels.resize(n_patterns);
  for (Eigen::Index i = 0; i < n; ++i) {
    const int k = static_cast<int>(i % n_classes);
    d.labels[static_cast<std::size_t>(i)] = k;
    const int dy = static_cast<int>(rng.below(3)) - 1;
    const int dx = static_cast<int>(rng.below(3)) - 1;
    // Output pixel (r, c) shows prototype pixel (r - dy, c - dx), or 0 off the glyph.
    for (int r = 0; r < side; ++r)
      for (int c = 0; c < side; ++c) {
        const int sr = r - dy, sc = c - dx;
        const bool inside = sr >= 0 && sr < side && sc >= 0 && sc < side;
        const float base = inside ? protos(sr * side + sc, k) : 0.0f;
        const auto noise = static_cast<float>(rng.uniform(-0.1, 0.1));
        d.inputs(r * side + c, i) = std::clamp(base + noise, 0.0f, 1.0f);
      }
  }
  d.targets = one_of_k(d.labels, n_classes);
  return d;
}

}  // namespace wulf
