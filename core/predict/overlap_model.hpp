// The model of --strategy overlap (issue 33, item 5): seed 000's equation (5) with its
// allreduce term n/b Tr(p) replaced by the pipeline of bucket allreduces behind the backward
// pass, as the strategy runs it.
//
// One update of one rank (every rank alike):
//   forward of its share of the block; then the layers' backward parts from the output, each
//   in its slices; a bucket starts after the layer that completes it (its collective call
//   charged, then its first step posted); at a progress point (after each layer, and between
//   slices once a bucket is under way) every bucket under way whose step is complete posts its
//   next; after the backward pass the buckets are waited out in order, each posting its next
//   step as soon as the last one is complete (the others' steps in flight move meanwhile but
//   post nothing); then the update.
// A step of a bucket (comm/nb_allreduce): ring, 2 (p - 1) steps of ceil(n / p) values; rdb,
// log2 p' steps of n values (p' the largest power of two <= p; the ranks beyond it add a step
// of n values before and after). Every rank sends and receives one message per step.
// The network: a step alone takes its latency, then its bytes at the rate its links give it
// (StepNetwork, with SMPI's factors by message size); k steps in flight at once (of different
// buckets) share the rank's links equally, each moving at 1 / k of its rate once its latency
// is over (SimGrid's max-min sharing of a link among flows that cross the same links).
//
// Blocking (--strategy block): the whole backward pass, one collective call, its steps one
// after another, then the update. Both add the iteration's test share and its errors' sums
// (OverlapWork::sums, each a collective call and a small allreduce's steps).
//
// Where it breaks down: ranks that are not alike (hosts of different speeds, routes of
// different lengths, links shared by more than each rank's own flows, as Bunyip's
// tetrahedron), steps that do not all start together (non-powers of two under rdb), and every
// cost the engines add beyond the platform's links and the charged compute (the testbed's
// per-message cost of TCP and its kernel, for one).
#pragma once

#include "comm/nb_allreduce.hpp"
#include "predict/comm_plan.hpp"
#include "predict/rank_routes.hpp"
#include "engine/testbed_network.hpp"
#include "train/buckets.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wulf {

// What one rank computes in one update, seconds.
struct OverlapWork {
  double forward_s = 0;              // its share of the block's forward pass
  std::vector<double> backward_s;    // per layer, index l - 1: its share's backward part of layer l
  std::vector<int> slices;           // per layer: slices of the backward part (1: one progress point after it)
  double update_s = 0;
  double call_s = 0;                 // charged per collective call (a bucket's start, block's allreduce)
  double test_s = 0;                 // per iteration: the slowest rank's share of the test pass
  // Per iteration: the sums of the errors (4 doubles each; the test set's and the running
  // training error's), each a collective call and its steps.
  int sums = 2;
  NbAlgorithm sums_algorithm = NbAlgorithm::rdb;
};

// A step alone on the network: a message of s bytes waits latency_s lat(s), then moves at
// bw(s) / byte_s bytes a second.
struct StepNetwork {
  double latency_s = 0;
  double byte_s = 0;  // seconds per byte, before the factor
  SizeFactors bw, lat;
  // The platform's links (by their index in the file, a server's copies of one alike) that
  // limit the step's slowest messages, and those any message of it crosses, each sorted: a step
  // in flight beside another is slowed by it only where the other crosses a link that limits
  // it, as SimGrid shares a link among the flows that cross it. Empty limits: not known (the
  // step shares the rank's links with every other).
  std::vector<std::uint32_t> limits, crosses;
  double seconds(double bytes) const { return latency_s * lat.at(bytes) + bytes * byte_s / bw.at(bytes); }
};

// Whether a step of pattern i in flight is slowed by one of pattern j: j crosses a link that
// limits i, or i's limits are not known. shares[i][j].
std::vector<std::vector<char>> sharing_of(const std::vector<StepNetwork>& patterns);


// Each pattern of the book as a step alone (its messages all at once, between the ranks of
// routes): as long as its slowest message, the longest route latency and the lowest rate a
// message gets on a link of its route: a FATPIPE link's bandwidth, any other's over its load,
// the step's messages that cross it and the acknowledgements of those that cross it the other
// way, each .05 of a message (SimGrid's network/crosstraffic); at most SimGrid's TCP window
// over the round trip (network/TCP-gamma, 4 MiB, over twice the latency). routes needs the
// book's pairs (PatternBook::pairs) at least.
std::vector<StepNetwork> pattern_networks(const RankRoutes& routes, const PatternBook& book);

struct OverlapPrediction {
  double update_s = 0;           // one update, from its forward pass to the weights updated
  double test_s = 0;             // the iteration's test pass and its errors' sums
  double backward_end_s = 0;     // from the update's start
  double comm_end_s = 0;         // the last bucket done (the update starts)
  double exposed_s = 0;          // the communication after the backward pass (sum of below)
  std::vector<double> bucket_exposed_s;
  std::vector<double> bucket_start_s, bucket_end_s;  // each bucket's allreduce, from the update's start
  double comm_alone_s = 0;       // the buckets' steps one after another, nothing hidden
  int progress_points = 0;
  // The time per iteration of that many updates (n / b, as seed 000 counts them).
  double iteration_s(double updates = 1) const { return updates * update_s + test_s; }
};

// The collectives of a prediction: each bucket's allreduce (and block's one), the errors'
// sums, and each pattern's step alone (pattern_networks).
// Its steps one after another, each alone (patterns: each pattern's step alone).
double plan_seconds(const CommPlan& plan, const std::vector<StepNetwork>& patterns);

struct PlannedComm {
  int ranks = 1;
  std::vector<CommPlan> buckets;
  CommPlan sums;
  std::vector<StepNetwork> patterns;
  double seconds(const CommPlan& plan) const { return plan_seconds(plan, patterns); }
};

// One update, and the iteration's test, under overlap.
OverlapPrediction predict_overlap(const OverlapWork& work, const std::vector<BucketCut>& buckets,
                                  const PlannedComm& comm);
// The same, every step of every collective taking net (the model of issue 33: ring and rdb
// on a platform's one step network).
OverlapPrediction predict_overlap(const OverlapWork& work, const std::vector<BucketCut>& buckets,
                                  NbAlgorithm algorithm, int p, std::size_t value_bytes, const StepNetwork& net);

// The same under block with the same algorithm: exposed_s is its whole allreduce
// (collective call included).
OverlapPrediction predict_blocking(const OverlapWork& work, std::size_t values, NbAlgorithm algorithm, int p,
                                   std::size_t value_bytes, const StepNetwork& net);
// The same with comm.buckets the one allreduce of the whole gradient.
OverlapPrediction predict_blocking(const OverlapWork& work, const PlannedComm& comm);

}  // namespace wulf
