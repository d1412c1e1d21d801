#include "job/rank.hpp"

#include "comm/own_comm.hpp"
#include "comm/rank_env.hpp"
#include "job/job_json.hpp"
#include "job/memory_estimate.hpp"
#include "job/run_train.hpp"
#include "job/train_job.hpp"
#include "util/files.hpp"
#include "comm/comm_bench.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

#include <new>
#include <ostream>

namespace wulf {
namespace {

// A rank of --engine testbed: its host's speed and collective overhead from the testbed's
// description, which also goes into the record.
void join_testbed(TrainJob& job, int rank) {
  const Json bed = testbed_description();
  if (bed.is_null())
    throw InputError("--engine testbed: this rank was not started by wulf's testbed (no WULF_TESTBED_FILE); "
                     "run wulf train --engine testbed, not the rank program");
  const TestbedRankFacts facts = testbed_rank_facts(bed, rank);
  job.compute.host_speed = facts.speed_flops;
  job.compute.collective_overhead_s = facts.collective_overhead_s;
  job.compute.device = facts.device;
  job.compute.efficiency = facts.efficiency;
  job.config_json["testbed"] = bed;
}

// The job the front end handed over: --job FILE or --job-text JSON.
Json read_job_args(const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "--job") return read_json_file(args[1]);
  if (args.size() == 2 && args[0] == "--job-text") return parse_json(args[1], "--job-text");
  throw InputError("the rank program takes --job FILE or --job-text JSON, as wulf train writes them (started by "
                   "hand? run wulf train --engine real|sim instead)");
}

}  // namespace

int run_rank_bench(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
                   std::ostream& out, std::ostream& err) {
  report_rank_started(comm.rank());
  std::string message;
  try {
    const CommBenchConfig bench = comm_bench_from_json(read_job_args(args), "the bench job");
    ComputeConfig config;  // charges no compute but the gap: only the collectives' own cost
    if (bench.gap_s > 0) {  // the gap between back-to-back calls, charged as one pattern's forward pass
      config.mode = ComputeMode::calibrated;
      config.profile.Tf = bench.gap_s;
    }
    config.bw_scale = bench.bw_scale;
    config.lat_scale = bench.lat_scale;
    config.dilation = bench.dilation;
    comm.set_time_dilation(bench.dilation);
    if (const Json bed = testbed_description(); !bed.is_null())
      config.collective_overhead_s = testbed_rank_facts(bed, comm.rank()).collective_overhead_s;
    const std::unique_ptr<Compute> compute = make_compute(config);
    compute->prepare(comm);
    if (const OwnCollectives own{bench.reduce,     bench.bcast,      bench.gather,           bench.allreduce,
                                 bench.rank_nodes, bench.rank_rings, bench.composed_redbcast};
        own.any()) {
      OwnCollectivesComm owned(comm, own,
                               bench.reduce_layout.empty() ? ReduceLayout{}
                                                           : ReduceLayout::parse(bench.reduce_layout, comm.size()));
      run_comm_bench(bench, owned, *compute, out, owned.reducer());
    } else {
      run_comm_bench(bench, comm, *compute, out);
    }
    if (comm.rank() == 0) report_rank_status(exit_ok, 0, "finished");
    return exit_ok;
  } catch (const std::exception& e) {
    message = std::string("error: ") + e.what();
  }
  report_rank_status(exit_input, comm.rank(), message);
  if (comm.size() > 1) comm.abort(message, exit_input);
  err << "wulf: " << message << "\n";
  return exit_input;
}

int run_rank(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
             std::ostream& out, std::ostream& err) {
  // Every rank reads the job the front end resolved and loads its share of the data; a fault
  // found only here (a data file that vanished or changed, memory) ends all ranks with this
  // rank named, never a hang.
  report_rank_started(comm.rank());
  std::string message;
  int code = exit_ok;
  TrainJob job;
  try {
    const Json config = read_job_args(args);
    job = job_from_json(config, "the job");
    if (job.np != comm.size())
      throw InputError("the job is for " + std::to_string(job.np) + " ranks but " + std::to_string(comm.size()) +
                       " were started");
    load_problem(job, RankPlace{comm.rank(), comm.size(), true});
    check_job(job);
    // The data files, --weights-in and the platform must be those the front end read: rank 0
    // reads each again for its digest once the ranks have loaded theirs (under SMPI the ranks
    // share one process, where a log of each rank's own reads cannot be kept apart).
    if (comm.rank() == 0) {
      std::vector<TrainJob::InputFile> now;
      for (const TrainJob::InputFile& f : job.inputs) now.push_back({f.what, f.path, file_digest(f.path, f.what)});
      if (const std::string changed = changed_input(job.inputs, now); !changed.empty())
        throw InputError(changed + " changed after wulf read it for this run: every rank must run on what wulf "
                         "checked; run it again");
    }
    job.config_json = config;
    job.config_json["load_s"] = job.load_seconds;  // this rank's own
    if (job.engine == Engine::testbed) join_testbed(job, comm.rank());
    const std::unique_ptr<Compute> compute = make_compute(job.compute);
    // sim: the what-if scales of the links, before any message (the own collectives' split).
    compute->prepare(comm);
    if (job.engine == Engine::sim)
      comm.set_sim_messages(sim_messages_named(job.sim_messages).value(),
                            static_cast<std::size_t>(open_mpi_eager_bytes(job.eager_limit)));
    // wulf's own collectives wrap the engine's communicator; the strategies see one Comm.
    std::unique_ptr<OwnCollectivesComm> owned;
    OwnCollectives own{job.reduce, job.bcast, job.gather, job.allreduce, job.config.rank_nodes,
                       job.config.rank_rings};
    own.composed_redbcast = job.engine == Engine::sim && job.allreduce == "redbcast" &&
                            redbcast_runs_the_runs(job.reduce, job.bcast);
    if (own.any())
      owned = std::make_unique<OwnCollectivesComm>(comm, own, job.reduce_layout, [&c = *compute](std::size_t bytes) {
        return c.shared_scratch(bytes);
      });
    Comm& used = owned ? static_cast<Comm&>(*owned) : comm;
    const int done = run_train(job, used, *compute, out, err);
    if (comm.rank() == 0) report_rank_status(done, 0, "finished");
    return done;
  } catch (const InputError& e) {
    message = std::string("error: ") + e.what(), code = exit_input;
  } catch (const std::bad_alloc&) {  // with the estimate's advice once the data's shape is known
    message = "error: out of memory" + (job.problem.train_total > 0 ? ": " + out_of_memory_advice(job) : "");
    code = exit_internal;
  } catch (const std::exception& e) {
    message = std::string("internal error: ") + e.what(), code = exit_internal;
  }
  report_rank_status(code, comm.rank(), message);
  if (comm.size() > 1) comm.abort(message, code);
  err << "wulf: " << message << "\n";
  return code;
}

}  // namespace wulf
