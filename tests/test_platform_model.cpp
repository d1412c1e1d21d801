// wulf model on a platform for the layer nets (issue 65): every allreduce of overlap and every
// sharding of fsdp against simulations of the same cells, the platform extended beyond its
// hosts against the generated platform of that size, the device's memory, and the refusals.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace wulf {
namespace {

using namespace testing_support;

// The simulated time per iteration of a record of 3 iterations (the first not counted).
double per_iteration(const Json& sim) {
  const Json& h = sim.at("history");
  return (h.at(3).at("time_s").get<double>() - h.at(1).at("time_s").get<double>()) / 2;
}

// Measured on the cells below: the model within 0.2% of the simulation (experiments/model-check).
constexpr double kTolerance = 0.01;

TEST(platform_model, every_allreduce_of_overlap_on_gpu_servers_agrees_with_the_simulation) {
  TestDir dir;
  const std::vector<std::string> cell{"--platform", wulf_platform("dgx1-v100.xml"), "--problem", "layers:resnet50",
                                      "--np", "16", "--block", "512", "--train-size", "512", "--test-size", "1"};
  // A bucket per tensor (161) simulates slowly: one cell of it.
  for (const auto& [algorithm, bucket] : std::vector<std::pair<std::string, std::string>>{
           {"hierarchical", "0"}, {"rings", "26214400"}, {"rabenseifner", "26214400"}, {"rdb", "26214400"}}) {
      const std::string name = algorithm + "-" + bucket;
      const Json model = record_of(dir, "model-" + name,
                                   with({"model", "--overlap", "--bucket-bytes", bucket, "--bucket-allreduce", algorithm}, cell));
      const Json sim = train_record(dir, "sim-" + name,
                                    with(cell, {"--engine", "sim", "--numerics", "off", "--epochs", "3", "--strategy",
                                                "overlap", "--bucket-bytes", bucket, "--bucket-allreduce", algorithm}));
      EXPECT_NEAR(model.at("grid").at(0).at("time_s").get<double>() / per_iteration(sim), 1.0, kTolerance) << name;
    }
}

TEST(platform_model, every_sharding_of_fsdp_agrees_with_the_simulation) {
  TestDir dir;
  const std::vector<std::string> cell{"--platform", wulf_platform("dgx-a100.xml"), "--problem", "layers:gpt2",
                                      "--np", "16", "--block", "128", "--train-size", "128", "--test-size", "1",
                                      "--strategy", "fsdp"};
  const std::vector<std::vector<std::string>> variants{{},
                                                       {"--shard-stream", "one"},
                                                       {"--shard-algorithm", "rings"},
                                                       {"--sharding", "hybrid"},
                                                       {"--sharding", "grad-op", "--backward-prefetch", "off"},
                                                       {"--sharding", "none"}};
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const std::string name = "v" + std::to_string(v);
    const Json model = record_of(dir, "model-" + name, with(with({"model"}, cell), variants[v]));
    const Json sim = train_record(dir, "sim-" + name,
                                  with(with(cell, {"--engine", "sim", "--numerics", "off", "--epochs", "3"}), variants[v]));
    const Json& m = model.at("grid").at(0);
    EXPECT_NEAR(m.at("time_s").get<double>() / per_iteration(sim), 1.0, kTolerance) << name;
    // The waits the simulation notes, where it waited at all.
    const Json& last = sim.at("history").at(3);
    EXPECT_NEAR(m.at("gather_wait_s").get<double>(), last.at("gather_wait_s").get<double>(),
                kTolerance * per_iteration(sim))
        << name;
    EXPECT_EQ(m.at("gathers").get<double>(), last.at("gathers").get<double>()) << name;
    EXPECT_EQ(m.at("reductions").get<double>(), last.at("reductions").get<double>()) << name;
  }
}

TEST(platform_model, more_ranks_than_the_file_has_hosts_are_its_servers_extended_as_the_generated_platform) {
  TestDir dir;
  const std::string sixteen = dir.file("dgx1-16.xml");
  const std::string generate = "python3 '" + wulf_platform("gpu/generate.py") + "' --preset dgx1-v100 --nodes 16 -o '" +
                               sixteen + "' >/dev/null";
  ASSERT_EQ(std::system(generate.c_str()), 0) << generate;
  for (const std::string algorithm : {"ring", "hierarchical", "rings"}) {
    std::vector<double> times;
    for (const std::string platform : {sixteen, wulf_platform("dgx1-v100.xml")}) {
      const Json r = record_of(dir, algorithm + "-" + std::to_string(times.size()),
                               {"model", "--overlap", "--platform", platform, "--problem", "layers:resnet50", "--np",
                                "128", "--block", "4096", "--train-size", "4096", "--test-size", "1", "--bucket-bytes",
                                "26214400", "--bucket-allreduce", algorithm});
      times.push_back(r.at("grid").at(0).at("time_s").get<double>());
    }
    EXPECT_NEAR(times[1] / times[0], 1.0, 1e-12) << algorithm;
  }
  // fsdp with the DGX's 8 rings at 100 000 GPUs: an answer, the servers extended.
  expect_success({"model", "--strategy", "fsdp", "--shard-algorithm", "rings", "--platform",
                                    wulf_platform("dgx-h100.xml"), "--problem", "layers:gpt3_175b", "--precision",
                                    "bf16", "--np", "100000", "--block", "100000", "--train-size", "100000",
                                    "--test-size", "1"},
                                   {"12500 servers of 8 GPUs extended from the file's 8"});
}

TEST(platform_model, the_pipeline_of_buckets_and_units_is_printed_and_recorded) {
  TestDir dir;
  const std::vector<std::string> cell{"--platform", wulf_platform("dgx-a100.xml"), "--np", "16", "--block", "128",
                                      "--train-size", "128", "--test-size", "1", "--pipeline"};
  const Json fsdp = record_of(dir, "fsdp", with({"model", "--strategy", "fsdp", "--problem", "layers:gpt2"}, cell));
  const Json& units = fsdp.at("grid").at(0);
  ASSERT_EQ(units.at("gather_issued_s").size(), units.at("units").get<std::size_t>());
  // Each unit's reduction is issued after its gather and done by the update's end.
  for (std::size_t u = 0; u < units.at("gather_issued_s").size(); ++u) {
    EXPECT_LE(units.at("gather_issued_s").at(u).get<double>(), units.at("gather_done_s").at(u).get<double>()) << u;
    EXPECT_LE(units.at("gather_done_s").at(u).get<double>(), units.at("reduce_issued_s").at(u).get<double>()) << u;
    EXPECT_LE(units.at("reduce_done_s").at(u).get<double>(), units.at("update_s").get<double>()) << u;
  }
  expect_success(with({"model", "--overlap", "--problem", "layers:resnet50"}, cell),
                 {"buckets of p = 16, b = 128, 26214400 B", "after layer    1"});
}

TEST(platform_model, a_cell_the_device_does_not_hold_says_so) {
  const Outcome o = expect_success({"model", "--strategy", "fsdp", "--platform", wulf_platform("dgx-a100.xml"),
                                    "--problem", "layers:llama2_7b", "--precision", "bf16", "--learning", "adam", "--np",
                                    "16", "--block", "32,16", "--train-size", "32", "--test-size", "1"},
                                   {"(does not fit: 110 GiB of 80 GiB)"});
  EXPECT_FALSE(contains(o.out.substr(o.out.find("    16       16")), "does not fit"));
}

TEST(platform_model, what_it_cannot_answer_is_refused_naming_the_input) {
  expect_refused({"model", "--overlap", "--platform", wulf_platform("batcave.xml"), "--problem", "digits", "--np", "16",
                  "--block", "64"},
                 {"--np 16", "batcave.xml has 8 hosts", "extends a platform of servers"});
  expect_refused({"model", "--strategy", "fsdp", "--platform", wulf_platform("dgx-a100.xml"), "--problem",
                  "layers:gpt2", "--np", "8", "--block", "8", "--bucket-bytes", "0"},
                 {"--bucket-bytes is for --strategy overlap"});
  expect_refused({"model", "--overlap", "--platform", wulf_platform("dgx-a100.xml"), "--problem", "layers:gpt2",
                  "--np", "8", "--block", "8", "--sharding", "full"},
                 {"--sharding is for --strategy fsdp"});
  expect_refused({"model", "--strategy", "ppt", "--platform", wulf_platform("dgx-a100.xml"), "--problem", "layers:gpt2",
                  "--np", "8", "--block", "8"},
                 {"--strategy \"ppt\"", "overlap", "fsdp", "simulate"});
  expect_refused({"model", "--strategy", "fsdp", "--platform", wulf_platform("dgx-a100.xml"), "--problem",
                  "layers:gpt2", "--np", "8", "--block", "8", "--shard-stream", "two"},
                 {"--shard-stream", "\"two\""});
}

}  // namespace
}  // namespace wulf
