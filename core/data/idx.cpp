#include "data/idx.hpp"
#include "util/files.hpp"
#include "util/errors.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace wulf {
namespace {

constexpr std::uint32_t images_magic = 0x00000803;  // unsigned byte data, 3 dimensions
constexpr std::uint32_t labels_magic = 0x00000801;  // unsigned byte data, 1 dimension

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError("IDX file '" + path + "': " + what);
}

std::string hex(std::uint32_t v) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%08x", static_cast<unsigned>(v));
  return buf.data();
}

// An open file and its size; the size decides truncation before any payload is read.
struct IdxFile {
  std::ifstream in;
  std::uint64_t bytes = 0;
};

IdxFile open_idx(const std::string& path) {
  check_input_file(path, "IDX file", data_file_limit);
  std::error_code ec;
  IdxFile f;
  f.in.open(path, std::ios::binary);
  if (!f.in) {
    const bool exists = std::filesystem::exists(path, ec);
    fail(path, exists ? "cannot open: the file is not readable" : "cannot open: no such file");
  }
  f.in.seekg(0, std::ios::end);
  const std::streamoff end = f.in.tellg();
  if (end < 0) fail(path, "cannot open: its size cannot be determined");
  f.bytes = static_cast<std::uint64_t>(end);
  f.in.seekg(0, std::ios::beg);
  return f;
}

// Reads n_ints big-endian 32-bit header values; the first is the magic number.
std::vector<std::uint32_t> read_header(IdxFile& f, const std::string& path, int n_ints,
                                       std::uint32_t magic) {
  const auto header_bytes = static_cast<std::uint64_t>(n_ints) * 4;
  if (f.bytes < 4)
    fail(path,
         "truncated: it holds " + std::to_string(f.bytes) + " bytes, too few for the magic number");
  std::vector<unsigned char> raw(static_cast<std::size_t>(header_bytes));
  f.in.read(reinterpret_cast<char*>(raw.data()), 4);
  std::vector<std::uint32_t> v(static_cast<std::size_t>(n_ints));
  auto decode = [&](int i) {
    const unsigned char* p = raw.data() + 4 * i;
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
  };
  v[0] = decode(0);
  // The magic is checked before the rest of the header so that a wrong file type is reported
  // as such rather than as a short header.
  if (v[0] != magic)
    fail(path, "wrong magic number: expected " + hex(magic) + ", found " + hex(v[0]) +
                   " (not an IDX " + (magic == images_magic ? "image" : "label") + " file?)");
  if (f.bytes < header_bytes)
    fail(path, "truncated: the header needs " + std::to_string(header_bytes) +
                   " bytes but the file holds only " + std::to_string(f.bytes));
  f.in.read(reinterpret_cast<char*>(raw.data() + 4),
            static_cast<std::streamsize>(header_bytes - 4));
  if (!f.in) fail(path, "read error in the header");
  for (int i = 1; i < n_ints; ++i) v[static_cast<std::size_t>(i)] = decode(i);
  return v;
}

// Reads n_items * item_bytes payload bytes in one go, after checking that the file holds the
// whole promise of the header (count items).
std::vector<unsigned char> read_payload(IdxFile& f, const std::string& path, std::uint64_t offset,
                                        std::uint64_t count, std::uint64_t item_bytes,
                                        const std::string& promise, std::uint64_t first,
                                        std::uint64_t n_items) {
  // count < 2^32 and item_bytes <= INT_MAX, so the product fits in 64 bits.
  const std::uint64_t promised = count * item_bytes;
  const std::uint64_t held = f.bytes - offset;
  if (held < promised)
    fail(path, "truncated: the header promises " + promise + " = " + std::to_string(promised) +
                   " bytes but the file holds only " + std::to_string(held));
  f.in.seekg(static_cast<std::streamoff>(offset + first * item_bytes));
  std::vector<unsigned char> buf(static_cast<std::size_t>(n_items * item_bytes));
  f.in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  if (static_cast<std::size_t>(f.in.gcount()) != buf.size())
    fail(path, "read error: expected " + std::to_string(buf.size()) + " payload bytes, got " +
                   std::to_string(f.in.gcount()));
  return buf;
}

}  // namespace

IdxImages read_idx_images(const std::string& path, std::size_t max_count, std::size_t first) {
  IdxFile f = open_idx(path);
  const std::vector<std::uint32_t> h = read_header(f, path, 4, images_magic);
  const std::uint32_t count = h[1], rows = h[2], cols = h[3];
  if (count == 0 || rows == 0 || cols == 0)
    fail(path, "zero dimension in the header: " + std::to_string(count) + " images of " +
                   std::to_string(rows) + " x " + std::to_string(cols) + " pixels");
  const std::uint64_t pixels = std::uint64_t{rows} * cols;
  if (pixels > INT_MAX)
    fail(path, "images of " + std::to_string(rows) + " x " + std::to_string(cols) +
                   " pixels are too large");
  const std::uint64_t n = std::min<std::uint64_t>(count - std::min<std::uint64_t>(count, first), max_count);
  const std::string promise = std::to_string(count) + " images of " + std::to_string(rows) + " x " +
                              std::to_string(cols) + " bytes";
  const std::vector<unsigned char> buf = read_payload(f, path, 16, count, pixels, promise, first, n);

  IdxImages out;
  out.rows = static_cast<int>(rows);
  out.cols = static_cast<int>(cols);
  out.count = count;
  // IDX stores each image row-major and images one after another, which is exactly a
  // column-major (pixels, n) matrix.
  out.bytes = Eigen::Map<const ByteMatrix>(buf.data(), static_cast<Eigen::Index>(pixels), static_cast<Eigen::Index>(n));
  return out;
}

std::vector<int> read_idx_labels(const std::string& path, std::size_t max_count, std::size_t first) {
  IdxFile f = open_idx(path);
  const std::vector<std::uint32_t> h = read_header(f, path, 2, labels_magic);
  const std::uint32_t count = h[1];
  if (count == 0) fail(path, "zero dimension in the header: 0 labels");
  const std::uint64_t n = std::min<std::uint64_t>(count - std::min<std::uint64_t>(count, first), max_count);
  const std::string promise = std::to_string(count) + " labels of 1 byte";
  const std::vector<unsigned char> buf = read_payload(f, path, 8, count, 1, promise, first, n);
  return std::vector<int>(buf.begin(), buf.end());
}

}  // namespace wulf
