// One `wulf train` run as data: the job the front end resolves once from the options and the
// problem's defaults (cli/train_resolve), hands to every rank as JSON (job/job_json) and
// writes as the record's "config"; and what a process makes of it before it trains.
#pragma once

#include "comm/allreduce_algorithms.hpp"
#include "comm/compute.hpp"
#include "comm/staged_reduce.hpp"
#include "data/problems.hpp"
#include "nn/mlp.hpp"
#include "train/trainer.hpp"
#include "util/json.hpp"

#include <array>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wulf {

// Where a run's ranks run: this process, mpirun, smpirun on a platform, or mpirun over an
// emulated cluster of a platform's hosts (engine/testbed).
enum class Engine { seq, real, sim, testbed };
std::string_view to_string(Engine e);
Engine parse_engine(std::string_view name);  // throws InputError
// "float" or "double": the job's arithmetic, as the record and a profile name it.
inline const char* precision_name(bool double_precision) { return double_precision ? "double" : "float"; }
// --precision's values: the arithmetic's types, and the 16-bit ones a time-only run is charged
// and sent in.
inline constexpr std::array<std::string_view, 4> precision_names{"float", "double", "bf16", "fp16"};
// The names a job's collectives and mpirun's oversubscription take; wulf train's options
// accept these and a record's job is read against them. The allreduces are allreduce_table's.
inline constexpr std::array<std::string_view, allreduce_count + 1> allreduce_algorithms = [] {
  std::array<std::string_view, allreduce_count + 1> names{"default"};
  for (std::size_t i = 0; i < allreduce_count; ++i) names[i + 1] = allreduce_table[i].name;
  return names;
}();
// Open MPI 4.1's algorithms by comm/collective_choice's names (test_collective_choice holds
// the lists together), and wulf's own reduces (wulf-binomial, four-stage).
inline constexpr std::array<std::string_view, 9> reduce_algorithms{
    "default", "linear", "chain", "pipeline", "binary", "binomial", "in-order-binary", "wulf-binomial", "four-stage"};
inline constexpr std::array<std::string_view, 9> bcast_algorithms{
    "default", "linear", "chain", "pipeline", "split-bintree", "bintree", "binomial", "knomial",
    "scatter-allgather"};
inline constexpr std::array<std::string_view, 6> allgather_algorithms{"default", "bruck", "rdb", "ring", "neighbor",
                                                                       "two-proc"};
inline constexpr std::array<std::string_view, 4> gather_algorithms{"default", "linear", "binomial", "linear-sync"};
inline constexpr std::array<std::string_view, 3> oversubscribe_modes{"auto", "on", "off"};

// sim and testbed run on a platform file's hosts.
inline bool on_platform(Engine e) { return e == Engine::sim || e == Engine::testbed; }

struct TrainJob {
  // The job: everything a rank needs, resolved. job_json writes it and reads it back.
  std::string problem_name;  // canonical, with its parameter ("digits:28x28", "fann:PATH")
  ProblemOptions data;       // seed, MNIST folder, FANN test set, sizes (the place fields unset)
  NetSpec spec;
  TrainConfig config;
  bool double_precision = false;
  std::string half;  // --precision bf16 or fp16 (config.value_bytes 2, time only); empty: none
  Engine engine = Engine::seq;
  int np = 1;
  Strategy strategy{};  // and config.strategy, with its settings
  // Each collective's algorithm: "default" until the front end resolves it
  // (comm/collective_choice), then the algorithm every engine runs, and how it was chosen
  // (empty until then). The gathers have no option: only default, or a record's choice.
  std::string allreduce = "default";
  std::string allreduce_chosen_by;
  std::string reduce = "default";
  std::string reduce_chosen_by;
  ReduceLayout reduce_layout;  // four-stage (empty: the library reduce)
  bool has_reduce_layout = false;
  std::string bcast = "default";
  std::string bcast_chosen_by;
  std::string allgather = "default";
  std::string allgather_chosen_by;
  std::string gather = "default";
  std::string gather_chosen_by;
  std::string platform;
  ComputeConfig compute;  // host_speed and collective_overhead_s are the testbed rank's own
  std::string oversubscribe = "auto";
  long long grow = 0;            // sim what-if: hosts of the grown cluster (0: none)
  long long eager_limit = 0;     // sim, testbed: --eager-limit bytes (0: the engine's default)
  // sim: the allocator the front end preloads into smpirun (engine/launch's sim_allocator), for
  // the record only: it changes wall time, never a simulated second.
  std::string sim_malloc;
  std::string sim_messages = "s4u";  // sim --sim-messages: how wulf's own schedules' messages travel (s4u, fifo, smpi)
  long long ranks_per_host = 0;  // sim, testbed: most ranks on one host (0: its cores)
  std::vector<std::string> rank_hosts;  // sim, testbed --hosts: rank r's host at r (empty: the platform's order)
  std::string hostfile;                 // real --hostfile (empty: this machine)
  std::vector<std::string> mpirun_args; // real --mpirun-args, word by word
  double machine_cost_usd = 0;          // price/performance (0: none; sim: the platform's)
  std::string out_path;     // --out
  std::string weights_path; // --weights-out
  std::string weights_in;   // --weights-in, whose values are initial_weights
  // The digest of the layer file the front end read (a net given by its layers): each rank
  // checks the file it reads against it, and --rerun the file against the record's.
  std::string layer_file_digest;
  // The files the front end read that the ranks read again (IDX and FANN data files,
  // --weights-in, and the platform file that smpirun or the testbed loads), each with its
  // digest then: rank 0 checks each one once the ranks have loaded theirs, and --rerun each
  // one against the record's.
  struct InputFile {
    std::string what, path, digest;
  };
  std::vector<InputFile> inputs;
  bool quiet = false;
  bool force = false;  // --force: past this machine's memory checks (finish_front_end sets it)

  // What this process made of the job.
  Problem problem;                     // the data this process holds: its share, or only the shapes
  std::vector<TrainConfig> sessions;   // a strategy that runs sessions: their configurations
  std::vector<double> initial_weights; // --weights-in's values
  double load_seconds = 0;
  Json config_json;  // the record's "config": the job (job_json), its facts and the memory estimate
  // Things the user should know before training that do not stop it (the front end prints
  // them): targets the output activation cannot reach, say.
  std::vector<std::string> warnings;
};

// Where this rank stands; the front end is rank 0 of 1.
// The files the ranks will read again, with their digests now: the data files this thread's
// InputLog holds, and job's platform under sim and testbed
// (TrainJob::inputs); and the first of `now` whose digest is not `then`'s, for a message ("IDX
// file /d/x (fnv1a64:... then, fnv1a64:... now)"), or "".
std::vector<TrainJob::InputFile> inputs_read(const TrainJob& job);
std::string changed_input(const std::vector<TrainJob::InputFile>& then, const std::vector<TrainJob::InputFile>& now);

struct RankPlace {
  int rank = 0;
  int ranks = 1;
  bool in_rank_program = false;
};

// Reads job.problem_name's data with job.data: the part this rank trains on (data_layout of
// job.config's strategy), or only its shape where nothing is trained here (the front end of
// a parallel run, --numerics off). Sets job.problem and job.load_seconds.
void load_problem(TrainJob& job, const RankPlace& place);

// Checks the job against its data and the files it reads, in every process that runs it: the
// net fits the problem's inputs and outputs, the training fits its sizes, a profile fits the
// net, --weights-in holds this net (its values are read into job.initial_weights), the
// collectives' counts fit MPI's; a session's sweep is expanded. Throws InputError.
void check_job(TrainJob& job);

// The front end's part: warnings, the memory the run needs against this machine's (force:
// go on anyway) and the record's config (job.config_json).
void finish_front_end(TrainJob& job, bool force);

// The record's config of the job as it stands (job_json plus the estimate of its memory).
void set_config_json(TrainJob& job);

// Whether an allreduce of the job is hierarchical (--allreduce, or overlap's
// --bucket-allreduce), which needs config.rank_nodes: the node of each rank.
bool uses_node_layout(const TrainJob& job);
// The node of each rank where rank r runs on hosts[r]: hosts with the same wulf:group and
// wulf:node are one node, and so are ranks on one host that has no wulf:node. Numbered in
// the order of their first rank.
std::vector<int> rank_nodes_of(const std::vector<std::string>& keys);
// Whether an allreduce of the job is rings (--allreduce, or overlap's --bucket-allreduce), or
// its strategy's collectives go around rings (its descriptor's needs_rank_rings): they need
// config.rank_rings.
bool uses_rings(const TrainJob& job);

// One collective of the job: its name (the record's key, the option's name), its algorithm
// and how it was chosen, the job's own fields (read-only for a const job).
template <class String>
struct JobCollectiveOf {
  std::string_view name;
  String& algorithm;
  String& chosen_by;
};
using JobCollective = JobCollectiveOf<std::string>;
// allreduce, reduce, bcast, allgather, gather, in the record's order.
template <class Job>
auto job_collectives(Job& job) {
  using String = std::conditional_t<std::is_const_v<Job>, const std::string, std::string>;
  return std::array<JobCollectiveOf<String>, 5>{{{"allreduce", job.allreduce, job.allreduce_chosen_by},
                                                 {"reduce", job.reduce, job.reduce_chosen_by},
                                                 {"bcast", job.bcast, job.bcast_chosen_by},
                                                 {"allgather", job.allgather, job.allgather_chosen_by},
                                                 {"gather", job.gather, job.gather_chosen_by}}};
}

}  // namespace wulf
