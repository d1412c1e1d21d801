// --strategy overlap --framework ddp (issue 61): PyTorch 1.13 DDP's buckets against the sizes
// DDP itself built, its costs worked out by hand on a one-host platform, its first iteration's
// one bucket and the rebuild, the record's constants, and the refusals.
#include "nn/framework_costs.hpp"
#include "train/buckets.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cstdint>

namespace wulf {
namespace {

using namespace testing_support;

const std::vector<std::string> function_problem{"--problem", "function", "--epochs", "3", "--block", "32"};

// experiments/ddp-witness's net in the order wulf's backward pass makes its gradients (a layer's
// tensors in reverse: bias, then weight), float: fc3, fc2, fc1, then the eight convolutions.
std::vector<GradientTensor> witness_tensors() {
  const std::vector<std::pair<int, std::size_t>> layer_values{
      {11, 10},  {11, 6400},   {10, 640}, {10, 266240}, {9, 416}, {9, 6815744}, {8, 256}, {8, 589824},
      {7, 256},  {7, 294912},  {6, 128},  {6, 147456},  {5, 128}, {5, 147456},  {4, 128}, {4, 73728},
      {3, 64},   {3, 36864},   {2, 64},   {2, 36864},   {1, 64},  {1, 1728}};
  std::vector<GradientTensor> t;
  for (const auto& [layer, values] : layer_values) t.push_back({.layer = layer, .values = values, .at = 0});
  return t;
}

std::vector<std::size_t> bytes_of(const std::vector<BucketCut>& cuts) {
  std::vector<std::size_t> b;
  for (const BucketCut& c : cuts) b.push_back(c.values * 4);
  return b;
}

// The witness net's buckets as DDP 1.13 built them on this machine (ddp_bench.py's record:
// _get_ddp_logging_data()'s bucket_sizes after the first iteration and rebuilt_bucket_sizes):
// one of 33 677 480 bytes, then 1 093 160 (fc3 and fc2: the first over 1 MiB), 27 264 640 (fc1:
// its weight alone over 25 MiB, closing the bucket it joined) and 5 319 680 (the rest).
TEST(ddp, buckets_are_cut_as_ddp_cut_the_witness_nets) {
  const std::vector<GradientTensor> t = witness_tensors();
  EXPECT_EQ(bytes_of(cut_ddp_buckets(t, 4, SIZE_MAX, SIZE_MAX)), (std::vector<std::size_t>{33677480}));
  EXPECT_EQ(bytes_of(cut_ddp_buckets(t, 4, 1 << 20, 25 << 20)),
            (std::vector<std::size_t>{1093160, 27264640, 5319680}));
  // bucket_cap_mb 1: the convolutions in buckets of 1 MiB or just over.
  const std::vector<BucketCut> one = cut_ddp_buckets(t, 4, 1 << 20, 1 << 20);
  ASSERT_GE(one.size(), 4u);
  for (std::size_t i = 0; i + 1 < one.size(); ++i) EXPECT_GE(one[i].values * 4, std::size_t{1} << 20) << i;
  // wulf's own cut is another: a tensor of the bucket's size or more is a bucket of its own.
  EXPECT_NE(bytes_of(cut_buckets(t, 4, 25 << 20)), bytes_of(cut_ddp_buckets(t, 4, 1 << 20, 25 << 20)));
  // Each bucket is ready after the layer of its last tensor.
  EXPECT_EQ(cut_ddp_buckets(t, 4, 1 << 20, 25 << 20)[1].ready_after, 9);
}

TEST(ddp, a_hosts_costs_are_read_by_name_and_refused_naming_the_fault) {
  const FrameworkCosts c = parse_framework_costs("copy=1e9, copy_out=2e9,scale=4e9, tensor=1e-6, bucket=1e-5, "
                                                 "iteration=1e-4, comm_cpu=1e-9", "host h: wulf:ddp");
  EXPECT_EQ(c.copy_Bps, 1e9);
  EXPECT_EQ(c.copy_out_Bps, 2e9);
  EXPECT_EQ(c.scale_Bps, 4e9);
  EXPECT_EQ(c.tensor_s, 1e-6);
  EXPECT_EQ(c.bucket_s, 1e-5);
  EXPECT_EQ(c.iteration_s, 1e-4);
  EXPECT_EQ(c.comm_cpu_s_per_B, 1e-9);
  EXPECT_EQ(parse_framework_costs("", "x").copy_Bps, 0.0);  // nothing given: nothing charged
  for (const auto& [text, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"copies=1e9", "\"copies=1e9\" is not NAME=VALUE"},
           {"copy", "\"copy\" is not NAME=VALUE"},
           {"copy=-1", "copy \"-1\" is not a number of bytes/s from 0"},
           {"tensor=inf", "tensor \"inf\""},
           {"tensor=1e-6, tensor=2e-6", "tensor is given twice"}})
    expect_input_error([&] { parse_framework_costs(text, "host h: wulf:ddp"); }, {"host h: wulf:ddp", fragment});
}

// tests/test_layer_table.cpp's tiny net: layers a (40 values: 10x3 and 10), pool, b (22: 2x10
// and 2); 62 float values, 248 bytes; 8 training samples, 4 test ones.
constexpr const char* tiny = R"(wulf-layers 1
name tiny
samples 8 4
inputs 3
outputs 2
layer a linear 1000 10x3 10
layer pool pool 500
layer b linear 2000 backward=3000 2x10 2
)";

std::string one_host(const TestDir& dir, const std::string& name, const std::string& ddp) {
  return dir.write(name, R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="one" routing="Full">
    <host id="g" speed="1Gf"><prop id="wulf:ddp" value=")" + ddp + R"("/></host>
  </zone>
</platform>
)");
}

constexpr const char* costs = "copy=1e9, copy_out=2e9, scale=4e9, tensor=1e-6, bucket=1e-5, iteration=1e-4";

// One process on a host of 1 Gflop/s, blocks of 4 (two an epoch). The net alone: per block
// 4 x 3 500 + 4 x 6 000 + 248 (the update) flops, and 4 x 3 500 for the test: 90.496 us an
// epoch. DDP adds per block its iteration (100 us), 4 tensor hooks (4 us), one bucket launch
// (10 us: 248 bytes are one bucket, first and rebuilt), the 248 bytes copied into it at 1 GB/s
// (0.248 us) and back at 2 GB/s (0.124 us): 114.372 us, 319.24 us an epoch. With
// gradient_as_bucket_view the first block copies in but never back (114.248 us); the rebuild
// copies the gradients into the new bucket once (0.124 us), and from then on each is only
// divided in place at 4 GB/s (0.062 us): 114.186 us; 318.93 us an epoch.
TEST(ddp, a_one_process_run_is_charged_its_hooks_launches_and_copies_as_worked_out) {
  TestDir dir;
  const std::string net = dir.write("tiny.layers", tiny);
  const std::string platform = one_host(dir, "g.xml", costs);
  const std::vector<std::string> each{"--problem", "layers:" + net, "--numerics", "off", "--engine", "sim", "--np",
                                      "1",         "--block",        "4",          "--epochs", "1",     "--strategy",
                                      "overlap"};
  const std::vector<std::string> run = with(each, {"--platform", platform});
  const Json plain = train_record(dir, "plain", run);
  EXPECT_NEAR(plain.at("history")[1].at("time_s").get<double>(), 90.496e-6, 1e-12);
  const Json ddp = train_record(dir, "ddp", with(run, {"--framework", "ddp"}));
  EXPECT_NEAR(ddp.at("history")[1].at("time_s").get<double>(), 319.24e-6, 1e-12);
  EXPECT_NEAR(ddp.at("history")[1].at("ddp_fixed_s").get<double>(), 2 * 114e-6, 1e-12);
  EXPECT_NEAR(ddp.at("history")[1].at("ddp_copy_s").get<double>(), 2 * 0.372e-6, 1e-12);
  EXPECT_EQ(ddp.at("framework_costs").at("costs").at("bucket_s").get<double>(), 1e-5);
  EXPECT_EQ(ddp.at("framework_costs").at("host").get<std::string>(), "g");
  EXPECT_TRUE(contains(ddp.at("config").at("framework_model").get<std::string>(), "reducer.cpp"));
  const Json views = train_record(dir, "views", with(run, {"--framework", "ddp", "--gradient-as-bucket-view", "on"}));
  EXPECT_NEAR(views.at("history")[1].at("time_s").get<double>(), 318.93e-6, 1e-12);
  // Without the host's costs DDP's buckets still run, charged nothing.
  const Json bare = train_record(dir, "bare", with(each, {"--framework", "ddp", "--platform", one_host(dir, "h.xml", "")}));
  EXPECT_NEAR(bare.at("history")[1].at("time_s").get<double>(), 90.496e-6, 1e-12);
}

// Two ranks, one block an epoch: DDP's first iteration sends every gradient in one bucket, the
// later ones the rebuilt buckets (first and cap 100 bytes: b's bias and weight and a's bias,
// 128 bytes, then a's weight). The values are block's (numerics on, an MLP) within round-off.
TEST(ddp, the_first_iteration_is_one_bucket_and_the_rebuilt_buckets_follow) {
  TestDir dir;
  const std::string net = dir.write("tiny.layers", tiny);
  const Json r = train_record(dir, "r", {"--problem", "layers:" + net, "--numerics", "off", "--engine", "sim", "--np",
                                         "2", "--block", "8", "--epochs", "3", "--platform", toy4, "--strategy",
                                         "overlap", "--framework", "ddp", "--first-bucket-bytes", "100",
                                         "--bucket-bytes", "100"});
  const Json& h = r.at("history");
  EXPECT_EQ(h[1].at("buckets").get<double>(), 1.0);
  EXPECT_EQ(h[2].at("buckets").get<double>(), 2.0);
  EXPECT_EQ(h[3].at("buckets").get<double>(), 2.0);
  const std::vector<std::string> mlp{"--engine", "sim", "--np", "3", "--platform", toy4, "--precision", "double"};
  const Json block = train_record(dir, "block", with(function_problem, with(mlp, {"--allreduce", "rdb"})));
  const Json ddp = train_record(dir, "ddp", with(function_problem, with(mlp, {"--strategy", "overlap", "--framework",
                                                                              "ddp", "--bucket-bytes", "4096"})));
  expect_same_history(block, ddp, "test_rmse", 1e-12);
  expect_same_history(block, ddp, "train_error", 1e-12);
}

// The steal of gloo's threads (comm_cpu, 1e-8 s a byte here) is charged for the bytes on the
// wire while the backward pass computes. Two hosts of 1 Gflop/s and one core, one rank each
// (the whole steal), one link of 10 MB/s both ways share, one sample a rank. Layer b's 10^6
// gradients (4 MB) are the first bucket; the ring of two sends 2 MB a rank in each of its two
// steps, 4 MB over the shared link: 0.4 s a step. Layer a's backward pass takes `backward`
// seconds after b's bucket starts. In iteration 3 the rebuilt buckets have run once, so a step
// under way is counted at the rate of the last complete one.
TEST(ddp, the_steal_is_charged_for_the_bytes_on_the_wire_while_the_backward_pass_computes) {
  TestDir dir;
  const std::string host_costs = std::string(costs) + ", comm_cpu=1e-8";
  const std::string platform = dir.write("two.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="two" routing="Full">
    <host id="g0" speed="1Gf"><prop id="wulf:ddp" value=")" + host_costs + R"("/></host>
    <host id="g1" speed="1Gf"><prop id="wulf:ddp" value=")" + host_costs + R"("/></host>
    <link id="l" bandwidth="10MBps" latency="0"/>
    <route src="g0" dst="g1"><link_ctn id="l"/></route>
  </zone>
</platform>
)");
  const auto steal = [&](const std::string& name, double backward_flops, const std::string& first_bucket_bytes) {
    const std::string net = dir.write(name + ".layers", fmt::format(R"(wulf-layers 1
name steal
samples 2 1
inputs 3
outputs 2
layer a linear 1000 backward={} 10x3
layer b linear 1000 2x500000
)",
                                                                    backward_flops));
    const Json r = train_record(dir, name, {"--problem", "layers:" + net, "--numerics", "off", "--engine", "sim",
                                            "--np", "2", "--block", "2", "--epochs", "3", "--platform", platform,
                                            "--strategy", "overlap", "--framework", "ddp", "--first-bucket-bytes",
                                            first_bucket_bytes, "--bucket-bytes", "67108864"});
    return r.at("history")[3].at("ddp_steal_s").get<double>();
  };
  // 1 s of backward pass: both steps travel within it, all 4 MB sent: 0.04 s.
  EXPECT_NEAR(steal("long", 1e9, "1000"), 0.04, 1e-6);
  // One bucket, started once the backward pass is over: nothing travels beside the compute (the
  // bytes a step posts at once, 2 MB, would be 0.02 s).
  EXPECT_LT(steal("after", 1e9, "67108864"), 1e-9);
  // 0.3 s of backward pass: the first step is under way throughout, at most 1.25e6 values a
  // second (500 000 in 0.4 s; less as its end is seen at a progress point): 1.5 MB, 0.015 s at
  // most, where counting the step's bytes when posted gives 0.02 s and when complete 0.
  const double part = steal("short", 3e8, "1000");
  EXPECT_GT(part, 0.01);
  EXPECT_LE(part, 0.015 + 1e-9);
}

TEST(ddp, bad_framework_options_and_host_costs_are_refused_before_any_rank_starts) {
  expect_train_refused({"--problem", "xor", "--strategy", "overlap", "--framework", "horovod"},
                       {"--framework", "horovod", "none or ddp"});
  expect_train_refused({"--problem", "xor", "--strategy", "overlap", "--framework", "ddp", "--ddp-backend", "mpi"},
                       {"--ddp-backend", "mpi", "gloo or nccl"});
  expect_train_refused({"--problem", "xor", "--strategy", "overlap", "--gradient-as-bucket-view", "yes"},
                       {"--gradient-as-bucket-view", "yes", "on or off"});
  expect_train_refused({"--problem", "xor", "--strategy", "overlap", "--framework", "ddp", "--bucket-concurrency", "1"},
                       {"--framework ddp", "--ddp-backend"});
  expect_train_refused({"--problem", "xor", "--strategy", "overlap", "--framework", "ddp", "--bucket-cycle", "0.005"},
                       {"--framework ddp", "--bucket-cycle"});
  expect_train_refused({"--problem", "xor", "--strategy", "overlap", "--framework", "ddp", "--first-bucket-bytes", "0"},
                       {"--first-bucket-bytes"});
  expect_train_refused({"--problem", "xor", "--framework", "ddp"}, {"--framework", "overlap"});
  TestDir dir;
  expect_train_refused({"--problem", "function", "--engine", "sim", "--np", "1", "--platform",
                        one_host(dir, "bad.xml", "copy=fast"), "--strategy", "overlap", "--framework", "ddp"},
                       {"bad.xml", "host g: wulf:ddp", "copy \"fast\""});
}

}  // namespace
}  // namespace wulf
