// A parallel strategy (--strategy) as data: everything the rest of wulf asks of it. Each
// strategy's descriptor lives beside its iteration in core/train/strategies/NAME.cpp, and the
// registry (train/strategy.cpp, WULF_STRATEGIES) lists them, so adding a strategy is its file,
// one registry line and its tests (ARCHITECTURE.md, "Adding a strategy"). The options, their
// scopes and --help, the job's record, the memory estimate and wulf recommend's candidates all
// read the descriptors.
#pragma once

#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "data/dataset.hpp"
#include "data/problems.hpp"
#include "nn/mlp.hpp"
#include "train/memory_terms.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wulf {

struct StrategyDescriptor;
struct TrainConfig;
struct TrainResult;
struct GlobalSizes;
struct IterationRecord;
using ProgressFn = std::function<void(const IterationRecord&)>;

// A strategy, by its descriptor: copied as a pointer, equal only to itself.
class Strategy {
 public:
  Strategy();  // the registry's first, block
  constexpr explicit Strategy(const StrategyDescriptor& d) : d_(&d) {}
  const StrategyDescriptor& operator*() const { return *d_; }
  const StrategyDescriptor* operator->() const { return d_; }
  friend bool operator==(Strategy a, Strategy b) { return a.d_ == b.d_; }

 private:
  const StrategyDescriptor* d_;
};

std::string_view to_string(Strategy s);
// The strategy of that name; other text is refused naming every registered one.
Strategy parse_strategy(std::string_view name);  // throws InputError
// Every strategy wulf has, in the registry's order (the order --help lists them).
std::span<const Strategy> registered_strategies();

// An option a strategy owns: `--NAME VALUE` of wulf train, refused with any other strategy,
// and the key of its value in the record's config.
struct StrategyOption {
  enum class Kind { whole, number, text };
  std::string_view name;  // without the --: "average-interval"
  std::string_view key;   // the config's key: "average_interval"; "cg.initial_step" lies in the object "cg"
  Kind kind = Kind::whole;
  std::string_view help;
  // text: the values it takes, with what each is, appended to help (a table's: allreduce_help).
  std::string (*values_help)() = nullptr;
  double default_value = 0;  // whole and number; a text option has none and must be given
  Range range;  // whole and number: the accepted values (checked as the option is read, the job resolved and read)
  std::string_view example = {};  // text: a value that runs, for the message when it is missing (and the tests)
  std::string_view default_text = {};  // text: the value when it is not given (empty: it must be given)
  // text: the only values it takes, where they are fixed (check_strategy refuses any other);
  // empty: its strategy's check reads it.
  std::span<const std::string_view> choices = {};
  bool record_may_omit = false;   // the record may leave it out or write null: then the default
};

// The choices of an option that is on or off.
inline constexpr std::string_view on_off_choices[] = {"on", "off"};

// The values of the job's strategy's options, by option name; an option not set here has its
// descriptor's default (a text option has none).
class StrategySettings {
 public:
  void set(std::string_view option, double value);
  void set_text(std::string_view option, std::string value);
  const double* find(std::string_view option) const;
  const std::string* find_text(std::string_view option) const;

 private:
  std::vector<std::pair<std::string, double>> numbers_;
  std::vector<std::pair<std::string, std::string>> texts_;
};

// What each rank of a strategy holds of the data (ProblemOptions follows it).
enum class DataLayout {
  shares,       // its share of the training and of the test set (block, average, root)
  whole_train,  // the whole training set, its share of the test set (ppt)
  root_only,    // rank 0 everything, which it scatters; the others nothing (scatter)
  whole,        // everything (session)
  workers,      // rank 0 nothing, rank r >= 1 its share of both sets over p - 1 ranks (cg --load-balance)
};

// A strategy whose ranks always hold the data the same way.
template <DataLayout L>
DataLayout fixed_layout(const TrainConfig&) {
  return L;
}

// The learning rules of StrategyDescriptor::learning: every one (the strategies whose update
// is WeightUpdate's, trainer.hpp), or the momentum rules (those that step the weights with
// momentum of their own).
inline constexpr Learning every_learning[] = {Learning::pattern, Learning::block, Learning::epoch, Learning::rprop,
                                              Learning::adam};
inline constexpr Learning momentum_learning[] = {Learning::pattern, Learning::block, Learning::epoch};

// How wulf recommend searches a strategy (predict/recommend.hpp); a strategy without one is
// not searched.
struct SearchTraits {
  bool same_updates = false;         // its runs make the sequential run's updates (convergence basis "same")
  std::string_view block_option = "block";  // the option that carries the candidate's b (ppt: "local-epoch")
  std::string_view interval_option = {};    // an option recommend's --intervals sweeps, or none
  std::string_view interval_label = {};     // its name in a candidate's label ("average a=64")
  // Why b patterns cannot run on p ranks, each holding share training patterns; "" if they can.
  std::string (*refuse)(std::size_t b, int p, std::size_t share) = nullptr;
  // The option that carries recommend's --allreduces (block: --allreduce, the MPI library's
  // collective; overlap: --bucket-allreduce, wulf's own non-blocking one), or none.
  std::string_view allreduce_option = {};
  // The option that carries recommend's --bucket-sizes (overlap: --bucket-bytes), or none.
  std::string_view bucket_option = {};
  // A strategy that hides communication behind the backward pass: the option and value that
  // run the same communication with nothing hidden (overlap: --bucket-start after-backward),
  // which recommend times beside it; empty: none.
  std::string_view unhidden_option = {}, unhidden_value = {};
  // The options that carry recommend's --shardings and --shard-algorithms (fsdp: --sharding,
  // --shard-algorithm), or none.
  std::string_view sharding_option = {}, shard_algorithm_option = {};
  // Why a sharding cannot run on a shard algorithm ("" where it can), as the strategy's check
  // refuses it; null: every pair runs.
  std::string (*refuse_sharding)(std::string_view sharding, std::string_view shard_algorithm) = nullptr;
};
// The refusal of a strategy that shares each block out over the ranks (block, overlap):
// every rank needs a pattern of each block, so b must be at least p.
std::string refuse_block_below_ranks(std::size_t b, int p, std::size_t share);
// Their search traits: the sequential run's updates, b at least p; an allreduce algorithm,
// and for overlap a bucket size.
inline constexpr SearchTraits block_search{
    .same_updates = true, .refuse = refuse_block_below_ranks, .allreduce_option = "allreduce"};
inline constexpr SearchTraits overlap_search{.same_updates = true,
                                             .refuse = refuse_block_below_ranks,
                                             .allreduce_option = "bucket-allreduce",
                                             .bucket_option = "bucket-bytes",
                                             .unhidden_option = "bucket-start",
                                             .unhidden_value = "after-backward"};

template <class T>
using StrategyTrainFn = TrainResult (*)(Mlp<T>&, const Dataset&, const Dataset&, const GlobalSizes&,
                                        const TrainConfig&, Comm&, Compute&, const ProgressFn&);

struct StrategyDescriptor {
  std::string_view name;
  std::string_view help;           // for --strategy's help: "training-set parallelism, seed 000"
  std::string_view options_title{};  // the --help group of its options: "conjugate gradient (--strategy cg, seed 002)"
  std::span<const StrategyOption> options{};
  std::span<const Learning> learning;  // the learning rules it runs (--learning)
  bool splits_blocks = false;          // shares each block out over the ranks (then b >= the ranks)
  DataLayout (*layout)(const TrainConfig&) = nullptr;
  // A strategy that runs a table of whole training sessions (session.hpp), not one net: their
  // configurations. Null for the others.
  std::vector<TrainConfig> (*sessions)(const TrainConfig&) = nullptr;
  // Its settings against each other, the ranks and the arithmetic; throws InputError. May be null.
  void (*check)(const TrainConfig&, int np, bool numerics) = nullptr;
  // What --quiet leaves out: the plan's line of its training, instead of the momentum's. May be null.
  std::string (*plan)(const TrainConfig&) = nullptr;
  // Its part of the record's config beyond its options' values (descriptions, derived values). May be null.
  void (*record)(const TrainConfig&, bool numerics, Json& config) = nullptr;
  // Its terms of the memory estimate; null: the defaults (memory_terms.hpp).
  void (*memory)(const MemoryShape&, const TrainConfig&, StrategyMemory&) = nullptr;
  // How it holds the model on a modelled device (DeviceHolding); null: the whole net on every
  // rank, no bucket copy (block's).
  DeviceHolding (*device_holding)(const TrainConfig&) = nullptr;
  // The counts its own collectives pass to MPI, each checked with mpi_count. May be null.
  void (*message_counts)(const MemoryShape&, const TrainConfig&) = nullptr;
  const SearchTraits* search = nullptr;
  // Whether its library allreduce moves the w values (block's gradients, average's weights).
  // Where not, the library allreduce carries only the error sums (ErrorSums, 4 doubles), and
  // `--allreduce default` becomes Open MPI's choice for those.
  bool allreduces_weights = false;
  // Whether it calls the reduce (root's and cg's gradients) and the broadcast (root's, cg's and
  // scatter's parameters) itself. Where not, its only reduce and broadcast are those inside
  // redbcast, and `--reduce default` and `--bcast default` become Open MPI's choices for the
  // library allreduce's size.
  bool reduces = false;
  bool broadcasts = false;
  // Whether it calls the allgather itself, of w + 1 values per rank (ppt's update and its
  // estimate); the others make no allgather that is timed, and `--allgather default` becomes
  // Open MPI's choice for the gradients' size.
  bool allgathers_update = false;
  // Whether a net given by its layers (layers:FILE, time only) runs with it: its time can be
  // charged by the layers' flops and the gradients' bytes alone (block, overlap).
  bool trains_layer_nets = false;
  // The option of its own allreduce of the gradients (overlap's --bucket-allreduce): what it
  // needs of where the ranks are is that algorithm's too. Empty: none.
  std::string_view own_allreduce_option{};
  // Its option that charges a layer's compute in slices with progress points between them
  // (overlap's --progress-flops, fsdp's --shard-progress-flops; empty: none), whose points an
  // update the front end bounds.
  std::string_view progress_option{};
  // Whether, without the arithmetic, its messages go from and to the net's own buffers (block's
  // allreduce of the gradient: then the simulated ranks share them, 3 w values of address
  // space); fsdp's go through buffers of its own, and its net has no storage.
  bool moves_net_buffers = true;
  // Whether its own collectives need each rank's node (fsdp's --sharding hybrid), as the
  // hierarchical allreduce does: the job then carries them (TrainConfig::rank_nodes). May be null.
  bool (*needs_rank_nodes)(const TrainConfig&) = nullptr;
  // Whether its own collectives run around the hosts' rings (fsdp's --shard-algorithm rings), as
  // the rings allreduce does: the job then carries them (TrainConfig::rank_rings). May be null.
  bool (*needs_rank_rings)(const TrainConfig&) = nullptr;
  StrategyTrainFn<float> train_float = nullptr;  // null only where sessions is set
  StrategyTrainFn<double> train_double = nullptr;

  const StrategyOption* option(std::string_view name) const;
  bool runs(Learning l) const;
};

// The strategies that run learning rule l, as a list: "--strategy block, scatter or root".
std::string strategies_that_run(Learning l);
// The strategies whose descriptor passes keep, as a list: "--strategy block or overlap".
std::string strategies_where(const std::function<bool(const StrategyDescriptor&)>& keep);

// The option of that name among every strategy's (the first that owns it), or null.
const StrategyOption* any_strategy_option(std::string_view name);

// A setting of config's strategy: its value in config.settings, else its default. A name the
// strategy does not own is a bug (std::logic_error); a text option never given and without a
// default_text, an InputError.
double setting(const TrainConfig& config, std::string_view option);
std::size_t setting_count(const TrainConfig& config, std::string_view option);
std::string setting_text(const TrainConfig& config, std::string_view option);

// The generic checks of config's settings (each whole one in its range, each number finite,
// each text one of its choices), then the strategy's own (StrategyDescriptor::check); throws InputError naming the option.
void check_strategy(const TrainConfig& config, int np, bool numerics);

}  // namespace wulf
