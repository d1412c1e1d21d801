// What --strategy overlap's two files share (overlap.cpp: buckets cut by size, as DDP;
// overlap_fusion.cpp: tensors fused at each tick, as Horovod): a bucket's place in the net's
// gradients and in the flat buffer, and the entry of the fused form.
#pragma once

#include "train/buckets.hpp"
#include "train/run.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace wulf {

// A bucket (train/buckets.hpp): its tensors' places in the gradient buffer, in the order they
// joined, and its place in the buckets' flat buffer (the buckets lie there one after another).
struct OverlapBucket {
  struct Piece {
    std::size_t at = 0, n = 0;  // in the net's gradients
  };
  std::vector<Piece> pieces;
  std::size_t flat_at = 0, n = 0;  // in the flat buffer
  int ready_after = 0;             // the layer whose gradients complete it
};

// The buckets of a cut of the tensors (backward_tensors' order), one after another in the flat
// buffer.
inline std::vector<OverlapBucket> overlap_buckets_of(const std::vector<GradientTensor>& tensors,
                                                     const std::vector<BucketCut>& cuts) {
  std::vector<OverlapBucket> buckets;
  std::size_t flat_at = 0;
  for (const BucketCut& cut : cuts) {
    OverlapBucket& b = buckets.emplace_back();
    b.flat_at = flat_at, b.n = cut.values, b.ready_after = cut.ready_after;
    for (std::size_t t : cut.tensors) b.pieces.push_back({tensors[t].at, tensors[t].values});
    flat_at += cut.values;
  }
  return buckets;
}

template <class T>
std::vector<OverlapBucket> plan_overlap_buckets(const Mlp<T>& net, std::size_t bucket_bytes) {
  const std::vector<GradientTensor> tensors = backward_tensors(net.spec());
  return overlap_buckets_of(tensors, cut_buckets(tensors, sizeof(T), bucket_bytes));
}

// A bucket's tensors from the net's gradients into its part of the flat buffer, or back.
template <class T>
void copy_overlap_pieces(Mlp<T>& net, const OverlapBucket& b, T* flat, bool into_flat) {
  T* at = flat + b.flat_at;
  for (const OverlapBucket::Piece& piece : b.pieces) {
    T* in_net = net.gradients().data() + piece.at;
    into_flat ? std::copy_n(in_net, piece.n, at) : std::copy_n(at, piece.n, in_net);
    at += piece.n;
  }
}

// The first of the `lanes` tags of a run's allreduce number `made` (from 0; wulf's own
// allreduces use tags 1 and up). Allreduces that may be under way at once need tags apart.
// Under --bucket-concurrency 1 they never are: a rank starts one only once the one before it
// is done, and every rank starts them in the same order, so they share one range and MPI's
// non-overtaking order (kept by SimGrid's mailboxes in wulf's time-only messages) matches each
// message with its allreduce. Otherwise each has its own range, taken again after 32 767 / lanes.
// Under smpirun each tag is a mailbox for every pair of ranks that talk: a bucket per tensor
// of ResNet-50 one at a time on 1 024 GPUs (Rabenseifner's) made 1.6 million mailboxes where
// one range makes 10 thousand (1.6 GB at the peak against 0.86 GB).
inline int overlap_tag(std::size_t made, std::size_t concurrency, std::size_t lanes) {
  const std::size_t ranges = concurrency == 1 ? 1 : 32767 / lanes;
  return 1 + static_cast<int>((made % ranges) * lanes);
}

// --bucket-cycle: the first of the loop's ticks (next_tick, then every cycle) at or after `t`.
inline double first_tick_from(double next_tick, double t, double cycle) {
  return t > next_tick ? next_tick + std::ceil((t - next_tick) / cycle) * cycle : next_tick;
}

// --bucket-fusion tick (overlap_fusion.cpp): train_overlap hands its run to it.
template <class T>
TrainResult train_overlap_fusion(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                                 const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress);

}  // namespace wulf
