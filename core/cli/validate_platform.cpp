// `wulf validate --testbed --platform P`: any platform, the simulation against the testbed
// (real Open MPI over the platform's network built on this machine, engine/testbed.hpp):
// the allreduce and reduce grid, and one training run, time to the end, one rank a host.
// Both engines run the same named algorithms (Open MPI 4.1's choice), so what differs is the
// network and the MPI library's way of using it. One rank a host, because ranks that share
// a host talk through its memory on the testbed (the real machine's loopback, unshaped),
// while SimGrid sends them through the platform's route from the host to itself (a
// cluster without a loopback link: the host's own link, up and down).
#include "cli/cli.hpp"
#include "cli/launcher.hpp"
#include "cli/runner.hpp"
#include "cli/train_options.hpp"

#include "engine/launch.hpp"
#include "engine/testbed.hpp"
#include "job/memory_estimate.hpp"
#include "train/result_record.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/json.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

namespace wulf {
namespace {

// The grid's ranks: those of these the platform holds.
constexpr int kGridRanks[] = {2, 4, 8};

Job grid_bench(const std::string& platform, const PlatformGrid& grid, const std::string& engine,
               const std::string& nps, const std::string& record, const std::string& timeout,
               const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"platform",      "bench",       platform,      "--engine",
                                engine,          "--np",        nps,           "--collectives",
                                "allreduce,reduce", "--elements", grid.elements, "--repeat",
                                std::to_string(grid.repeat), "--no-pingpong", "--ranks-per-host", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  if (!timeout.empty()) args.insert(args.end(), {"--timeout", timeout});
  Job job{args, record, {}, {}};
  // Its largest smpirun (the most ranks, the most doubles, the reduce's scratch): what it holds
  // at once beside the grid's other simulations (the runner's pool fits them into memory).
  if (engine == "sim") {
    const std::vector<std::size_t> sizes = size_list(grid.elements, "elements", kBenchElementsRange);
    const std::vector<std::size_t> ranks = size_list(nps, "np", kRanksRange);
    for (const char* what : {"allreduce", "reduce"})
      job.memory_bytes = std::max(job.memory_bytes, estimate_bench_memory(what, static_cast<int>(ranks.back()),
                                                                          *std::max_element(sizes.begin(), sizes.end()),
                                                                          sizeof(double), "default")
                                                        .machine_bytes);
  }
  return job;
}

// The simulation without the links' latency, each latency times 1e-6 (--lat-scale's least):
// what the latency, which the testbed emulates too, adds to each cell.
const std::vector<std::string> kNoLatency{"--lat-scale", "1e-6"};

// Seed 000's function example, 3 epochs of blocks of 64 at p ranks, compute charged by the
// platform's host speed: a run whose time mixes compute and the gradients' allreduce.
Job training(const std::string& platform, const std::string& engine, int p, const std::string& record,
             const std::string& timeout) {
  std::vector<std::string> args{"train",    "--problem", "function", "--bias",      "off",  "--block",
                                "64",       "--epochs",  "3",        "--engine",    engine, "--np",
                                std::to_string(p), "--platform", platform, "--compute", "flops",
                                "--ranks-per-host", "1", "--quiet"};
  if (!timeout.empty()) args.insert(args.end(), {"--timeout", timeout});
  return {args, record, {}, {}};
}

// The grid's rows by (collective, p, size): time and algorithm.
std::map<std::tuple<std::string, int, long long>, Json> grid_rows(const Json& record) {
  std::map<std::tuple<std::string, int, long long>, Json> rows;
  for (const Json& row : record.at("collectives"))
    rows[{row.at("what").get<std::string>(), row.at("np").get<int>(), row.at("size").get<long long>()}] = row;
  return rows;
}

}  // namespace

int validate_testbed_platform(const std::string& platform, const PlatformGrid& grid, const std::string& out_path,
                              const std::string& timeout, std::ostream& out, std::ostream& err) {
  const long long hosts = static_cast<long long>(platform_hosts(platform).hosts.size());  // read, and checked
  if (!out_path.empty() && is_leader()) check_output(out_path, "--out", {});       // not the platform
  if (is_leader()) ready_testbed("wulf validate --testbed --platform", err);
  std::string nps;
  int most = 0;
  for (const int p : kGridRanks)
    if (p <= hosts) nps += (nps.empty() ? "" : ",") + std::to_string(p), most = p;
  if (most == 0) throw InputError("--platform " + platform + ": it has 1 host; the grid needs 2, one rank on each");
  const TempDir dir("validate");
  out << "Platform " << platform << ": the simulation against the testbed (real Open MPI over the platform's\n"
      << "network built on this machine), one rank a host, times in the platform's own seconds.\n\n" << std::flush;
  const std::vector<Job> sims{grid_bench(platform, grid, "sim", nps, dir.file("grid-sim.json"), timeout),
                              training(platform, "sim", most, dir.file("train-sim.json"), timeout),
                              grid_bench(platform, grid, "sim", nps, dir.file("grid-sim-0.json"), timeout, kNoLatency)};
  const std::vector<Job> beds{grid_bench(platform, grid, "testbed", nps, dir.file("grid-testbed.json"), timeout),
                              training(platform, "testbed", most, dir.file("train-testbed.json"), timeout)};
  const Runner runner;
  const std::vector<JobResult> sim = runner.run(sims), bed = runner.run(beds, Spread::one_at_a_time);
  const std::vector<std::string> what{"the grid's simulation", "the training run's simulation",
                                      "the grid on the testbed", "the training run on the testbed"};
  const std::string command = "wulf validate --platform";
  for (std::size_t k = 0; k < 2; ++k) check_wulf_run(sim[k], command, what[k]), check_wulf_run(bed[k], command, what[2 + k]);
  check_wulf_run(sim[2], command, "the grid's simulation without latency");

  const auto sim_rows = grid_rows(sim[0].record), bed_rows = grid_rows(bed[0].record);
  const auto flat_rows = grid_rows(sim[2].record);
  fmt::print(out, "{:<10}{:>4}{:>10}{:>14}{:>13}{:>13}{:>10}{:>16}{:>10}\n", "collective", "p", "doubles", "algorithm",
             "simulation", "testbed", "sim/bed", "sim, no lat.", "/bed");
  Json cells = Json::array();
  int within = 0;
  double worst = 0;
  for (const auto& [key, s] : sim_rows) {
    const auto b = bed_rows.find(key);
    if (b == bed_rows.end()) throw InputError("wulf validate --platform: the testbed's grid lacks a row of the simulation's");
    const double ts = s.at("time_s").get<double>(), tb = b->second.at("time_s").get<double>();
    const double t0 = flat_rows.at(key).at("time_s").get<double>();
    const std::string algorithm = s.value("algorithm", std::string("-"));
    const double e = error_pct(ts, tb);
    within += std::abs(e) <= 5;
    worst = std::max(worst, std::abs(e));
    fmt::print(out, "{:<10}{:>4}{:>10}{:>14}{:>10.4g} ms{:>10.4g} ms{:>9.1f}%{:>13.4g} ms{:>9.1f}%\n", std::get<0>(key),
               std::get<1>(key), std::get<2>(key), algorithm, ts * 1e3, tb * 1e3, e, t0 * 1e3, error_pct(t0, tb));
    cells.push_back({{"collective", std::get<0>(key)},
                    {"np", std::get<1>(key)},
                    {"size", std::get<2>(key)},
                    {"algorithm", algorithm},
                    {"testbed_algorithm", b->second.value("algorithm", std::string("-"))},
                    {"simulation_s", ts},
                    {"testbed_s", tb},
                    {"simulation_vs_testbed_pct", e},
                    {"simulation_without_latency_s", t0},
                    {"simulation_without_latency_vs_testbed_pct", error_pct(t0, tb)}});
  }
  fmt::print(out, "the simulation is within 5% of the testbed in {} of {} cells; the largest error is {:.1f}%\n\n",
             within, cells.size(), worst);
  const double train_sim = json_field<double>(sim[1].record, "/final/time_s", sims[1].record);
  const double train_bed = json_field<double>(bed[1].record, "/final/time_s", beds[1].record);
  fmt::print(out, "training (function example, {} ranks on as many hosts, blocks of 64, 3 epochs, compute at the "
                  "hosts' speed):\n"
                  "  simulation {:.4g} s, testbed {:.4g} s, sim/bed {:.1f}%\n",
             most, train_sim, train_bed, error_pct(train_sim, train_bed));
  out << std::flush;
  if (!out_path.empty() && is_leader()) {
    Json record = Json::object();
    record["wulf_record"] = 1;
    record["config"] = {{"command", "validate --testbed --platform"},
                        {"platform", platform},
                        {"grid", {{"np", nps}, {"doubles", grid.elements}, {"repeat", grid.repeat}, {"ranks_per_host", 1}}},
                        {"training", sims[1].args},
                        {"testbed", bed[0].record.at("config").at("testbed")},
                        {"versions", versions_json()}};
    record["grid"] = std::move(cells);
    record["grid_within_5pct"] = within;
    record["training"] = {{"np", most},
                          {"simulation_s", train_sim},
                          {"testbed_s", train_bed},
                          {"simulation_vs_testbed_pct", error_pct(train_sim, train_bed)},
                          {"simulation_collectives", sim[1].record.at("config").at("collectives")},
                          {"testbed_collectives", bed[1].record.at("config").at("collectives")}};
    write_file_atomically(out_path, record_text(record) + "\n");
    out << "record: " << out_path << "\n";
  }
  return exit_ok;
}

}  // namespace wulf
