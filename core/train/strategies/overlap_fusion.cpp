// --strategy overlap --bucket-fusion tick: Horovod's tensor fusion with NCCL, as its
// background loop ran it in 2017-2018 (horovod/tensorflow/mpi_ops.cc at 7b5ff812 and
// horovod/common/operations.cc at 8318a898, BackgroundThreadLoop and PerformOperation):
//   the loop sleeps --bucket-cycle (HOROVOD_CYCLE_TIME, 5 ms); then every rank tells rank 0
//   which tensors it has ready (a message per tensor and a DONE); rank 0 counts them, and a
//   tensor every rank has reported is ready to reduce; rank 0 fuses the ready tensors, in
//   order, into responses of at most --bucket-bytes (HOROVOD_FUSION_THRESHOLD, 64 MB; a tensor
//   larger is a response of its own) and sends each to every rank, then a DONE; each rank
//   enqueues each response on its GPU's one NCCL stream (a copy into the fusion buffer, the
//   allreduce, a copy out) and does not wait for it: a detached thread does. The loop sleeps
//   again at once; the stream runs the allreduces one after another, across rounds.
// So the allreduces are not cut once by size, as DDP's buckets: which tensors one holds
// depends on when they became ready, and the ranks agree on it through rank 0.
// Here: the tensors are units of one tensor each (train/buckets.hpp, the backward pass's
// order). At its tick (a cycle after its last negotiation, then every cycle; the first at or
// after its first unit not yet agreed on became ready) a rank with a unit ready sends rank 0
// how many it has ready (one message, where Horovod sends one per tensor and a DONE); rank 0,
// at its own such tick, takes every rank's count and sends the least back to each (one
// message, where Horovod sends each response and a DONE); every rank fuses the units up to it
// into allreduces of at most --bucket-bytes and puts them on its stream, which runs them in
// order (--bucket-concurrency 1: one at a time, as one CUDA stream). A rank with nothing new
// sends nothing at a tick (Horovod sends its DONE every tick); a tensor is reduced once every
// rank has it all the same. The copies to and from the fusion buffer cost nothing here. The
// messages and the stream's steps go at overlap.cpp's progress points, and after the backward
// pass until every unit is reduced.
// With --bucket-request scheduled a rank asks for a tensor when TensorFlow schedules its op,
// not when the GPU has made it: TensorFlow's executor runs ahead of the GPU, the op's
// ComputeAsync enqueues the request at once with a ready event, and PerformOperation waits
// for the event of every tensor of a response before it puts the response on the stream
// (WAIT_FOR_DATA in Horovod's docs/timeline.md: "This happens because TensorFlow tries to
// smartly interleave scheduling and GPU computation"; operations.cc at 8318a898). Here every
// tensor of a block is asked for at its start and agreed on in one round, begun at once (the
// tick, at most a cycle away, and the negotiation fall inside the forward pass, which has no
// progress point), so the responses are the gradient fused in order by size; each allreduce
// goes on the stream once its tensors are made.
// The sums, as every overlap's: each value's in the order of its allreduce's algorithm.
#include "comm/nb_allreduce.hpp"
#include "train/strategies/overlap_parts.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

namespace wulf {

namespace {

// Tensor fusion over a run: the stream of fused allreduces, and Horovod's background loop that
// agrees on the units ready through rank 0 and enqueues them. Its steps are called at the
// backward pass's progress points (after_layer, between_slices) and once it is over (finish).
template <class T>
class FusionLoop {
 public:
  FusionLoop(Run<T>& run, Mlp<T>& net, const TrainConfig& config, Comm& comm, Compute& compute);

  // A block begins: nothing ready; under --bucket-request scheduled every unit asked for now
  // and agreed on at once (the loop's tick, at most a cycle away, and its negotiation fall
  // inside the forward pass, which has no progress point).
  void begin_block();
  // Layer `layer`'s backward part is done: its units are ready; the loop and the stream move on.
  void after_layer(int layer);
  // Between slices of a large layer: the loop and the stream move on where anything is pending.
  void between_slices();
  // After the backward pass: every round run to its end. The seconds it waited (exposed).
  double finish();

  std::size_t units() const { return units_.size(); }
  // Over the iteration: allreduces enqueued, negotiations begun, progress points, MPI_Test
  // calls of the allreduces done with; zeroed by new_iteration (tests_done runs on).
  std::size_t allreduces = 0, negotiations = 0, progress_calls = 0, tests_done = 0;
  void new_iteration() { progress_calls = 0, allreduces = 0, negotiations = 0; }

 private:
  // One allreduce of a round: units [first, end) fused.
  struct Fused {
    std::size_t first = 0, end = 0;
    std::unique_ptr<NbAllreduce<T>> allreduce;
    std::vector<T> scratch;  // --numerics on: its own
  };
  // The loop: sleeping until its tick (idle) or agreeing on what is ready (negotiating).
  enum class Loop { idle, negotiating };

  void enqueue_round(std::size_t a, std::size_t b);
  void start(Fused& f);
  Fused* under_way();
  std::size_t count_under_way() const;
  void serve_stream();
  bool finish_ticket(int& t, bool blocking);
  void wait_answers();
  double tick_due() const;
  void begin_negotiation(double tick);
  bool negotiated(bool blocking);
  void agree();
  void advance(bool blocking);
  void progress_point();

  Run<T>& run_;
  Mlp<T>& net_;
  Comm& comm_;
  Compute& compute_;
  const NbAlgorithm algorithm_;
  const std::vector<OverlapBucket> units_;  // one per tensor
  const std::size_t fusion_;                // values; 0: none fused
  const std::size_t concurrency_;           // 0: no limit
  const double cycle_;                      // > 0 (checked)
  // --bucket-request scheduled: every tensor of a block asked for at its start (TensorFlow
  // schedules the ops ahead of the GPU); an allreduce waits for its tensors' data.
  const bool scheduled_;
  const int ranks_, rank_;
  const std::unique_ptr<Comm> schedules_;
  const NbLayout layout_;
  const std::size_t lanes_;
  static constexpr int negotiation_tag = 0;  // the allreduces' tags are 1 and up

  // The flat buffer: the units one after another (the net's gradients in the backward pass's
  // order). Under --numerics off it and one scratch that every allreduce shares (nobody reads
  // the sums) are memory all simulated ranks share; the scratch is the largest allreduce's.
  std::size_t scratch_n_ = 0;
  std::vector<T> own_;
  T* flat_ = nullptr;
  T* shared_scratch_ = nullptr;

  std::deque<Fused> stream_;     // the allreduces enqueued, in order, until done
  std::size_t next_fused_ = 0;   // the first of them not started (those before it are)
  std::size_t fused_made_ = 0;   // allreduces made so far: their tags, alike on every rank
  std::size_t ready_ = 0;        // units whose gradients the backward pass has made here

  Loop loop_ = Loop::idle;
  std::size_t requested_ = 0, released_ = 0;  // units asked for here; units agreed on (enqueued)
  std::vector<double> requested_at_;
  double next_tick_ = 0;
  double mine_ = 0, agreed_ = 0;  // this rank's count; the least of all
  std::vector<double> counts_;    // rank 0: each rank's
  std::vector<int> from_ranks_, answers_;
  int next_from_ = 1, to_root_ = -1, from_root_ = -1;  // tickets; -1: none pending
};

template <class T>
FusionLoop<T>::FusionLoop(Run<T>& run, Mlp<T>& net, const TrainConfig& config, Comm& comm, Compute& compute)
    : run_(run),
      net_(net),
      comm_(comm),
      compute_(compute),
      algorithm_(parse_nb_algorithm(setting_text(config, "bucket-allreduce"), "--bucket-allreduce")),
      units_(plan_overlap_buckets(net, 0)),
      fusion_(setting_count(config, "bucket-bytes") / sizeof(T)),
      concurrency_(setting_count(config, "bucket-concurrency")),
      cycle_(setting(config, "bucket-cycle")),
      scheduled_(setting_text(config, "bucket-request") == "scheduled"),
      ranks_(comm.size()),
      rank_(comm.rank()),
      schedules_(comm.duplicate_for_schedules()),
      layout_{config.rank_nodes, config.rank_rings},
      lanes_(NbAllreduce<T>::lanes(algorithm_, layout_)),
      requested_at_(units_.size()),
      counts_(static_cast<std::size_t>(ranks_)),
      from_ranks_(static_cast<std::size_t>(ranks_), -1),
      answers_(static_cast<std::size_t>(ranks_), -1) {
  std::size_t largest = std::min(fusion_, run.weights());
  for (const OverlapBucket& u : units_) largest = std::max(largest, u.n);
  scratch_n_ = ranks_ > 1 ? NbAllreduce<T>(*schedules_, algorithm_, largest, false, 1, layout_).scratch_values() : 0;
  flat_ = run.numerics() ? nullptr : static_cast<T*>(compute.shared_scratch((run.weights() + scratch_n_) * sizeof(T)));
  if (!flat_) own_.resize(run.weights() + (run.numerics() ? 0 : scratch_n_)), flat_ = own_.data();
  shared_scratch_ = flat_ + run.weights();
  next_tick_ = comm.now() + cycle_;
}

// The round of units [a, b): fused in order, each allreduce at most `fusion` values (a unit
// larger: alone), onto the stream.
template <class T>
void FusionLoop<T>::enqueue_round(std::size_t a, std::size_t b) {
  while (a < b) {
    std::size_t e = a + 1, n = units_[a].n;
    while (e < b && fusion_ > 0 && n + units_[e].n <= fusion_) n += units_[e++].n;
    Fused& f = stream_.emplace_back();
    f.first = a, f.end = e;
    const int tag = overlap_tag(fused_made_++, concurrency_, lanes_);
    f.allreduce = std::make_unique<NbAllreduce<T>>(*schedules_, algorithm_, n, run_.numerics(), tag, layout_);
    if (run_.numerics()) f.scratch.resize(f.allreduce->scratch_values());
    else if (f.allreduce->scratch_values() > scratch_n_)
      throw std::logic_error("overlap fusion: an allreduce's scratch beyond the largest's");
    ++allreduces;
    a = e;
  }
}

template <class T>
void FusionLoop<T>::start(Fused& f) {
  const std::size_t at = units_[f.first].flat_at, n = units_[f.end - 1].flat_at + units_[f.end - 1].n - at;
  if (run_.numerics())
    for (std::size_t u = f.first; u < f.end; ++u) copy_overlap_pieces(net_, units_[u], flat_, true);
  compute_.charge_collective();  // the platform's fixed cost of a collective call, per allreduce
  T* scratch = run_.numerics() ? f.scratch.data() : shared_scratch_;
  f.allreduce->start(std::span<T>(flat_ + at, n), std::span<T>(scratch, f.allreduce->scratch_values()));
}

// The first allreduce under way, or none.
template <class T>
typename FusionLoop<T>::Fused* FusionLoop<T>::under_way() {
  for (std::size_t i = 0; i < next_fused_; ++i)
    if (!stream_[i].allreduce->done()) return &stream_[i];
  return nullptr;
}

template <class T>
std::size_t FusionLoop<T>::count_under_way() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < next_fused_; ++i) n += stream_[i].allreduce->done() ? 0 : 1;
  return n;
}

// The stream moved on: what is under way tested, what is done retired (its sums back into the
// gradients), and the next started while fewer than --bucket-concurrency are under way and
// its units' data is made (agreed units are made already, unless --bucket-request scheduled
// asked for them first: then the loop waits for their data, WAIT_FOR_DATA).
template <class T>
void FusionLoop<T>::serve_stream() {
  run_.poll([&] {
    for (std::size_t i = 0; i < next_fused_; ++i)
      if (!stream_[i].allreduce->done()) stream_[i].allreduce->progress();
  });
  while (next_fused_ > 0 && stream_.front().allreduce->done()) {
    Fused& f = stream_.front();
    tests_done += f.allreduce->tests();
    if (run_.numerics())
      for (std::size_t u = f.first; u < f.end; ++u) copy_overlap_pieces(net_, units_[u], flat_, false);
    stream_.pop_front(), --next_fused_;
  }
  for (; next_fused_ < stream_.size(); ++next_fused_) {
    if (concurrency_ > 0 && count_under_way() >= concurrency_) break;
    if (stream_[next_fused_].end > ready_) break;
    start(stream_[next_fused_]);
  }
}

template <class T>
bool FusionLoop<T>::finish_ticket(int& t, bool blocking) {
  if (t < 0) return true;
  if (blocking) schedules_->wait(t);
  else if (!schedules_->test(t)) return false;
  t = -1;
  return true;
}

template <class T>
void FusionLoop<T>::wait_answers() {
  for (int& t : answers_) finish_ticket(t, true);
}

// The tick at which the loop next finds something new: the first at or after the first unit
// not yet agreed on was asked for (ticks with nothing new send nothing here).
template <class T>
double FusionLoop<T>::tick_due() const {
  return first_tick_from(next_tick_, requested_at_[released_], cycle_);
}

template <class T>
void FusionLoop<T>::begin_negotiation(double tick) {
  std::size_t n = released_;
  while (n < requested_ && requested_at_[n] <= tick) ++n;
  mine_ = static_cast<double>(n);
  ++negotiations;
  if (rank_ == 0) {
    wait_answers();  // the last negotiation's, which sent `agreed`
    for (int r = 1; r < ranks_; ++r)
      from_ranks_[static_cast<std::size_t>(r)] =
          schedules_->irecv(std::span<double>(&counts_[static_cast<std::size_t>(r)], 1), r, negotiation_tag);
    next_from_ = 1;
  } else {
    to_root_ = schedules_->isend(std::span<const double>(&mine_, 1), 0, negotiation_tag);
    from_root_ = schedules_->irecv(std::span<double>(&agreed_, 1), 0, negotiation_tag);
  }
  loop_ = Loop::negotiating;
}

template <class T>
bool FusionLoop<T>::negotiated(bool blocking) {
  if (rank_ == 0) {
    for (; next_from_ < ranks_; ++next_from_)
      if (!finish_ticket(from_ranks_[static_cast<std::size_t>(next_from_)], blocking)) return false;
    agreed_ = mine_;
    for (int r = 1; r < ranks_; ++r) agreed_ = std::min(agreed_, counts_[static_cast<std::size_t>(r)]);
    for (int r = 1; r < ranks_; ++r)
      answers_[static_cast<std::size_t>(r)] =
          schedules_->isend(std::span<const double>(&agreed_, 1), r, negotiation_tag);
    return true;
  }
  const bool sent = finish_ticket(to_root_, blocking);
  return finish_ticket(from_root_, blocking) && sent;
}

// The negotiation is over: its units enqueued, and the loop sleeps (NCCL's stream runs them).
template <class T>
void FusionLoop<T>::agree() {
  const auto upto = static_cast<std::size_t>(agreed_);
  if (upto <= released_ || upto > requested_)
    throw std::logic_error("overlap fusion: the ranks agreed on units not asked for here");
  enqueue_round(released_, upto);
  released_ = upto;
  next_tick_ = comm_.now() + cycle_;
  loop_ = Loop::idle;
}

// Moves the loop and the stream on as far as they go now (a progress point), or, blocking
// (after the backward pass, every unit ready), until every unit is reduced. Blocking, a wait
// for a tick or a negotiation goes a step of the stream's allreduce at a time while one is
// under way, so that neither holds the other up.
template <class T>
void FusionLoop<T>::advance(bool blocking) {
  for (;;) {
    serve_stream();
    Fused* going = under_way();
    if (loop_ == Loop::idle && released_ < requested_) {
      const double tick = tick_due();
      if (tick <= comm_.now()) {
        begin_negotiation(tick);
      } else if (!blocking) {
        return;
      } else {
        if (going) going->allreduce->wait_step();
        else compute_.idle(tick - comm_.now());
        continue;
      }
    }
    if (loop_ == Loop::negotiating) {
      bool done = false;
      if (blocking && !going) done = negotiated(true);  // waited out: the exposed time's
      else run_.poll([&] { done = negotiated(false); });
      if (done) {
        agree();
        continue;
      }
      if (!blocking) return;
      going->allreduce->wait_step();
      continue;
    }
    if (!blocking) return;
    if (released_ == requested_ && stream_.empty()) return;
    if (!going) throw std::logic_error("overlap fusion: allreduces enqueued and none under way");
    going->allreduce->wait_step();
  }
}

template <class T>
void FusionLoop<T>::progress_point() {
  advance(false);
  ++progress_calls;
}

template <class T>
void FusionLoop<T>::begin_block() {
  ready_ = 0, released_ = 0, requested_ = 0;
  if (!scheduled_ || ranks_ == 1) return;
  requested_ = units_.size();
  std::fill(requested_at_.begin(), requested_at_.end(), comm_.now());
  if (loop_ != Loop::idle) throw std::logic_error("overlap fusion: a negotiation left over from a block");
  begin_negotiation(comm_.now());
}

template <class T>
void FusionLoop<T>::after_layer(int layer) {
  if (ranks_ == 1) return;
  for (; ready_ < units_.size() && units_[ready_].ready_after == layer; ++ready_)
    if (!scheduled_) requested_at_[requested_++] = comm_.now();
  progress_point();
}

template <class T>
void FusionLoop<T>::between_slices() {
  if (ranks_ > 1 && (loop_ != Loop::idle || released_ < requested_ || !stream_.empty())) progress_point();
}

template <class T>
double FusionLoop<T>::finish() {
  if (ranks_ == 1) return 0;
  const double t0 = comm_.now();
  advance(true);
  if (rank_ == 0) wait_answers();
  return comm_.now() - t0;
}

}  // namespace

template <class T>
TrainResult train_overlap_fusion(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                                 const TrainConfig& config, Comm& comm, Compute& compute,
                                 const ProgressFn& progress) {
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), comm.size(), comm.rank());
  Rng order_rng = pattern_order_rng(config, comm.rank());
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);
  const double slice_flops = setting(config, "progress-flops");
  FusionLoop<T> loop(run, net, config, comm, compute);

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    loop.new_iteration();
    const std::size_t tests_before = loop.tests_done;
    double exposed = 0;
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      loop.begin_block();
      run.forward_backward_layers(
          train, order, plan.first(k), plan.count(k), running, [&](int layer) { loop.after_layer(layer); },
          slice_flops, [&] { loop.between_slices(); });
      if (plan.ranks > 1) {  // the rest of the rounds, once the backward pass is over: exposed
        const double waited = loop.finish();
        exposed += waited;
        run.add_comm(waited, 1);
      }
      run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k), net.gradients()); });
    }
    run.note("buckets", static_cast<double>(loop.allreduces) / static_cast<double>(plan.blocks));
    run.note("fused_tensors", static_cast<double>(loop.units()));
    run.note("negotiations", static_cast<double>(loop.negotiations));
    run.note("progress_points", static_cast<double>(loop.progress_calls));
    run.note("progress_tests", static_cast<double>(loop.tests_done - tests_before));
    run.note("exposed_comm_s", exposed);
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_overlap_fusion);

}  // namespace wulf
