// `wulf model --overlap`: the time per iteration of --strategy overlap and of block with the
// same allreduce, predicted (predict/overlap_model.hpp) for lists of p, b and bucket sizes,
// with the constants of the platform: each host's speed over the net's flops (as --compute
// flops charges them), the route and links between the ranks' hosts, and the platform's
// collective overhead. One rank per host, in the platform's order.
#include "cli/cli.hpp"
#include "cli/model_overlap.hpp"
#include "cli/options.hpp"
#include "cli/train_options.hpp"
#include "cli/train_resolve.hpp"
#include "comm/allreduce_algorithms.hpp"
#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "nn/mlp.hpp"
#include "predict/overlap_model.hpp"
#include "train/buckets.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "engine/process.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace po = boost::program_options;

namespace wulf {
namespace {

constexpr Range bucket_range{.lo = 0, .hi = 1099511627776.0};  // --bucket-bytes, as wulf train's
constexpr Range progress_range{.lo = 0, .hi = 1e18};

// The options only --overlap reads, and those it passes to wulf train's resolution of the net.
constexpr const char* overlap_only[] = {"platform", "problem", "hidden", "precision", "bias", "train-size",
                                        "test-size", "bucket-bytes", "bucket-allreduce", "progress-flops"};
constexpr const char* passed[] = {"hidden", "precision", "bias", "train-size", "test-size"};

struct OverlapJob {
  std::string platform, problem_spec;
  std::vector<int> ps;
  std::vector<std::size_t> bs, buckets;
  NbAlgorithm algorithm = NbAlgorithm::ring;
  double progress_flops = 0;
  NetSpec spec;
  std::string net_text;  // "digits 784-256-10 float"
  std::size_t value_bytes = 4, train = 0, checked = 0;  // checked: patterns of the iteration's test pass
  std::vector<PlatformHost> hosts;
  std::string out;
};

OverlapJob read_overlap_job(const po::variables_map& vm) {
  for (const char* required : {"platform", "problem"})
    if (!vm.count(required)) throw InputError("wulf model --overlap: --" + std::string(required) + " is required");
  if (vm.count("profile"))
    throw InputError("wulf model --overlap: the constants come from --platform (its hosts' speed and links), "
                     "not a --profile");
  if (vm.count("average-interval")) throw InputError("--average-interval is seed 000's model's, not --overlap's");
  OverlapJob job;
  job.platform = vm["platform"].as<std::string>();
  job.problem_spec = vm["problem"].as<std::string>();
  if (vm.count("out")) job.out = vm["out"].as<std::string>();
  for (long long p : whole_list(vm["np"].as<std::string>(), "np", kRanksRange)) job.ps.push_back(static_cast<int>(p));
  job.bs = size_list(vm["block"].as<std::string>(), "block", kBlockRange);
  job.buckets = size_list(vm["bucket-bytes"].as<std::string>(), "bucket-bytes", bucket_range);
  job.algorithm = parse_nb_algorithm(vm["bucket-allreduce"].as<std::string>(), "--bucket-allreduce");
  if (!allreduce_of(job.algorithm).modelled)
    throw InputError("--bucket-allreduce " + std::string(to_string(job.algorithm)) + ": the overlap model works out " +
                     allreduce_names(AllreduceRows::modelled) + " only; simulate it (wulf train --engine sim)");
  job.progress_flops = vm["progress-flops"].as<double>();
  const int most = *std::max_element(job.ps.begin(), job.ps.end());
  job.hosts = platform_hosts(job.platform).hosts;
  if (static_cast<std::size_t>(most) > job.hosts.size())
    throw InputError(fmt::format("--np {}: the model puts one rank on each host, and {} has {}", most, job.platform,
                                 job.hosts.size()));
  for (int p : job.ps)
    for (std::size_t b : job.bs)
      if (b < static_cast<std::size_t>(p))
        throw InputError(fmt::format("--block {} < --np {}: every rank needs a pattern of each block", b, p));
  // The net, its precision and the data's sizes as wulf train resolves them for a time-only
  // simulation of the largest cell (no data read beyond its shape).
  std::vector<std::string> args{"--problem", job.problem_spec, "--engine", "sim", "--platform", job.platform,
                                "--np", std::to_string(most), "--ranks-per-host", "1", "--strategy", "overlap",
                                "--numerics", "off", "--compute", "flops", "--quiet",
                                "--block", std::to_string(*std::max_element(job.bs.begin(), job.bs.end()))};
  for (const char* name : passed)
    if (vm.count(name)) args.insert(args.end(), {std::string("--") + name, vm[name].as<std::string>()});
  const TrainJob train = resolve(parse_train(args, train_options()));
  job.spec = train.spec;
  job.value_bytes = train.double_precision ? sizeof(double) : sizeof(float);
  job.train = train.problem.train_total;
  job.checked = train.problem.test_total > 0 ? train.problem.test_total : train.problem.train_total;
  job.net_text = fmt::format("{} {} {}", train.problem.name, job.spec.describe(), train.double_precision ? "double" : "float");
  if (!job.out.empty()) check_output(job.out, "--out", {{"--platform", job.platform}});
  return job;
}

// What one rank of p computes in one update of b patterns: the platform's first host's speed
// over the flops wulf charges (--compute flops).
OverlapWork rank_work(const OverlapJob& job, const PlatformHost& host, double call_s, int p, std::size_t b) {
  const KernelFlops f = job.spec.flops();
  const double share = std::ceil(static_cast<double>(b) / p);  // the busiest rank's patterns
  OverlapWork w;
  w.forward_s = share * f.forward / host.speed;
  for (int l = 1; l <= job.spec.timed_layers(); ++l) {
    const double flops = share * job.spec.layer_backward_flops(l);
    w.backward_s.push_back(flops / host.speed);
    w.slices.push_back(progress_slices(flops, job.progress_flops));
  }
  w.update_s = f.update / host.speed;
  w.call_s = call_s;
  w.test_s = std::ceil(static_cast<double>(job.checked) / p) * f.test() / host.speed;
  return w;
}

}  // namespace

po::options_description model_overlap_options() {
  po::options_description options("--overlap (issue 33): --strategy overlap against block, from a platform", 110, 55);
  options.add_options()
      ("overlap", po::bool_switch(), "predict --strategy overlap and block with the same allreduce on --platform")
      ("platform", po::value<std::string>(), "the SimGrid platform file: one rank on each host, in its order")
      ("problem", po::value<std::string>(), "the problem (wulf train's names), for its net's sizes")
      ("hidden", po::value<std::string>(), "as wulf train's (default: the problem's)")
      ("precision", po::value<std::string>(), "float|double, as wulf train's")
      ("bias", po::value<std::string>(), "on|off, as wulf train's")
      ("train-size", po::value<std::string>(), "training patterns n, as wulf train's: n / b updates per iteration")
      ("test-size", po::value<std::string>(), "test patterns, as wulf train's: each iteration's test pass")
      ("bucket-bytes", po::value<std::string>()->default_value("26214400"),
       fmt::format("bucket sizes, a list, each in {} (wulf train --bucket-bytes)", range_text(bucket_range)).c_str())
      ("bucket-allreduce", po::value<std::string>()->default_value("ring"),
       (allreduce_names(AllreduceRows::modelled) + " (wulf train's)").c_str())
      ("progress-flops", number_in("progress-flops", progress_range)->default_value(0),
       "wulf train's: slices of a layer's backward part, a progress point between them");
  return options;
}

void check_overlap_scope(const po::variables_map& vm) {
  if (vm["overlap"].as<bool>()) return;
  for (const char* name : overlap_only)
    if (vm.count(name) && !vm[name].defaulted()) throw InputError("--" + std::string(name) + " is for --overlap");
}

int overlap_model_command(const po::variables_map& vm, std::ostream& out) {
  const OverlapJob job = read_overlap_job(vm);
  const std::vector<GradientTensor> tensors = backward_tensors(job.spec);
  const std::size_t weights = job.spec.parameter_count();
  fmt::print(out, "overlap model, platform {}: {}, {} weights ({:.2f} MiB of gradients in {} tensors), {} allreduce\n",
             job.platform, job.net_text, weights, static_cast<double>(weights * job.value_bytes) / (1 << 20),
             tensors.size(), to_string(job.algorithm));
  Json grid = Json::array();
  std::string table;
  for (int p : job.ps) {
    std::string list;
    for (int r = 0; r < p; ++r) list += (r ? "," : "") + job.hosts[static_cast<std::size_t>(r)].name;
    Json hosts;
    const StepNetwork net = p > 1 ? ring_step_network(read_network(job.platform, list, 1.0, hosts)) : StepNetwork{};
    const double call_s = p > 1 ? collective_overhead_s(hosts.at(0), job.platform) : 0.0;
    fmt::print(out, "  p = {}: a step alone {:.1f} us + {:.3f} ns per byte ({:.1f} MB/s); collective call {:.1f} us; host {:.3g} Gflop/s\n",
               p, net.latency_s * 1e6, net.byte_s * 1e9, p > 1 ? 1e-6 / net.byte_s : 0.0, call_s * 1e6,
               job.hosts[0].speed / 1e9);
    for (std::size_t b : job.bs) {
      // The errors' sums run --allreduce: block's is the buckets' algorithm, overlap's the
      // default, recursive doubling at 32 bytes (Open MPI 4.1's choice).
      const OverlapWork work = rank_work(job, job.hosts[0], call_s, p, b);
      OverlapWork block_work = work;
      block_work.sums_algorithm = job.algorithm;
      const double updates = static_cast<double>(job.train) / static_cast<double>(b);
      const OverlapPrediction block = predict_blocking(block_work, weights, job.algorithm, p, job.value_bytes, net);
      const double block_s = block.iteration_s(updates);
      for (std::size_t bucket : job.buckets) {
        check_interrupt();
        const std::vector<BucketCut> cuts = cut_buckets(tensors, job.value_bytes, bucket);
        const OverlapPrediction o = predict_overlap(work, cuts, job.algorithm, p, job.value_bytes, net);
        const double time_s = o.iteration_s(updates);
        const double hidden = o.comm_alone_s > 0 ? 1 - o.exposed_s / o.comm_alone_s : 0;
        table += fmt::format("{:>5} {:>7} {:>11} {:>7} | {:>9.4f} {:>9.4f} {:>7.1f}% | {:>9.4f} {:>9.4f} {:>6.1f}%\n", p, b,
                             bucket, cuts.size(), block_s, time_s, 100 * (1 - time_s / block_s), o.comm_alone_s,
                             o.exposed_s, 100 * hidden);
        Json e = Json::object();
        e["p"] = p, e["b"] = b, e["bucket_bytes"] = bucket, e["buckets"] = cuts.size();
        e["time_s"] = time_s, e["block_s"] = block_s, e["saving"] = 1 - time_s / block_s;
        e["backward_end_s"] = o.backward_end_s, e["exposed_comm_s"] = o.exposed_s, e["comm_alone_s"] = o.comm_alone_s;
        e["hidden"] = hidden, e["block_comm_s"] = block.exposed_s, e["progress_points"] = o.progress_points;
        e["bucket_exposed_s"] = o.bucket_exposed_s;
        e["step_latency_s"] = net.latency_s, e["step_byte_s"] = net.byte_s, e["collective_call_s"] = call_s;
        grid.push_back(std::move(e));
      }
    }
  }
  fmt::print(out, "{:>5} {:>7} {:>11} {:>7} | {:>9} {:>9} {:>8} | {:>9} {:>9} {:>7}\n", "p", "b", "bucket B", "buckets",
             "block s", "overlap s", "saving", "comm s", "exposed s", "hidden");
  out << table;
  out << "per iteration: n / b updates and the test pass; comm s: the buckets' allreduces one after another (their "
         "collective calls included), hidden: the part of it behind the backward pass\n";
  if (!job.out.empty()) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"]["command"] = "model --overlap";
    record["config"]["platform"] = job.platform;
    record["config"]["net"] = job.net_text;
    record["config"]["bucket_allreduce"] = to_string(job.algorithm);
    record["config"]["progress_flops"] = job.progress_flops;
    record["config"]["versions"] = versions_json();
    record["grid"] = std::move(grid);
    write_file_atomically(job.out, record_text(record) + "\n");
    out << "record: " << job.out << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
