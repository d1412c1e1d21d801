#include "job/rank.hpp"

#include "comm/staged_reduce.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "job/run_train.hpp"
#include "job/train_job.hpp"
#include "job/train_options.hpp"
#include "predict/comm_bench.hpp"
#include "util/errors.hpp"

#include <boost/program_options.hpp>

#include <ostream>

namespace po = boost::program_options;

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
  job.config_json["testbed"] = bed;
}

}  // namespace

int run_rank_bench(const std::vector<std::string>& args, Comm& comm, const ComputeFactory& make_compute,
                   std::ostream& out, std::ostream& err) {
  report_rank_started(comm.rank());
  std::string message;
  try {
    const CommBenchConfig bench = parse_comm_bench(args);
    ComputeConfig config;  // charges no compute: only the collectives' own cost
    config.bw_scale = bench.bw_scale;
    config.lat_scale = bench.lat_scale;
    config.dilation = bench.dilation;
    comm.set_time_dilation(bench.dilation);
    if (const Json bed = testbed_description(); !bed.is_null())
      config.collective_overhead_s = testbed_rank_facts(bed, comm.rank()).collective_overhead_s;
    const std::unique_ptr<Compute> compute = make_compute(config);
    compute->prepare(comm);
    if (is_point_to_point_reduce(bench.reduce)) {
      ReduceComm reducing(comm, parse_point_to_point_reduce(bench.reduce),
                          bench.reduce_layout.empty() ? ReduceLayout{}
                                                      : ReduceLayout::parse(bench.reduce_layout, comm.size()));
      run_comm_bench(bench, reducing, *compute, out, &reducing.reducer());
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
  // Every rank checks the same options the front end checked; a fault found only here (a
  // file that vanished, memory) ends all ranks with this rank named, never a hang.
  report_rank_started(comm.rank());
  std::string message;
  int code = exit_ok;
  try {
    const po::options_description options = train_options();
    const po::variables_map vm = parse_train(args, options);
    TrainJob job = resolve(vm, RankPlace{comm.rank(), comm.size(), true});
    if (job.np != comm.size())
      throw InputError("--np " + std::to_string(job.np) + " but " + std::to_string(comm.size()) +
                       " ranks were started");
    if (job.engine == "testbed") join_testbed(job, comm.rank());
    const std::unique_ptr<Compute> compute = make_compute(job.compute);
    // wulf's own reduces wrap the engine's communicator; the strategies see one Comm.
    std::unique_ptr<ReduceComm> reducing;
    if (is_point_to_point_reduce(job.reduce))
      reducing = std::make_unique<ReduceComm>(comm, parse_point_to_point_reduce(job.reduce), job.reduce_layout,
                                              [&c = *compute](std::size_t bytes) { return c.shared_scratch(bytes); });
    Comm& used = reducing ? static_cast<Comm&>(*reducing) : comm;
    const int done = run_train(job, used, *compute, out, err);
    if (comm.rank() == 0) report_rank_status(done, 0, "finished");
    return done;
  } catch (const InputError& e) {
    message = std::string("error: ") + e.what(), code = exit_input;
  } catch (const po::error& e) {
    message = std::string("error: ") + e.what(), code = exit_input;
  } catch (const std::exception& e) {
    message = std::string("internal error: ") + e.what(), code = exit_internal;
  }
  report_rank_status(code, comm.rank(), message);
  if (comm.size() > 1) comm.abort(message, code);
  err << "wulf: " << message << "\n";
  return code;
}

}  // namespace wulf
