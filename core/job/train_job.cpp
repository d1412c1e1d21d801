#include "job/train_job.hpp"

#include "comm/collective_choice.hpp"
#include "comm/nb_allreduce.hpp"
#include "job/device_memory.hpp"
#include "job/job_json.hpp"
#include "job/memory_estimate.hpp"
#include "nn/weights_file.hpp"
#include "train/buckets.hpp"
#include "train/session.hpp"
#include "train/trainer.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/names.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

namespace wulf {
namespace {

constexpr Named<Engine> engine_names[] = {
    {Engine::seq, "seq"}, {Engine::real, "real"}, {Engine::sim, "sim"}, {Engine::testbed, "testbed"}};

// A profile's constants are per pattern of one net in one precision: charging them for
// another net or precision would give a silently wrong time, so the run is refused.
void check_profile_fits(const Profile& profile, const std::string& problem, const NetSpec& spec,
                        const std::string& precision) {
  const std::string where = "--profile " + profile.name + ": ";
  if (!profile.problem.empty()) {
    const auto family = [](const std::string& s) { return s.substr(0, s.find(':')); };
    const bool same = profile.problem.find(':') == std::string::npos ? family(problem) == profile.problem
                                                                      : problem == profile.problem;
    if (!same) throw InputError(where + "measured on problem " + profile.problem + ", this run is " + problem);
  }
  if (!profile.precision.empty() && profile.precision != precision)
    throw InputError(where + "measured in " + profile.precision + " precision, this run is " + precision +
                     " (--precision " + profile.precision + ")");
  const double w = static_cast<double>(spec.parameter_count());
  if (profile.w > 0 && profile.w != w)
    throw InputError(where + "measured on a net of " + std::to_string(static_cast<long long>(profile.w)) +
                     " weights, this run's net has " + std::to_string(static_cast<long long>(w)) + " (" + problem +
                     (spec.bias ? ", bias on" : ", bias off") + ")");
}

// The net's first and last layers are the problem's inputs and outputs: a job whose data
// changed shape since it was resolved (another file under the same name) is refused.
void check_net_fits_problem(const TrainJob& job) {
  const Problem& p = job.problem;
  if (job.spec.sizes.front() != p.inputs || job.spec.sizes.back() != p.outputs)
    throw InputError(fmt::format("{}: the data has {} inputs and {} outputs, the job's net {} has {} and {}", p.name,
                                 p.inputs, p.outputs, job.spec.describe(), job.spec.sizes.front(),
                                 job.spec.sizes.back()));
}

// A net given by its layers (layers:FILE) runs time-only, with the data-parallel strategies
// whose time it can be charged by: its layers' flops and its gradients' bytes.
void check_layer_net(const TrainJob& job) {
  if (!job.problem.table) return;
  const std::string& name = job.problem.name;
  if (job.compute.numerics)
    throw InputError("--problem " + name + ": a net given by its layers has no arithmetic; it runs time-only: add " +
                     "--numerics off");
  if (!job.config.strategy->trains_layer_nets)
    throw InputError("--strategy " + std::string(to_string(job.config.strategy)) + ": --problem " + name +
                     " trains with data parallelism, " +
                     strategies_where([](const StrategyDescriptor& d) { return d.trains_layer_nets; }) +
                     " (the others need an MLP's arithmetic or its layer sizes)");
}

// A regression set whose targets lie outside the output activation's range (targets near
// 1 000 under a sigmoid) trains to an error no weights can lower: said before training.
void warn_of_unreachable_targets(TrainJob& job) {
  const Problem& p = job.problem;
  const Activation out = job.spec.activations.back();
  if (p.classifier || p.train.empty() || (out != Activation::sigmoid && out != Activation::tanh)) return;
  const double lo = out == Activation::sigmoid ? 0.0 : -1.0, hi = 1.0;
  const double t_lo = p.train.targets.minCoeff(), t_hi = p.train.targets.maxCoeff();
  if (t_lo >= lo && t_hi <= hi) return;
  job.warnings.push_back(fmt::format(
      "the training targets of {} lie in [{:g}, {:g}], outside [{:g}, {:g}], the range of the {} output: the net "
      "cannot reach them (scale the targets, or --output-activation linear)",
      p.name, t_lo, t_hi, lo, hi, to_string(out)));
}

// --weights-in: the file's values, checked to be a net of this run's shape (layer sizes,
// activations, loss, bias); every rank reads the same file.
void read_initial_weights(TrainJob& job) {
  if (job.weights_in.empty()) return;
  const std::string where = "--weights-in " + job.weights_in + ": ";
  if (job.strategy->sessions)
    throw InputError(where + "--strategy " + std::string(to_string(job.strategy)) +
                     " trains one net per session, each from its own seed");
  if (!job.compute.numerics) throw InputError(where + "--numerics off computes with no weights");
  const WeightsFile file = read_weights(job.weights_in, "--weights-in", !job.double_precision);
  if (file.net != job.spec.describe())
    throw InputError(where + "holds a net " + file.net + ", this run's is " + job.spec.describe() +
                     " (--hidden, --activation, --output-activation, --loss and --bias must match)");
  if (file.values.size() != job.spec.parameter_count())
    throw InputError(where + std::to_string(file.values.size()) + " values for a net of " +
                     std::to_string(job.spec.parameter_count()) + " weights");
  job.initial_weights = file.values;
}

}  // namespace

std::string_view to_string(Engine e) { return name_of(e, engine_names); }

Engine parse_engine(std::string_view name) { return parse_named(name, engine_names, "engine", "engine"); }

void load_problem(TrainJob& job, const RankPlace& place) {
  ProblemOptions data = job.data;
  // The front end of a parallel run checks the data once, whole; a rank reads what its
  // strategy gives it.
  const DataLayout layout = data_layout(job.config);
  const bool shared_out = place.in_rank_program && (layout == DataLayout::shares || layout == DataLayout::whole_train);
  data.ranks = shared_out ? place.ranks : 1;
  data.rank = shared_out ? place.rank : 0;
  // The workers share the data; the master loads the first worker's share and drops it
  // below, keeping the sets' shapes.
  const bool workers = place.in_rank_program && layout == DataLayout::workers;
  if (workers) data.ranks = place.ranks - 1, data.rank = std::max(0, place.rank - 1);
  data.whole_train = layout == DataLayout::whole_train;
  // The front end of a parallel run only checks the data (its ranks load it).
  data.shape_only = !job.compute.numerics || (!place.in_rank_program && job.engine != Engine::seq) ||
                    (place.in_rank_program && layout == DataLayout::root_only && place.rank != 0);
  const auto t0 = std::chrono::steady_clock::now();
  job.problem = make_problem(job.problem_name, data);
  if (job.problem.table) job.spec.table = job.problem.table;  // a rank's net: the file it read
  // A rank's file must be the one the front end checked: a file replaced in between once gave
  // ranks of different nets (SimGrid's MPI_ERR_TRUNCATE) or a record of another net.
  if (place.in_rank_program && job.problem.table && !job.layer_file_digest.empty() &&
      job.problem.table->digest != job.layer_file_digest)
    throw InputError("layer file " + job.problem.table->path + " changed after wulf read it for this run (" +
                     job.layer_file_digest + " then, " + job.problem.table->digest +
                     " now): every rank trains the net wulf checked; run it again");
  if (workers && place.rank == 0) job.problem.train.keep(0, 0), job.problem.test.keep(0, 0);
  job.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The strategy's progress option (its descriptor's progress_option, e.g. overlap's
// --progress-flops) of F flops: the progress points an update takes (the backward pass of the
// busiest rank's share of a block in slices of at most F flops, at most kMostSlices a layer),
// refused before any rank starts where they are more than a run ends with in reasonable time
// (issue 62: --progress-flops 1 on ResNet-50 never finished).
constexpr double kMostProgressPoints = 1e6;
void check_progress_points(const TrainJob& job) {
  const std::string option(job.config.strategy->progress_option);
  if (option.empty()) return;
  const double slice = setting(job.config, option);
  if (!(slice > 0)) return;
  const double share =
      std::ceil(static_cast<double>(block_size(job.config, job.problem.train_total)) / std::max(1, job.np));
  double points = 0, flops = 0;
  for (int l = 1; l <= job.spec.timed_layers(); ++l) {
    const double layer = share * job.spec.layer_backward_flops(l);
    points += progress_slices(layer, slice);
    flops += layer;
  }
  if (points > kMostProgressPoints)
    throw InputError(fmt::format("--{} {:g}: {:.3g} progress points an update (a rank's backward pass of {:.3g} flops "
                                 "in slices of at most {:g}), more than the {:g} a run ends with in reasonable time; "
                                 "give --{} {:.3g} or more",
                                 option, slice, points, flops, slice, kMostProgressPoints, option,
                                 std::ceil(flops / kMostProgressPoints)));
}

// --precision bf16 or fp16: what is charged and sent in 16 bits, never computed in them, so
// time only; and only where a strategy's messages are its gradients' or parameters' own.
void check_half_precision(const TrainJob& job) {
  if (job.half.empty()) return;
  if (job.compute.numerics)
    throw InputError("--precision " + job.half + ": time only (--numerics off): wulf computes in float or double, "
                     "and a 16-bit run is charged and sent in 16 bits");
  if (!job.strategy->trains_layer_nets)
    throw InputError("--precision " + job.half + ": with --strategy " + strategies_where([](const StrategyDescriptor& d) {
                       return d.trains_layer_nets;
                     }) + ", whose messages are the gradients' or the parameters' own");
}

void check_job(TrainJob& job) {
  check_layer_net(job);
  if (!job.compute.numerics && job.config.target_error)
    throw InputError("--target-error: a time-only run (--numerics off) computes no error to reach; leave it out, "
                     "or run the arithmetic");
  check_progress_points(job);
  check_half_precision(job);
  check_net_fits_problem(job);
  warn_of_unreachable_targets(job);
  if (job.compute.mode == ComputeMode::calibrated)
    check_profile_fits(job.compute.profile, job.problem.name, job.spec, precision_name(job.double_precision));
  const Problem& p = job.problem;
  check_strategy(job.config, job.np, job.compute.numerics);
  if (job.strategy->sessions) {
    job.sessions = job.strategy->sessions(job.config);
    for (const TrainConfig& s : job.sessions) validate(s, p.train_total, p.classifier, 1);
  } else {
    validate(job.config, p.train_total, p.classifier, block_sharers(job.config, job.np));
  }
  read_initial_weights(job);
}

namespace {

// The algorithm of the strategy's own allreduce of the gradients (overlap's --bucket-allreduce),
// or null where it has none.
const AllreduceAlgorithm* own_allreduce(const TrainJob& job) {
  const std::string_view option = job.config.strategy->own_allreduce_option;
  return option.empty() ? nullptr : find_allreduce(setting_text(job.config, option));
}

}  // namespace

bool uses_node_layout(const TrainJob& job) {
  const AllreduceAlgorithm* own = own_allreduce(job);
  const StrategyDescriptor& strategy = *job.config.strategy;
  return is_own_blocking_allreduce(job.allreduce) || (own && own->needs == AllreduceNeeds::nodes) ||
         (strategy.needs_rank_nodes && strategy.needs_rank_nodes(job.config));
}

bool uses_rings(const TrainJob& job) {
  const AllreduceAlgorithm* library = find_allreduce(job.allreduce);
  const AllreduceAlgorithm* own = own_allreduce(job);
  const StrategyDescriptor& strategy = *job.config.strategy;
  return (library && library->needs == AllreduceNeeds::rings) || (own && own->needs == AllreduceNeeds::rings) ||
         (strategy.needs_rank_rings && strategy.needs_rank_rings(job.config));
}

std::vector<int> rank_nodes_of(const std::vector<std::string>& keys) {
  std::vector<int> nodes;
  std::unordered_map<std::string, int> seen;  // a key's node, in the order first seen
  for (const std::string& k : keys) nodes.push_back(seen.emplace(k, static_cast<int>(seen.size())).first->second);
  return nodes;
}

void set_config_json(TrainJob& job) {
  job.config_json = job_json(job);
  job.config_json["memory_estimate"] = estimate_memory(job).to_json();
  if (job.spec.table) job.config_json["device_memory"] = device_memory(job).to_json();
}

namespace {

// `default` becomes the algorithm every engine runs (comm/collective_choice), chosen by the
// size the run's main call of each collective moves; the record says which. A job read
// from a record comes chosen, unless a re-run chooses again (its chosen_by cleared).
void resolve_collectives(TrainJob& job) {
  if (job.engine == Engine::seq) return;
  const std::size_t value = job.double_precision ? sizeof(double) : sizeof(float);
  const std::size_t gradients = job.spec.parameter_count() * value;
  const bool ppt = job.strategy->allgathers_update;
  // The error sums' allreduce (ErrorSums::as_array): the only one of a strategy whose
  // gradients go otherwise (overlap's by --bucket-allreduce, root's by reduce).
  const std::size_t error_sums = sizeof(ErrorSums{}.as_array());
  // The allreduce of the gradients (block; average's of the weights), their reduce (root,
  // cg), the parameters' broadcast (root, cg, scatter), scatter's gather of every rank's
  // gradients, ppt's allgather of each rank's update and estimate; the other strategies make
  // no allgather that is timed (session's of results). A strategy that makes no reduce
  // (broadcast) of its own makes only redbcast's, of the allreduce's size: Open MPI's
  // redbcast calls the reduce and broadcast that mpirun forces.
  using Size = std::pair<std::size_t, const char*>;
  const Size allreduced = job.strategy->allreduces_weights
                              ? Size{gradients, "the gradients' size"}
                              : Size{error_sums, "the error sums' size (no allreduce of this strategy moves the gradients)"};
  const char* const in_redbcast = "the allreduce's size (this strategy's only reduce and broadcast are redbcast's)";
  const std::array<Size, 5> sizes{{
      allreduced,
      job.strategy->reduces ? Size{gradients, "the gradients' size"} : Size{allreduced.first, in_redbcast},
      job.strategy->broadcasts ? Size{gradients, "the parameters' size"} : Size{allreduced.first, in_redbcast},
      {ppt ? gradients + value : gradients,
       ppt ? "ppt's w + 1 values per rank" : "the gradients' size per rank (no allgather of this strategy is timed)"},
      {gradients, "the gradients' size per rank"},
  }};
  const std::array<Collective, 5> collectives{Collective::allreduce, Collective::reduce, Collective::bcast,
                                              Collective::allgather, Collective::gather};
  const std::array<JobCollective, 5> fields = job_collectives(job);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const JobCollective& f = fields[i];
    if (!f.chosen_by.empty()) continue;
    const ResolvedCollective r = resolve_collective(collectives[i], f.algorithm, job.np, sizes[i].first);
    f.algorithm = r.name;
    f.chosen_by = r.by_default ? "default, " + r.chosen_by + ", " + sizes[i].second : r.chosen_by;
  }
}

}  // namespace

std::vector<TrainJob::InputFile> inputs_read(const TrainJob& job) {
  std::vector<TrainJob::InputFile> inputs;
  if (const InputLog* log = InputLog::current())
    for (const NamedPath& f : log->files())
      if (is_one_of(f.option, {"IDX file", "FANN data file", "--weights-in"}))
        inputs.push_back({f.option, f.path, file_digest(f.path, f.option)});
  // The platform smpirun or the testbed loads, which the front end reads only as it launches:
  // one that check_input_file refuses (missing, a FIFO, too large) is never read here, and the
  // launch names what is wrong with it.
  if (!on_platform(job.engine) || job.platform.empty()) return inputs;
  try {
    check_input_file(job.platform, "platform", platform_file_limit);
  } catch (const InputError&) {
    return inputs;
  }
  inputs.push_back({"platform", job.platform, file_digest(job.platform, "platform")});
  return inputs;
}

std::string changed_input(const std::vector<TrainJob::InputFile>& then, const std::vector<TrainJob::InputFile>& now) {
  for (const TrainJob::InputFile& f : now)
    for (const TrainJob::InputFile& g : then)
      if (f.path == g.path && f.digest != g.digest)
        return f.what + " " + f.path + " (" + g.digest + " then, " + f.digest + " now)";
  return "";
}

void finish_front_end(TrainJob& job, bool force) {
  job.force = force;
  // What the ranks will read again, as this front end read it.
  job.inputs = inputs_read(job);
  resolve_collectives(job);
  // The memory the run needs, against this machine's, before any rank starts (the ranks
  // themselves only record it); then the counts its collectives pass to MPI.
  check_memory_fits(estimate_memory(job), machine_memory(), force, "");
  check_message_counts(job);
  set_config_json(job);
}

}  // namespace wulf
