// A net given by its layers (--problem layers:FILE, issue 34): what a time-only run needs of
// it, and nothing of its arithmetic. Each layer has its parameter tensors, its forward and
// backward flops per sample and, optionally, seconds per sample measured on named devices.
// The format is platforms/nets/README.md's; read_layer_table reads it and names the file, the
// line and the fault of anything it refuses.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wulf {

// What kind of work a layer is: a host's efficiency is given per kind (platforms/README.md).
enum class LayerKind { conv, linear, norm, embedding, attention, pool, other };
inline constexpr std::size_t layer_kinds = 7;
std::string_view to_string(LayerKind k);
std::optional<LayerKind> parse_layer_kind(std::string_view name);

// A host's fraction of its peak speed for each kind of layer (its wulf:efficiency), 1 each
// where the platform says nothing: a layer of f flops is charged f / efficiency at the peak.
using KindEfficiency = std::array<double, layer_kinds>;
inline constexpr KindEfficiency full_efficiency{1, 1, 1, 1, 1, 1, 1};
inline double efficiency_of(const KindEfficiency& e, LayerKind k) { return e[static_cast<std::size_t>(k)]; }
// "conv=0.55,linear=0.6,other=0.3": each KIND=FRACTION, a fraction in (0, 1]; a kind not
// named takes other's (1 unless named). Throws InputError naming `what` and the fault.
KindEfficiency parse_kind_efficiency(std::string_view text, const std::string& what);

struct LayerTensor {
  std::string shape;       // as the file gives it: "64x3x7x7"
  std::size_t values = 0;  // the product of its sizes, > 0
};

// Seconds per sample of one layer measured on a device (a host's wulf:device names it).
struct LayerTime {
  std::string device;
  double forward_s = 0, backward_s = 0;
};

struct TableLayer {
  std::string name;
  LayerKind kind = LayerKind::other;
  double forward_flops = 0;   // per sample
  double backward_flops = 0;  // per sample (twice the forward unless the file says)
  std::vector<LayerTensor> tensors;
  // Values per sample the layer keeps from its forward pass for its backward (the file's
  // activations=); 0 where the file does not say.
  double activations = 0;
  std::vector<LayerTime> times;
  std::size_t values() const;  // of its tensors
  // The layer's measured time on device, if the file has one.
  const LayerTime* time_on(std::string_view device) const;
};

// A unit of sharded data parallelism (the file's `unit` lines): the layers from first up to
// the next unit's first (or the last layer), gathered and reduced together, as FSDP wraps a
// transformer block.
struct TableUnit {
  std::string name;
  std::size_t first = 0;  // index into LayerTable::layers
};

struct LayerTable {
  std::string path;    // as read
  std::string digest;  // of the bytes read (util/files.hpp, text_digest): what a rank or a re-run checks
  std::string name;    // the file's `name`
  // An epoch's samples, the file's `samples` line (samples_given); without it 1 and 0, and
  // --train-size and --test-size set them.
  std::size_t train_samples = 1, test_samples = 0;
  bool samples_given = false;
  int inputs = 1, outputs = 1;
  std::vector<TableLayer> layers;  // forward order
  std::vector<TableUnit> units;    // in order; the layers before the first are a unit of their own
  // Measured seconds of one optimizer step (zero the gradients, update every parameter) on a
  // device, per iteration: the file's `step` lines.
  std::vector<std::pair<std::string, double>> steps;
  // The step's measured seconds on device, if the file has them.
  const double* step_on(std::string_view device) const;
  std::size_t parameter_count() const;
  std::size_t tensor_count() const;
  double forward_flops() const;   // per sample, all layers
  double backward_flops() const;  // per sample, all layers
};

// The largest file, layer count and parameter count read_layer_table accepts.
inline constexpr std::size_t most_table_layers = 100000;
inline constexpr double most_table_parameters = 1e12;

// Reads a layer file (check_input_file: it joins the command's InputLog). Throws InputError
// naming the file, the line and what is wrong.
LayerTable read_layer_table(const std::string& path);
// Parses a layer file's text; `path` names it in messages.
LayerTable parse_layer_table(std::string_view text, const std::string& path);

}  // namespace wulf
