// Reader for the IDX files MNIST ships in (http://yann.lecun.com/exdb/mnist/): a big-endian
// header (magic, then one 32-bit size per dimension) followed by unsigned bytes.
#pragma once

#include "util/errors.hpp"
#include "data/dataset.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wulf {

struct IdxImages {
  ByteMatrix bytes;  // (rows * cols, count) as stored; pixel (r, c) at index r * cols + c
  int rows = 0;
  int cols = 0;
  std::size_t count = 0;  // the images the file holds (its header), of which bytes holds those read
  // The pixels as inputs: byte / 255 (byte_input).
  DataMatrix pixels() const { return byte_inputs_as_floats(bytes); }
};

// Both read the first min(count, max_count) items and throw InputError, naming the file, if
// it cannot be opened, has the wrong magic number, zero sizes, or is shorter than its header
// promises (checked against the whole promise, whatever max_count is). Bytes after the
// promised items are ignored. Labels are kept as read: IDX does not restrict them to 0..9.
// Both read items [first, first + max_count) (fewer at the end of the file), so a rank can
// read its share of a set alone; the whole file is still checked against its header.
IdxImages read_idx_images(const std::string& path, std::size_t max_count = SIZE_MAX, std::size_t first = 0);
std::vector<int> read_idx_labels(const std::string& path, std::size_t max_count = SIZE_MAX, std::size_t first = 0);

}  // namespace wulf
