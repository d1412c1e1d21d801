// How a set of n items is shared among p ranks: rank q takes the contiguous run
// [n q / p, n (q + 1) / p), so shares differ by at most one and rank 0's share of one rank
// is everything.
#pragma once

#include <cstddef>

namespace wulf {

struct Share {
  std::size_t begin = 0;
  std::size_t count = 0;
};

inline Share share_of(std::size_t n, int parts, int q) {
  const auto p = static_cast<std::size_t>(parts), r = static_cast<std::size_t>(q);
  const std::size_t begin = n * r / p, end = n * (r + 1) / p;
  return {begin, end - begin};
}

}  // namespace wulf
