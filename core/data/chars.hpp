// A generated stand-in for a large character-recognition set (20x20 glyphs, thousands of
// classes, like Japanese OCR data) for timing studies: what matters is its shape and that it
// can be learnt, not that its glyphs look like any script.
#pragma once

#include "util/errors.hpp"
#include "data/dataset.hpp"
#include "util/random.hpp"

#include <cstddef>

namespace wulf {

inline constexpr int chars_side = 20;  // glyphs are chars_side x chars_side, row-major

// The prototype glyph of each class, (400, n_classes), values in [0, 1]: 2 to 5 anti-aliased
// strokes about 1.5 px wide between random points of [2, 17]^2. Prototype k comes from
// rng.split(k) alone, so it does not depend on n_classes, n_patterns or anything drawn from
// rng. rng itself is not advanced. Throws InputError if n_classes < 1.
DataMatrix chars_prototypes(int n_classes, const Rng& rng);

// n_patterns glyphs; pattern i has class i % n_classes (so classes are balanced, and all occur
// once n_patterns >= n_classes) and is its prototype shifted by -1, 0 or 1 pixel along each
// axis (zero fill), plus uniform noise in [-0.1, 0.1], clamped to [0, 1]. Inputs (400, n),
// one-of-k targets, labels set. The shifts and noise are drawn from rng, in pattern order.
// A training and a test set of one problem must share prototypes: draw them once with
// chars_prototypes and pass them to both. Throws InputError if there are fewer than 2
// classes or n_patterns == 0.
Dataset make_chars(const DataMatrix& prototypes, std::size_t n_patterns, Rng& rng);
// The same with the prototypes of chars_prototypes(n_classes, rng).
Dataset make_chars(int n_classes, std::size_t n_patterns, Rng& rng);

}  // namespace wulf
