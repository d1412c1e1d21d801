// How --strategy overlap cuts the gradients into buckets and the backward pass into slices
// (issue 33), on the sizes alone, so that the strategy (and Run) and the model
// (predict/overlap_model) cut them alike.
//
// The tensors come in the backward pass's order, W_L, b_L, W_L-1, ..., W_1, b_1, each layer's
// weights before its biases; a net given by its layers (nn/layer_table.hpp) in the reverse of
// its parameters' order, as PyTorch DDP buckets them: its last layer's last tensor first. They join the current bucket in that order; a bucket that holds
// at least bucket_bytes is closed (its allreduce may start once its last layer's backward part
// is done), a tensor of bucket_bytes or more is a bucket of its own, and what is left after
// layer 1 is the last bucket. bucket_bytes 0: one bucket per tensor.
#pragma once

#include "nn/mlp.hpp"

#include <cstddef>
#include <vector>

namespace wulf {

struct GradientTensor {
  int layer = 0;           // 1..L
  std::size_t values = 0;  // > 0
  std::size_t at = 0;      // its first value's place in the net's gradients
};

struct BucketCut {
  std::vector<std::size_t> tensors;  // indices into the tensor list, in the order they joined
  std::size_t values = 0;
  int ready_after = 0;               // the layer whose backward part completes it
  bool operator==(const BucketCut&) const = default;
};

// The gradient tensors of a net of sizes n_0..n_L, in the backward pass's order (biases only
// with bias).
std::vector<GradientTensor> backward_tensors(const std::vector<int>& sizes, bool bias);
// The same of any net: an MLP's, or a table's in the reverse of its parameters' order.
std::vector<GradientTensor> backward_tensors(const NetSpec& spec);

// The buckets of tensors (backward order, none empty) of value_bytes each.
std::vector<BucketCut> cut_buckets(const std::vector<GradientTensor>& tensors, std::size_t value_bytes,
                                   std::size_t bucket_bytes);

// PyTorch DDP's buckets of the same tensors (1.13: Reducer::rebuild_buckets calls
// compute_bucket_assignment_by_size with the gradients in the order they became ready and the
// limits {first_bytes, cap_bytes}, torch/csrc/distributed/c10d/reducer.cpp): a tensor joins the
// current bucket, and a bucket that then holds at least its limit is closed with it (a large
// tensor closes the bucket it joins, never starts one of its own); the first bucket's limit is
// first_bytes (DDP's 1 MiB, dist._DEFAULT_FIRST_BUCKET_BYTES), every later one's cap_bytes
// (bucket_cap_mb). What is left after the last tensor is the last bucket. With both limits
// SIZE_MAX, one bucket of every tensor: DDP's first iteration (distributed.py builds its
// reducer with the limit sys.maxsize unless find_unused_parameters, and rebuilds after it).
std::vector<BucketCut> cut_ddp_buckets(const std::vector<GradientTensor>& tensors, std::size_t value_bytes,
                                       std::size_t first_bytes, std::size_t cap_bytes);

// The slices a layer's backward part of `flops` is charged in under --progress-flops
// slice_flops, with a progress point between them: equal slices of at most slice_flops (at
// most a million), or 1 where slice_flops is 0 or the part no larger.
int progress_slices(double flops, double slice_flops);

}  // namespace wulf
