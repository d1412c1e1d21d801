// The clusters of the seed papers (platforms/): each loads with SimGrid and has the hosts,
// cores and link rates its paper gives, and the calibrated ones reproduce the papers'
// communication timings within the stated tolerances.
#include "cli/cli.hpp"
#include "util/errors.hpp"
#include "comm/compute.hpp"
#include "util/json.hpp"
#include "train/result_record.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace wulf {
namespace {

using namespace testing_support;

struct Shape {
  std::size_t hosts = 0;
  double cores = 0;
  std::map<double, int> link_rates;  // bytes/s -> links
};

Shape shape_of(const std::string& file) {
  TestDir dir;
  const Json info = record_of(dir, "info", {"platform", "info", wulf_platform(file)}).at("platform");
  Shape s;
  s.hosts = info.at("hosts").size();
  for (const Json& h : info.at("hosts")) s.cores += h.at("cores").get<double>();
  for (const Json& l : info.at("links")) s.link_rates[l.at("bandwidth_Bps").get<double>()] += 1;
  return s;
}

// file has `hosts` hosts of one core each, a switch of switch_rate bytes/s and host links
// (up and down) of host_rate.
void expect_one_switch_cluster(const std::string& file, std::size_t hosts, double switch_rate, double host_rate) {
  SCOPED_TRACE(file);
  const Shape s = shape_of(file);
  EXPECT_EQ(s.hosts, hosts);
  EXPECT_EQ(s.cores, static_cast<double>(hosts));
  EXPECT_EQ(s.link_rates.at(switch_rate), 1);
  EXPECT_EQ(s.link_rates.at(host_rate), static_cast<int>(2 * hosts));
}

TEST(seed_platforms, batcave_has_8_single_cpu_hosts_on_fast_ethernet) {
  // Seed 000 Table I; the 100 Mbit/s switch, host links calibrated to Table V.
  expect_one_switch_cluster("batcave.xml", 8, 12.5e6, 10.6e6);
}

TEST(seed_platforms, messner_has_22_hosts_limited_by_their_motherboards) {
  // Seed 000 Table I; the 1 Gbit/s switch, host links at about 4x Bat Cave's rate (Table V), calibrated.
  expect_one_switch_cluster("messner.xml", 22, 125e6, 36.8e6);
}

TEST(seed_platforms, ppt_dt42_and_sorgan_have_their_papers_nodes_and_networks) {
  const Shape ppt = shape_of("ppt-p4.xml");
  EXPECT_EQ(ppt.hosts, 8u);  // seed 001: 8 nodes, 1 Gbit Ethernet
  EXPECT_EQ(ppt.link_rates.at(125e6), 17);
  const Shape dt42 = shape_of("dt42.xml");
  EXPECT_EQ(dt42.hosts, 2u);  // seed 003: 2 nodes, 118 MB/s measured with nc
  EXPECT_EQ(dt42.link_rates.at(118e6), 4);
  const Shape sorgan = shape_of("sorgan.xml");
  EXPECT_EQ(sorgan.hosts, 10u);  // seed 004: 10 nodes, 4 of them on Infiniband
  EXPECT_EQ(sorgan.link_rates.at(4e9), 9);  // 4 IB nodes x 2 directions + the IB switch
}

TEST(seed_platforms, bunyip_has_its_tetrahedron_of_nodes_nics_and_switches) {
  const Shape s = shape_of("bunyip.xml");
  // Seed 002: 96 dual-CPU nodes, 2 servers, 2 hot spares.
  EXPECT_EQ(s.hosts, 100u);
  EXPECT_EQ(s.cores, 200);
  // 96 nodes x 3 NICs + 2 spares x 1 NIC, each way: 100 Mbit/s.
  EXPECT_EQ(s.link_rates.at(12.5e6), 2 * (96 * 3 + 2));
  // Six Procurve 4000 switches of 3.8 Gbit/s switching capacity.
  EXPECT_EQ(s.link_rates.at(475e6), 6);
}

// Seed 000 Table V: Tr(p) = Tw w ceil(log2 p) + Ti, microseconds. The platforms were fitted
// to these lines, so the tolerance is what the fit achieves plus a little slack, not a
// test of a prediction: Bat Cave's fit is within 0.62% of every point (p 2-8, and p 16 on
// the grown platform), Messner's within 2.32% (its 4 096-double points; the others 0.54%).
void expect_table_v(const std::string& file, double ti, double tw, const std::string& nps, double tolerance,
                    const std::vector<std::string>& extra = {}) {
  TestDir dir;
  const Json r =
      record_of(dir, "bench",
                with({"platform", "bench", wulf_platform(file), "--collectives", "allreduce", "--allreduce", "rdb",
                      "--elements", "4096,16768,54912", "--np", nps, "--repeat", "1", "--no-pingpong"},
                     extra));
  const auto& rows = r.at("collectives");
  const auto rank_counts = static_cast<std::size_t>(std::count(nps.begin(), nps.end(), ',') + 1);
  EXPECT_EQ(rows.size(), 3 * rank_counts);  // every (p, w) point measured
  for (const Json& row : rows) {
    const double p = row.at("np").get<double>(), w = row.at("size").get<double>();
    const double paper = tw * w * std::ceil(std::log2(p)) + ti;
    EXPECT_NEAR(row.at("time_s").get<double>(), paper, tolerance * paper) << file << ": p " << p << ", w " << w;
  }
}

TEST(seed_platforms, batcave_allreduce_is_within_1_percent_of_table_v) {  // fit: 0.62%, slack 0.38 points
  expect_table_v("batcave.xml", 365.868e-6, 0.798e-6, "2,4,8", 0.01);
  expect_table_v("batcave.xml", 365.868e-6, 0.798e-6, "16", 0.01, {"--grow", "16"});  // seed 000 predicts up to 32
}

TEST(seed_platforms, messner_allreduce_is_within_3_percent_of_table_v) {  // fit: 2.32%, slack 0.68 points
  expect_table_v("messner.xml", 515.250e-6, 0.230e-6, "2,4,8,16", 0.03);
}

// Seed 002's reduce: 1 729 440 floats over 194 processes of a Bunyip platform; the bench row.
Json bunyip_reduce(const std::string& file, const std::string& reduce) {
  TestDir dir;
  const HugePagesForLargeBuffers pages;  // 194 ranks of 6.9 MB: 17.7 s under tcmalloc, 5.0 s so
  const Json r =
      record_of(dir, "bench",
                {"platform", "bench", wulf_platform(file), "--collectives", "reduce", "--reduce", reduce, "--type",
                 "float", "--elements", "1729440", "--np", "194", "--repeat", "1", "--no-pingpong"});
  return r.at("collectives").at(0);
}

// bunyip.xml's NIC rate was fitted to this reduce (seed 002 5.1: 8.5 s), LAM's binomial tree
// that takes one child at a time (wulf-binomial): the fit gives 8.506 s, 0.07% off;
// tolerance 0.5%. Open MPI's binomial, which posts the next child's receive first, gives
// 8.504 s on this platform: the same tree's links are the bottleneck.
TEST(seed_platforms, bunyip_library_reduce_is_within_half_a_percent_of_8_5_seconds) {
  EXPECT_NEAR(bunyip_reduce("bunyip.xml", "wulf-binomial").at("time_s").get<double>(), 8.5, 0.005 * 8.5);
  EXPECT_NEAR(bunyip_reduce("bunyip.xml", "binomial").at("time_s").get<double>(), 8.5, 0.005 * 8.5);
}

TEST(seed_platforms, bunyip_four_stage_reduce_fits_stages_1_to_3_and_predicts_the_rest) {
  // On bunyip-p2p.xml: the network as seed 002's own reduce saw it. Seed 002 5.2: stages
  // of 0.18 / 0.66 / 0.9 / 3.16 s, 4.9 s in all. Stages 1-3 calibrate the platform; the
  // fit gives 0.1813 / 0.6607 / 0.9006 s (0.7%, 0.1%, 0.07% off): tolerances 1%, 0.5%, 0.5%.
  const Json row = bunyip_reduce("bunyip-p2p.xml", "four-stage");
  const auto& ends = row.at("stages_s");
  ASSERT_EQ(ends.size(), 4u);
  EXPECT_NEAR(ends[0].get<double>(), 0.18, 0.01 * 0.18);                             // shared memory
  EXPECT_NEAR(ends[1].get<double>() - ends[0].get<double>(), 0.66, 0.005 * 0.66);   // one NIC
  EXPECT_NEAR(ends[2].get<double>() - ends[1].get<double>(), 0.9, 0.005 * 0.9);     // 185 Mbit/s into a node
  EXPECT_NEAR(ends[3].get<double>(), row.at("time_s").get<double>(), 0.01);          // the bench adds its barrier
  // Stage 4 and the total are predictions, not fits: 2.64 s against the paper's 3.16, so
  // 4.386 s in all, 10.5% under 4.9 (experiments/bunyip-reduce says why). The test pins
  // that known gap: between 9% and 12% under the paper.
  const double total = row.at("time_s").get<double>();
  EXPECT_GT(total, 0.88 * 4.9);
  EXPECT_LT(total, 0.91 * 4.9);
}

TEST(seed_platforms, price_performance_of_seed_002_is_92_4_cents_per_mflops) {
  // Section 7.3: USD 150 913 over 163.3 GFlop/s. One rank of 163.3 GFlop/s for one second.
  PhaseTimes p;
  p.forward_patterns = p.backward_patterns = 1000;
  KernelFlops f;  // 163.3e6 flops per pattern forward and backward: 163.3e9 in all
  f.forward = 60e6, f.backward = 103.3e6;
  const Performance perf = training_performance({p}, f, 1.0, 150913);
  EXPECT_NEAR(perf.flops_per_s, 163.3e9, 1);
  EXPECT_NEAR(perf.cents_per_mflops, 92.4, 0.05);
  EXPECT_EQ(training_performance({p}, f, 1.0, 0).cents_per_mflops, 0.0);  // no cost, no price
}

TEST(seed_platforms, bunyip_training_rate_counts_every_ranks_passes_and_the_platform_carries_the_price) {
  // Fig. 8's small net 400-80-200 (w = 48 000, 32 000 in the first layer) on 8 CPUs, batch
  // CG: each line-search probe and gradient pass is a forward (2w) and backward pass over
  // all 4 096 patterns, the backward 2w of weight gradients and 2 x 16 000 of the second
  // layer's delta product; seed 002's 6w beside it. The rate divides them by the simulated
  // time, which also holds the reduces, so it is below 8 x 1 090 MFlop/s.
  TestDir dir;
  const std::vector<std::string> args{"--problem",    "chars:200",
                                      "--hidden",     "80",
                                      "--train-size", "4096",
                                      "--bias",       "off",
                                      "--engine",     "sim",
                                      "--np",         "8",
                                      "--platform",   wulf_platform("bunyip-p2p.xml"),
                                      "--strategy",   "cg",
                                      "--numerics",   "off",
                                      "--epochs",     "1"};
  const Json r = train_record(dir, "cg", args);
  const Json& perf = r.at("performance");
  const Json& cg = r.at("final").at("strategy");
  const double passes = cg.at("gradient_passes").get<double>() + cg.at("line_search_probes").get<double>();
  EXPECT_GE(passes, 2);
  EXPECT_DOUBLE_EQ(perf.at("flops").get<double>(), passes * 4096 * (2 * 48000.0 + 2 * 48000.0 + 2 * 16000.0));
  EXPECT_DOUBLE_EQ(perf.at("flops_6w").get<double>(), passes * 4096 * 6 * 48000.0);
  EXPECT_DOUBLE_EQ(perf.at("forward_flops_per_pattern").get<double>(), 2 * 48000.0);
  const double rate = perf.at("flops").get<double>() / r.at("final").at("time_s").get<double>();
  EXPECT_NEAR(perf.at("gflops").get<double>(), rate * 1e-9, 1e-9 * rate * 1e-9);
  EXPECT_LT(perf.at("mflops_per_rank").get<double>(), 1090);
  EXPECT_GT(perf.at("mflops_per_rank").get<double>(), 500);
  EXPECT_EQ(perf.at("machine_cost_usd").get<double>(), 150913);  // the platform's wulf:cost-usd
  EXPECT_NEAR(perf.at("cents_per_mflops").get<double>(), 100 * 150913 / (rate * 1e-6), 1e-9 * 150913 / (rate * 1e-6));
  // --machine-cost wins over the platform's.
  const Json q = train_record(dir, "priced", with(args, {"--machine-cost", "1000"}));
  EXPECT_EQ(q.at("performance").at("machine_cost_usd").get<double>(), 1000);
  EXPECT_EQ(q.at("config").at("machine_cost_usd").get<double>(), 1000);
}

TEST(seed_platforms, a_machine_cost_that_is_not_a_positive_number_is_refused) {
  for (const std::string cost : {"0", "-5", "nan"}) {
    SCOPED_TRACE(cost);
    expect_train_refused({"--problem", "encoder:8", "--epochs", "1", "--machine-cost", cost}, {"--machine-cost"});
  }
  // A platform's price is checked where the platform is read, the file named.
  TestDir dir;
  for (const std::string cost : {"0", "-5", "nan", "12 USD"}) {
    SCOPED_TRACE(cost);
    const std::string file = dir.write("priced.xml", "<?xml version='1.0'?>\n"
                                                     "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                                                     "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                                                     "<prop id=\"wulf:cost-usd\" value=\"" + cost + "\"/>"
                                                     "<host id=\"a\" speed=\"1Gf\"/></zone></platform>\n");
    expect_train_refused({"--problem", "encoder:8", "--epochs", "1", "--engine", "sim", "--platform", file},
                         {file, "wulf:cost-usd '" + cost + "' is not a positive number of USD"});
  }
}

TEST(seed_platforms, profiles_of_tables_ii_and_iii_are_found_by_name) {
  const Profile bat = read_profile("batcave-function");  // seed 000 Table II, Table V
  EXPECT_DOUBLE_EQ(bat.Tf, 0.22e-3);
  EXPECT_DOUBLE_EQ(bat.To, 30.9e-3);
  EXPECT_DOUBLE_EQ(bat.Ti, 365.868e-6);
  EXPECT_DOUBLE_EQ(bat.Tw, 0.798e-6);
  const Profile mes = read_profile("messner-digits");  // Table III
  EXPECT_DOUBLE_EQ(mes.Tu, 0.92e-3);
  EXPECT_DOUBLE_EQ(mes.To, 40218.1e-3);
  for (const char* cluster : {"batcave", "messner"})
    for (const char* problem : {"function", "encoder", "digits"})
      EXPECT_NO_THROW(read_profile(std::string(cluster) + "-" + problem)) << cluster << "-" << problem;
}

TEST(seed_platforms, one_rank_per_host_puts_the_fifth_rank_on_sorgans_ethernet) {
  // Sorgan's hosts have 16 cores: 5 ranks fill sorgan-0 and talk through its loopback;
  // with --ranks-per-host 1 rank 4 is on sorgan-4, whose only route is Gigabit Ethernet.
  TestDir dir;
  auto comm_of_rank_4 = [&](const std::string& per_host) {
    const Json r =
        train_record(dir, "rph" + per_host,
                     {"--problem", "digits:20x20", "--strategy", "root", "--engine", "sim", "--np", "5", "--platform",
                      wulf_platform("sorgan.xml"), "--numerics", "off", "--epochs", "1", "--ranks-per-host", per_host});
    EXPECT_EQ(r.at("config").at("ranks_per_host").get<double>(), std::stod(per_host));
    return r.at("phases").at("ranks").at(4).at("comm_s").get<double>();
  };
  const double packed = comm_of_rank_4("0"), spread = comm_of_rank_4("1");
  EXPECT_GT(spread, 10 * packed) << "packed " << packed << " s, spread " << spread << " s";
  // 11 ranks, one per host, do not fit 10 hosts.
  expect_train_refused({"--problem", "function", "--block", "64", "--engine", "sim", "--np", "11", "--platform",
                        wulf_platform("sorgan.xml"), "--ranks-per-host", "1"},
                       {"--ranks-per-host 1"});
}

TEST(seed_platforms, grow_refuses_a_platform_that_is_not_one_cluster) {
  expect_refused({"platform", "bench", wulf_platform("sorgan.xml"), "--grow", "20", "--np", "2"}, {"sorgan.xml"});
}

// A fat tree, torus or dragonfly has the host count its topo_parameters give: --grow names
// the topology and says what it grows instead of an error about link names.
TEST(seed_platforms, grow_names_the_topology_it_cannot_grow) {
  for (const auto& [file, topology] : {std::pair{"fattree.xml", "a fat tree (topology=\"FAT_TREE\")"},
                                       std::pair{"torus.xml", "a torus (topology=\"TORUS\")"},
                                       std::pair{"dragonfly.xml", "a dragonfly (topology=\"DRAGONFLY\")"}})
    expect_refused({"platform", "bench", test_platform(file), "--grow", "32", "--np", "2"},
                   {file, topology, "--grow rewrites only a flat cluster", "topo_parameters"});
}

}  // namespace
}  // namespace wulf
