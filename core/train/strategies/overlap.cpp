// Data parallelism with the allreduce overlapped on the backward pass, as PyTorch's
// DistributedDataParallel and Horovod run it (--strategy overlap, issue 33). Every block is
// shared out over the ranks as in block; the backward pass runs a layer at a time from the
// output, and each layer's gradient tensors (weights, then biases) join the current bucket
// in that reverse order. A bucket that holds at least --bucket-bytes starts its allreduce at
// once, without blocking (a tensor of that size or more is a bucket of its own); the rest of
// the backward pass runs while it travels. The allreduce is wulf's own, ring or recursive
// doubling over MPI_Isend / MPI_Irecv (comm/nb_allreduce.hpp), moved on at one progress
// point after each layer and, with --progress-flops, between slices of a large layer: the
// same algorithm, moved at the same points, on every engine.
// With --bucket-concurrency k at most k buckets are under way at once: a ready bucket waits
// for an earlier one to be done (k = 1: one at a time, in order, as NCCL runs the allreduces
// DDP and Horovod put on one stream), started at the next progress point or, once the
// backward pass is over, as soon as the one before it is done.
// With --bucket-cycle S the buckets go in rounds, as Horovod's background loop (2017-2018)
// runs them: the loop sleeps S between rounds (HOROVOD_CYCLE_TIME, 5 ms); at each tick the
// buckets ready by then are one round, started in order (under --bucket-concurrency); the
// next tick comes S after the round's last bucket is done (seen at a progress point or a
// wait), and ticks with nothing ready come every S. After the backward pass a rank idles
// until the tick of the next round (Compute::idle). The ticks' negotiation (each rank's
// ready list to rank 0, rank 0's answer to all) sends no message here; with --bucket-fusion
// tick (overlap_fusion.cpp) it does, and a round fuses the tensors ready at its tick, as
// Horovod's tensor fusion, instead of running buckets cut once by size.
// The update waits for every bucket, then applies the mean as block does: with rdb the
// errors are block's with --allreduce rdb to the bit.
#include "comm/allreduce_algorithms.hpp"
#include "comm/nb_allreduce.hpp"
#include "nn/framework_costs.hpp"
#include "train/strategies/overlap_parts.hpp"
#include "util/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>

namespace wulf {

namespace {

// One cut of the gradients into buckets, each with its allreduce and its place for what it
// receives (after the net's w values in the flat buffer).
template <class T>
struct BucketSet {
  std::vector<OverlapBucket> buckets;
  std::vector<std::unique_ptr<NbAllreduce<T>>> going;
  std::vector<std::size_t> scratch_at;  // bucket i's scratch from scratch_at[i]; its end the flat size
};

template <class T>
BucketSet<T> bucket_set(Comm& schedules, NbAlgorithm algorithm, const NbLayout& layout, bool numerics,
                        std::size_t concurrency, std::vector<OverlapBucket> buckets, std::size_t w,
                        std::size_t value_bytes) {
  BucketSet<T> set{.buckets = std::move(buckets), .going = {}, .scratch_at = {}};
  const std::size_t lanes = NbAllreduce<T>::lanes(algorithm, layout);
  // Each bucket's allreduce moves its values as sent: in 2 bytes each under --precision bf16.
  for (std::size_t i = 0; i < set.buckets.size(); ++i)
    set.going.push_back(std::make_unique<NbAllreduce<T>>(schedules, algorithm,
                                                         wire_values<T>(value_bytes, set.buckets[i].n), numerics,
                                                         overlap_tag(i, concurrency, lanes), layout));
  set.scratch_at.assign(set.buckets.size() + 1, w);
  for (std::size_t i = 0; i < set.buckets.size(); ++i)
    set.scratch_at[i + 1] = set.scratch_at[i] + set.going[i]->scratch_values();
  return set;
}

// --framework ddp: what PyTorch 1.13's DistributedDataParallel does around the allreduces,
// read from torch/csrc/distributed/c10d/reducer.cpp and charged on the compute thread at the
// rank's host's costs (its wulf:ddp, nn/framework_costs.hpp) as that much of the host's compute.
struct DdpCharges {
  FrameworkCosts costs;
  double comm_steal = 0;   // ComputeConfig::comm_steal
  double fixed_s = 0, copy_s = 0, steal_s = 0;  // charged in this iteration
};

// The buckets of a run of --bucket-fusion cut over its blocks: their cuts (DDP's two, or
// --bucket-bytes'), their allreduces, the progress points that move them, --bucket-cycle's
// rounds, and --framework ddp's charges. Its steps are called by train_overlap's block loop.
template <class T>
class BucketRun {
 public:
  BucketRun(Run<T>& run, Mlp<T>& net, const TrainConfig& config, Comm& comm, Compute& compute);

  // An iteration begins: its tallies zeroed.
  void begin_iteration();
  // One block's forward and backward pass with its buckets, and the wait for those still
  // under way after it (the exposed communication).
  void block(const Dataset& train, const std::vector<std::size_t>& order, std::size_t first, std::size_t count,
             ErrorSums& running);
  // The iteration's notes in the record, from t_first on.
  void notes(double t_first);

 private:
  void charge_ddp(double seconds, double& tally);
  double total_on_wire() const;
  void charge_steal();
  void start(std::size_t i);
  std::size_t total_tests() const;
  std::size_t first_live();
  void mark_ready() { ready_at_[ready_++] = cycle_ > 0 ? comm_.now() : 0.0; }
  double round_tick() const { return first_tick_from(next_tick_, ready_at_[released_], cycle_); }
  void release(double now);
  void start_ready();
  void progress_all();
  void ddp_layer_ready(int l);
  void begin_block();
  void after_layer(int layer);
  void wait_buckets();

  OverlapBucket& bucket(std::size_t i) { return set_->buckets[i]; }
  std::size_t bucket_count() const { return set_->buckets.size(); }
  NbAllreduce<T>& going(std::size_t i) const { return *set_->going[i]; }

  Run<T>& run_;
  Mlp<T>& net_;
  Comm& comm_;
  Compute& compute_;
  bool ddp_ = false, views_ = false;
  std::size_t value_bytes_ = 0;  // TrainConfig::value_bytes: 2 under --precision bf16 (time only)
  // The host's compute per second of DDP's charges, and the progress points: with --framework
  // ddp the process group's threads move the allreduces on without the compute thread, which
  // wulf's schedules follow with a progress point after every millisecond of compute unless
  // --progress-flops says otherwise. DDP's costs are charged as the host's compute where
  // compute is charged by flops at a known speed (sim, testbed); on the wall clock (seq, real)
  // its buckets run with nothing charged.
  double host_speed_ = 0;
  double slice_flops_ = 0;
  // after-backward: the same buckets started only once the backward pass is over, nothing
  // hidden (what recommend measures the hidden part against).
  bool start_after_ = false;
  // DDP's process group: gloo's two worker threads run two allreduces at once
  // (ProcessGroupGloo::Options::threads, 2), NCCL's one stream one at a time.
  std::size_t concurrency_ = 0;  // 0: no limit
  double cycle_ = 0;             // 0: no rounds
  // Each bucket's allreduce, and its tags (overlap_tag: apart from the others' where they may
  // travel at once), on a communicator of their own, as wulf's own collectives have.
  std::unique_ptr<Comm> schedules_;
  std::vector<BucketSet<T>> sets_;
  // The buckets' flat buffer, then each bucket's scratch for what it receives: the rank's
  // own, or under --numerics off memory all simulated ranks share (nobody reads the sums).
  std::vector<T> own_;
  T* flat_ = nullptr;
  BucketSet<T>* set_ = nullptr;
  DdpCharges charges_;
  double wire_seen_ = 0;  // the values all buckets had put on the wire at the last charge
  std::vector<double> exposed_;
  std::size_t progress_calls_ = 0, tests_before_ = 0;
  // The buckets ready (below ready_) and started (below started_): the ready ones started in
  // order while fewer than --bucket-concurrency are under way; under --bucket-cycle only those
  // of the rounds begun (below released_).
  std::size_t ready_ = 0, started_ = 0;
  // The first started bucket not seen done: those before it are (a bucket stays done until it
  // starts again, in the next block), so the scans below begin here (161 buckets a tensor).
  std::size_t live_ = 0;
  std::vector<double> ready_at_;  // --bucket-cycle: when each became ready
  // --bucket-cycle: the round under way (from round_first_ below released_; none when equal).
  std::size_t released_ = 0, round_first_ = 0;
  double next_tick_ = 0;  // the loop's next tick; then every cycle until a round
  // --framework ddp: each layer's gradient values and tensors, whose hooks and copies it charges.
  std::vector<std::size_t> values_of_layer_, tensors_of_layer_;
  bool grads_are_views_ = false;
  std::size_t blocks_done_ = 0;  // over the run: DDP rebuilds its buckets after the first
  // The buckets run: on more than one rank, or with DDP, whose buckets run on one process too
  // (its allreduce then returns at once): the copies, hooks and launches are what a one-process
  // DDP run costs over the net alone.
  bool bucketed_ = false;
};

template <class T>
BucketRun<T>::BucketRun(Run<T>& run, Mlp<T>& net, const TrainConfig& config, Comm& comm, Compute& compute)
    : run_(run), net_(net), comm_(comm), compute_(compute) {
  const NbAlgorithm algorithm = parse_nb_algorithm(setting_text(config, "bucket-allreduce"), "--bucket-allreduce");
  ddp_ = setting_text(config, "framework") == "ddp";
  views_ = ddp_ && setting_text(config, "gradient-as-bucket-view") == "on";
  bucketed_ = comm.size() > 1 || ddp_;
  host_speed_ = compute.config().mode == ComputeMode::flops ? compute.config().host_speed : 0.0;
  slice_flops_ = setting(config, "progress-flops");
  if (ddp_ && slice_flops_ == 0 && host_speed_ > 0) slice_flops_ = host_speed_ * 1e-3;
  start_after_ = setting_text(config, "bucket-start") == "after-backward";
  concurrency_ = !ddp_ ? setting_count(config, "bucket-concurrency")
                       : setting_text(config, "ddp-backend") == "gloo" ? 2 : 1;
  cycle_ = setting(config, "bucket-cycle");

  // The cuts: --bucket-bytes', or DDP's: every tensor in one bucket in the first block, then the
  // buckets rebuilt in the order the gradients became ready, the first of at most
  // --first-bucket-bytes.
  const std::vector<GradientTensor> tensors = backward_tensors(net.spec());
  const std::size_t bucket_bytes = setting_count(config, "bucket-bytes");
  std::vector<std::vector<BucketCut>> cuts;
  value_bytes_ = config.value_bytes;
  const std::size_t sent = value_bytes_ ? value_bytes_ : sizeof(T);  // a value's bytes in a bucket
  if (!ddp_) cuts.push_back(cut_buckets(tensors, sent, bucket_bytes));
  else
    cuts = {cut_ddp_buckets(tensors, sent, SIZE_MAX, SIZE_MAX),
            cut_ddp_buckets(tensors, sent, setting_count(config, "first-bucket-bytes"), bucket_bytes)};
  schedules_ = comm.duplicate_for_schedules();
  const NbLayout layout{config.rank_nodes, config.rank_rings};
  std::size_t flat_n = run.weights();
  for (const std::vector<BucketCut>& cut : cuts) {
    sets_.push_back(bucket_set<T>(*schedules_, algorithm, layout, run.numerics(), concurrency_,
                                  overlap_buckets_of(tensors, cut), run.weights(), value_bytes_));
    flat_n = std::max(flat_n, sets_.back().scratch_at.back());
  }
  flat_ = run.numerics() ? nullptr : static_cast<T*>(compute.shared_scratch(flat_n * sizeof(T)));
  if (!flat_) own_.resize(flat_n), flat_ = own_.data();
  set_ = &sets_.front();
  charges_ = {.costs = compute.config().ddp, .comm_steal = compute.config().comm_steal};
  next_tick_ = comm.now() + cycle_;
  values_of_layer_.assign(static_cast<std::size_t>(net.spec().timed_layers()) + 1, 0);
  tensors_of_layer_.assign(values_of_layer_.size(), 0);
  for (const GradientTensor& t : tensors) values_of_layer_[t.layer] += t.values, tensors_of_layer_[t.layer] += 1;
}

// Seconds of DDP's work on the compute thread, charged as the host's compute.
template <class T>
void BucketRun<T>::charge_ddp(double seconds, double& tally) {
  if (!(seconds > 0) || !(host_speed_ > 0)) return;
  run_.kernel_part(Phase::other, 0, 0, seconds * host_speed_, 0.0, [] {});
  tally += seconds;
}

template <class T>
double BucketRun<T>::total_on_wire() const {
  const double now = comm_.now();
  return std::accumulate(set_->going.begin(), set_->going.end(), 0.0,
                         [now](double t, const auto& g) { return t + g->on_wire(now); });
}

// The CPU the process group's threads spent on the bytes that went on the wire since the last
// charge, while the compute thread computed, as much of it as the host has no core for: off
// the compute thread, during the backward pass. Neither the bytes a step posts at once (half a
// bucket in a ring of two) nor those of a step only once it is complete: what a send under way
// carries between two progress points, at its allreduce's last measured rate (NbAllreduce's
// on_wire).
template <class T>
void BucketRun<T>::charge_steal() {
  if (!ddp_) return;
  const double wire = total_on_wire();
  if (charges_.costs.comm_cpu_s_per_B > 0 && charges_.comm_steal > 0)
    charge_ddp((wire - wire_seen_) * sizeof(T) * charges_.costs.comm_cpu_s_per_B * charges_.comm_steal,
               charges_.steal_s);
  wire_seen_ = wire;
}

// Bucket i's allreduce under way.
template <class T>
void BucketRun<T>::start(std::size_t i) {
  const OverlapBucket& b = bucket(i);
  if (run_.numerics()) copy_overlap_pieces(net_, b, flat_, true);
  compute_.charge_collective();  // the platform's fixed cost of a collective call, per bucket
  if (ddp_) charge_ddp(charges_.costs.bucket_s, charges_.fixed_s);
  going(i).start(std::span<T>(flat_ + b.flat_at, wire_values<T>(value_bytes_, b.n)),
                 std::span<T>(flat_ + set_->scratch_at[i], set_->scratch_at[i + 1] - set_->scratch_at[i]));
}

template <class T>
std::size_t BucketRun<T>::total_tests() const {
  std::size_t t = 0;
  for (const BucketSet<T>& s : sets_)
    for (const auto& g : s.going) t += g->tests();
  return t;
}

template <class T>
std::size_t BucketRun<T>::first_live() {
  while (live_ < started_ && going(live_).done()) ++live_;
  return live_;
}

// What the loop has done by `now`: the round under way ended (the next tick a cycle after it
// is seen done), and the next begun if its tick has come.
template <class T>
void BucketRun<T>::release(double now) {
  if (round_first_ < released_) {
    for (std::size_t i = round_first_; i < released_; ++i)
      if (i >= started_ || !going(i).done()) return;
    round_first_ = released_;
    next_tick_ = now + cycle_;
  }
  if (released_ >= ready_) return;
  const double tick = round_tick();
  if (tick > now) return;
  while (released_ < ready_ && ready_at_[released_] <= tick) ++released_;
}

template <class T>
void BucketRun<T>::start_ready() {
  if (cycle_ > 0) release(comm_.now());
  for (; started_ < (cycle_ > 0 ? released_ : ready_); ++started_) {
    if (concurrency_ > 0) {
      std::size_t under_way = 0;
      for (std::size_t i = first_live(); i < started_; ++i) under_way += going(i).done() ? 0 : 1;
      if (under_way >= concurrency_) return;
    }
    start(started_);
  }
}

// One progress point: every bucket under way tested, in the order they started; then the ready
// ones that may start.
template <class T>
void BucketRun<T>::progress_all() {
  run_.poll([&] {
    for (std::size_t i = first_live(); i < started_; ++i) going(i).progress();
  });
  start_ready();
  ++progress_calls_;
}

// --framework ddp: each of layer l's gradients, as the autograd hook makes it ready: its hook,
// and its copy into the bucket divided by the world size on the way (at::mul_out), or where
// the gradient is already its bucket's view only the division in place (div_).
template <class T>
void BucketRun<T>::ddp_layer_ready(int l) {
  const double bytes = static_cast<double>(values_of_layer_[static_cast<std::size_t>(l)] * sizeof(T));
  charge_ddp(charges_.costs.tensor_s * static_cast<double>(tensors_of_layer_[static_cast<std::size_t>(l)]),
             charges_.fixed_s);
  charge_ddp(FrameworkCosts::seconds(bytes, grads_are_views_ ? charges_.costs.scale_Bps : charges_.costs.copy_Bps),
             charges_.copy_s);
}

template <class T>
void BucketRun<T>::begin_iteration() {
  progress_calls_ = 0;
  tests_before_ = total_tests();
  charges_.fixed_s = charges_.copy_s = charges_.steal_s = 0;
}

template <class T>
void BucketRun<T>::begin_block() {
  if (ddp_ && blocks_done_ == 1) {
    // DDP rebuilds its buckets at the next forward (Reducer::rebuild_buckets); with
    // gradient_as_bucket_view each gradient is copied into its new bucket and becomes its view
    // (initialize_bucket_views), then stays one.
    set_ = &sets_[1];
    if (views_)
      charge_ddp(FrameworkCosts::seconds(static_cast<double>(run_.weights() * sizeof(T)), charges_.costs.copy_out_Bps),
                 charges_.copy_s);
    grads_are_views_ = views_;
  }
  ++blocks_done_;
  if (exposed_.size() != bucket_count()) exposed_.assign(bucket_count(), 0.0);
  ready_at_.assign(bucket_count(), 0.0);
  if (ddp_) wire_seen_ = total_on_wire(), charge_ddp(charges_.costs.iteration_s, charges_.fixed_s);
  ready_ = 0, started_ = 0, released_ = 0, round_first_ = 0, live_ = 0;
}

template <class T>
void BucketRun<T>::after_layer(int layer) {
  if (!bucketed_) return;
  if (ddp_) ddp_layer_ready(layer);
  if (!start_after_)
    while (ready_ < bucket_count() && bucket(ready_).ready_after == layer) mark_ready();
  start_ready();
  progress_all();
  charge_steal();
}

// The exposed communication: what each bucket still needs once the backward pass is over.
template <class T>
void BucketRun<T>::wait_buckets() {
  if (!bucketed_) return;
  while (ready_ < bucket_count()) mark_ready();  // after-backward
  start_ready();
  for (std::size_t i = 0; i < bucket_count(); ++i) {
    const double t0 = comm_.now();
    start_ready();  // the ones before it are done
    if (cycle_ > 0 && started_ <= i) {  // its round is still to begin: the loop sleeps until its tick
      const double tick = round_tick();
      compute_.idle(tick - comm_.now());
      release(std::max(comm_.now(), tick));
      start_ready();
    }
    going(i).finish();
    const double waited = comm_.now() - t0;
    exposed_[i] += waited;
    run_.add_comm(waited, 1);
    if (run_.numerics()) copy_overlap_pieces(net_, bucket(i), flat_, false);
    // DDP copies the bucket back into the gradients once it is done (finalize_bucket_dense),
    // unless gradient_as_bucket_view: a gradient is its bucket's view from its first copy on.
    if (ddp_ && !views_)
      charge_ddp(FrameworkCosts::seconds(static_cast<double>(bucket(i).n * sizeof(T)), charges_.costs.copy_out_Bps),
                 charges_.copy_s);
  }
}

template <class T>
void BucketRun<T>::block(const Dataset& train, const std::vector<std::size_t>& order, std::size_t first,
                         std::size_t count, ErrorSums& running) {
  begin_block();
  run_.forward_backward_layers(
      train, order, first, count, running, [&](int layer) { after_layer(layer); }, slice_flops_, [&] {
        if (comm_.size() > 1 && started_ > 0) progress_all(), charge_steal();  // between slices of a large layer
      });
  wait_buckets();
  if (ddp_) wire_seen_ = total_on_wire();  // sent while the compute thread waited: nothing taken from it
  // --bucket-cycle: the last round is done now; the loop sleeps a cycle from here.
  if (round_first_ < released_) round_first_ = released_, next_tick_ = comm_.now() + cycle_;
}

template <class T>
void BucketRun<T>::notes(double t_first) {
  run_.note("train_s", comm_.now() - t_first);
  run_.note("buckets", static_cast<double>(bucket_count()));
  run_.note("progress_points", static_cast<double>(progress_calls_));
  run_.note("progress_tests", static_cast<double>(total_tests() - tests_before_));
  double total = 0;
  for (std::size_t i = 0; i < exposed_.size(); ++i) {
    run_.note("bucket_" + std::to_string(i) + "_exposed_s", exposed_[i]);
    total += exposed_[i];
  }
  std::fill(exposed_.begin(), exposed_.end(), 0.0);
  run_.note("exposed_comm_s", total);
  if (ddp_) {
    run_.note("ddp_fixed_s", charges_.fixed_s);
    run_.note("ddp_copy_s", charges_.copy_s);
    run_.note("ddp_steal_s", charges_.steal_s);
  }
}

}  // namespace

template <class T>
TrainResult train_overlap(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                          const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  if (setting_text(config, "bucket-fusion") == "tick")
    return train_overlap_fusion(net, train, test, sizes, config, comm, compute, progress);
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), comm.size(), comm.rank());
  Rng order_rng = pattern_order_rng(config, comm.rank());
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);
  BucketRun<T> buckets(run, net, config, comm, compute);

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    buckets.begin_iteration();
    const double t_first = comm.now();
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      buckets.block(train, order, plan.first(k), plan.count(k), running);
      run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k), net.gradients()); });
    }
    buckets.notes(t_first);
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_overlap);

namespace {

constexpr std::string_view bucket_fusions[] = {"cut", "tick"};
constexpr std::string_view bucket_requests[] = {"computed", "scheduled"};
constexpr std::string_view frameworks[] = {"none", "ddp"};
constexpr std::string_view ddp_backends[] = {"gloo", "nccl"};
constexpr std::string_view bucket_starts[] = {"ready", "after-backward"};

constexpr StrategyOption overlap_options[] = {
    {.name = "bucket-bytes",
     .key = "bucket_bytes",
     .help = "gradient bytes a bucket holds before its allreduce starts (0: one bucket per tensor; "
             "26214400, 25 MiB, is PyTorch DDP's bucket_cap_mb)",
     .default_value = 25 << 20,
     .range = {.lo = 0, .hi = 1099511627776.0}},
    {.name = "bucket-allreduce",
     .key = "bucket_allreduce",
     .kind = StrategyOption::Kind::text,
     .help = "the buckets' allreduce, wulf's own schedule over MPI_Isend/MPI_Irecv (rdb's sums are --strategy block "
             "--allreduce rdb's to the bit): ",
     .values_help = [] { return allreduce_help(AllreduceRows::scheduled); },
     .range = {},
     .example = "ring",
     .default_text = "ring"},
    {.name = "progress-flops",
     .key = "progress_flops",
     .help = "a layer whose backward part over the rank's block has more flops than this is charged in equal "
             "slices of at most this many, with a progress point between slices once a bucket is under way "
             "(0: one progress point after each layer only; with --framework ddp one after every millisecond of the "
             "host's compute, as the process group's threads move the allreduces on by themselves)",
     .default_value = 0,
     .range = {.lo = 0, .hi = 1e18}},
    {.name = "bucket-concurrency",
     .key = "bucket_concurrency",
     .help = "buckets under way at once, at most (0: as many as are ready; 1: one at a time, in order, as NCCL "
             "runs the allreduces DDP and Horovod put on one stream)",
     .default_value = 0,
     .range = {.lo = 0, .hi = 1e9},
     .record_may_omit = true},  // records before it: no limit
    {.name = "bucket-cycle",
     .key = "bucket_cycle",
     .kind = StrategyOption::Kind::number,
     .help = "seconds Horovod's background loop sleeps between its rounds (HOROVOD_CYCLE_TIME; 0.005 in "
             "Horovod): a ready bucket starts at the next tick, with the others ready by then; the next tick "
             "comes this long after the round's last bucket is done, or with --bucket-fusion tick after the round "
             "is agreed and enqueued (0: a ready bucket starts at once, as DDP; else at least 1e-05)",
     .default_value = 0,
     .range = {.lo = 0, .hi = 3600},
     .record_may_omit = true},  // records before it: no rounds
    {.name = "bucket-fusion",
     .key = "bucket_fusion",
     .kind = StrategyOption::Kind::text,
     .help = "how the tensors join allreduces: cut (buckets cut once by --bucket-bytes in the backward pass's "
             "order, as DDP) or tick (Horovod's tensor fusion, with --bucket-cycle: at each tick the tensors ready "
             "on every rank, agreed through rank 0, fused in order into allreduces of at most --bucket-bytes; "
             "0: none fused)",
     .range = {},
     .example = "cut",
     .default_text = "cut",
     .choices = bucket_fusions,
     .record_may_omit = true},  // records before it: cut
    {.name = "bucket-request",
     .key = "bucket_request",
     .kind = StrategyOption::Kind::text,
     .help = "with --bucket-fusion tick, when a rank asks rank 0 to reduce a tensor: computed (once the backward "
             "pass has made it) or scheduled (when TensorFlow schedules its op, ahead of the GPU: every tensor of a "
             "block at the block's start, agreed on in one round; each fused allreduce then waits for its tensors' "
             "data before it goes on the stream, Horovod's WAIT_FOR_DATA)",
     .range = {},
     .example = "computed",
     .default_text = "computed",
     .choices = bucket_requests,
     .record_may_omit = true},  // records before it: computed
    {.name = "framework",
     .key = "framework",
     .kind = StrategyOption::Kind::text,
     .help = "what runs the buckets: none (wulf's own: the buckets --bucket-bytes cuts, nothing charged around "
             "them) or ddp (PyTorch 1.13's DistributedDataParallel as its reducer.cpp does it: every gradient in one "
             "bucket in the first block, then buckets rebuilt in the order the gradients became ready, the first "
             "of at most --first-bucket-bytes, each closed once it holds --bucket-bytes (bucket_cap_mb); each "
             "gradient copied into its bucket and divided by the world size, copied back after its allreduce "
             "unless --gradient-as-bucket-view; gloo's two worker threads or NCCL's one stream "
             "(--ddp-backend); charged at the host's measured costs, its wulf:ddp property)",
     .range = {},
     .example = "none",
     .default_text = "none",
     .choices = frameworks,
     .record_may_omit = true},  // records before it: none
    {.name = "ddp-backend",
     .key = "ddp_backend",
     .kind = StrategyOption::Kind::text,
     .help = "--framework ddp: the process group, gloo (CPU tensors: two allreduces at once, its two worker threads) "
             "or nccl (GPUs: one at a time, on one stream)",
     .range = {},
     .example = "gloo",
     .default_text = "gloo",
     .choices = ddp_backends,
     .record_may_omit = true},
    {.name = "gradient-as-bucket-view",
     .key = "gradient_as_bucket_view",
     .kind = StrategyOption::Kind::text,
     .help = "--framework ddp: on (DDP's gradient_as_bucket_view=True: after the first iteration each gradient is "
             "its bucket's view, divided in place and never copied) or off (DDP's default)",
     .range = {},
     .example = "off",
     .default_text = "off",
     .choices = on_off_choices,
     .record_may_omit = true},
    {.name = "first-bucket-bytes",
     .key = "first_bucket_bytes",
     .help = "--framework ddp: the most the first bucket holds before it closes (DDP's "
             "dist._DEFAULT_FIRST_BUCKET_BYTES, 1 MiB)",
     .default_value = 1 << 20,
     .range = {.lo = 1, .hi = 1099511627776.0},
     .record_may_omit = true},
    {.name = "bucket-start",
     .key = "bucket_start",
     .kind = StrategyOption::Kind::text,
     .help = "when a bucket's allreduce starts: ready (as soon as the backward pass has made all of it, as DDP) "
             "or after-backward (the same buckets once the backward pass is over: nothing hidden, to measure what "
             "ready hides)",
     .range = {},
     .example = "ready",
     .default_text = "ready",
     .choices = bucket_starts}};

constexpr double kLeastBucketCycle = 1e-5;  // seconds: --bucket-cycle's least above 0

// overlap's settings against each other (StrategyDescriptor::check).
void check_overlap(const TrainConfig& c, int, bool) {
  parse_nb_algorithm(setting_text(c, "bucket-allreduce"), "--bucket-allreduce");
  const std::string fusion = setting_text(c, "bucket-fusion");
  if (setting_text(c, "bucket-request") == "scheduled" && fusion != "tick")
    throw InputError("--bucket-request scheduled: Horovod's requests to rank 0 are --bucket-fusion tick's; "
                     "with --bucket-fusion cut every bucket starts when its data is made");
  // A cycle shorter than this ticks more often than a run ends with in reasonable time, and
  // from 1e-17 s on it is below the simulated clock's resolution (SimGrid saw a deadlock).
  if (const double cycle = setting(c, "bucket-cycle"); cycle > 0 && cycle < kLeastBucketCycle)
    throw InputError(fmt::format("--bucket-cycle {:g}: 0 (no rounds) or at least {:g} s (Horovod's "
                                 "HOROVOD_CYCLE_TIME is in milliseconds, 5 by default)",
                                 cycle, kLeastBucketCycle));
  const std::string framework = setting_text(c, "framework");
  if (framework == "ddp") {
    if (fusion != "cut")
      throw InputError("--framework ddp: DDP cuts its buckets once (--bucket-fusion cut); tick is Horovod's");
    if (setting(c, "bucket-cycle") > 0)
      throw InputError("--framework ddp: DDP starts a bucket once it is ready; --bucket-cycle is Horovod's loop");
    if (setting(c, "bucket-concurrency") > 0)
      throw InputError("--framework ddp: the allreduces under way at once are its backend's (--ddp-backend gloo: "
                       "2, nccl: 1), not --bucket-concurrency");
  }
  if (fusion == "tick") {
    if (c.value_bytes == 2)
      throw InputError("--precision bf16 or fp16: --bucket-fusion tick's rounds are sized in float values; use "
                       "--bucket-fusion cut");
    if (!(setting(c, "bucket-cycle") > 0))
      throw InputError("--bucket-fusion tick: needs --bucket-cycle above 0 (the ticks at which it fuses the "
                       "tensors ready)");
    if (setting_text(c, "bucket-start") != "ready")
      throw InputError("--bucket-fusion tick: --bucket-start after-backward measures fixed buckets; use "
                       "--bucket-fusion cut with it");
  }
}

}  // namespace

extern const StrategyDescriptor overlap_strategy{
    .name = "overlap",
    .help = "data parallelism with bucketed allreduce overlapped on the backward pass (PyTorch DDP, Horovod)",
    .options_title = "overlapped buckets (--strategy overlap)",
    .options = overlap_options,
    .learning = every_learning,
    .splits_blocks = true,
    .layout = fixed_layout<DataLayout::shares>,
    .check = check_overlap,
    .record = [](const TrainConfig& c, bool, Json& config) {
      if (setting_text(c, "framework") == "ddp")
        config["framework_model"] =
            "PyTorch 1.13 DDP (torch/csrc/distributed/c10d/reducer.cpp): one bucket in the first block, then rebuilt in "
            "the gradients' ready order ({first_bucket_bytes, bucket_bytes}); per gradient its hook and its copy into "
            "the bucket divided by the world size (a division in place where it is the bucket's view), per bucket its "
            "launch and its copy back unless the gradient is its view, per iteration DDP's own work, and the "
            "process group's CPU taken from the compute thread where the host has no core to spare: each at the "
            "host's wulf:ddp (record's framework_costs); " +
            std::string(setting_text(c, "ddp-backend") == "gloo" ? "gloo: two allreduces at once (its two worker threads)"
                                                                 : "nccl: one allreduce at a time (one stream)") +
            "; a progress point after every millisecond of compute unless --progress-flops";
      config["progress"] =
          setting(c, "progress-flops") > 0
              ? "a progress point (MPI_Test of every bucket under way) after each layer's backward part, and "
                "between its slices of at most progress_flops flops once a bucket is under way"
              : "one progress point (MPI_Test of every bucket under way) after each layer's backward part";
    },
    .memory = [](const MemoryShape& s, const TrainConfig&, StrategyMemory& m) {
      // The buckets' flat buffer (w values) and the scratch of the largest bucket's messages
      // (at most w): each rank's, or under --numerics off in simulation one the ranks share.
      const double bytes = 2 * s.wT();
      const bool shared = !s.numerics && s.sim;
      add_part(m.collectives, "the buckets' flat buffer and receive scratch, up to 2 w values", bytes,
               shared ? 0 : bytes, shared ? MemoryPart::Kind::shared : MemoryPart::Kind::held,
               s.smaller_net);
    },
    .device_holding = [](const TrainConfig& c) {
      // The buckets' flat buffer holds a copy of the gradients, unless DDP's gradients are its views.
      const bool views = setting_text(c, "framework") == "ddp" && setting_text(c, "gradient-as-bucket-view") == "on";
      return DeviceHolding{"none", 0, 0, !views, "--framework ddp --gradient-as-bucket-view on"};
    },
    .message_counts = [](const MemoryShape& s, const TrainConfig& c) {
      // A bucket closes once it holds --bucket-bytes: at most that and one tensor, at most w.
      double tensor = s.w;
      if (s.spec) {
        tensor = 0;
        for (const GradientTensor& t : backward_tensors(*s.spec)) tensor = std::max(tensor, static_cast<double>(t.values));
      }
      const double bucket = std::min(s.w, static_cast<double>(setting_count(c, "bucket-bytes")) / s.T + tensor);
      mpi_count(static_cast<std::size_t>(bucket), "--strategy overlap: a bucket's values in one message",
                "a smaller --bucket-bytes or " + s.smaller_net);
    },
    .search = &overlap_search,
    .trains_layer_nets = true,
    .own_allreduce_option = "bucket-allreduce",
    .progress_option = "progress-flops",
    .train_float = train_overlap<float>,
    .train_double = train_overlap<double>,
};

}  // namespace wulf
