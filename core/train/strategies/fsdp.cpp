// Sharded data parallelism (--strategy fsdp, issue 64): PyTorch's FullyShardedDataParallel and
// DeepSpeed's ZeRO. The data are shared out as in block; the net's layers are grouped into
// units (--shard-unit layers each), and each unit's parameters are flattened, padded and cut
// into one shard per rank (comm/shard_schedules.hpp). A rank keeps its shard of the parameters
// and of the momentum; the net's own buffer holds a unit's parameters only while they are
// gathered.
//
// A block: before a unit's forward its shards are allgathered (and with --sharding full freed
// again after it: with the arithmetic on, the freed values are NaN, so a unit that computed
// without its gather would show in the errors); before its backward they are gathered again
// where they were freed; once its gradients are made they are reduce-scattered, and the
// parameters freed. With --backward-prefetch the next unit's gather starts before the current
// unit's backward, with --forward-prefetch before its forward, at most --gather-limit gathers
// under way at once (FSDP's limit_all_gathers). Every collective is wulf's own schedule over
// MPI_Isend/MPI_Irecv, moved on at a progress point after each layer, as overlap's buckets;
// each from when it is issued, or with --shard-stream one one after another in the order
// issued, as PyTorch's ProcessGroupNCCL runs a process group's collectives on its one stream.
// Once the backward pass is over the rank waits for the reductions still under way (the
// exposed communication), then steps its own shard with the momentum rule or Adam (its two
// moments sharded too): the update block makes, on 1/p of the values. With p = 2 each value's sum is one addition, so the errors are
// block's to the bit; with more ranks the ring sums in another order than block's allreduce.
//
// With the arithmetic on, the net is gathered whole at the end of each iteration, for the
// errors of the record (FSDP's summon_full_params): that gather is charged as communication
// too, and noted as eval_gather_s.
#include "comm/shard_schedules.hpp"
#include "train/run.hpp"
#include "train/shard_units.hpp"
#include "util/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace wulf {

namespace {

// One unit: layers first to last, its plan, its two collectives and, with the arithmetic on,
// its padded flat parameters and gradients, the reduction's scratch and this rank's shard.
template <class T>
struct ShardUnit {
  int first = 1, last = 1;
  ShardPlan plan;
  std::unique_ptr<NbAllreduce<T>> gather, reduce;
  std::vector<T> params, grads, scratch;  // owned with the arithmetic on
  std::span<T> flat_params, flat_grads, reduce_scratch, shard;
  std::optional<MomentumStep<T>> step;  // the shard's update: momentum's,
  std::optional<AdamStep<T>> adam;      // or Adam's, its two moments on the shard alone
  bool gathered = false, gathering = false, reducing = false;
};

// The most tags the collectives of the units take, each lane of each a tag of its own: above
// it, a unit's collective waits for the one that shares its tags.
constexpr int kShardTags = 32000;

template <class T>
class ShardRun {
 public:
  ShardRun(Run<T>& run, Mlp<T>& net, const TrainConfig& config, Comm& comm, Compute& compute);

  void begin_iteration();
  // One block's forward and backward pass with the units' gathers and reductions, the wait for
  // the reductions still under way, and the update of the shards.
  void block(const Dataset& train, const std::vector<std::size_t>& order, std::size_t first, std::size_t count,
             ErrorSums& running, std::size_t total);
  // With the arithmetic on: every unit gathered into the net, for the iteration's errors.
  void gather_for_errors();
  void notes();

 private:
  std::size_t unit_of(int layer) const { return unit_of_layer_[static_cast<std::size_t>(layer - 1)]; }
  // The units that have tags of their own; unit u shares its tags with u - shared_tags().
  std::size_t shared_tags() const { return static_cast<std::size_t>(kShardTags / (2 * lanes_)); }
  int tag(std::size_t u, int kind) const { return 1 + lanes_ * (2 * static_cast<int>(u % shared_tags()) + kind); }
  // A unit's gather or reduction, as issued to the network.
  struct Issued {
    std::size_t unit = 0;
    bool reduce = false;
    bool operator==(const Issued&) const = default;
  };
  NbAllreduce<T>& collective(Issued c) { return c.reduce ? *units_[c.unit].reduce : *units_[c.unit].gather; }
  // Charges the call and starts it, or with --shard-stream one queues it behind those issued
  // before it, starting it once they are done.
  void issue(Issued c);
  void launch(Issued c);
  // Waits until c is done: with --shard-stream one, every collective issued before it first.
  void complete(Issued c);
  void progress();
  std::size_t gathers_under_way() const;
  void start_gather(std::size_t u);
  void finish_gather(std::size_t u);
  void ensure_gathered(std::size_t u);
  void prefetch(std::size_t u);
  void free(std::size_t u);
  void start_reduce(std::size_t u);
  void update(std::size_t total);

  Run<T>& run_;
  Mlp<T>& net_;
  Comm& comm_;
  Compute& compute_;
  Sharding sharding_;
  std::vector<std::size_t> unit_of_layer_;  // layer l's unit at l - 1
  bool forward_prefetch_ = false, backward_prefetch_ = true;
  std::size_t gather_limit_ = 2;
  int lanes_ = 1;  // each collective's: one, or one a ring
  double slice_flops_ = 0;  // --shard-progress-flops
  bool one_stream_ = false;  // --shard-stream one
  std::deque<Issued> stream_;  // --shard-stream one: the collectives issued and not done, the first under way
  std::unique_ptr<Comm> schedules_;
  std::vector<ShardUnit<T>> units_;
  std::vector<T> shared_;  // without the arithmetic: one buffer every unit's messages use
  double gather_wait_s_ = 0, reduce_wait_s_ = 0, eval_gather_s_ = 0;
  std::size_t gathers_ = 0, reduces_ = 0;
};

template <class T>
ShardRun<T>::ShardRun(Run<T>& run, Mlp<T>& net, const TrainConfig& config, Comm& comm, Compute& compute)
    : run_(run), net_(net), comm_(comm), compute_(compute) {
  sharding_ = *sharding_named(setting_text(config, "sharding"));

  forward_prefetch_ = setting_text(config, "forward-prefetch") == "on";
  backward_prefetch_ = setting_text(config, "backward-prefetch") == "on";
  gather_limit_ = setting_count(config, "gather-limit");
  slice_flops_ = setting(config, "shard-progress-flops");
  one_stream_ = setting_text(config, "shard-stream") == "one";
  const bool rings = setting_text(config, "shard-algorithm") == "rings";
  if (rings) lanes_ = static_cast<int>(std::max<std::size_t>(1, config.rank_rings.size()));
  schedules_ = comm.duplicate_for_schedules();
  const NetSpec& spec = net.spec();
  const bool numerics = run.numerics();
  std::size_t most = 0;
  for (const ShardUnitLayers& layers_of : shard_units(spec, static_cast<int>(setting_count(config, "shard-unit")))) {
    ShardUnit<T> u;
    u.first = layers_of.first, u.last = layers_of.last;
    unit_of_layer_.resize(static_cast<std::size_t>(u.last), units_.size());
    // Its values as sent: in 2 bytes each under --precision bf16 or fp16 (time only).
    u.plan = shard_plan(sharding_, comm.size(), comm.rank(), wire_values<T>(config.value_bytes, layers_of.parameters),
                        config.rank_nodes, rings ? std::span(config.rank_rings) : std::span<const std::vector<int>>{});
    const std::size_t u_index = units_.size();
    u.gather = std::make_unique<NbAllreduce<T>>(*schedules_, u.plan.gather, numerics, tag(u_index, 0));
    u.reduce = std::make_unique<NbAllreduce<T>>(*schedules_, u.plan.reduce, numerics, tag(u_index, 1));
    most = std::max(most, 2 * u.plan.padded + u.reduce->scratch_values());
    units_.push_back(std::move(u));
  }
  if (!numerics) {
    // Nobody reads the values: every unit's messages go through one buffer, the simulated
    // ranks' shared one where there is one.
    T* at = static_cast<T*>(compute.shared_scratch(most * sizeof(T)));
    if (!at) shared_.resize(most), at = shared_.data();
    for (ShardUnit<T>& u : units_) {
      u.flat_params = {at, u.plan.padded};
      u.flat_grads = {at + u.plan.padded, u.plan.padded};
      u.reduce_scratch = {at + 2 * u.plan.padded, u.reduce->scratch_values()};
    }
    return;
  }
  for (ShardUnit<T>& u : units_) {
    u.scratch.resize(u.reduce->scratch_values());
    u.reduce_scratch = u.scratch;
    if (!shards_parameters(sharding_)) {
      // Nothing sharded: the net's own buffers are the unit's, its gradients allreduced in place.
      u.flat_params = u.shard = net.layers_parameters(u.first, u.last);
      u.flat_grads = net.layers_gradients(u.first, u.last);
      u.gathered = true;
    } else {
      u.params.assign(u.plan.padded, T(0));
      u.grads.assign(u.plan.padded, T(0));
      u.flat_params = u.params, u.flat_grads = u.grads;
      const std::span<T> mine = net.layers_parameters(u.first, u.last);
      std::ranges::copy(mine, u.params.begin());  // every rank starts from the same net
      u.shard = u.flat_params.subspan(u.plan.owned_at, u.plan.shard);
      // Not gathered: the first forward gathers it. The net keeps its first values until then,
      // for the untrained net's errors (iteration 0).
    }
    if (config.learning == Learning::adam)
      u.adam.emplace(u.shard, config.eta, config.adam, config.block_step == BlockStep::sum);
    else
      u.step.emplace(u.shard, config.eta, config.alpha, config.momentum, config.block_step);
  }
}

template <class T>
void ShardRun<T>::launch(Issued c) {
  ShardUnit<T>& u = units_[c.unit];
  if (c.reduce) u.reduce->start(u.flat_grads, u.reduce_scratch);
  else u.gather->start(u.flat_params, {});
}

template <class T>
void ShardRun<T>::issue(Issued c) {
  compute_.charge_collective();
  if (!one_stream_) return launch(c);
  stream_.push_back(c);
  if (stream_.size() == 1) launch(c);
}

template <class T>
void ShardRun<T>::complete(Issued c) {
  if (!one_stream_) return collective(c).finish();
  if (std::ranges::find(stream_, c) == stream_.end()) return;  // done before
  while (!stream_.empty()) {
    const Issued first = stream_.front();
    collective(first).finish();
    stream_.pop_front();
    if (!stream_.empty()) launch(stream_.front());
    if (first == c) return;
  }
}

template <class T>
void ShardRun<T>::progress() {
  run_.poll([&] {
    if (one_stream_) {  // the first under way; once done, the next starts
      while (!stream_.empty() && collective(stream_.front()).progress()) {
        stream_.pop_front();
        if (!stream_.empty()) launch(stream_.front());
      }
      return;
    }
    for (ShardUnit<T>& u : units_) {
      if (u.gathering) u.gather->progress();
      if (u.reducing) u.reduce->progress();
    }
  });
}

template <class T>
std::size_t ShardRun<T>::gathers_under_way() const {
  return static_cast<std::size_t>(std::ranges::count_if(units_, [](const ShardUnit<T>& u) { return u.gathering; }));
}

template <class T>
void ShardRun<T>::start_gather(std::size_t i) {
  ShardUnit<T>& u = units_[i];
  if (u.gathered || u.gathering) return;
  if (i >= shared_tags() && units_[i - shared_tags()].gathering) finish_gather(i - shared_tags());  // its tags'
  // This rank's shard lies in its place of the flat parameters already (u.shard is that part of
  // them); the others' come.
  issue({i, false});
  u.gathering = true;
  ++gathers_;
}

template <class T>
void ShardRun<T>::finish_gather(std::size_t i) {
  ShardUnit<T>& u = units_[i];
  if (!u.gathering) return;
  const double t0 = comm_.now();
  complete({i, false});
  const double waited = comm_.now() - t0;
  gather_wait_s_ += waited;
  run_.add_comm(waited, 1);
  u.gathering = false;
  u.gathered = true;
  if (run_.numerics()) {
    const std::span<T> into = net_.layers_parameters(u.first, u.last);
    std::copy_n(u.flat_params.begin(), into.size(), into.begin());
  }
}

template <class T>
void ShardRun<T>::ensure_gathered(std::size_t i) {
  start_gather(i);
  finish_gather(i);
}

// A gather ahead of its unit, where the limit leaves room for it.
template <class T>
void ShardRun<T>::prefetch(std::size_t i) {
  if (i >= units_.size() || units_[i].gathered || units_[i].gathering) return;
  if (gather_limit_ > 0 && gathers_under_way() >= gather_limit_) return;
  start_gather(i);
}

template <class T>
void ShardRun<T>::free(std::size_t i) {
  ShardUnit<T>& u = units_[i];
  if (!shards_parameters(sharding_) || !u.gathered) return;
  u.gathered = false;
  if (run_.numerics()) std::ranges::fill(net_.layers_parameters(u.first, u.last), std::numeric_limits<T>::quiet_NaN());
}

template <class T>
void ShardRun<T>::start_reduce(std::size_t i) {
  ShardUnit<T>& u = units_[i];
  if (i >= shared_tags() && units_[i - shared_tags()].reducing) {  // its tags'
    complete({i - shared_tags(), true});
    units_[i - shared_tags()].reducing = false;
  }
  if (run_.numerics() && shards_parameters(sharding_)) {  // the gradients into the padded buffer
    const std::span<T> from = net_.layers_gradients(u.first, u.last);
    std::ranges::copy(from, u.grads.begin());
  }
  issue({i, true});
  u.reducing = true;
  ++reduces_;
}

template <class T>
void ShardRun<T>::update(std::size_t total) {
  std::size_t shard_values = 0;
  for (const ShardUnit<T>& u : units_) shard_values += u.plan.shard;
  const double share = run_.weights() > 0 ? static_cast<double>(shard_values) / static_cast<double>(run_.weights()) : 1;
  run_.kernel(Phase::update, 1, run_.flops().update * share, [&] {
    for (ShardUnit<T>& u : units_) {
      const std::span<const T> gradient = u.flat_grads.subspan(u.plan.owned_at, u.plan.shard);
      if (u.adam)
        u.adam->apply(total, gradient);
      else
        u.step->apply(total, gradient);
    }
  });
}

template <class T>
void ShardRun<T>::begin_iteration() {
  gather_wait_s_ = reduce_wait_s_ = eval_gather_s_ = 0;
  gathers_ = reduces_ = 0;
}

template <class T>
void ShardRun<T>::block(const Dataset& train, const std::vector<std::size_t>& order, std::size_t first,
                        std::size_t count, ErrorSums& running, std::size_t total) {
  const std::size_t last_unit = units_.size() - 1;
  typename Run<T>::LayerHooks hooks;
  hooks.before_forward = [&](int l) {
    const std::size_t u = unit_of(l);
    if (l != units_[u].first) return;
    ensure_gathered(u);
    if (forward_prefetch_) prefetch(u + 1);
  };
  hooks.after_forward = [&](int l) {
    progress();
    const std::size_t u = unit_of(l);
    // The last unit's backward comes next: FSDP keeps it (the root's parameters stay gathered).
    if (l == units_[u].last && frees_after_forward(sharding_) && u != last_unit) free(u);
  };
  hooks.before_backward = [&](int l) {
    const std::size_t u = unit_of(l);
    if (l != units_[u].last) return;
    ensure_gathered(u);
    if (backward_prefetch_ && u > 0) prefetch(u - 1);
  };
  hooks.after_backward = [&](int l) {
    const std::size_t u = unit_of(l);
    if (l == units_[u].first) {
      start_reduce(u);
      free(u);
    }
    progress();
  };
  hooks.slice_flops = slice_flops_;
  hooks.between_slices = [&] { progress(); };
  run_.forward_backward_hooked(train, order, first, count, running, hooks);
  for (std::size_t i = 0; i < units_.size(); ++i) {  // the exposed communication
    ShardUnit<T>& u = units_[i];
    if (!u.reducing) continue;
    const double t0 = comm_.now();
    complete({i, true});
    const double waited = comm_.now() - t0;
    reduce_wait_s_ += waited;
    run_.add_comm(waited, 1);
    u.reducing = false;
  }
  update(total);
}

template <class T>
void ShardRun<T>::gather_for_errors() {
  if (!run_.numerics() || !shards_parameters(sharding_)) return;
  const double t0 = comm_.now();
  const double waited = gather_wait_s_;
  const std::size_t gathers = gathers_;
  for (std::size_t i = 0; i < units_.size(); ++i) start_gather(i);
  for (std::size_t i = 0; i < units_.size(); ++i) finish_gather(i);
  eval_gather_s_ += comm_.now() - t0;
  gather_wait_s_ = waited, gathers_ = gathers;  // not the training's
  // The next iteration gathers again, as training does: the net's copy is for the errors.
  for (ShardUnit<T>& u : units_) u.gathered = false;
}

template <class T>
void ShardRun<T>::notes() {
  run_.note("units", static_cast<double>(units_.size()));
  run_.note("gathers", static_cast<double>(gathers_));
  run_.note("reductions", static_cast<double>(reduces_));
  run_.note("gather_wait_s", gather_wait_s_);
  run_.note("reduce_wait_s", reduce_wait_s_);
  if (run_.numerics() && shards_parameters(sharding_)) run_.note("eval_gather_s", eval_gather_s_);
}

}  // namespace

template <class T>
TrainResult train_fsdp(Mlp<T>& net, const Dataset& train, const Dataset& test, const GlobalSizes& sizes,
                       const TrainConfig& config, Comm& comm, Compute& compute, const ProgressFn& progress) {
  Run<T> run(net, train, test, sizes, config, comm, compute, progress);
  const BlockPlan plan(sizes.train, block_size(config, sizes.train), comm.size(), comm.rank());
  Rng order_rng = pattern_order_rng(config, comm.rank());
  std::vector<std::size_t> order = identity_order(plan.n_local);
  ShardRun<T> shards(run, net, config, comm, compute);

  return run.run([&](int) {
    if (config.shuffle) order_rng.shuffle(order);
    ErrorSums running = run.empty_sums();
    shards.begin_iteration();
    const double t_first = comm.now();
    for (std::size_t k = 0; k < plan.blocks; ++k)
      shards.block(train, order, plan.first(k), plan.count(k), running, plan.total(k));
    const double t_trained = comm.now();
    shards.gather_for_errors();
    run.note("train_s", t_trained - t_first);
    shards.notes();
    return running;
  });
}

WULF_INSTANTIATE_STRATEGY(train_fsdp);

namespace {

std::string sharding_help() {
  return "full (FSDP's FULL_SHARD, ZeRO stage 3: parameters, gradients and optimizer state sharded, the "
         "parameters gathered for each unit's forward and again for its backward), grad-op (SHARD_GRAD_OP, ZeRO "
         "stage 2: kept gathered from a unit's forward to its backward), hybrid (HYBRID_SHARD: sharded within a "
         "node, by the hosts' wulf:node, the shards' gradients allreduced across the nodes) or none (NO_SHARD, "
         "ZeRO stage 1's communication: the gradients allreduced, nothing sharded)";
}

constexpr std::string_view shard_algorithms[] = {"ring", "rings"};
constexpr std::string_view shard_streams[] = {"many", "one"};

constexpr StrategyOption fsdp_options[] = {
    {.name = "sharding",
     .key = "sharding",
     .kind = StrategyOption::Kind::text,
     .help = "what each rank holds of the parameters: ",
     .values_help = sharding_help,
     .range = {},
     .example = "full",
     .default_text = "full",
     .choices = sharding_names},
    {.name = "shard-unit",
     .key = "shard_unit",
     .help = "layers of a unit, whose parameters are gathered and whose gradients are reduced together "
             "(FSDP's wrapping policy; 0: a layer file's units, its transformer blocks, and each layer of a net "
             "without them)",
     .default_value = 0,
     .range = {.lo = 0, .hi = 100000}},
    {.name = "forward-prefetch",
     .key = "forward_prefetch",
     .kind = StrategyOption::Kind::text,
     .help = "on: the next unit's gather starts before the current unit's forward (FSDP's forward_prefetch); "
             "off (its default)",
     .range = {},
     .example = "off",
     .default_text = "off",
     .choices = on_off_choices},
    {.name = "backward-prefetch",
     .key = "backward_prefetch",
     .kind = StrategyOption::Kind::text,
     .help = "on: the next unit's gather starts before the current unit's backward (FSDP's BACKWARD_PRE, its "
             "default); off: when its backward begins",
     .range = {},
     .example = "on",
     .default_text = "on",
     .choices = on_off_choices},
    {.name = "shard-algorithm",
     .key = "shard_algorithm",
     .kind = StrategyOption::Kind::text,
     .help = "how the units' allgathers and reduce-scatters go: ring (one ring in rank order, Open MPI 4.1's ring "
             "and NCCL's one channel) or rings (k rings at once, as NCCL's channels, around the hosts' wulf:rings: "
             "each leaves a server through a NIC of its own; --sharding full or grad-op)",
     .range = {},
     .example = "ring",
     .default_text = "ring",
     .choices = shard_algorithms},
    {.name = "shard-progress-flops",
     .key = "shard_progress_flops",
     .help = "a layer whose forward or backward part over the rank's block has more flops than this is charged in "
             "equal slices of at most this many, with a progress point of the gathers and reductions between slices, "
             "as a GPU library's own streams move them on all the time (0: one progress point after each layer "
             "only)",
     .default_value = 0,
     .range = {.lo = 0, .hi = 1e18}},
    {.name = "shard-stream",
     .key = "shard_stream",
     .kind = StrategyOption::Kind::text,
     .help = "how the units' gathers and reductions share the network: many (each moves on from when it is "
             "issued, beside the others) or one (one after another in the order issued, as one process group's "
             "collectives run on its one NCCL stream in PyTorch's ProcessGroupNCCL)",
     .range = {},
     .example = "many",
     .default_text = "many",
     .choices = shard_streams},
    {.name = "gather-limit",
     .key = "gather_limit",
     .help = "gathers under way at once that a prefetch may add to (FSDP's limit_all_gathers: 2; 0: no limit)",
     .default_value = 2,
     .range = {.lo = 0, .hi = 100000}}};

// The momentum rules and Adam, each stepping the rank's shard; not RPROP, whose FANN-style
// step is the net's whole.
constexpr Learning fsdp_learning[] = {Learning::pattern, Learning::block, Learning::epoch, Learning::adam};

std::string refuse_sharding(std::string_view sharding, std::string_view algorithm) {
  if (algorithm != "rings" || sharding == "full" || sharding == "grad-op") return "";
  return "--shard-algorithm rings with --sharding " + std::string(sharding) +
         ": the rings carry full's and grad-op's allgathers and reduce-scatters over all ranks; hybrid's and none's "
         "collectives are rings in rank order (--shard-algorithm ring)";
}

void check_fsdp(const TrainConfig& c, int, bool) {
  if (const std::string why = refuse_sharding(setting_text(c, "sharding"), setting_text(c, "shard-algorithm"));
      !why.empty())
    throw InputError(why);
}

// Sharding keeps block's updates (the same sums, stepped shard by shard): b at least p, the
// sharding and the shards' ring or rings searched.
constexpr SearchTraits fsdp_search{.same_updates = true,
                                   .refuse = refuse_block_below_ranks,
                                   .sharding_option = "sharding",
                                   .shard_algorithm_option = "shard-algorithm",
                                   .refuse_sharding = refuse_sharding};

}  // namespace

extern const StrategyDescriptor fsdp_strategy{
    .name = "fsdp",
    .help = "sharded data parallelism (PyTorch FSDP, DeepSpeed ZeRO stages 1-3)",
    .options_title = "sharded data parallelism (--strategy fsdp)",
    .options = fsdp_options,
    .learning = fsdp_learning,
    .splits_blocks = true,
    .layout = fixed_layout<DataLayout::shares>,
    .check = check_fsdp,
    .record = [](const TrainConfig&, bool numerics, Json& config) {
      config["progress"] = "a progress point (MPI_Test of every gather and reduction under way) after each layer's "
                           "forward and backward part, and with --shard-progress-flops between its slices";
      config["collectives_model"] = "each unit's allgather and reduce-scatter: the two halves of the ring allreduce "
                                    "over its padded flat parameters (--shard-algorithm rings: of one ring a part "
                                    "of each shard), wulf's own schedule over MPI_Isend/MPI_Irecv";
      if (numerics)
        config["errors_gather"] = "the net gathered whole after each iteration for its errors, charged as "
                                  "communication (notes eval_gather_s)";
    },
    .memory = [](const MemoryShape& s, const TrainConfig& c, StrategyMemory& m) {
      const bool sharded = setting_text(c, "sharding") != "none";
      m.net_storage = s.numerics;  // without the arithmetic the net has none
      // The update's state on this rank's shard only.
      if (sharded) m.updates_first = m.updates_each = 1.0 / s.p;
      // With the arithmetic, each rank's padded flat parameters and gradients of every unit and
      // the reductions' scratch (a shard a unit); without it one buffer of the largest unit's,
      // which every unit's messages use (in simulation the ranks share it).
      const double largest =
          s.spec ? static_cast<double>(largest_unit_values(*s.spec, static_cast<int>(setting_count(c, "shard-unit")))) : s.w;
      const double bytes = s.numerics ? ((sharded ? 2 : 0) * s.wT() + s.wT() / s.p) : (2 + 1.0 / s.p) * largest * s.T;
      const bool shared = !s.numerics && s.sim;
      add_part(m.collectives,
               s.numerics ? "the units' flat parameters and gradients and the reductions' scratch"
                          : "one buffer of the largest unit's flat parameters and gradients and its reduction's scratch",
               bytes, shared ? 0 : bytes, shared ? MemoryPart::Kind::shared : MemoryPart::Kind::held,
               "smaller units (--shard-unit) or " + s.smaller_net);
    },
    .device_holding = [](const TrainConfig& c) {
      return DeviceHolding{setting_text(c, "sharding"), static_cast<int>(setting_count(c, "shard-unit")),
                           setting_count(c, "gather-limit"), false, ""};
    },
    .message_counts = [](const MemoryShape& s, const TrainConfig& c) {
      // A message carries one shard of a unit (the ring's chunk): at most the largest unit.
      const double largest =
          s.spec ? static_cast<double>(largest_unit_values(*s.spec, static_cast<int>(setting_count(c, "shard-unit")))) : s.w;
      mpi_count(static_cast<std::size_t>(largest), "--strategy fsdp: a unit's values in one message",
                "smaller units (--shard-unit) or " + s.smaller_net);
    },
    .search = &fsdp_search,
    .trains_layer_nets = true,
    .progress_option = "shard-progress-flops",
    .moves_net_buffers = false,
    .needs_rank_nodes = [](const TrainConfig& c) { return setting_text(c, "sharding") == "hybrid"; },
    .needs_rank_rings = [](const TrainConfig& c) { return setting_text(c, "shard-algorithm") == "rings"; },
    .train_float = train_fsdp<float>,
    .train_double = train_fsdp<double>,
};

}  // namespace wulf
