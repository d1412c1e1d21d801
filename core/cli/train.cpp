// `wulf train`: the options resolved once into a job (cli/train_resolve), then the run itself
// under --engine seq, else its ranks started under mpirun or smpirun with the job as JSON
// (job/rank.hpp is what each rank runs).
#include "cli/cli.hpp"
#include "comm/nb_allreduce.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"

#include "comm/comm.hpp"
#include "comm/compute.hpp"
#include "comm/staged_reduce.hpp"
#include "comm/collective_choice.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "job/device_memory.hpp"
#include "job/job_json.hpp"
#include "job/memory_estimate.hpp"
#include "job/run_train.hpp"
#include "job/train_job.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "util/machine.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <thread>

#include <unistd.h>

namespace po = boost::program_options;

namespace wulf {
namespace {

// The algorithms the job forces on its engine.
Collectives collectives_of(const TrainJob& job) {
  return {job.allreduce, job.reduce, job.bcast, job.allgather, job.gather};
}

const std::string exit_codes_help = fmt::format(
    "exit codes: 0 done, 1 internal error, 2 bad input (nothing ran), 3 diverged or stopped on a fault (the\n"
    "record says where), {} timed out (--timeout), 128 + N ended by signal N: 129 SIGHUP, 130 SIGINT, 143\n"
    "SIGTERM. On a signal or a timeout wulf ends its mpirun or smpirun and every rank (SIGTERM, SIGKILL {:g} s\n"
    "later), removes its temporary files, and writes to --out a record of the config, no history and\n"
    "\"ended\": {{\"status\": \"timed_out\" or \"interrupted\", \"message\"}}; where --out holds a record\n"
    "of a run that finished, that is kept and this one goes beside it (OUT.ended.json for OUT.json).\n",
    static_cast<int>(exit_timeout), kGraceSeconds);

// The ranks' exit code; a failure other than a fault in training is reported.
int ranks_ended(const RanksOutcome& outcome, const char* runner, std::ostream& err) {
  if (outcome.code != exit_ok && outcome.code != exit_diverged)
    err << "wulf train: the " << runner << " run failed (code " << outcome.code << ")"
        << (outcome.failure.empty() ? std::string() : ": " + outcome.failure) << "\n";
  return outcome.code;
}

// How many processes the MPI launcher that started this one (a user's mpirun or mpiexec,
// Slurm's srun) started: 0 when none did, -1 when one did but does not say how many.
long long launcher_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(var); v && *v) {
      const std::optional<double> n = parse_number(v);
      return n && *n >= 1 ? static_cast<long long>(*n) : -1;
    }
  return std::getenv("PMIX_RANK") ? -1 : 0;
}

// wulf train started by an MPI launcher as one of its processes: without --engine it becomes
// the launcher's ranks (--engine real, --np the launcher's size), as --engine real does; an
// engine that would run one training per process, or start a launcher of its own, is
// refused with what to type. Returns the arguments to go on with.
std::vector<std::string> under_a_launcher(std::vector<std::string> args, const po::variables_map& vm) {
  const long long size = launcher_size();
  if (size == 0) return args;
  const std::string engine = vm["engine"].as<std::string>();
  const std::string started =
      size > 0 ? "wulf train was started by an MPI launcher as one of " + std::to_string(size) + " processes"
               : "wulf train was started by an MPI launcher (PMIX_RANK is set)";
  if (!vm["engine"].defaulted() && engine != "real")
    throw InputError(started + ": --engine " + engine +
                     (engine == "sim" ? " starts smpirun itself; run it without mpirun or srun"
                                      : " would run one whole training in each process, all writing one record; "
                                        "drop --engine (or give --engine real) to become the launcher's ranks, "
                                        "or run wulf without mpirun or srun"));
  if (vm["engine"].defaulted()) args.insert(args.end(), {"--engine", "real"});
  if (vm["np"].defaulted()) {
    if (size < 0) throw InputError(started + ", which does not say how many: give --np N");
    args.insert(args.end(), {"--np", std::to_string(size)});
  }
  return args;
}

// Starts the ranks under mpirun and waits for them.
int launch_real(const TrainJob& job, std::ostream& err) {
  const std::string program = wulf_program("wulf-rank-real");
  const RankJobArgs rank_job(job.config_json, true);  // the ranks may be on other machines
  // Already started by the user's MPI launcher: become the rank program.
  if (launcher_size() != 0) {
    std::vector<std::string> argv{program};
    argv.insert(argv.end(), rank_job.args().begin(), rank_job.args().end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    ::execv(program.c_str(), c_argv.data());
    throw InputError("cannot start " + program + ": " + std::strerror(errno));
  }
  const MpiSessionDir session;
  std::vector<std::string> cmd = mpirun_command(job.np, job.oversubscribe, collectives_of(job), program, session,
                                                job.hostfile, job.mpirun_args);
  cmd.insert(cmd.end(), rank_job.args().begin(), rank_job.args().end());
  return ranks_ended(run_ranks(cmd, false, false), "mpirun", err);
}

// The hosts of the platform the ranks go on, in rank order: --hosts' placement, or the
// platform's hosts filled in order (at most --ranks-per-host each); too few cores are refused,
// and so is a what-if that takes the platform's numbers out of wulf's bounds.
PlatformHosts rank_placement(const TrainJob& job, const std::string& platform) {
  const PlatformScales scales{job.compute.bw_scale, job.compute.lat_scale, job.compute.speed_scale};
  return place_ranks(platform, job.platform, job.np, job.ranks_per_host, job.rank_hosts, scales);
}

// What the placement on a platform adds to the job: the platform's price and the four-stage
// reduce's layout, unless given; the record's config follows.
void add_placement(TrainJob& job, const PlatformHosts& placement) {
  if (job.machine_cost_usd == 0 && placement.cost_usd > 0) job.machine_cost_usd = placement.cost_usd;
  if (uses_node_layout(job)) {  // the hierarchical allreduce's nodes: wulf:node, else the host
    job.config.rank_nodes = rank_nodes_of(rank_node_keys(placement.hosts, job.np));
    if (const std::string fault = node_layout_fault(job.config.rank_nodes, job.np); !fault.empty())
      throw InputError("hierarchical allreduce or --sharding hybrid on " + job.platform +
                       " (nodes by the hosts' wulf:node, else the host): " + fault);
  }
  // The modelled devices' memory (wulf:memory), before any rank starts: a net given by its
  // layers that would not fit a rank's device is refused with what makes it fit.
  if (job.spec.table) {
    const DeviceMemory need = device_memory(job);
    for (int r = 0; r < job.np && r < static_cast<int>(placement.hosts.size()); ++r) {
      const PlatformHost& h = placement.hosts[static_cast<std::size_t>(r)];
      if (const std::string fault =
              device_memory_fault(need, h.memory, "host " + h.name + "'s device (wulf:memory of " + job.platform + ")");
          !fault.empty())
        throw InputError("--problem " + job.problem_name + " with --strategy " + std::string(to_string(job.strategy)) +
                         " on " + std::to_string(job.np) + " ranks " + fault);
    }
  }
  if (uses_rings(job)) job.config.rank_rings = rank_rings_of(placement.hosts, job.np, job.platform);
  if (job.reduce == "four-stage" && !job.has_reduce_layout) {
    const std::string layout = reduce_layout_of(placement.hosts, job.np);
    if (!layout.empty()) job.reduce_layout = ReduceLayout::parse(layout, job.np), job.has_reduce_layout = true;
  }
  set_config_json(job);
}

// Starts the ranks under smpirun on the platform (grown, for --grow) and waits for them.
int launch_sim(TrainJob& job, std::ostream& err) {
  std::unique_ptr<GrownPlatform> grown;
  if (job.grow > 0) grown = std::make_unique<GrownPlatform>(job.platform, job.grow);
  const std::string platform = grown ? grown->path() : job.platform;
  const PlatformHosts placement = rank_placement(job, platform);
  const Hostfile hostfile(placement.hosts, job.np);
  add_placement(job, placement);
  std::vector<std::string> cfg = smpi_collective_config(collectives_of(job));
  for (const std::string& setting : smpi_eager_config(job.eager_limit)) cfg.push_back(setting);
  // The shared memory of a time-only run: a mapping the kernel grants (after the devices'
  // check, which add_placement made), in blocks few enough for its count of mappings.
  const MemoryEstimate memory = estimate_memory(job);
  check_shared_mapping(memory, mapping_limit(), job.force);
  if (memory.shared_block > (std::size_t{1} << 20))
    cfg.push_back("smpi/shared-malloc-blocksize:" + std::to_string(memory.shared_block));
  std::vector<std::string> cmd = smpirun_command(platform, hostfile, job.np, cfg, wulf_program("wulf-rank-sim"));
  const RankJobArgs rank_job(job.config_json, false);
  cmd.insert(cmd.end(), rank_job.args().begin(), rank_job.args().end());
  return ranks_ended(run_ranks(cmd, true, false), "smpirun", err);
}

bool holds_a_result(const std::string& path);

// Builds the testbed of the platform's hosts the ranks use, runs them under mpirun across
// it, and removes it however the run ends.
int launch_testbed(TrainJob& job, std::ostream& out, std::ostream& err) {
  ready_testbed("wulf train --engine testbed", err);
  std::unique_ptr<GrownPlatform> grown;
  if (job.grow > 0) grown = std::make_unique<GrownPlatform>(job.platform, job.grow);
  const std::string platform = grown ? grown->path() : job.platform;
  const PlatformHosts placement = rank_placement(job, platform);
  TestbedPlan plan = plan_testbed(platform, hosts_of_ranks(placement.hosts, job.np), job.np, job.compute.dilation,
                                  job.compute.bw_scale);
  plan.platform = job.platform;
  if (job.eager_limit > 0) plan.eager_bytes = job.eager_limit;
  if (!job.quiet) print_testbed(out, plan);
  const Testbed bed(std::move(plan));
  job.compute.dilation = bed.plan().dilation;
  add_placement(job, placement);
  const RankJobArgs rank_job(job.config_json, false);  // the namespaces share this machine's files
  const MpiSessionDir session;
  std::vector<std::string> cmd = bed.command(wulf_program("wulf-rank-real"), session, collectives_of(job));
  cmd.insert(cmd.end(), rank_job.args().begin(), rank_job.args().end());
  const MachineSample before = sample_machine();
  const int code = ranks_ended(run_ranks(cmd, false, false, 0, bed.environment()), "testbed mpirun", err);
  // The testbed's times are the wall clock's: what else the machine did while the ranks ran,
  // and what its hypervisor took, go into the record rank 0 wrote.
  if (code == exit_ok && holds_a_result(job.out_path)) {
    Json record = parse_json(read_text_file(job.out_path, "--out"), job.out_path);
    record["machine"] = machine_use_json(before, sample_machine(), std::thread::hardware_concurrency());
    write_file_atomically(job.out_path, record_text(record) + "\n");
  }
  return code;
}

// Whether the file at path holds a record worth keeping: anything but nothing or the record
// of a run that was ended ("ended"), which says only that the run did not finish.
bool holds_a_result(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) == 0) return false;
  try {
    const Json record = parse_json(read_text_file(path, "--out"), path);
    return !(record.is_object() && record.contains("ended"));
  } catch (const InputError&) {
    return true;  // not a record of wulf's, or too large to be an ended one: not ours to replace
  }
}

// A run that --timeout or a signal ended has no result, but still writes a record: the run's
// config, an empty history, and how it ended ("ended": {"status", "message"}), so that a sweep
// of runs keeps a file for each and says which ran out of time. It goes to --out unless that
// holds a result (holds_a_result: an earlier run's record, or this run's, written just before
// the end), which is kept; then beside it, OUT.ended.json for OUT.json. Returns what the
// message of the end adds: where the record went when not to --out.
std::string write_ended_record(const TrainJob& job, const std::string& status, const std::string& message) {
  if (job.out_path.empty()) return "";
  Json record = Json::object();
  record["wulf_record"] = 1;
  record["config"] = job.config_json;
  record["history"] = Json::array();
  record["ended"] = {{"status", status}, {"message", message}};
  if (!holds_a_result(job.out_path)) {
    write_file_atomically(job.out_path, record_text(record));
    return "";
  }
  std::filesystem::path beside(job.out_path);
  beside.replace_extension(".ended" + beside.extension().string());
  const std::string kept = "; --out " + job.out_path + " keeps the record it held";
  if (holds_a_result(beside.string())) return kept + " (" + beside.string() + " holds a record too: nothing written)";
  write_file_atomically(beside.string(), record_text(record));
  return kept + ", this run's is " + beside.string();
}

int launch(TrainJob& job, std::ostream& out, std::ostream& err) {
  if (job.engine == Engine::real) return launch_real(job, err);
  if (job.engine == Engine::sim) return launch_sim(job, err);
  if (job.engine == Engine::testbed) return launch_testbed(job, out, err);
  SerialComm comm;
  const std::unique_ptr<Compute> compute = make_wall_compute();
  return run_train(job, comm, *compute, out, err, check_interrupt);
}

}  // namespace

int train_command(const std::vector<std::string>& given, std::ostream& out, std::ostream& err) {
  const po::options_description options = train_options();
  po::variables_map vm = parse_train(given, options);
  if (vm.count("help")) {
    out << options << "\n" << problems_help() << "\n" << exit_codes_help;
    return exit_ok;
  }
  const std::vector<std::string> args = under_a_launcher(given, vm);
  if (args.size() != given.size()) vm = parse_train(args, options);
  TrainJob job = vm.count("rerun") ? resolve_rerun(vm) : resolve(vm);
  for (const std::string& w : job.warnings) err << "wulf train: warning: " << w << "\n";
  // From here on, the whole run: the ranks' start, their training, and their end.
  const TimeLimit limit(vm.count("timeout") ? vm["timeout"].as<double>() : 0);
  try {
    return launch(job, out, err);
  } catch (TimedOut& e) {
    e.message += write_ended_record(job, "timed_out", e.message);
    throw;
  } catch (Interrupted& e) {
    e.message += write_ended_record(job, "interrupted", e.message);
    throw;
  } catch (const std::bad_alloc&) {  // --engine seq; a rank says the same (job/rank.cpp)
    err << "wulf: error: out of memory: " << out_of_memory_advice(job) << "\n";
    return exit_internal;
  }
}

}  // namespace wulf
