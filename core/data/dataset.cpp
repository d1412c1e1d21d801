#include "data/dataset.hpp"
#include "util/errors.hpp"

#include <algorithm>

#ifdef __AVX512F__
#include <immintrin.h>
#endif

namespace wulf {

void Dataset::keep(std::size_t begin, std::size_t count) {
  begin = std::min(begin, size());
  count = std::min(count, size() - begin);
  if (begin == 0 && count == size()) return;
  const auto first = static_cast<Eigen::Index>(begin), cols = static_cast<Eigen::Index>(count);
  if (byte_inputs())
    input_bytes = ByteMatrix(input_bytes.middleCols(first, cols));
  else
    inputs = DataMatrix(inputs.middleCols(first, cols));
  targets = DataMatrix(targets.middleCols(first, cols));
  if (!labels.empty()) labels = std::vector<int>(labels.begin() + first, labels.begin() + first + cols);
}

DataMatrix byte_inputs_as_floats(const ByteMatrix& bytes) {
  DataMatrix floats(bytes.rows(), bytes.cols());  // both column-major: one run of bytes
  byte_inputs_to(bytes.data(), floats.data(), static_cast<std::size_t>(bytes.size()));
  return floats;
}

void byte_inputs_to(const std::uint8_t* __restrict in, float* __restrict out, std::size_t n) {
  std::size_t i = 0;
#ifdef __AVX512F__
  // k / 255 as the float nearest it: q = k (1 / 255) misses it for 126 of the 256 bytes, and
  // one correction by the exact remainder k - 255 q (fused multiply-adds) gives the quotient
  // for every byte (tested), in three operations where the division takes about as long as
  // five. g++ 12 vectorises neither form of the loop over whole 512-bit registers here: it
  // leaves 784's last 16 bytes to scalar code, or converts 4 at a time.
  const __m512 r = _mm512_set1_ps(1.0f / 255.0f), d = _mm512_set1_ps(255.0f);
  for (; i + 16 <= n; i += 16) {
    const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m512 x = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(k));
    const __m512 q = _mm512_mul_ps(x, r);
    _mm512_storeu_ps(out + i, _mm512_fmadd_ps(_mm512_fnmadd_ps(q, d, x), r, q));
  }
#endif
  for (; i < n; ++i) out[i] = byte_input(in[i]);
}

DataMatrix Dataset::float_inputs() const { return byte_inputs() ? byte_inputs_as_floats(input_bytes) : inputs; }

DataMatrix one_of_k(const std::vector<int>& labels, int k) {
  DataMatrix t = DataMatrix::Zero(k, static_cast<Eigen::Index>(labels.size()));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= k)
      throw InputError("label " + std::to_string(labels[i]) + " of pattern " + std::to_string(i) +
                       " is outside 0.." + std::to_string(k - 1));
    t(labels[i], static_cast<Eigen::Index>(i)) = 1.0f;
  }
  return t;
}

}  // namespace wulf
