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

template <class T>
TrainResult train_overlap_fusion(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                                 const TrainConfig& config, Comm& comm, Compute& compute,
                                 const ProgressFn& progress) {
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), comm.size(), comm.rank());
  Rng order_rng = pattern_order_rng(config, comm.rank());
  std::vector<std::size_t> order = identity_order(plan.n_local);
  WeightUpdate<T> step(net, config);
  const NbAlgorithm algorithm = parse_nb_algorithm(setting_text(config, "bucket-allreduce"), "--bucket-allreduce");
  const std::vector<OverlapBucket> units = plan_overlap_buckets(net, 0);  // one per tensor
  const std::size_t fusion = setting_count(config, "bucket-bytes") / sizeof(T);  // values; 0: none fused
  const double slice_flops = setting(config, "progress-flops");
  const std::size_t concurrency = setting_count(config, "bucket-concurrency");  // 0: no limit
  const double cycle = setting(config, "bucket-cycle");                           // > 0 (checked)
  // --bucket-request scheduled: every tensor of a block asked for at its start (TensorFlow
  // schedules the ops ahead of the GPU); an allreduce waits for its tensors' data.
  const bool scheduled = setting_text(config, "bucket-request") == "scheduled";
  const int ranks = comm.size(), rank = comm.rank();

  const std::unique_ptr<Comm> schedules = comm.duplicate_for_schedules();
  const NbLayout layout{config.rank_nodes, config.rank_rings};
  const std::size_t lanes = NbAllreduce<T>::lanes(algorithm, layout);
  constexpr int negotiation_tag = 0;  // the allreduces' tags are 1 and up

  // The flat buffer: the units one after another (the net's gradients in the backward pass's
  // order). Under --numerics off it and one scratch that every allreduce shares (nobody reads
  // the sums) are memory all simulated ranks share; the scratch is the largest allreduce's.
  std::size_t largest = std::min(fusion, run.weights());
  for (const OverlapBucket& u : units) largest = std::max(largest, u.n);
  const std::size_t scratch_n =
      ranks > 1 ? NbAllreduce<T>(*schedules, algorithm, largest, false, 1, layout).scratch_values() : 0;
  std::vector<T> own;
  T* flat = run.numerics() ? nullptr
                           : static_cast<T*>(compute.shared_scratch((run.weights() + scratch_n) * sizeof(T)));
  if (!flat) own.resize(run.weights() + (run.numerics() ? 0 : scratch_n)), flat = own.data();
  T* const shared_scratch = flat + run.weights();

  // One allreduce of a round: units [first, end) fused.
  struct Fused {
    std::size_t first = 0, end = 0;
    std::unique_ptr<NbAllreduce<T>> allreduce;
    std::vector<T> scratch;  // --numerics on: its own
  };
  std::deque<Fused> stream;        // the allreduces enqueued, in order, until done
  std::size_t next_fused = 0;      // the first of them not started (those before it are)
  std::size_t fused_made = 0;      // allreduces made so far: their tags, alike on every rank
  std::size_t tests_done = 0;      // MPI_Test calls of the allreduces done with
  std::size_t allreduces = 0, negotiations = 0, progress_calls = 0;

  // The round of units [a, b): fused in order, each allreduce at most `fusion` values (a unit
  // larger: alone), onto the stream.
  auto enqueue_round = [&](std::size_t a, std::size_t b) {
    while (a < b) {
      std::size_t e = a + 1, n = units[a].n;
      while (e < b && fusion > 0 && n + units[e].n <= fusion) n += units[e++].n;
      Fused& f = stream.emplace_back();
      f.first = a, f.end = e;
      const int tag = overlap_tag(fused_made++, concurrency, lanes);
      f.allreduce = std::make_unique<NbAllreduce<T>>(*schedules, algorithm, n, run.numerics(), tag, layout);
      if (run.numerics()) f.scratch.resize(f.allreduce->scratch_values());
      else if (f.allreduce->scratch_values() > scratch_n)
        throw std::logic_error("overlap fusion: an allreduce's scratch beyond the largest's");
      ++allreduces;
      a = e;
    }
  };
  auto start = [&](Fused& f) {
    const std::size_t at = units[f.first].flat_at, n = units[f.end - 1].flat_at + units[f.end - 1].n - at;
    if (run.numerics())
      for (std::size_t u = f.first; u < f.end; ++u) copy_overlap_pieces(net, units[u], flat, true);
    compute.charge_collective();  // the platform's fixed cost of a collective call, per allreduce
    T* scratch = run.numerics() ? f.scratch.data() : shared_scratch;
    f.allreduce->start(std::span<T>(flat + at, n), std::span<T>(scratch, f.allreduce->scratch_values()));
  };
  auto under_way = [&]() -> Fused* {  // the first allreduce under way, or none
    for (std::size_t i = 0; i < next_fused; ++i)
      if (!stream[i].allreduce->done()) return &stream[i];
    return nullptr;
  };
  auto count_under_way = [&] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < next_fused; ++i) n += stream[i].allreduce->done() ? 0 : 1;
    return n;
  };
  std::size_t ready = 0;  // units whose gradients the backward pass has made here
  // The stream moved on: what is under way tested, what is done retired (its sums back into
  // the gradients), and the next started while fewer than --bucket-concurrency are under way
  // and its units' data is made (agreed units are made already, unless --bucket-request
  // scheduled asked for them first: then the loop waits for their data, WAIT_FOR_DATA).
  auto serve_stream = [&] {
    run.poll([&] {
      for (std::size_t i = 0; i < next_fused; ++i)
        if (!stream[i].allreduce->done()) stream[i].allreduce->progress();
    });
    while (next_fused > 0 && stream.front().allreduce->done()) {
      Fused& f = stream.front();
      tests_done += f.allreduce->tests();
      if (run.numerics())
        for (std::size_t u = f.first; u < f.end; ++u) copy_overlap_pieces(net, units[u], flat, false);
      stream.pop_front(), --next_fused;
    }
    for (; next_fused < stream.size(); ++next_fused) {
      if (concurrency > 0 && count_under_way() >= concurrency) break;
      if (stream[next_fused].end > ready) break;
      start(stream[next_fused]);
    }
  };

  // The loop: sleeping until its tick (idle) or agreeing on what is ready (negotiating).
  enum class Loop { idle, negotiating };
  Loop loop = Loop::idle;
  std::size_t requested = 0, released = 0;  // units asked for here; units agreed on (enqueued)
  std::vector<double> requested_at(units.size());
  double next_tick = comm.now() + cycle;
  double mine = 0, agreed = 0;                     // this rank's count; the least of all
  std::vector<double> counts(static_cast<std::size_t>(ranks));  // rank 0: each rank's
  std::vector<int> from_ranks(static_cast<std::size_t>(ranks), -1), answers(static_cast<std::size_t>(ranks), -1);
  int next_from = 1, to_root = -1, from_root = -1;  // tickets; -1: none pending

  auto finish_ticket = [&](int& t, bool blocking) {
    if (t < 0) return true;
    if (blocking) schedules->wait(t);
    else if (!schedules->test(t)) return false;
    t = -1;
    return true;
  };
  auto wait_answers = [&] {
    for (int& t : answers) finish_ticket(t, true);
  };
  // The tick at which the loop next finds something new: the first at or after the first
  // unit not yet agreed on was asked for (ticks with nothing new send nothing here).
  auto tick_due = [&] { return first_tick_from(next_tick, requested_at[released], cycle); };
  auto begin_negotiation = [&](double tick) {
    std::size_t n = released;
    while (n < requested && requested_at[n] <= tick) ++n;
    mine = static_cast<double>(n);
    ++negotiations;
    if (rank == 0) {
      wait_answers();  // the last negotiation's, which sent `agreed`
      for (int r = 1; r < ranks; ++r)
        from_ranks[static_cast<std::size_t>(r)] =
            schedules->irecv(std::span<double>(&counts[static_cast<std::size_t>(r)], 1), r, negotiation_tag);
      next_from = 1;
    } else {
      to_root = schedules->isend(std::span<const double>(&mine, 1), 0, negotiation_tag);
      from_root = schedules->irecv(std::span<double>(&agreed, 1), 0, negotiation_tag);
    }
    loop = Loop::negotiating;
  };
  auto negotiated = [&](bool blocking) {
    if (rank == 0) {
      for (; next_from < ranks; ++next_from)
        if (!finish_ticket(from_ranks[static_cast<std::size_t>(next_from)], blocking)) return false;
      agreed = mine;
      for (int r = 1; r < ranks; ++r) agreed = std::min(agreed, counts[static_cast<std::size_t>(r)]);
      for (int r = 1; r < ranks; ++r)
        answers[static_cast<std::size_t>(r)] = schedules->isend(std::span<const double>(&agreed, 1), r, negotiation_tag);
      return true;
    }
    const bool sent = finish_ticket(to_root, blocking);
    return finish_ticket(from_root, blocking) && sent;
  };
  // Moves the loop and the stream on as far as they go now (a progress point), or, blocking
  // (after the backward pass, every unit ready), until every unit is reduced. Blocking, a wait
  // for a tick or a negotiation goes a step of the stream's allreduce at a time while one is
  // under way, so that neither holds the other up.
  auto advance = [&](bool blocking) {
    for (;;) {
      serve_stream();
      Fused* going = under_way();
      if (loop == Loop::idle && released < requested) {
        const double tick = tick_due();
        if (tick <= comm.now()) {
          begin_negotiation(tick);
        } else if (!blocking) {
          return;
        } else {
          if (going) going->allreduce->wait_step();
          else compute.idle(tick - comm.now());
          continue;
        }
      }
      if (loop == Loop::negotiating) {
        bool done = false;
        if (blocking && !going) done = negotiated(true);  // waited out: the exposed time's
        else run.poll([&] { done = negotiated(false); });
        if (done) {
          const auto upto = static_cast<std::size_t>(agreed);
          if (upto <= released || upto > requested)
            throw std::logic_error("overlap fusion: the ranks agreed on units not asked for here");
          enqueue_round(released, upto);  // the loop enqueues and sleeps: NCCL's stream runs them
          released = upto;
          next_tick = comm.now() + cycle;
          loop = Loop::idle;
          continue;
        }
        if (!blocking) return;
        going->allreduce->wait_step();
        continue;
      }
      if (!blocking) return;
      if (released == requested && stream.empty()) return;
      if (!going) throw std::logic_error("overlap fusion: allreduces enqueued and none under way");
      going->allreduce->wait_step();
    }
  };
  auto mark_ready_upto = [&](int layer) {
    for (; ready < units.size() && units[ready].ready_after == layer; ++ready)
      if (!scheduled) requested_at[requested++] = comm.now();
  };

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    progress_calls = 0, allreduces = 0, negotiations = 0;
    const std::size_t tests_before = tests_done;
    double exposed = 0;
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      ready = 0, released = 0, requested = 0;
      if (scheduled && plan.ranks > 1) {
        // Every tensor asked for now, and agreed on at once: the loop's tick (at most a cycle
        // away) and its negotiation fall inside the forward pass, which has no progress point.
        requested = units.size();
        std::fill(requested_at.begin(), requested_at.end(), comm.now());
        if (loop != Loop::idle) throw std::logic_error("overlap fusion: a negotiation left over from a block");
        begin_negotiation(comm.now());
      }
      run.forward_backward_layers(
          train, order, plan.first(k), plan.count(k), running,
          [&](int layer) {
            if (plan.ranks == 1) return;
            mark_ready_upto(layer);
            advance(false);
            ++progress_calls;
          },
          slice_flops, [&] {
            if (plan.ranks > 1 && (loop != Loop::idle || released < requested || !stream.empty())) {  // between slices
              advance(false);
              ++progress_calls;
            }
          });
      if (plan.ranks > 1) {  // the rest of the rounds, once the backward pass is over: exposed
        const double t0 = comm.now();
        advance(true);
        if (rank == 0) wait_answers();
        const double waited = comm.now() - t0;
        exposed += waited;
        run.add_comm(waited, 1);
      }
      run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k), net.gradients()); });
    }
    run.note("buckets", static_cast<double>(allreduces) / static_cast<double>(plan.blocks));
    run.note("fused_tensors", static_cast<double>(units.size()));
    run.note("negotiations", static_cast<double>(negotiations));
    run.note("progress_points", static_cast<double>(progress_calls));
    run.note("progress_tests", static_cast<double>(tests_done - tests_before));
    run.note("exposed_comm_s", exposed);
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_overlap_fusion);

}  // namespace wulf
