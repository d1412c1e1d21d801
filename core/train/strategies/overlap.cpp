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
#include "comm/nb_allreduce.hpp"
#include "train/strategies/overlap_parts.hpp"
#include "util/errors.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>

namespace wulf {

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
  const NbAlgorithm algorithm = parse_nb_algorithm(setting_text(config, "bucket-allreduce"), "--bucket-allreduce");
  const std::vector<OverlapBucket> buckets = plan_overlap_buckets(net, setting_count(config, "bucket-bytes"));
  const double slice_flops = setting(config, "progress-flops");
  // after-backward: the same buckets started only once the backward pass is over, nothing
  // hidden (what recommend measures the hidden part against).
  const bool start_after = setting_text(config, "bucket-start") == "after-backward";
  const std::size_t concurrency = setting_count(config, "bucket-concurrency");  // 0: no limit
  const double cycle = setting(config, "bucket-cycle");                           // 0: no rounds

  // Each bucket's allreduce, and its tags (overlap_tag: apart from the others' where they may
  // travel at once), on a communicator of their own, as wulf's own collectives have.
  const std::unique_ptr<Comm> schedules = comm.duplicate_for_schedules();
  const NbLayout layout{config.rank_nodes, config.rank_rings};
  const std::size_t lanes = NbAllreduce<T>::lanes(algorithm, layout);
  std::vector<std::unique_ptr<NbAllreduce<T>>> going;
  for (std::size_t i = 0; i < buckets.size(); ++i)
    going.push_back(std::make_unique<NbAllreduce<T>>(*schedules, algorithm, buckets[i].n, run.numerics(),
                                                     overlap_tag(i, concurrency, lanes), layout));
  // The buckets' flat buffer, then each bucket's scratch for what it receives: the rank's
  // own, or under --numerics off memory all simulated ranks share (nobody reads the sums).
  std::vector<std::size_t> scratch_at(buckets.size() + 1, run.weights());
  for (std::size_t i = 0; i < buckets.size(); ++i) scratch_at[i + 1] = scratch_at[i] + going[i]->scratch_values();
  const std::size_t flat_n = scratch_at.back();
  std::vector<T> own;
  T* flat = run.numerics() ? nullptr : static_cast<T*>(compute.shared_scratch(flat_n * sizeof(T)));
  if (!flat) own.resize(flat_n), flat = own.data();
  // A bucket's tensors from the net's gradients into its part of the flat buffer, or back.
  auto copy_pieces = [&](const OverlapBucket& b, bool into_flat) { copy_overlap_pieces(net, b, flat, into_flat); };

  // Bucket i's allreduce under way.
  auto start = [&](std::size_t i) {
    if (run.numerics()) copy_pieces(buckets[i], true);
    compute.charge_collective();  // the platform's fixed cost of a collective call, per bucket
    going[i]->start(std::span<T>(flat + buckets[i].flat_at, buckets[i].n),
                    std::span<T>(flat + scratch_at[i], scratch_at[i + 1] - scratch_at[i]));
  };

  auto total_tests = [&] {
    return std::accumulate(going.begin(), going.end(), std::size_t{0},
                           [](std::size_t t, const auto& g) { return t + g->tests(); });
  };
  std::vector<double> exposed(buckets.size());
  std::size_t progress_calls = 0;
  // The buckets ready (below `ready`) and started (below `started`): the ready ones started
  // in order while fewer than --bucket-concurrency are under way; under --bucket-cycle only
  // those of the rounds begun (below `released`).
  std::size_t ready = 0, started = 0;
  // The first started bucket not seen done: those before it are (a bucket stays done until it
  // starts again, in the next block), so the scans below begin here (161 buckets a tensor).
  std::size_t live = 0;
  auto first_live = [&] {
    while (live < started && going[live]->done()) ++live;
    return live;
  };
  std::vector<double> ready_at(buckets.size());  // --bucket-cycle: when each became ready
  // --bucket-cycle: the round under way (from round_first below released; none when equal).
  std::size_t released = 0, round_first = 0;
  double next_tick = comm.now() + cycle;  // the loop's next tick; then every cycle until a round
  auto mark_ready = [&] { ready_at[ready++] = cycle > 0 ? comm.now() : 0.0; };
  // The tick of the next round: the first at or after its first bucket became ready.
  auto round_tick = [&] { return first_tick_from(next_tick, ready_at[released], cycle); };
  // What the loop has done by `now`: the round under way ended (the next tick a cycle after
  // it is seen done), and the next begun if its tick has come.
  auto release = [&](double now) {
    if (round_first < released) {
      for (std::size_t i = round_first; i < released; ++i)
        if (i >= started || !going[i]->done()) return;
      round_first = released;
      next_tick = now + cycle;
    }
    if (released >= ready) return;
    const double tick = round_tick();
    if (tick > now) return;
    while (released < ready && ready_at[released] <= tick) ++released;
  };
  auto start_ready = [&] {
    if (cycle > 0) release(comm.now());
    for (; started < (cycle > 0 ? released : ready); ++started) {
      if (concurrency > 0) {
        std::size_t under_way = 0;
        for (std::size_t i = first_live(); i < started; ++i) under_way += going[i]->done() ? 0 : 1;
        if (under_way >= concurrency) return;
      }
      start(started);
    }
  };
  // One progress point: every bucket under way tested, in the order they started; then the
  // ready ones that may start.
  auto progress_all = [&] {
    run.poll([&] {
      for (std::size_t i = first_live(); i < started; ++i) going[i]->progress();
    });
    start_ready();
    ++progress_calls;
  };

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    std::fill(exposed.begin(), exposed.end(), 0.0);
    progress_calls = 0;
    const std::size_t tests_before = total_tests();
    for (std::size_t k = 0; k < plan.blocks; ++k) {
      ready = 0, started = 0, released = 0, round_first = 0, live = 0;
      run.forward_backward_layers(
          train, order, plan.first(k), plan.count(k), running,
          [&](int layer) {
            if (plan.ranks == 1) return;
            if (!start_after)
              while (ready < buckets.size() && buckets[ready].ready_after == layer) mark_ready();
            start_ready();
            progress_all();
          },
          slice_flops, [&] {
            if (plan.ranks > 1 && started > 0) progress_all();  // between slices of a large layer
          });
      if (plan.ranks > 1) {  // after-backward
        while (ready < buckets.size()) mark_ready();
        start_ready();
      }
      // The exposed communication: what each bucket still needs once the backward pass is over.
      for (std::size_t i = 0; i < going.size() && plan.ranks > 1; ++i) {
        const double t0 = comm.now();
        start_ready();  // the ones before it are done
        if (cycle > 0 && started <= i) {  // its round is still to begin: the loop sleeps until its tick
          const double tick = round_tick();
          compute.idle(tick - comm.now());
          release(std::max(comm.now(), tick));
          start_ready();
        }
        going[i]->finish();
        const double waited = comm.now() - t0;
        exposed[i] += waited;
        run.add_comm(waited, 1);
        if (run.numerics()) copy_pieces(buckets[i], false);
      }
      // --bucket-cycle: the last round is done now; the loop sleeps a cycle from here.
      if (round_first < released) round_first = released, next_tick = comm.now() + cycle;
      run.kernel(Phase::update, 1, run.flops().update, [&] { step.apply(plan.total(k), net.gradients()); });
    }
    const std::size_t tests = total_tests() - tests_before;
    run.note("buckets", static_cast<double>(buckets.size()));
    run.note("progress_points", static_cast<double>(progress_calls));
    run.note("progress_tests", static_cast<double>(tests));
    double total = 0;
    for (std::size_t i = 0; i < exposed.size(); ++i) {
      run.note("bucket_" + std::to_string(i) + "_exposed_s", exposed[i]);
      total += exposed[i];
    }
    run.note("exposed_comm_s", total);
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_overlap);

namespace {

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
     .help = "the buckets' allreduce, wulf's own over MPI_Isend/MPI_Irecv: ring (Horovod's, NCCL's), rdb "
             "(recursive doubling: each sum as --strategy block --allreduce rdb makes it), rabenseifner (recursive "
             "halving then doubling: Gloo's halving-doubling), hierarchical (a ring within each node, across the "
             "nodes, within again: as --allreduce hierarchical), hierarchical-rabenseifner (the same with "
             "Rabenseifner's across the nodes) or rings (k rings at once, as NCCL's channels, over the hosts' "
             "wulf:rings)",
     .range = {},
     .example = "ring",
     .default_text = "ring"},
    {.name = "progress-flops",
     .key = "progress_flops",
     .help = "a layer whose backward part over the rank's block has more flops than this is charged in equal "
             "slices of at most this many, with a progress point between slices once a bucket is under way "
             "(0: one progress point after each layer only)",
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
             "is agreed and enqueued (0: a ready bucket starts at once, as DDP)",
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
     .record_may_omit = true},  // records before it: computed
    {.name = "bucket-start",
     .key = "bucket_start",
     .kind = StrategyOption::Kind::text,
     .help = "when a bucket's allreduce starts: ready (as soon as the backward pass has made all of it, as DDP) "
             "or after-backward (the same buckets once the backward pass is over: nothing hidden, to measure what "
             "ready hides)",
     .range = {},
     .example = "ready",
     .default_text = "ready"}};


}  // namespace

extern const StrategyDescriptor overlap_strategy{
    .name = "overlap",
    .help = "data parallelism with bucketed allreduce overlapped on the backward pass (PyTorch DDP, Horovod)",
    .options_title = "overlapped buckets (--strategy overlap)",
    .options = overlap_options,
    .learning = every_learning,
    .splits_blocks = true,
    .layout = fixed_layout<DataLayout::shares>,
    .check = [](const TrainConfig& c, int, bool) {
      parse_nb_algorithm(setting_text(c, "bucket-allreduce"), "--bucket-allreduce");
      if (const std::string s = setting_text(c, "bucket-start"); s != "ready" && s != "after-backward")
        throw InputError("--bucket-start \"" + s + "\": expected ready or after-backward");
      const std::string fusion = setting_text(c, "bucket-fusion");
      if (fusion != "cut" && fusion != "tick")
        throw InputError("--bucket-fusion \"" + fusion + "\": expected cut or tick");
      if (const std::string r = setting_text(c, "bucket-request"); r != "computed" && r != "scheduled")
        throw InputError("--bucket-request \"" + r + "\": expected computed or scheduled");
      else if (r == "scheduled" && fusion != "tick")
        throw InputError("--bucket-request scheduled: Horovod's requests to rank 0 are --bucket-fusion tick's; "
                         "with --bucket-fusion cut every bucket starts when its data is made");
      if (fusion == "tick") {
        if (!(setting(c, "bucket-cycle") > 0))
          throw InputError("--bucket-fusion tick: needs --bucket-cycle above 0 (the ticks at which it fuses the "
                           "tensors ready)");
        if (setting_text(c, "bucket-start") != "ready")
          throw InputError("--bucket-fusion tick: --bucket-start after-backward measures fixed buckets; use "
                           "--bucket-fusion cut with it");
      }
    },
    .record = [](const TrainConfig& c, bool, Json& config) {
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
               shared ? 0 : bytes, shared ? MemoryPart::Kind::process : MemoryPart::Kind::held,
               "a smaller net (--hidden)");
    },
    .message_counts = [](const MemoryShape& s) {
      mpi_count(static_cast<std::size_t>(s.w), "--strategy overlap: a bucket's values in one message",
                "a smaller --bucket-bytes or net (--hidden)");
    },
    .search = &overlap_search,
    .train_float = train_overlap<float>,
    .train_double = train_overlap<double>,
};

}  // namespace wulf
