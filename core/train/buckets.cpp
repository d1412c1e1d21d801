#include "train/buckets.hpp"

#include <algorithm>
#include <cmath>

namespace wulf {

std::vector<GradientTensor> backward_tensors(const std::vector<int>& sizes, bool bias) {
  std::vector<std::size_t> layer_at(sizes.size(), 0);  // layer l's weights' place (Mlp's layout)
  for (std::size_t l = 1; l + 1 < sizes.size(); ++l)
    layer_at[l + 1] = layer_at[l] + static_cast<std::size_t>(sizes[l]) * static_cast<std::size_t>(sizes[l - 1]) +
                      (bias ? static_cast<std::size_t>(sizes[l]) : 0);
  std::vector<GradientTensor> tensors;
  for (int l = static_cast<int>(sizes.size()) - 1; l >= 1; --l) {
    const auto out = static_cast<std::size_t>(sizes[l]);
    const std::size_t weights = out * static_cast<std::size_t>(sizes[l - 1]);
    tensors.push_back({.layer = l, .values = weights, .at = layer_at[l]});
    if (bias) tensors.push_back({.layer = l, .values = out, .at = layer_at[l] + weights});
  }
  return tensors;
}

std::vector<GradientTensor> backward_tensors(const NetSpec& spec) {
  if (!spec.table) return backward_tensors(spec.sizes, spec.bias);
  std::vector<GradientTensor> tensors;
  std::size_t end = spec.table->parameter_count();  // past the tensor that comes next, backwards
  for (int l = spec.timed_layers(); l >= 1; --l) {
    const std::vector<LayerTensor>& own = spec.table->layers[static_cast<std::size_t>(l - 1)].tensors;
    for (auto t = own.rbegin(); t != own.rend(); ++t) {
      end -= t->values;
      tensors.push_back({.layer = l, .values = t->values, .at = end});
    }
  }
  return tensors;
}

std::vector<BucketCut> cut_buckets(const std::vector<GradientTensor>& tensors, std::size_t value_bytes,
                                   std::size_t bucket_bytes) {
  std::vector<BucketCut> buckets(1);
  auto close = [&](int layer) {
    if (buckets.back().values == 0) return;
    buckets.back().ready_after = layer;
    buckets.emplace_back();
  };
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const GradientTensor& t = tensors[i];
    if (t.values * value_bytes >= bucket_bytes) close(t.layer);  // a bucket of its own
    BucketCut& b = buckets.back();
    b.tensors.push_back(i);
    b.values += t.values;
    if (b.values * value_bytes >= bucket_bytes) close(t.layer);
  }
  if (!tensors.empty()) close(tensors.back().layer);
  buckets.pop_back();  // the empty one close() left open
  return buckets;
}

std::vector<BucketCut> cut_ddp_buckets(const std::vector<GradientTensor>& tensors, std::size_t value_bytes,
                                       std::size_t first_bytes, std::size_t cap_bytes) {
  std::vector<BucketCut> buckets;
  BucketCut open;
  std::size_t limit = first_bytes;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    open.tensors.push_back(i);
    open.values += tensors[i].values;
    open.ready_after = tensors[i].layer;
    if (open.values * value_bytes >= limit) {
      buckets.push_back(std::move(open));
      open = BucketCut{};
      limit = cap_bytes;
    }
  }
  if (!open.tensors.empty()) buckets.push_back(std::move(open));
  return buckets;
}

int progress_slices(double flops, double slice_flops) {
  if (!(slice_flops > 0) || flops <= slice_flops) return 1;
  return static_cast<int>(std::min(std::ceil(flops / slice_flops), 1e6));
}

}  // namespace wulf
