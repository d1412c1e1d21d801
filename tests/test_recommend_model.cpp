// `wulf recommend --screen model` (issue 65 item 4): every candidate ranked by the platform
// model, the best simulated beside it. End to end on ResNet-50 on the DGX H100 platform: each
// candidate's update is `wulf model`'s for the same cell to the last digits, the ranking keeps
// its rule, the simulated ones agree with the model within 1%, the GPUs beyond the file are
// ranked as extrapolated and never simulated; Llama 2 7B's batches under the memory rule; and
// bad input refused before anything runs.
#include "cli/cli.hpp"
#include "util/json.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace wulf {
namespace {

using namespace testing_support;

const std::string h100 = wulf_platform("dgx-h100.xml");

// ResNet-50 on 8, 16 and 128 DGX H100 GPUs (the file has 64), 16 and 32 images a GPU, overlap
// with three allreduces and two bucket sizes, fsdp full and hybrid.
std::vector<std::string> resnet_search(const TestDir& dir) {
  return {"recommend",
          "--platform",
          h100,
          "--problem",
          "layers:resnet50",
          "--screen",
          "model",
          "--np",
          "8,16,128",
          "--batches",
          "16,32",
          "--allreduces",
          "ring,hierarchical,rings",
          "--bucket-sizes",
          "0,26214400",
          "--strategies",
          "overlap,fsdp",
          "--shardings",
          "full,hybrid",
          "--target-epoch-seconds",
          "40",
          "--confirm",
          "3",
          "--out",
          dir.file("rec.json")};
}

TEST(recommend_model, ranks_every_candidate_by_the_model_and_the_simulation_confirms_the_best) {
  TestDir dir;
  const Outcome o = expect_success(resnet_search(dir), {"screening by the model ...", "ranked by the model",
                                                        "the model's best 3 simulated", "recommended by the model:"});
  const Json rec = read_json_file(dir.file("rec.json"));
  const Json& all = rec.at("candidates");
  // 3 p x 2 batches x (overlap 3 x 2 + fsdp 2) and the sequential run at 16 and 32 samples.
  ASSERT_EQ(all.size(), 3u * 2 * (6 + 2) + 2);
  std::vector<std::size_t> ranking;
  for (const Json& i : rec.at("ranking")) ranking.push_back(i.get<std::size_t>());
  std::size_t modelled = 0;
  for (const Json& c : all) {
    if (!c.at("skipped").is_null()) continue;
    ++modelled;
    const Json& m = c.at("model");
    const double update = m.at("update_s").get<double>(), epoch = m.at("epoch_s").get<double>();
    EXPECT_GT(update, 0) << c.dump();
    EXPECT_DOUBLE_EQ(epoch, std::ceil(1281167.0 / c.at("b").get<double>()) * update);
    EXPECT_EQ(m.at("meets_target").get<bool>(), epoch <= 40);
    EXPECT_EQ(m.at("extrapolated").get<bool>(), c.at("p").get<int>() > 64) << c.dump();
    EXPECT_EQ(c.at("b").get<int>(), c.at("p").get<int>() * c.at("batch").get<int>());
  }
  EXPECT_EQ(ranking.size(), modelled);
  EXPECT_GE(modelled, 40u);
  // The rule: within the target on the fewest GPUs, then the shorter epoch; then the rest by epoch.
  for (std::size_t k = 1; k < ranking.size(); ++k) {
    const Json &a = all[ranking[k - 1]].at("model"), &b = all[ranking[k]].at("model");
    const int pa = all[ranking[k - 1]].at("p").get<int>(), pb = all[ranking[k]].at("p").get<int>();
    const bool ma = a.at("meets_target").get<bool>(), mb = b.at("meets_target").get<bool>();
    ASSERT_TRUE(ma || !mb) << k;
    if (ma && mb && pa != pb) {
      EXPECT_LT(pa, pb) << k;
    } else if (ma == mb) {
      EXPECT_LE(a.at("epoch_s").get<double>(), b.at("epoch_s").get<double>()) << k;
    }
  }
  EXPECT_EQ(rec.at("choice").at("p").get<int>(), all[ranking[0]].at("p").get<int>());
  // The confirmed: the first three of the ranking the file holds, simulated, within 1% of the
  // model (the model-check grid's cells agree to 0.1%).
  ASSERT_EQ(rec.at("confirmed").size(), 3u);
  for (const Json& i : rec.at("confirmed")) {
    const Json& c = all[i.get<std::size_t>()];
    EXPECT_LE(c.at("p").get<int>(), 64);
    const double sim = c.at("simulation").at("update_s").get<double>();
    const double model = c.at("model").at("update_s").get<double>();
    EXPECT_NEAR(model, sim, 0.01 * sim) << c.dump();
  }
  // Every candidate's update is wulf model's for the same cell (here the hierarchical allreduce
  // with 25 MiB buckets on 16 GPUs, 32 images each, and on 128, beyond the file).
  for (const int p : {16, 128}) {
    const Json cell = [&] {
      for (const Json& c : all)
        if (c.at("p") == p && c.at("batch") == 32 && c.at("label") == "overlap 25.0 MiB hierarchical") return c;
      return Json();
    }();
    ASSERT_FALSE(cell.is_null()) << p;
    expect_success({"model", "--overlap", "--platform", h100, "--problem", "layers:resnet50", "--np", std::to_string(p),
                    "--block", std::to_string(32 * p), "--bucket-bytes", "26214400", "--bucket-allreduce",
                    "hierarchical", "--learning", "block", "--out", dir.file("model.json")});
    const Json model = read_json_file(dir.file("model.json"));
    EXPECT_NEAR(model.at("grid")[0].at("update_s").get<double>(), cell.at("model").at("update_s").get<double>(),
                1e-12 * cell.at("model").at("update_s").get<double>());
    EXPECT_EQ(model.at("grid")[0].value("extrapolated", false), p > 64);
  }
}

// Llama 2 7B in bf16 on DGX H100 GPUs: a GPU holds few of its sequences, and fewer the less is
// sharded. The memory rule skips what does not fit, saying so; the model ranks the rest.
TEST(recommend_model, batches_a_gpu_does_not_hold_are_skipped_by_the_memory_rule) {
  TestDir dir;
  expect_success({"recommend",
                  "--platform",
                  h100,
                  "--problem",
                  "layers:llama2_7b",
                  "--precision",
                  "bf16",
                  "--train-size",
                  "65536",
                  "--screen",
                  "model",
                  "--strategies",
                  "fsdp",
                  "--np",
                  "8,16",
                  "--batches",
                  "1,16",
                  "--shardings",
                  "full,none",
                  "--target-epoch-seconds",
                  "3600",
                  "--confirm",
                  "0",
                  "--out",
                  dir.file("rec.json")},
                 {"skipped:", "does not fit the devices"});
  const Json rec = read_json_file(dir.file("rec.json"));
  std::map<std::string, int> fits;
  for (const Json& c : rec.at("candidates")) {
    if (c.at("strategy") != "fsdp") continue;
    const std::string key = c.at("sharding").get<std::string>() + " " + std::to_string(c.at("batch").get<int>());
    const bool fit = c.at("skipped").is_null();
    fits[key] += fit;
    if (!fit) {
      EXPECT_TRUE(contains(c.at("skipped").get<std::string>(), "does not fit the devices")) << c.dump();
    }
  }
  EXPECT_EQ(fits["full 1"], 2);   // sharded, one sequence: held on 8 and on 16
  EXPECT_EQ(fits["none 1"], 0);   // every weight, gradient and the update's state on each GPU
  EXPECT_EQ(fits["full 16"], 0);  // 16 sequences' activations
  EXPECT_TRUE(rec.at("confirmed").empty());
}

TEST(recommend_model, bad_input_is_refused_before_anything_runs) {
  const std::vector<std::string> base{
      "recommend", "--platform", h100,        "--problem", "layers:resnet50",        "--screen", "model",
      "--np",      "8",          "--batches", "16",        "--target-epoch-seconds", "10"};
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases{
      {{"recommend", "--platform", toy4, "--problem", "encoder:16", "--screen", "model", "--target-error", "0.1"},
       {"--screen model with --target-error", "--target-epoch-seconds T"}},
      {{"recommend", "--platform", h100, "--problem", "layers:resnet50", "--screen", "guess", "--target-epoch-seconds",
        "10"},
       {"--screen: 'guess'"}},
      {{"recommend", "--platform", h100, "--problem", "layers:resnet50", "--np", "8", "--target-epoch-seconds", "10",
        "--confirm", "2"},
       {"--confirm is for --screen model"}},
      {with(base, {"--strategies", "block"}), {"--strategies: 'block' with --screen model", "overlap and fsdp"}},
      {with(base, {"--bw-scale", "2"}), {"--bw-scale with --screen model"}},
      {with(base, {"--shardings", "half"}), {"--shardings: 'half'", "full, grad-op, hybrid or none"}},
      {with(base, {"--strategies", "overlap", "--shardings", "full"}), {"--shardings full: none of --strategies"}},
      {with(base, {"--blocks", "64"}), {"--blocks 64 and --batches 16: give one"}},
      {with(base, {"--confirm", "-1"}), {"--confirm"}},
      {{"recommend", "--platform", toy4, "--problem", "encoder:16", "--screen", "model", "--np", "64",
        "--target-epoch-seconds", "1"},
       {"--np 64:", "has 4 hosts", "extends a platform of servers"}},
  };
  for (const auto& [args, fragments] : cases) expect_refused(args, fragments);
}

}  // namespace
}  // namespace wulf
